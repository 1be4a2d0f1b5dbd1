//! Keeping an organization's web-service password out of every text that comes back from the
//! downstream.
//!
//! A gateway or service that quotes the request it got (a debugging page, a fault naming the
//! caller, a proxy echoing the `Authorization` header, a `sonucMesaji` repeating the login)
//! would otherwise carry the password into an error: the API's answer, a log line, a stored
//! attempt. So a downstream text is masked here first, and only then cleaned and cut to a
//! short excerpt ([`Secrets::excerpt`]): masking after a cut would leave the part of the
//! password before the cut, and after whitespace was collapsed would miss a password with
//! whitespace in it.
//!
//! The forms masked are the ones the request carried or an echo may turn them into: the
//! password as sent, XML-escaped (named and numeric references), JSON-escaped and URL-encoded
//! (`%20` or `+` for a space), and the base64 of the `user:password` pair (the `Authorization:
//! Basic` token, standard or URL-safe, padded or not). Whitespace and invisible characters
//! are ignored while matching, and so is case, so a password folded across lines, quoted with
//! its spaces collapsed, or upper-cased by a service is still found.
//!
//! A password shorter than [`SHORT`] characters (U-ETDS's domain allows one of a single
//! character) cannot be masked wherever its letters occur without turning every message into
//! asterisks, and its letters inside a longer word reveal nothing. Its own forms are masked
//! only where they stand alone — not between letters or digits —, which is how a message quotes
//! a value (`şifre: ab`, `999999:ab`); the Basic token is long whatever the password and is
//! masked wherever it occurs. (A password of spaces only has nothing to match but its encoded
//! forms: echoed as itself, it cannot be told from any other spaces.)

use std::borrow::Cow;

use base64::Engine as _;

use super::WsUser;

/// What replaces a masked form.
pub const MASK: &str = "***";

/// A password with fewer characters than this is masked only where it stands alone.
pub const SHORT: usize = 4;

/// The forms of one organization's credentials that no downstream text may carry out.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest first, so a form that contains another is masked whole.
    forms: Vec<Form>,
}

#[derive(Clone, PartialEq, Eq)]
struct Form {
    /// Folded, without ignored characters (see [`fold`] and [`ignored`]).
    chars: Vec<char>,
    /// Masked only where no letter or digit touches it.
    alone: bool,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets").field("forms", &self.forms.len()).finish()
    }
}

impl Secrets {
    /// The forms of `user`'s password and Basic credentials.
    pub fn of(user: &WsUser) -> Secrets {
        Secrets::new(&user.kullanici_adi, &user.sifre)
    }

    pub fn new(user: &str, password: &str) -> Secrets {
        if password.is_empty() {
            return Secrets::default();
        }
        let short = password.chars().filter(|c| !ignored(*c)).count() < SHORT;
        let own: Vec<Cow<'_, str>> = vec![
            password.into(),
            quick_xml::escape::escape(password),
            quick_xml::escape::partial_escape(password),
            quick_xml::escape::minimal_escape(password),
            numeric_references(password).into(),
            serde_json::to_string(password).map_or(Cow::Borrowed(password), |j| j[1..j.len() - 1].to_string().into()),
            url_encoded(password, "%20").into(),
            url_encoded(password, "+").into(),
        ];
        let pair = [user, ":", password].concat();
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        let whole: Vec<String> = engines.iter().map(|e| e.encode(&pair)).collect();
        let mut forms: Vec<Form> = own
            .iter()
            .map(|f| Form { chars: folded(f), alone: short })
            .chain(whole.iter().map(|f| Form { chars: folded(f), alone: false }))
            .filter(|f| !f.chars.is_empty())
            .collect();
        // Longest first; of two identical forms, the one masked wherever it occurs is kept.
        forms.sort_by(|a, b| {
            b.chars.len().cmp(&a.chars.len()).then_with(|| a.chars.cmp(&b.chars)).then(a.alone.cmp(&b.alone))
        });
        forms.dedup_by(|a, b| a.chars == b.chars);
        Secrets { forms }
    }

    /// `text` with every occurrence of every form replaced by [`MASK`]; nothing else changed.
    pub fn hide(&self, text: &str) -> String {
        if self.forms.is_empty() {
            return text.to_string();
        }
        // The text's characters that matching compares, folded, each with its byte range.
        let seen: Vec<(usize, usize, char)> =
            text.char_indices().filter(|(_, c)| !ignored(*c)).map(|(i, c)| (i, i + c.len_utf8(), fold(c))).collect();
        let mut hidden: Vec<(usize, usize)> = Vec::new();
        for form in &self.forms {
            let n = form.chars.len();
            let mut i = 0;
            while i + n <= seen.len() {
                let (start, end) = (seen[i].0, seen[i + n - 1].1);
                let same = seen[i..i + n].iter().map(|s| s.2).eq(form.chars.iter().copied());
                if same && (!form.alone || stands_alone(text, start, end)) {
                    hidden.push((start, end));
                    i += n;
                } else {
                    i += 1;
                }
            }
        }
        if hidden.is_empty() {
            return text.to_string();
        }
        hidden.sort_unstable();
        let mut out = String::with_capacity(text.len());
        // Where the last mask ends: ranges that overlap or touch it extend it.
        let mut at: Option<usize> = None;
        for (start, end) in hidden {
            match at {
                Some(last) if start <= last => at = Some(last.max(end)),
                _ => {
                    out.push_str(&text[at.unwrap_or(0)..start]);
                    out.push_str(MASK);
                    at = Some(end);
                }
            }
        }
        let at = at.unwrap_or(0);
        out.push_str(&text[at..]);
        out
    }

    /// A short, clean excerpt of a downstream text: control characters dropped, every form
    /// masked, whitespace collapsed, then at most `max` characters (`…` marks a cut).
    pub fn excerpt(&self, text: &str, max: usize) -> String {
        // Control characters go before masking: one dropped from inside an echoed password
        // afterwards would join it together again.
        let printable: String = text.chars().filter(|c| !c.is_control() || c.is_whitespace()).collect();
        shorten(&self.hide(&printable), max)
    }
}

/// Whitespace collapsed, control characters dropped, at most `max` characters.
pub fn shorten(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let clean: String = collapsed.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= max {
        clean
    } else {
        let mut cut: String = clean.chars().take(max).collect();
        cut.push('…');
        cut
    }
}

/// Characters matching skips: whitespace (an echo may fold or collapse it) and the invisible
/// ones that could split a password without showing.
fn ignored(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// Case folded, one character for one (`İ` as `i`), so positions stay those of the text.
fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

fn folded(form: &str) -> Vec<char> {
    form.chars().filter(|c| !ignored(*c)).map(fold).collect()
}

/// No letter or digit right before `start` or right after `end`.
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    !text[..start].chars().next_back().is_some_and(char::is_alphanumeric)
        && !text[end..].chars().next().is_some_and(char::is_alphanumeric)
}

/// XML's five special characters as numeric references (`&#38;`, `&#60;`, …).
fn numeric_references(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' | '<' | '>' | '"' | '\'' => format!("&#{};", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// Percent-encoding of everything but RFC 3986's unreserved characters; a space as `space`.
fn url_encoded(s: &str, space: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(char::from(b)),
            b' ' => out.push_str(space),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tests::{echoes, leaks, PASSWORD, USER};

    fn secrets() -> Secrets {
        Secrets::new(USER, PASSWORD)
    }

    #[test]
    fn every_form_is_masked_and_the_rest_kept() {
        for (what, form) in echoes() {
            let text = format!("Kimlik doğrulanamadı ({form}), tekrar deneyin");
            let out = secrets().excerpt(&text, 300);
            assert!(!leaks(&out), "{what}: {out}");
            assert!(out.starts_with("Kimlik doğrulanamadı (") && out.ends_with("), tekrar deneyin"), "{what}: {out}");
            assert!(out.contains(MASK), "{what}: {out}");
        }
    }

    #[test]
    fn a_password_across_the_cut_is_masked_before_the_cut() {
        for (what, form) in echoes() {
            // The form starts a few characters before the excerpt ends.
            let text = format!("{} {form} and more", "x".repeat(295));
            let out = secrets().excerpt(&text, 300);
            assert!(!leaks(&out), "{what}: {out}");
            assert!(out.chars().count() <= 301, "{what}: {out}");
        }
    }

    #[test]
    fn control_characters_inside_an_echo_do_not_hide_it() {
        let out = secrets().excerpt("şifre: Gizli&<Şi\u{7}fre> 2026.", 300);
        assert_eq!(out, "şifre: ***.");
    }

    #[test]
    fn a_short_password_is_masked_where_it_stands_alone() {
        let s = Secrets::new(USER, "a");
        assert_eq!(
            s.excerpt("KULLANICI ADI YADA SIFRE HATALI: a (kullanıcı 999999:a)", 300),
            "KULLANICI ADI YADA SIFRE HATALI: *** (kullanıcı 999999:***)"
        );
        // Its letter inside words is left alone: nothing there tells which one it is.
        assert_eq!(s.excerpt("Sefer kaydı bulunamadı", 300), "Sefer kaydı bulunamadı");
        let basic = base64::engine::general_purpose::STANDARD.encode("999999:a");
        assert_eq!(s.excerpt(&format!("Authorization: Basic{basic}x"), 300), "Authorization: Basic***x");
        let s = Secrets::new(USER, "&");
        assert_eq!(s.excerpt("şifre &amp; kullanıcı adı & hatalı", 300), "şifre *** kullanıcı adı *** hatalı");
    }

    #[test]
    fn nothing_to_mask() {
        assert_eq!(Secrets::new(USER, "").excerpt("a  b\n", 300), "a b");
        assert_eq!(Secrets::default().hide("Gizli"), "Gizli");
        assert_eq!(shorten("abcdef", 3), "abc…");
        let s = secrets();
        assert_eq!(s.hide(""), "");
        assert_eq!(s.hide("İŞLEM BAŞARILI"), "İŞLEM BAŞARILI");
        assert!(!format!("{s:?}").contains("Gizli"));
    }

    #[test]
    fn overlapping_forms_are_one_mask() {
        let out = secrets().hide(&format!("{USER}:{PASSWORD}{PASSWORD}!"));
        assert_eq!(out, "999999:***!");
    }
}
