//! Tests of the wire layer. `xsd` checks every message against the schemas in
//! `adapters/uetds/schema/` (with xmllint); `replies` the reading of answers; `transport` the
//! HTTP side against a loopback server.

mod replies;
mod transport;
mod xsd;

use quick_xml::{
    events::{BytesEnd, BytesStart, Event},
    Reader, Writer,
};

/// The user and the password of the tests of a hostile downstream: special to XML and to URLs,
/// with a space and a Turkish letter.
pub(super) const USER: &str = "999999";
pub(super) const PASSWORD: &str = "Gizli&<Şifre> 2026";

/// Every form a hostile downstream may echo [`PASSWORD`] in, as it would write it, each with
/// what it is.
pub(super) fn echoes() -> Vec<(&'static str, String)> {
    use base64::{engine::general_purpose as g, Engine as _};
    let pair = format!("{USER}:{PASSWORD}");
    let token = g::STANDARD.encode(&pair);
    vec![
        ("as sent", PASSWORD.to_string()),
        ("XML-escaped", "Gizli&amp;&lt;Şifre&gt; 2026".to_string()),
        ("numeric references", "Gizli&#38;&#60;Şifre&#62; 2026".to_string()),
        ("URL-encoded", "Gizli%26%3C%C5%9Eifre%3E%202026".to_string()),
        ("form-encoded, lower-case hex", "Gizli%26%3c%c5%9eifre%3e+2026".to_string()),
        ("whitespace collapsed away", "Gizli&<Şifre>2026".to_string()),
        ("folded across lines", "Gizli&<Şif\n   re> 2026".to_string()),
        ("upper-cased", "GİZLİ&<ŞİFRE> 2026".to_string()),
        ("a zero-width space inside", "Gizli&<Şi\u{200B}fre> 2026".to_string()),
        ("user:password", pair.clone()),
        ("Basic token", format!("Basic {token}")),
        ("Basic token, unpadded", g::STANDARD_NO_PAD.encode(&pair)),
        ("Basic token, URL-safe", g::URL_SAFE.encode(&pair)),
        ("Basic token, URL-safe unpadded", g::URL_SAFE_NO_PAD.encode(&pair)),
        ("Basic token, MIME-wrapped", format!("{}\r\n {}", &token[..10], &token[10..])),
    ]
}

/// True when `text` holds any of the [`echoes`] (whitespace and invisible characters aside), or
/// any four characters in a row of [`PASSWORD`] without a space.
pub(super) fn leaks(text: &str) -> bool {
    let squeeze = |s: &str| -> String {
        s.chars().filter(|c| !c.is_whitespace() && *c != '\u{200B}').collect::<String>().to_lowercase()
    };
    let chars: Vec<char> = PASSWORD.chars().collect();
    let pieces = chars.windows(4).map(|w| w.iter().collect::<String>()).filter(|w| !w.contains(' '));
    let text_squeezed = squeeze(text);
    echoes().iter().any(|(_, form)| text_squeezed.contains(&squeeze(form)))
        || pieces.into_iter().any(|p| text.to_lowercase().contains(&p.to_lowercase()))
}

/// The element's structure as tokens: local names, and text with references resolved and
/// adjacent pieces merged (whitespace-only text dropped). `<a/>` and `<a></a>` are the same.
pub(super) fn canonical(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<String>| {
        if !text.trim().is_empty() {
            out.push(format!("text:{text}"));
        }
        text.clear();
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                flush(&mut text, &mut out);
                out.push(format!("<{}", e.local_name().into_inner()));
            }
            Event::Empty(e) => {
                flush(&mut text, &mut out);
                out.push(format!("<{}", e.local_name().into_inner()));
                out.push(">".into());
            }
            Event::End(_) => {
                flush(&mut text, &mut out);
                out.push(">".into());
            }
            Event::Text(t) => text.push_str(&t),
            Event::CData(c) => text.push_str(&c),
            Event::GeneralRef(r) => match r.resolve_char_ref().expect("char ref") {
                Some(c) => text.push(c),
                None => text.push_str(quick_xml::escape::resolve_predefined_entity(&r).expect("known entity")),
            },
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// The Body's first element of an envelope, events untouched.
pub(super) fn body_child(envelope: &str) -> String {
    let mut reader = Reader::from_str(envelope);
    let mut w = Writer::new(Vec::new());
    let mut depth = 0usize;
    let mut in_body = false;
    let mut copying = 0usize;
    loop {
        let event = reader.read_event().expect("well-formed XML");
        if copying > 0 {
            match &event {
                Event::Start(_) => copying += 1,
                Event::End(_) => copying -= 1,
                _ => {}
            }
            w.write_event(event).unwrap();
            if copying == 0 {
                break;
            }
            continue;
        }
        match event {
            Event::Start(e) if in_body => {
                copying = 1;
                w.write_event(Event::Start(e)).unwrap();
            }
            Event::Empty(e) if in_body => {
                w.write_event(Event::Empty(e)).unwrap();
                break;
            }
            Event::Start(e) => {
                depth += 1;
                in_body = depth == 2 && e.local_name().into_inner() == "Body";
            }
            Event::End(_) => depth -= 1,
            Event::Eof => panic!("no element in the Body of {envelope}"),
            _ => {}
        }
    }
    String::from_utf8(w.into_inner()).unwrap()
}

/// The same element renamed `tns:LOCAL` with `xmlns:tns` declared on it (the form an XSD
/// validates), its content untouched.
pub(super) fn qualify(element: &str, namespace: &str) -> String {
    let mut reader = Reader::from_str(element);
    let mut w = Writer::new(Vec::new());
    let mut depth = 0usize;
    let mut name = String::new();
    let root = |name: &str| {
        let mut start = BytesStart::new(name.to_owned());
        start.push_attribute(("xmlns:tns", namespace));
        start
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) if depth == 0 => {
                name = ["tns:", e.local_name().into_inner()].concat();
                w.write_event(Event::Start(root(&name))).unwrap();
                depth = 1;
            }
            Event::Empty(e) if depth == 0 => {
                w.write_event(Event::Empty(root(&["tns:", e.local_name().into_inner()].concat()))).unwrap();
                break;
            }
            Event::Start(e) => {
                depth += 1;
                w.write_event(Event::Start(e)).unwrap();
            }
            Event::End(_) if depth == 1 => {
                w.write_event(Event::End(BytesEnd::new(name.as_str()))).unwrap();
                break;
            }
            Event::End(e) => {
                depth -= 1;
                w.write_event(Event::End(e)).unwrap();
            }
            Event::Eof => break,
            Event::Decl(_) => {}
            e => w.write_event(e).unwrap(),
        }
    }
    String::from_utf8(w.into_inner()).unwrap()
}
