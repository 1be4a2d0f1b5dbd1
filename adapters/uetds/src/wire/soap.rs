//! SOAP 1.1 envelopes out, replies in.
//!
//! Requests are written the way the Ministry's own SoapUI samples are: `soapenv:` for the
//! envelope, the service namespace bound to `uet:` on it, the wrapper element `uet:NAME`, and
//! everything inside it unprefixed and in no namespace.
//!
//! Replies are read by local name only. Metro answers with `S:`/`ns2:`, other stacks (a
//! gateway, a simulator) with `soap:`, `env:` or default namespaces, so prefixes are never
//! compared. The wanted subtree (`Body/NAMEResponse/return`, or a SOAP Fault anywhere in the
//! Body) is cut out and re-emitted with bare local names and without attributes (an element
//! marked `xsi:nil="true"` is dropped: absent and nil mean the same here) before serde sees
//! it, so the typed structs never depend on how the server spelled its names.

use std::{fmt, io};

use quick_xml::{
    events::{BytesDecl, BytesEnd, BytesStart, Event},
    Reader, Writer,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::{redact::Secrets, Operation, Reply, NAMESPACE};

/// The SOAP 1.1 envelope namespace.
pub const SOAP11_ENVELOPE: &str = "http://schemas.xmlsoap.org/soap/envelope/";

/// At most this many characters of a downstream text go into an error.
pub const EXCERPT: usize = 300;

/// Why a call produced no usable `<return>`.
///
/// The parsing here keeps the downstream's texts whole; [`CallError::redact`] masks the
/// credentials in them and only then cuts them to an excerpt. The transport returns no error
/// it has not redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No usable answer at the transport level. `sent` is false only when the request certainly
    /// never reached the server (DNS failure, connection refused, TLS handshake failure); a
    /// timeout or reset after connecting is `sent: true` (outcome unknown).
    Unreachable { sent: bool, detail: String },
    /// An HTTP error status without a SOAP fault: 401/403 from the gateway, 5xx, an HTML error
    /// page… (`detail`: what the page says, see [`snippet`]).
    Http { status: u16, detail: String },
    /// A SOAP Fault (from the gateway or the service), with HTTP 500 or any status. `code` is
    /// the fault code's local part (`Server`, `Client`, `Receiver`…), without its prefix.
    Fault { code: String, message: String },
    /// 2xx but not the expected envelope: empty, not XML, HTML, no `<nameResponse>/<return>`.
    Malformed(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Unreachable { sent: false, detail } => {
                write!(f, "U-ETDS not reached (request not sent): {detail}")
            }
            CallError::Unreachable { sent: true, detail } => {
                write!(f, "no answer from U-ETDS (outcome unknown): {detail}")
            }
            CallError::Http { status, detail } if detail.is_empty() => write!(f, "HTTP {status} from U-ETDS"),
            CallError::Http { status, detail } => write!(f, "HTTP {status} from U-ETDS: {detail}"),
            CallError::Fault { code, message } => write!(f, "SOAP fault from U-ETDS ({code}): {message}"),
            CallError::Malformed(detail) => write!(f, "unexpected reply from U-ETDS: {detail}"),
        }
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// The same error with the credentials masked in its texts, in every form (see
    /// [`Secrets`]), each text then cleaned and cut to an excerpt of at most [`EXCERPT`]
    /// characters.
    pub fn redact(self, secrets: &Secrets) -> CallError {
        let r = |s: String| secrets.excerpt(&s, EXCERPT);
        match self {
            CallError::Unreachable { sent, detail } => CallError::Unreachable { sent, detail: r(detail) },
            CallError::Http { status, detail } => CallError::Http { status, detail: r(detail) },
            CallError::Fault { code, message } => CallError::Fault { code: r(code), message: r(message) },
            CallError::Malformed(detail) => CallError::Malformed(r(detail)),
        }
    }
}

/// The SOAP 1.1 envelope of a U-ETDS operation.
pub fn envelope<O: Operation>(op: &O) -> String {
    envelope_dynamic(NAMESPACE, O::NAME, op)
}

/// The SOAP 1.1 envelope of an operation known only at run time: `<uet:NAME>` in `namespace`
/// with `body`'s fields as unqualified children.
///
/// Panics when `body` cannot be written as XML (a map with non-text keys, a bare sequence) or
/// `name` is not an XML name: see [`try_envelope`].
pub fn envelope_dynamic<B: Serialize>(namespace: &str, name: &str, body: &B) -> String {
    try_envelope(namespace, name, body).unwrap_or_else(|e| panic!("{e}"))
}

/// [`envelope_dynamic`] that reports instead of panicking.
pub fn try_envelope<B: Serialize>(namespace: &str, name: &str, body: &B) -> Result<String, String> {
    let wrapper = ["uet:", name].concat();
    let mut w = Writer::new(Vec::new());
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .and_then(|_| {
            w.create_element("soapenv:Envelope")
                .with_attribute(("xmlns:soapenv", SOAP11_ENVELOPE))
                .with_attribute(("xmlns:uet", namespace))
                .write_inner_content(|w| {
                    w.create_element("soapenv:Header").write_empty()?;
                    w.create_element("soapenv:Body")
                        .write_inner_content(|w| w.write_serializable(&wrapper, body).map_err(io::Error::other))?;
                    Ok(())
                })
                .map(|_| ())
        })
        .map_err(|e| format!("cannot write <{name}> as XML: {e}"))?;
    String::from_utf8(w.into_inner()).map_err(|e| format!("cannot write <{name}> as XML: {e}"))
}

/// The content of `Body/<nameResponse>/<return>`, whatever the prefixes; a SOAP Fault anywhere
/// in the Body is returned as [`CallError::Fault`].
pub fn parse_return<R: DeserializeOwned>(xml: &[u8], name: &str) -> Result<R, CallError> {
    let response = [name, "Response"].concat();
    parse_at(xml, &[&response, "return"])
}

/// The reply of operation `O`, wrapped or bare (see [`Reply`]).
pub fn parse_reply<O: Operation>(xml: &[u8]) -> Result<O::Return, CallError> {
    match O::REPLY {
        Reply::Wrapped => parse_return(xml, O::NAME),
        Reply::Bare(element) => parse_at(xml, &[element]),
    }
}

fn parse_at<R: DeserializeOwned>(xml: &[u8], path: &[&str]) -> Result<R, CallError> {
    let found = locate(xml, path)?;
    if let Some(fault) = found.fault {
        return Err(read_fault(&fault));
    }
    let Some(target) = found.target else {
        let last = path[path.len() - 1];
        return Err(CallError::Malformed(match found.matched {
            _ if !found.body => "no SOAP Body".to_string(),
            n if n == path.len() => format!("<{last}> is nil"),
            0 => format!("no <{}> in the SOAP Body", path[0]),
            n => format!("no <{}> in <{}>", path[n], path[n - 1]),
        }));
    };
    let text = std::str::from_utf8(&target).map_err(|_| CallError::Malformed("reply is not UTF-8".into()))?;
    quick_xml::de::from_str(text)
        .map_err(|e| CallError::Malformed(format!("unexpected content in <{}>: {e}", path[path.len() - 1])))
}

/// What [`locate`] found in an envelope.
struct Located {
    body: bool,
    /// The first SOAP Fault in the Body, re-emitted.
    fault: Option<Vec<u8>>,
    /// The wanted element, re-emitted (`None` when absent or nil).
    target: Option<Vec<u8>>,
    /// How many steps of the path were found.
    matched: usize,
}

/// Walks the envelope once, by local names: `Envelope/Body/path…`, and any `Fault` in the Body.
fn locate(xml: &[u8], path: &[&str]) -> Result<Located, CallError> {
    if xml.iter().all(u8::is_ascii_whitespace) {
        return Err(CallError::Malformed("empty body".into()));
    }
    if looks_like_html(xml) {
        return Err(html(xml));
    }
    let not_xml = |e: &dyn fmt::Display| CallError::Malformed(format!("not XML: {e}"));
    let mut reader = Reader::from_reader(xml);
    let mut found = Located { body: false, fault: None, target: None, matched: 0 };
    // Local names of the open elements below the root: `open[0]` is `Body` while inside it.
    let mut open: Vec<String> = Vec::new();
    let mut root_seen = false;
    loop {
        let (start, empty) = match reader.read_event().map_err(|e| not_xml(&e))? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                if open.pop().is_none() {
                    break; // the root closed: nothing after it matters
                }
                continue;
            }
            Event::Eof if root_seen => return Err(CallError::Malformed("truncated XML".into())),
            Event::Eof => return Err(CallError::Malformed("no XML element in the body".into())),
            _ => continue,
        };
        let local = local_name(&start);
        if !root_seen {
            root_seen = true;
            if local.eq_ignore_ascii_case("html") {
                return Err(html(xml));
            }
            if local != "Envelope" {
                return Err(CallError::Malformed(format!("not a SOAP envelope (root element <{local}>)")));
            }
            if empty {
                break;
            }
            continue;
        }
        let in_body = open.first().is_some_and(|b| b == "Body");
        if open.is_empty() && local == "Body" {
            found.body = true;
        }
        if in_body && local == "Fault" {
            let fault = capture(&mut reader, &start, empty).map_err(|e| not_xml(&e))?;
            found.fault = found.fault.or(Some(fault.unwrap_or_default()));
            continue;
        }
        if in_body && found.target.is_none() {
            // The chain from the Body's child down to here.
            let chain = &open[1..];
            let on_path = chain.len() < path.len()
                && chain.iter().zip(path).all(|(a, b)| a.as_str() == *b)
                && local == path[chain.len()];
            if on_path {
                found.matched = found.matched.max(chain.len() + 1);
                if chain.len() + 1 == path.len() {
                    found.target = capture(&mut reader, &start, empty).map_err(|e| not_xml(&e))?;
                    continue;
                }
            }
        }
        if !empty {
            open.push(local);
        }
    }
    Ok(found)
}

/// `<!DOCTYPE html…` or `<html…` first (gateways' error pages are seldom well-formed XML).
fn looks_like_html(body: &[u8]) -> bool {
    let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body).trim_ascii_start();
    let head: Vec<u8> = start.iter().take(14).map(u8::to_ascii_lowercase).collect();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html")
}

fn local_name(start: &BytesStart<'_>) -> String {
    start.local_name().into_inner().to_owned()
}

/// `xsi:nil="true"` (whatever the prefix).
fn is_nil(start: &BytesStart<'_>) -> bool {
    start
        .attributes()
        .flatten()
        .any(|a| a.key.local_name().into_inner() == "nil" && matches!(a.value.trim(), "true" | "1"))
}

/// Reads the element `start` opened to its end and re-emits it with local names only, no
/// attributes, no comments; nil descendants are dropped. `None` when `start` itself is nil.
fn capture(reader: &mut Reader<&[u8]>, start: &BytesStart<'_>, empty: bool) -> Result<Option<Vec<u8>>, CaptureError> {
    if is_nil(start) {
        if !empty {
            reader.read_to_end(start.name())?;
        }
        return Ok(None);
    }
    let mut w = Writer::new(Vec::new());
    let root = local_name(start);
    if empty {
        w.write_event(Event::Empty(BytesStart::new(root)))?;
        return Ok(Some(w.into_inner()));
    }
    w.write_event(Event::Start(BytesStart::new(root.as_str())))?;
    let mut depth = 1usize;
    while depth > 0 {
        match reader.read_event()? {
            Event::Start(e) if is_nil(&e) => {
                reader.read_to_end(e.name())?;
            }
            Event::Start(e) => {
                depth += 1;
                w.write_event(Event::Start(BytesStart::new(local_name(&e))))?;
            }
            Event::Empty(e) if is_nil(&e) => {}
            Event::Empty(e) => w.write_event(Event::Empty(BytesStart::new(local_name(&e))))?,
            Event::End(e) => {
                depth -= 1;
                w.write_event(Event::End(BytesEnd::new(e.local_name().into_inner())))?;
            }
            e @ (Event::Text(_) | Event::CData(_) | Event::GeneralRef(_)) => w.write_event(e)?,
            Event::Eof => return Err(CaptureError("truncated XML".into())),
            _ => {}
        }
    }
    Ok(Some(w.into_inner()))
}

#[derive(Debug)]
struct CaptureError(String);

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<quick_xml::Error> for CaptureError {
    fn from(e: quick_xml::Error) -> Self {
        CaptureError(e.to_string())
    }
}

impl From<io::Error> for CaptureError {
    fn from(e: io::Error) -> Self {
        CaptureError(e.to_string())
    }
}

/// A Fault's content, SOAP 1.1 (`faultcode`, `faultstring`) or 1.2 (`Code/Value`,
/// `Reason/Text`).
#[derive(Deserialize, Default)]
struct FaultContent {
    faultcode: Option<String>,
    faultstring: Option<String>,
    #[serde(rename = "Code")]
    code: Option<FaultCode12>,
    #[serde(rename = "Reason")]
    reason: Option<FaultReason12>,
}

#[derive(Deserialize, Default)]
struct FaultCode12 {
    #[serde(rename = "Value")]
    value: Option<String>,
}

#[derive(Deserialize, Default)]
struct FaultReason12 {
    #[serde(rename = "Text", default)]
    text: Vec<String>,
}

fn read_fault(fault: &[u8]) -> CallError {
    let content: FaultContent =
        std::str::from_utf8(fault).ok().and_then(|s| quick_xml::de::from_str(s).ok()).unwrap_or_default();
    let code = content.faultcode.or(content.code.and_then(|c| c.value)).unwrap_or_default();
    let code = code.trim();
    let code = code.rsplit_once(':').map_or(code, |(_, local)| local).to_string();
    let message = content.faultstring.or(content.reason.and_then(|r| r.text.into_iter().next())).unwrap_or_default();
    CallError::Fault { code, message }
}

fn html(body: &[u8]) -> CallError {
    let title = snippet(body);
    if title.trim().is_empty() {
        CallError::Malformed("an HTML page instead of a SOAP envelope".into())
    } else {
        CallError::Malformed(format!("an HTML page instead of a SOAP envelope: {title}"))
    }
}

/// What an error body says: an HTML page's title, else its text. Read leniently (error pages
/// are rarely well-formed). Whole: [`CallError::redact`] cuts it, after masking.
pub(crate) fn snippet(body: &[u8]) -> String {
    let mut reader = Reader::from_reader(body);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    let mut text = String::new();
    let mut title: Option<String> = None;
    let mut in_title = false;
    let mut skip = 0usize; // inside <script>/<style>
    let mut saw_markup = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                saw_markup = true;
                match e.local_name().into_inner().to_ascii_lowercase().as_str() {
                    "title" => in_title = true,
                    "script" | "style" => skip += 1,
                    _ => {}
                }
            }
            Ok(Event::End(e)) => match e.local_name().into_inner().to_ascii_lowercase().as_str() {
                "title" => in_title = false,
                "script" | "style" => skip = skip.saturating_sub(1),
                _ => {}
            },
            Ok(Event::Empty(_) | Event::Decl(_) | Event::DocType(_)) => saw_markup = true,
            Ok(Event::Text(t)) if skip == 0 => {
                let piece = t.to_string();
                if in_title {
                    title.get_or_insert_with(String::new).push_str(&piece);
                } else {
                    text.push(' ');
                    text.push_str(&piece);
                }
            }
            Ok(Event::GeneralRef(r)) if skip == 0 => {
                let c = r
                    .resolve_char_ref()
                    .ok()
                    .flatten()
                    .or_else(|| quick_xml::escape::resolve_predefined_entity(&r).and_then(|s| s.chars().next()));
                let piece = c.map_or_else(|| " ".to_string(), String::from);
                match (in_title, title.as_mut()) {
                    (true, Some(t)) => t.push_str(&piece),
                    (true, None) => title = Some(piece),
                    _ => text.push_str(&piece),
                }
            }
            Ok(Event::Eof) => break,
            Err(_) if !saw_markup => return String::from_utf8_lossy(body).into_owned(),
            Err(_) => break,
            _ => {}
        }
    }
    title.filter(|t| !t.trim().is_empty()).unwrap_or(text)
}
