//! The answers, shaped like the real ones: Metro-style SOAP envelopes (`S:` / `ns2:` prefixes,
//! `text/xml;charset=utf-8`), SOAP 1.1 faults with HTTP 500, and the e-Devlet gateway's HTML pages
//! for refusals before the service (401 and friends).

use super::judge::{SOAP11_NS, UETDS_NS};
use super::xml::{self, Element};

/// Content type of every SOAP answer (as Metro writes it).
pub const SOAP_CONTENT_TYPE: &str = "text/xml;charset=utf-8";
const HTML_CONTENT_TYPE: &str = "text/html; charset=UTF-8";
const TEXT_CONTENT_TYPE: &str = "text/plain; charset=UTF-8";

/// What an operation handler answers inside `<ns2:opResponse>`.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The usual `<return>…</return>` (document/literal wrapped).
    Return(Box<Element>),
    /// Bare text content: the arızi `servisTest` reply element is itself an `xs:string`.
    Text(String),
}

impl Answer {
    /// A `<return>` answer.
    pub fn ret(el: Element) -> Answer {
        Answer::Return(Box::new(el))
    }

    /// `<return><sonucKodu>code</sonucKodu><sonucMesaji>message</sonucMesaji></return>`: valid for
    /// every result type the fake answers (all their other elements are optional).
    pub fn result(code: i32, message: &str) -> Answer {
        Answer::ret(Element::new("return").field("sonucKodu", code).field("sonucMesaji", message))
    }

    /// The `sonucKodu` of a `Return` answer.
    pub fn code(&self) -> Option<i32> {
        match self {
            Answer::Return(r) => r.child_text("sonucKodu")?.parse().ok(),
            Answer::Text(_) => None,
        }
    }
}

/// An HTTP answer to write.
#[derive(Debug, Clone)]
pub struct HttpReply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: String,
    /// Adds `WWW-Authenticate: Basic` (the gateway's 401).
    pub challenge: bool,
}

/// The `<ns2:{op}Response>` element of an answer (also what the fake's own tests validate
/// against the schema).
pub fn response_element(op: &str, answer: &Answer) -> Element {
    let el = Element::new(format!("{op}Response")).declared("ns2", UETDS_NS);
    match answer {
        Answer::Return(r) => el.with((**r).clone()),
        Answer::Text(t) => Element { text: t.clone(), ..el },
    }
}

fn envelope(body_child: Element) -> String {
    let env =
        Element::new("Envelope").declared("S", SOAP11_NS).with(Element::new("Body").prefixed("S").with(body_child));
    xml::write_document(&env)
}

/// HTTP 200 with the operation's answer.
pub fn soap_ok(op: &str, answer: &Answer) -> HttpReply {
    HttpReply {
        status: 200,
        content_type: Some(SOAP_CONTENT_TYPE),
        body: envelope(response_element(op, answer)),
        challenge: false,
    }
}

/// HTTP 500 with a SOAP 1.1 Fault. `code` is a local part (`Client`, `Server`), written as
/// `S:<code>`, or already a QName.
pub fn soap_fault(code: &str, message: &str) -> HttpReply {
    let code = if code.contains(':') { code.to_string() } else { format!("S:{code}") };
    let fault = Element::new("Fault").prefixed("S").field("faultcode", code).field("faultstring", message);
    HttpReply { status: 500, content_type: Some(SOAP_CONTENT_TYPE), body: envelope(fault), challenge: false }
}

/// An HTML page from the gateway with this status.
pub fn html(status: u16) -> HttpReply {
    let (title, text) = match status {
        200 => ("e-Devlet Kapısı", "Sistem bakımda. Lütfen daha sonra tekrar deneyiniz."),
        401 => ("401 - Yetkisiz Erişim", "Bu servise erişim için kimlik doğrulaması gereklidir."),
        403 => ("403 - Erişim Engellendi", "Bu servise erişim yetkiniz bulunmamaktadır."),
        404 => ("404 - Sayfa Bulunamadı", "Aradığınız sayfa bulunamadı."),
        405 => ("405 - İzin Verilmeyen Yöntem", "Bu yöntem bu adreste desteklenmiyor."),
        502 => ("502 - Geçersiz Ağ Geçidi", "Servis sağlayıcıdan geçerli bir yanıt alınamadı."),
        503 => ("503 - Servis Kullanılamıyor", "Servis geçici olarak kullanılamıyor."),
        504 => ("504 - Ağ Geçidi Zaman Aşımı", "Servis sağlayıcı zamanında yanıt vermedi."),
        _ => ("e-Devlet Kapısı", "İşleminiz şu anda gerçekleştirilemiyor."),
    };
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"tr\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><div class=\"hata\"><h1>{title}</h1><p>{text}</p><p>T.C. Cumhurbaşkanlığı e-Devlet Kapısı</p></div></body></html>\n"
    );
    HttpReply { status, content_type: Some(HTML_CONTENT_TYPE), body, challenge: status == 401 }
}

/// A plain-text page with this status quoting the request: its `Authorization` header and
/// its body.
pub fn echo(status: u16, authorization: Option<&str>, body: &[u8]) -> HttpReply {
    let body = format!(
        "Request refused.\nAuthorization: {}\n\n{}",
        authorization.unwrap_or("(none)"),
        String::from_utf8_lossy(body)
    );
    HttpReply { status, content_type: Some(TEXT_CONTENT_TYPE), body, challenge: false }
}

/// HTTP 200 with an empty body.
pub fn empty() -> HttpReply {
    HttpReply { status: 200, content_type: Some(SOAP_CONTENT_TYPE), body: String::new(), challenge: false }
}

/// A small, valid one-page PDF showing `line` (ASCII; anything else is replaced), as the report
/// operations return in `sonucPdf`.
pub fn pdf(line: &str) -> Vec<u8> {
    let text: String = line
        .chars()
        .map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' })
        .flat_map(|c| match c {
            '(' | ')' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let stream = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_string(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{o}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1));
    for off in offsets {
        out.push_str(&format!("{off:010} 00000 n \n"));
    }
    out.push_str(&format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1));
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metro_style_envelope() {
        let r = soap_ok("seferEkle", &Answer::result(0, "İŞLEM BAŞARILI"));
        assert!(r.body.contains(r#"<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:seferEkleResponse xmlns:ns2="http://uetds.unetws.udhb.gov.tr/"><return><sonucKodu>0</sonucKodu>"#), "{}", r.body);
        let f = soap_fault("Client", "a < b");
        assert_eq!(f.status, 500);
        assert!(f.body.contains("<faultcode>S:Client</faultcode><faultstring>a &lt; b</faultstring>"), "{}", f.body);
    }

    #[test]
    fn pdf_is_well_formed() {
        let p = String::from_utf8(pdf("SEFER (1) İ")).unwrap();
        assert!(p.starts_with("%PDF-1.4\n") && p.ends_with("%%EOF\n"));
        let xref: usize = p.lines().rev().nth(1).unwrap().parse().unwrap();
        assert!(p[xref..].starts_with("xref"));
        assert!(p.contains("(SEFER \\(1\\) ?) Tj"));
    }
}
