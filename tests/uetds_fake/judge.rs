//! Judging a request the way the e-Devlet gateway and the Metro (JAX-WS) service behind it would:
//! the path, POST, `Content-Type: text/xml; charset=utf-8`, the binding's SOAPAction, HTTP Basic
//! credentials, a SOAP 1.1 Envelope whose Body holds exactly the operation element in the service
//! namespace with unqualified children, `<wsuser>` first, and the element valid against the
//! schema (`adapters/uetds/schema/*.xsd`, the WSDLs beside them for the operation table; the
//! scheduled service against the fake's provisional `tarifeli.xsd`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::OnceLock;

use base64::Engine;
use tokio::io::AsyncWriteExt;

use super::schema::{parse_wsdl, Schema, WsdlOp};
use super::state::{Env, Service};
use super::xml::{self, Element};

/// The namespace of every U-ETDS operation element.
pub const UETDS_NS: &str = "http://uetds.unetws.udhb.gov.tr/";
/// SOAP 1.1 envelope namespace.
pub const SOAP11_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const SOAP12_NS: &str = "http://www.w3.org/2003/05/soap-envelope";

const ARIZI_XSD: &str = include_str!("../../adapters/uetds/schema/uetdsarizi.xsd");
const ARIZI_WSDL: &str = include_str!("../../adapters/uetds/schema/uetdsarizi.wsdl");
const ESYA_XSD: &str = include_str!("../../adapters/uetds/schema/uetdsesya-v3.xsd");
const ESYA_WSDL: &str = include_str!("../../adapters/uetds/schema/uetdsesya-v3.wsdl");
const TARIFELI_XSD: &str = include_str!("tarifeli.xsd");

/// The scheduled service's operations and SOAPActions (no public WSDL: the action pattern follows
/// the `…/uetdsyts/<op>` actions of the arızi binding).
const TARIFELI_OPS: [&str; 8] = [
    "seferEkle",
    "personelEkle",
    "personelIptal",
    "yolcuBiletEkle",
    "yolcuBiletIptalUetdsBiletRefNoIle",
    "seferIptal",
    "seferBildirimListele",
    "bildirimOzeti",
];

/// One service's published shape.
#[derive(Debug)]
pub struct ServiceSpec {
    pub service: Service,
    pub schema: Schema,
    /// By operation element local name.
    pub ops: HashMap<String, WsdlOp>,
    /// The schema as a file, for xmllint.
    pub xsd_path: PathBuf,
}

impl ServiceSpec {
    /// The operation a SOAPAction names, if any (to say which op a request meant).
    fn op_by_action(&self, action: &str) -> Option<&WsdlOp> {
        self.ops.values().find(|o| !o.soap_action.is_empty() && o.soap_action == action)
    }
}

/// The three services' shapes, read once per process.
#[derive(Debug)]
pub struct Specs {
    arizi: ServiceSpec,
    esya: ServiceSpec,
    tarifeli: ServiceSpec,
}

impl Specs {
    pub fn get(&self, s: Service) -> &ServiceSpec {
        match s {
            Service::Arizi => &self.arizi,
            Service::Esya => &self.esya,
            Service::Tarifeli => &self.tarifeli,
        }
    }
}

/// The parsed schemas and operation tables (the schema captures are compiled in and written to a
/// per-process temporary directory for xmllint, so the fake runs from any working directory).
pub fn specs() -> &'static Specs {
    static SPECS: OnceLock<Specs> = OnceLock::new();
    SPECS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tns-uetds-fake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creating the fake's schema directory");
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).expect("writing a schema for xmllint");
            p
        };
        let from_wsdl = |service, xsd: &str, wsdl: &str, file: &str| {
            let ops = parse_wsdl(wsdl).expect("the captured WSDL parses");
            ServiceSpec {
                service,
                schema: Schema::parse(xsd).expect("the captured XSD parses"),
                ops: ops.into_iter().map(|o| (o.element.clone(), o)).collect(),
                xsd_path: write(file, xsd),
            }
        };
        let tarifeli_ops = TARIFELI_OPS
            .iter()
            .map(|op| {
                let o = WsdlOp {
                    name: op.to_string(),
                    soap_action: format!("{UETDS_NS}uetdsyts/{op}"),
                    element: op.to_string(),
                };
                (op.to_string(), o)
            })
            .collect();
        Specs {
            arizi: from_wsdl(Service::Arizi, ARIZI_XSD, ARIZI_WSDL, "uetdsarizi.xsd"),
            esya: from_wsdl(Service::Esya, ESYA_XSD, ESYA_WSDL, "uetdsesya-v3.xsd"),
            tarifeli: ServiceSpec {
                service: Service::Tarifeli,
                schema: Schema::parse(TARIFELI_XSD).expect("the provisional tarifeli XSD parses"),
                ops: tarifeli_ops,
                xsd_path: write("tarifeli.xsd", TARIFELI_XSD),
            },
        }
    })
}

/// The service and environment a path belongs to.
pub fn route(path: &str) -> Option<(Service, Env)> {
    let rest = path.strip_prefix("/services/g2g/kdgm/")?;
    let (env, name) = match rest.strip_prefix("test/") {
        Some(n) => (Env::Test, n),
        None => (Env::Production, rest),
    };
    let service = match name {
        "uetdsarizi" => Service::Arizi,
        "uetdsesya" => Service::Esya,
        "uetdstarifeli" => Service::Tarifeli,
        _ => return None,
    };
    Some((service, env))
}

/// The parts of an HTTP request the judge looks at.
#[derive(Debug, Clone, Copy)]
pub struct HttpParts<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub content_type: Option<&'a str>,
    pub soap_action: Option<&'a str>,
    pub authorization: Option<&'a str>,
    pub body: &'a [u8],
}

/// Why the gateway refuses a request before it reaches the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayRefusal {
    NotFound,
    MethodNotAllowed,
}

/// The judge's findings on one request.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub route: Option<(Service, Env)>,
    pub refusal: Option<GatewayRefusal>,
    /// The operation name (from the Body element, or else from the SOAPAction).
    pub op: Option<String>,
    /// The operation element as parsed.
    pub element: Option<Element>,
    /// HTTP Basic user and password, when the header was well-formed Basic.
    pub basic: Option<(String, String)>,
    /// Everything wrong, in the order found.
    pub violations: Vec<String>,
}

/// Judges everything that needs no external process (xmllint comes after, see [`xmllint`]).
pub fn judge(req: HttpParts) -> Judged {
    let mut j = Judged { basic: basic_credentials(req.authorization), ..Default::default() };
    let Some(route) = route(req.path) else {
        j.refusal = Some(GatewayRefusal::NotFound);
        j.violations.push(format!("no U-ETDS service at path {}", req.path));
        return j;
    };
    j.route = Some(route);
    let spec = specs().get(route.0);
    let action = req.soap_action.map(unquote);
    if let Some(a) = action {
        j.op = spec.op_by_action(a).map(|o| o.name.clone());
    }
    if req.method != "POST" {
        j.refusal = Some(GatewayRefusal::MethodNotAllowed);
        j.violations.push(format!("method {} (SOAP 1.1 over HTTP is POST)", req.method));
        return j;
    }
    if j.basic.is_none() {
        let why = match req.authorization {
            None => "no Authorization header (HTTP Basic is required)".to_string(),
            Some(_) => "Authorization header is not well-formed HTTP Basic".to_string(),
        };
        j.violations.push(why);
    }
    match req.content_type {
        None => j.violations.push("no Content-Type (expected text/xml; charset=utf-8)".into()),
        Some(ct) if !is_text_xml_utf8(ct) => {
            j.violations.push(format!("Content-Type {ct:?} (expected text/xml; charset=utf-8)"))
        }
        Some(_) => {}
    }
    let Ok(body) = std::str::from_utf8(req.body) else {
        j.violations.push("body is not UTF-8".into());
        return j;
    };
    let doc = match xml::parse(body) {
        Ok(d) => d,
        Err(e) => {
            j.violations.push(e);
            return j;
        }
    };
    if doc.has_doctype {
        j.violations.push("a SOAP message must not contain a DOCTYPE".into());
    }
    let Some(op_el) = envelope_body(doc.root, &mut j.violations) else { return j };
    let op = spec.ops.get(&op_el.name);
    match op {
        None => j.violations.push(format!("<{}> is not an operation of the {:?} service", op_el.name, route.0)),
        Some(o) => {
            j.op = Some(o.name.clone());
            match action {
                None => j.violations.push(format!("no SOAPAction header (the binding says {:?})", o.soap_action)),
                Some(a) if a != o.soap_action => j
                    .violations
                    .push(format!("SOAPAction {a:?} does not match the binding's {:?} for {}", o.soap_action, o.name)),
                Some(_) => {}
            }
        }
    }
    // The schema check below also requires the operation element to be in the service namespace.
    if let Some(o) = op {
        if !matches!(o.name.as_str(), "kullaniciKontrol" | "servisTest") {
            check_wsuser(&op_el, &mut j.violations);
        }
        for v in spec.schema.check(&op_el) {
            if !j.violations.contains(&v) {
                j.violations.push(v);
            }
        }
    }
    j.element = Some(op_el);
    j
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    v.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(v)
}

fn is_text_xml_utf8(ct: &str) -> bool {
    let mut parts = ct.split(';');
    let mime_ok = parts.next().is_some_and(|m| m.trim().eq_ignore_ascii_case("text/xml"));
    let charset_ok = parts.any(|p| {
        p.split_once('=')
            .is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case("charset") && unquote(v).eq_ignore_ascii_case("utf-8"))
    });
    mime_ok && charset_ok
}

/// User and password of a well-formed `Authorization: Basic …` header.
pub fn basic_credentials(header: Option<&str>) -> Option<(String, String)> {
    let h = header?.trim();
    let (scheme, token) = h.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(token.trim()).ok()?;
    let s = String::from_utf8(raw).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Checks Envelope / optional Header / Body and returns the single element inside the Body.
fn envelope_body(root: Element, v: &mut Vec<String>) -> Option<Element> {
    if root.ns.as_deref() == Some(SOAP12_NS) {
        v.push("SOAP 1.2 envelope (the service speaks SOAP 1.1)".into());
        return None;
    }
    if root.ns.as_deref() != Some(SOAP11_NS) || root.name != "Envelope" {
        v.push(format!("root element <{}> is not a SOAP 1.1 Envelope", root.name));
        return None;
    }
    if !root.text.trim().is_empty() {
        v.push("text directly inside the Envelope".into());
    }
    let is_soap = |e: &Element, n: &str| e.ns.as_deref() == Some(SOAP11_NS) && e.name == n;
    let mut children = root.children.into_iter().peekable();
    if children.peek().is_some_and(|c| is_soap(c, "Header")) {
        children.next();
    }
    let Some(body) = children.next().filter(|c| is_soap(c, "Body")) else {
        v.push("the Envelope has no Body (after an optional Header)".into());
        return None;
    };
    if let Some(extra) = children.next() {
        v.push(format!("element <{}> after the Body", extra.name));
    }
    if !body.text.trim().is_empty() {
        v.push("text directly inside the Body".into());
    }
    let n = body.children.len();
    if n != 1 {
        v.push(format!("the Body holds {n} elements (exactly one operation element expected)"));
    }
    body.children.into_iter().next()
}

fn check_wsuser(op: &Element, v: &mut Vec<String>) {
    match op.children.first() {
        Some(w) if w.name == "wsuser" && w.ns.is_none() => {
            let names: Vec<&str> = w.children.iter().map(|c| c.name.as_str()).collect();
            if names != ["kullaniciAdi", "sifre"] {
                v.push(format!("<wsuser> must hold <kullaniciAdi> then <sifre> (found {names:?})"));
            }
        }
        Some(w) if w.name == "wsuser" => v.push("<wsuser> must be unqualified".into()),
        _ => v.push(format!("<{}> must start with <wsuser>", op.name)),
    }
}

/// The credentials a request's `<wsuser>` carries.
pub fn wsuser(op: &Element) -> Option<(&str, &str)> {
    let w = op.child("wsuser")?;
    Some((w.child_text("kullaniciAdi")?, w.child_text("sifre")?))
}

/// Validates the operation element with `xmllint --noout --schema <xsd> -`, as its own document
/// with its namespace declared. `Err` holds xmllint's complaint.
pub async fn xmllint(service: Service, el: &Element) -> Result<(), String> {
    let spec = specs().get(service);
    let doc = xml::write_standalone(el);
    let mut child = tokio::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&spec.xsd_path)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("xmllint could not be run (install libxml2-utils): {e}"))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(doc.as_bytes()).await.map_err(|e| format!("writing to xmllint: {e}"))?;
    drop(stdin);
    let out = child.wait_with_output().await.map_err(|e| format!("waiting for xmllint: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let msg = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = msg.lines().filter(|l| !l.trim().is_empty() && !l.ends_with("fails to validate")).collect();
    Err(format!("XSD: {}", lines.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(route("/services/g2g/kdgm/test/uetdsarizi"), Some((Service::Arizi, Env::Test)));
        assert_eq!(route("/services/g2g/kdgm/uetdsesya"), Some((Service::Esya, Env::Production)));
        assert_eq!(route("/services/g2g/kdgm/test/uetdstarifeli"), Some((Service::Tarifeli, Env::Test)));
        assert_eq!(route("/services/g2g/kdgm/test/uetdsarizi/"), None);
    }

    #[test]
    fn content_types() {
        assert!(is_text_xml_utf8("text/xml; charset=utf-8"));
        assert!(is_text_xml_utf8("text/xml;charset=\"UTF-8\""));
        assert!(!is_text_xml_utf8("text/xml"));
        assert!(!is_text_xml_utf8("application/soap+xml; charset=utf-8"));
    }

    #[test]
    fn operation_tables() {
        let s = specs();
        let arizi = s.get(Service::Arizi);
        assert_eq!(arizi.ops["seferEkle"].soap_action, "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferEkle");
        assert_eq!(arizi.ops["testMsj1"].name, "servisTest");
        assert_eq!(arizi.ops["seferDetayCiktisiAl"].soap_action, "");
        let esya = s.get(Service::Esya);
        assert_eq!(
            esya.ops["sefereYukEkleV3"].soap_action,
            "http://uetds.unetws.udhb.gov.tr/uetdsesya/sefereYukEkleV3"
        );
        assert!(s.get(Service::Tarifeli).schema.has_element("yolcuBiletEkle"));
    }
}
