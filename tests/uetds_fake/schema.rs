//! The published shapes, read from the schema captures in `adapters/uetds/schema/` (and the
//! fake's own provisional schema for the scheduled service): which operation element belongs to
//! which operation and SOAPAction (the WSDL bindings), and the element structure each operation
//! accepts (the XSD). The structural check here is always on and cheap (order, required and
//! unknown elements, unqualified children, the lexical form of the built-in types); the full
//! xmllint validation in `judge` comes on top when it is switched on.

use std::collections::HashMap;

use super::xml::{self, Element, XSI_NS};

const XS_NS: &str = "http://www.w3.org/2001/XMLSchema";
const WSDL_NS: &str = "http://schemas.xmlsoap.org/wsdl/";
const WSDL_SOAP_NS: &str = "http://schemas.xmlsoap.org/wsdl/soap/";

/// The built-in simple types the schemas use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simple {
    String,
    Int,
    Long,
    Decimal,
    Boolean,
    DateTime,
    Date,
    Base64,
}

/// What an element's type is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeRef {
    Simple(Simple),
    Complex(String),
}

/// One `xs:element` inside a sequence.
#[derive(Debug, Clone)]
pub struct Particle {
    pub name: String,
    pub ty: TypeRef,
    pub min: u32,
    /// `None` = unbounded.
    pub max: Option<u32>,
    pub nillable: bool,
}

#[derive(Debug, Clone, Default)]
struct ComplexType {
    base: Option<String>,
    sequence: Vec<Particle>,
}

/// A schema: top-level elements and named complex types.
#[derive(Debug, Clone)]
pub struct Schema {
    pub target_ns: String,
    elements: HashMap<String, (TypeRef, bool)>,
    types: HashMap<String, ComplexType>,
}

fn type_ref(qname: &str) -> Result<TypeRef, String> {
    let (prefix, local) = qname.split_once(':').unwrap_or(("", qname));
    if prefix == "xs" || prefix == "xsd" {
        let s = match local {
            "string" => Simple::String,
            "int" => Simple::Int,
            "long" => Simple::Long,
            "decimal" => Simple::Decimal,
            "boolean" => Simple::Boolean,
            "dateTime" => Simple::DateTime,
            "date" => Simple::Date,
            "base64Binary" => Simple::Base64,
            other => return Err(format!("unsupported built-in type xs:{other}")),
        };
        Ok(TypeRef::Simple(s))
    } else {
        Ok(TypeRef::Complex(local.to_string()))
    }
}

fn attr<'a>(el: &'a Element, name: &str) -> Option<&'a str> {
    el.attrs.iter().find(|a| a.ns.is_none() && a.name == name).map(|a| a.value.as_str())
}

fn is_xs(el: &Element, name: &str) -> bool {
    el.ns.as_deref() == Some(XS_NS) && el.name == name
}

fn particles(seq: &Element) -> Result<Vec<Particle>, String> {
    let mut out = Vec::new();
    for p in seq.children.iter().filter(|c| is_xs(c, "element")) {
        let name = attr(p, "name").ok_or("xs:element without a name")?.to_string();
        let ty = type_ref(attr(p, "type").ok_or_else(|| format!("element {name} has no type"))?)?;
        let min =
            attr(p, "minOccurs").map(|v| v.parse().map_err(|_| format!("bad minOccurs on {name}"))).transpose()?;
        let max = match attr(p, "maxOccurs") {
            None => Some(1),
            Some("unbounded") => None,
            Some(v) => Some(v.parse().map_err(|_| format!("bad maxOccurs on {name}"))?),
        };
        let nillable = attr(p, "nillable") == Some("true");
        out.push(Particle { name, ty, min: min.unwrap_or(1), max, nillable });
    }
    Ok(out)
}

impl Schema {
    /// Reads the subset of XML Schema the captures use: top-level elements, complex types with a
    /// sequence of elements, and complex content extending a base type.
    pub fn parse(xsd: &str) -> Result<Schema, String> {
        let root = xml::parse(xsd)?.root;
        if !is_xs(&root, "schema") {
            return Err("not an xs:schema".into());
        }
        let target_ns = attr(&root, "targetNamespace").unwrap_or_default().to_string();
        let mut elements = HashMap::new();
        let mut types = HashMap::new();
        for c in &root.children {
            if is_xs(c, "element") {
                let name = attr(c, "name").ok_or("top-level element without a name")?;
                let ty = type_ref(attr(c, "type").ok_or_else(|| format!("element {name} has no type"))?)?;
                elements.insert(name.to_string(), (ty, attr(c, "nillable") == Some("true")));
            } else if is_xs(c, "complexType") {
                let name = attr(c, "name").ok_or("complex type without a name")?;
                let mut ct = ComplexType::default();
                if let Some(seq) = c.children.iter().find(|s| is_xs(s, "sequence")) {
                    ct.sequence = particles(seq)?;
                } else if let Some(ext) = c
                    .children
                    .iter()
                    .find(|s| is_xs(s, "complexContent"))
                    .and_then(|cc| cc.children.iter().find(|e| is_xs(e, "extension")))
                {
                    let base = attr(ext, "base").ok_or("extension without a base")?;
                    ct.base = Some(base.split_once(':').map_or(base, |(_, l)| l).to_string());
                    if let Some(seq) = ext.children.iter().find(|s| is_xs(s, "sequence")) {
                        ct.sequence = particles(seq)?;
                    }
                }
                types.insert(name.to_string(), ct);
            }
        }
        Ok(Schema { target_ns, elements, types })
    }

    /// Whether the schema declares this top-level element.
    pub fn has_element(&self, name: &str) -> bool {
        self.elements.contains_key(name)
    }

    fn sequence_of(&self, ty: &str) -> Result<Vec<Particle>, String> {
        let ct = self.types.get(ty).ok_or_else(|| format!("schema has no type {ty}"))?;
        let mut seq = match &ct.base {
            Some(base) => self.sequence_of(base)?,
            None => Vec::new(),
        };
        seq.extend(ct.sequence.iter().cloned());
        Ok(seq)
    }

    /// Checks a top-level element (an operation request or response) against its declaration;
    /// returns one message per problem, each naming the element path.
    pub fn check(&self, el: &Element) -> Vec<String> {
        let mut out = Vec::new();
        match self.elements.get(&el.name) {
            None => out.push(format!("<{}> is not an element of the schema", el.name)),
            Some((ty, nillable)) => {
                if el.ns.as_deref() != Some(self.target_ns.as_str()) {
                    out.push(format!(
                        "<{}> must be in namespace {} (found {})",
                        el.name,
                        self.target_ns,
                        el.ns.as_deref().unwrap_or("no namespace")
                    ));
                }
                self.check_element(el, ty, *nillable, &el.name, &mut out);
            }
        }
        out
    }

    fn check_element(&self, el: &Element, ty: &TypeRef, nillable: bool, path: &str, out: &mut Vec<String>) {
        for a in &el.attrs {
            let ok = a.ns.as_deref() == Some(XSI_NS) && a.name == "nil" && nillable;
            if !ok {
                let ns = a.ns.as_deref().map(|n| format!("{{{n}}}")).unwrap_or_default();
                out.push(format!("{path}: attribute {ns}{} is not allowed", a.name));
            }
        }
        if el.is_nil() {
            if !el.children.is_empty() || !el.text.trim().is_empty() {
                out.push(format!("{path}: a nil element must be empty"));
            }
            return;
        }
        match ty {
            TypeRef::Simple(s) => {
                if let Some(c) = el.children.first() {
                    out.push(format!("{path}: simple-typed element has a child <{}>", c.name));
                } else if let Err(e) = lexical(*s, &el.text) {
                    out.push(format!("{path}: {e}"));
                }
            }
            TypeRef::Complex(t) => {
                if !el.text.trim().is_empty() {
                    out.push(format!("{path}: text {:?} is not allowed in a complex element", el.text.trim()));
                }
                let seq = match self.sequence_of(t) {
                    Ok(s) => s,
                    Err(e) => return out.push(format!("{path}: {e}")),
                };
                self.check_sequence(el, &seq, path, out);
            }
        }
    }

    fn check_sequence(&self, el: &Element, seq: &[Particle], path: &str, out: &mut Vec<String>) {
        let mut i = 0;
        for p in seq {
            let mut n = 0u32;
            while let Some(c) = el.children.get(i) {
                if c.name != p.name || p.max.is_some_and(|m| n >= m) {
                    break;
                }
                let cpath = format!("{path}/{}", c.name);
                if let Some(ns) = &c.ns {
                    out.push(format!("{cpath}: local elements are unqualified, but this one is in namespace {ns}"));
                }
                self.check_element(c, &p.ty, p.nillable, &cpath, out);
                n += 1;
                i += 1;
            }
            if n < p.min {
                out.push(format!("{path}: required element <{}> is missing (or out of order)", p.name));
            }
        }
        for c in &el.children[i..] {
            let known = seq.iter().any(|p| p.name == c.name);
            let why = if known { "out of order or repeated" } else { "not expected here" };
            out.push(format!("{path}: element <{}> is {why}", c.name));
        }
    }
}

/// Checks the lexical form of a built-in type (whitespace collapsed for everything but strings).
pub fn lexical(ty: Simple, raw: &str) -> Result<(), String> {
    let v = raw.trim();
    let ok = match ty {
        Simple::String => true,
        Simple::Int => v.parse::<i32>().is_ok(),
        Simple::Long => v.parse::<i64>().is_ok(),
        Simple::Decimal => is_decimal(v),
        Simple::Boolean => matches!(v, "true" | "false" | "1" | "0"),
        Simple::DateTime => is_date_time(v),
        Simple::Date => is_date_tz(v),
        Simple::Base64 => v.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/= \n\r\t".contains(&b)),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{raw:?} is not a valid {ty:?}"))
    }
}

fn is_decimal(v: &str) -> bool {
    let v = v.strip_prefix(['+', '-']).unwrap_or(v);
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    (!int.is_empty() || !frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

/// `YYYY-MM-DD` with a real calendar date.
pub fn is_plain_date(v: &str) -> bool {
    v.len() == 10 && chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok() && digits(&v[..4], 4)
}

fn is_tz(tz: &str) -> bool {
    tz.is_empty()
        || tz == "Z"
        || (tz.len() == 6
            && (tz.starts_with('+') || tz.starts_with('-'))
            && digits(&tz[1..3], 2)
            && &tz[3..4] == ":"
            && digits(&tz[4..6], 2))
}

fn is_date_tz(v: &str) -> bool {
    v.len() >= 10 && is_plain_date(&v[..10]) && is_tz(&v[10..])
}

fn is_date_time(v: &str) -> bool {
    let Some((date, rest)) = v.split_once('T') else { return false };
    if !is_plain_date(date) || rest.len() < 8 {
        return false;
    }
    let (time, mut tail) = rest.split_at(8);
    let hms: Vec<&str> = time.split(':').collect();
    let time_ok = hms.len() == 3
        && hms.iter().all(|p| digits(p, 2))
        && hms[0] <= "24"
        && hms[1] <= "59"
        && hms[2] <= "59"
        && (hms[0] != "24" || time == "24:00:00");
    if let Some(f) = tail.strip_prefix('.') {
        let n = f.bytes().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        tail = &f[n..];
    }
    time_ok && is_tz(tail)
}

/// One operation of a WSDL binding.
#[derive(Debug, Clone)]
pub struct WsdlOp {
    /// Operation name (what scripts and counters use).
    pub name: String,
    /// The binding's soapAction.
    pub soap_action: String,
    /// Local name of the element the input message carries in the SOAP Body.
    pub element: String,
}

/// Reads the operations of a document/literal WSDL: binding soapAction, portType input message,
/// and the message part's element.
pub fn parse_wsdl(wsdl: &str) -> Result<Vec<WsdlOp>, String> {
    let root = xml::parse(wsdl)?.root;
    let is = |el: &Element, ns: &str, name: &str| el.ns.as_deref() == Some(ns) && el.name == name;
    let local = |q: &str| q.split_once(':').map_or(q, |(_, l)| l).to_string();
    let mut message_element = HashMap::new();
    let mut input_message = HashMap::new();
    let mut actions = Vec::new();
    for c in &root.children {
        if is(c, WSDL_NS, "message") {
            if let (Some(name), Some(part)) = (attr(c, "name"), c.child("part")) {
                if let Some(el) = attr(part, "element") {
                    message_element.insert(name.to_string(), local(el));
                }
            }
        } else if is(c, WSDL_NS, "portType") {
            for op in c.children_named("operation") {
                if let (Some(name), Some(msg)) = (attr(op, "name"), op.child("input").and_then(|i| attr(i, "message")))
                {
                    input_message.insert(name.to_string(), local(msg));
                }
            }
        } else if is(c, WSDL_NS, "binding") {
            for op in c.children_named("operation") {
                let action = op
                    .children
                    .iter()
                    .find(|o| is(o, WSDL_SOAP_NS, "operation"))
                    .and_then(|o| attr(o, "soapAction"))
                    .unwrap_or_default();
                if let Some(name) = attr(op, "name") {
                    actions.push((name.to_string(), action.to_string()));
                }
            }
        }
    }
    actions
        .into_iter()
        .map(|(name, soap_action)| {
            let element = input_message
                .get(&name)
                .and_then(|m| message_element.get(m))
                .ok_or_else(|| format!("operation {name} has no input element"))?
                .clone();
            Ok(WsdlOp { name, soap_action, element })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_forms() {
        assert!(is_date_time("2018-07-30T00:00:00.000-04:00"));
        assert!(is_date_time("2024-05-01T00:00:00"));
        assert!(is_date_time("2024-05-01T10:00:00Z"));
        assert!(!is_date_time("2024-05-01"));
        assert!(!is_date_time("01/05/2024"));
        assert!(!is_date_time("2024-02-30T00:00:00"));
        assert!(is_date_tz("2024-05-01") && is_date_tz("2024-05-01+03:00"));
        assert!(lexical(Simple::Long, " 18073000016130 ").is_ok());
        assert!(lexical(Simple::Long, "abc").is_err());
        assert!(is_decimal("12.5") && is_decimal("-.5") && !is_decimal("1,5") && !is_decimal("."));
    }
}
