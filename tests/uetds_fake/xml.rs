//! A small owned XML tree: requests are parsed into it with their namespaces resolved (so the judge
//! can tell `<aracPlaka>` from `<uet:aracPlaka>`), and replies are built as trees and written with
//! quick-xml, which escapes every text and attribute value: nothing a client sent is ever pasted
//! into a reply as markup.

use std::fmt::Display;

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::name::{QName, ResolveResult};
use quick_xml::{NsReader, Writer, XmlVersion};

/// The XML Schema instance namespace (`xsi:nil`, `xsi:type`).
pub const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// One element: its resolved namespace, local name, attributes, child elements and the character
/// data directly inside it (concatenated, not trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// Namespace URI the element is in; `None` for an unqualified element.
    pub ns: Option<String>,
    /// The prefix as written (requests), or the prefix to write (replies).
    pub prefix: Option<String>,
    /// Local name.
    pub name: String,
    /// Attributes, without namespace declarations (those are resolved into `ns`).
    pub attrs: Vec<Attr>,
    /// Child elements in document order.
    pub children: Vec<Element>,
    /// Character data directly inside this element, entities resolved.
    pub text: String,
}

/// One attribute with its resolved namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// Namespace URI; `None` for an unprefixed attribute.
    pub ns: Option<String>,
    /// Local name (for replies: the full name to write, e.g. `xmlns:ns2`).
    pub name: String,
    /// Value, entities resolved.
    pub value: String,
}

impl Element {
    /// An unqualified element without content.
    pub fn new(name: impl Into<String>) -> Self {
        Element { name: name.into(), ..Default::default() }
    }

    /// An unqualified element holding `text`.
    pub fn leaf(name: impl Into<String>, text: impl Display) -> Self {
        Element { name: name.into(), text: text.to_string(), ..Default::default() }
    }

    /// The first child with this local name (in any namespace).
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child with this local name, in order.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The text of the first child with this local name, as sent (not trimmed).
    pub fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }

    /// The element at a `/`-separated path of local names below this one, e.g.
    /// `"ariziSeferBilgileriInput/firmaSeferNo"`.
    pub fn path(&self, path: &str) -> Option<&Element> {
        path.split('/').filter(|s| !s.is_empty()).try_fold(self, |el, step| el.child(step))
    }

    /// The text at a `/`-separated path (see [`Element::path`]).
    pub fn path_text(&self, path: &str) -> Option<&str> {
        self.path(path).map(|e| e.text.as_str())
    }

    /// Whether this element carries `xsi:nil="true"`.
    pub fn is_nil(&self) -> bool {
        self.attrs.iter().any(|a| a.ns.as_deref() == Some(XSI_NS) && a.name == "nil" && a.value.trim() == "true")
    }

    /// Builder: renames the element.
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Builder: appends a child.
    pub fn with(mut self, child: Element) -> Self {
        self.children.push(child);
        self
    }

    /// Builder: appends `<name>value</name>`.
    pub fn field(self, name: &str, value: impl Display) -> Self {
        self.with(Element::leaf(name, value))
    }

    /// Builder: appends `<name>value</name>` when there is a value.
    pub fn opt_field<T: Display>(self, name: &str, value: Option<T>) -> Self {
        match value {
            Some(v) => self.field(name, v),
            None => self,
        }
    }

    /// Builder: appends every element of `children`.
    pub fn with_all(mut self, children: impl IntoIterator<Item = Element>) -> Self {
        self.children.extend(children);
        self
    }

    /// Builder: sets the prefix and declares it for `ns` on this element (replies).
    pub fn declared(mut self, prefix: &str, ns: &str) -> Self {
        self.prefix = Some(prefix.to_string());
        self.ns = Some(ns.to_string());
        self.attrs.push(Attr { ns: None, name: format!("xmlns:{prefix}"), value: ns.to_string() });
        self
    }

    /// Builder: sets the prefix only (the declaration is on an ancestor).
    pub fn prefixed(mut self, prefix: &str) -> Self {
        self.prefix = Some(prefix.to_string());
        self
    }

    fn qname(&self) -> String {
        match &self.prefix {
            Some(p) => format!("{p}:{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A parsed document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The root element.
    pub root: Element,
    /// Whether the document had a `<!DOCTYPE …>` (SOAP forbids one).
    pub has_doctype: bool,
}

/// Parses a whole document, resolving every element and attribute namespace. Fails on anything
/// that is not well-formed XML (unbound prefixes included), naming the problem.
pub fn parse(xml: &str) -> Result<Document, String> {
    let mut reader = NsReader::from_str(xml);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut has_doctype = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("not well-formed XML (near byte {}): {e}", reader.error_position()))?;
        match event {
            Event::Start(start) => {
                if root.is_some() {
                    return Err("not well-formed XML: content after the root element".into());
                }
                stack.push(open(&reader, &start)?);
            }
            Event::Empty(start) => {
                let el = open(&reader, &start)?;
                close(el, &mut stack, &mut root)?;
            }
            Event::End(_) => {
                let el = stack.pop().ok_or("not well-formed XML: unexpected end tag")?;
                close(el, &mut stack, &mut root)?;
            }
            Event::Text(t) => {
                let s = t.xml_content(XmlVersion::Implicit1_0);
                push_text(&mut stack, &s)?;
            }
            Event::CData(c) => {
                let s = c.xml_content(XmlVersion::Implicit1_0);
                push_text(&mut stack, &s)?;
            }
            Event::GeneralRef(r) => {
                let s = match r.resolve_char_ref().map_err(|e| format!("bad character reference: {e}"))? {
                    Some(ch) => ch.to_string(),
                    None => {
                        resolve_predefined_entity(&r).ok_or_else(|| format!("undefined entity &{};", &*r))?.to_string()
                    }
                };
                push_text(&mut stack, &s)?;
            }
            Event::DocType(_) => has_doctype = true,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err("not well-formed XML: unclosed element".into());
    }
    let root = root.ok_or("not well-formed XML: no root element")?;
    Ok(Document { root, has_doctype })
}

fn open(reader: &NsReader<&[u8]>, start: &BytesStart) -> Result<Element, String> {
    let resolver = reader.resolver();
    let (res, local) = resolver.resolve_element(start.name());
    let ns = bound(res, start.name())?;
    let prefix = start.name().prefix().map(|p| p.into_inner().to_string());
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| format!("bad attribute: {e}"))?;
        if attr.key.as_namespace_binding().is_some() {
            continue;
        }
        let (res, alocal) = resolver.resolve_attribute(attr.key);
        let ans = bound(res, attr.key)?;
        let value = attr.normalized_value(XmlVersion::Implicit1_0).map_err(|e| format!("bad attribute value: {e}"))?;
        attrs.push(Attr { ns: ans, name: alocal.into_inner().to_string(), value: value.into_owned() });
    }
    Ok(Element { ns, prefix, name: local.into_inner().to_string(), attrs, children: Vec::new(), text: String::new() })
}

fn bound(res: ResolveResult, name: QName) -> Result<Option<String>, String> {
    match res {
        ResolveResult::Bound(ns) => Ok(Some(ns.into_inner().to_string())),
        ResolveResult::Unbound => Ok(None),
        ResolveResult::Unknown(p) => Err(format!("prefix `{p}` of <{}> is not declared", name.into_inner())),
    }
}

fn close(el: Element, stack: &mut [Element], root: &mut Option<Element>) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None if root.is_none() => *root = Some(el),
        None => return Err("not well-formed XML: more than one root element".into()),
    }
    Ok(())
}

fn push_text(stack: &mut [Element], s: &str) -> Result<(), String> {
    match stack.last_mut() {
        Some(el) => el.text.push_str(s),
        None if s.trim().is_empty() => {}
        None => return Err("not well-formed XML: text outside the root element".into()),
    }
    Ok(())
}

/// Writes a reply tree (prefixes and declarations as set by the builders) after an XML
/// declaration.
pub fn write_document(root: &Element) -> String {
    let mut w = Writer::new(Vec::new());
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None))).expect("writing to a Vec");
    write_element(&mut w, root);
    String::from_utf8(w.into_inner()).expect("quick-xml writes UTF-8")
}

fn write_element(w: &mut Writer<Vec<u8>>, el: &Element) {
    let name = el.qname();
    let mut start = BytesStart::new(name.as_str());
    for a in &el.attrs {
        start.push_attribute((a.name.as_str(), a.value.as_str()));
    }
    if el.children.is_empty() && el.text.is_empty() {
        w.write_event(Event::Empty(start)).expect("writing to a Vec");
        return;
    }
    w.write_event(Event::Start(start)).expect("writing to a Vec");
    if !el.text.is_empty() {
        w.write_event(Event::Text(BytesText::new(&el.text))).expect("writing to a Vec");
    }
    for c in &el.children {
        write_element(w, c);
    }
    w.write_event(Event::End(BytesEnd::new(name.as_str()))).expect("writing to a Vec");
}

/// Writes a parsed element as a standalone document that keeps every element and attribute in the
/// namespace it was in (each namespaced one re-declares its own prefix). The judge feeds this to
/// xmllint, so a child that was namespaced in the request stays namespaced and fails the schema.
pub fn write_standalone(el: &Element) -> String {
    let mut w = Writer::new(Vec::new());
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None))).expect("writing to a Vec");
    write_resolved(&mut w, el, 0);
    String::from_utf8(w.into_inner()).expect("quick-xml writes UTF-8")
}

fn write_resolved(w: &mut Writer<Vec<u8>>, el: &Element, depth: usize) {
    let name = match &el.ns {
        Some(_) => format!("n{depth}:{}", el.name),
        None => el.name.clone(),
    };
    let mut start = BytesStart::new(name.as_str());
    if let Some(ns) = &el.ns {
        start.push_attribute((format!("xmlns:n{depth}").as_str(), ns.as_str()));
    }
    for (i, a) in el.attrs.iter().enumerate() {
        match &a.ns {
            Some(ns) => {
                start.push_attribute((format!("xmlns:a{depth}x{i}").as_str(), ns.as_str()));
                start.push_attribute((format!("a{depth}x{i}:{}", a.name).as_str(), a.value.as_str()));
            }
            None => start.push_attribute((a.name.as_str(), a.value.as_str())),
        }
    }
    w.write_event(Event::Start(start)).expect("writing to a Vec");
    if !el.text.is_empty() {
        w.write_event(Event::Text(BytesText::new(&el.text))).expect("writing to a Vec");
    }
    for c in &el.children {
        write_resolved(w, c, depth + 1);
    }
    w.write_event(Event::End(BytesEnd::new(name.as_str()))).expect("writing to a Vec");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_namespaces_and_entities() {
        let doc = parse(
            r#"<?xml version="1.0"?><s:E xmlns:s="urn:s" xmlns:u="urn:u"><s:B><u:op><a>x &amp; &#x130;</a><u:b/></u:op></s:B></s:E>"#,
        )
        .unwrap();
        let op = doc.root.path("B/op").unwrap();
        assert_eq!(op.ns.as_deref(), Some("urn:u"));
        assert_eq!(op.child_text("a"), Some("x & İ"));
        assert_eq!(op.child("a").unwrap().ns, None);
        assert_eq!(op.child("b").unwrap().ns.as_deref(), Some("urn:u"));
    }

    #[test]
    fn rejects_malformed() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("<a/><b/>").is_err());
        assert!(parse("<x:a/>").is_err());
        assert!(parse("<a>&nbsp;</a>").is_err());
    }

    #[test]
    fn writes_escaped() {
        let el = Element::new("r").declared("ns2", "urn:x").field("m", "<b>&\"");
        let s = write_document(&el);
        assert!(s.contains("<m>&lt;b&gt;&amp;&quot;</m>"), "{s}");
        assert_eq!(parse(&s).unwrap().root.child_text("m"), Some("<b>&\""));
    }
}
