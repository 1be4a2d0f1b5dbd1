//! What the services do with a request that passed the judge: the context every operation
//! handler gets, the field readers and format checks they share, and the dispatch to the three
//! services' handlers.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime};

use super::reply::Answer;
use super::state::{Env, Service, Store};
use super::xml::Element;
use super::{arizi, esya, tarifeli};

/// `sonucKodu` values the fake answers (only 0 and 88 are published; the others are the fake's).
pub mod codes {
    /// Success.
    pub const OK: i32 = 0;
    /// A bad or missing value (format, required field, unknown code).
    pub const INVALID: i32 = 1;
    /// The reference (trip, group, passenger, load, crew member) does not exist for this firm.
    pub const NOT_FOUND: i32 = 2;
    /// The record is not in a state that allows this (e.g. already cancelled).
    pub const WRONG_STATE: i32 = 3;
    /// A passenger or load the test told the fake to refuse.
    pub const REFUSED: i32 = 4;
    /// Wrong credentials (`KULLANICI ADI YADA SIFRE HATALI`).
    pub const BAD_CREDENTIALS: i32 = 5;
    /// Some items of a bulk add failed, the others were stored.
    pub const PARTIAL: i32 = 88;
    /// A register has no such record (a plate on no certificate, a driver without a
    /// qualification): the code public clients' fixtures show with these messages.
    pub const NOT_REGISTERED: i32 = 34;
}

/// Unwraps a `Result<T, Answer>`, returning the `Answer` from the handler on `Err`.
macro_rules! or_answer {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(answer) => return answer,
        }
    };
}
pub(crate) use or_answer;

/// The service's message for success.
pub const OK_MESSAGE: &str = "İŞLEM BAŞARILI";
/// The service's message for wrong credentials.
pub const BAD_CREDENTIALS_MESSAGE: &str = "KULLANICI ADI YADA SIFRE HATALI";

/// What one operation call sees.
pub(crate) struct Ctx<'a> {
    pub service: Service,
    pub env: Env,
    /// The firm (username) the call is made for.
    pub firm: String,
    /// HTTP Basic credentials of the call.
    pub basic: (String, String),
    pub store: &'a mut Store,
    /// Passengers to refuse, by identity number, with the message.
    pub refused_passengers: &'a HashMap<String, String>,
    /// Loads to refuse, by `firmaYukNo`, with the message.
    pub refused_loads: &'a HashMap<String, String>,
    /// The trip list's dates are notification days (see `FakeUetds::list_by_notification_day`).
    pub list_by_notification_day: bool,
    /// `seferGuncelle` renumbers the trip (see `FakeUetds::renumber_on_update`).
    pub renumber_on_update: bool,
    /// Format mistakes found while handling (recorded as violations by the caller).
    pub violations: Vec<String>,
    /// The service's clock (local time).
    pub now: NaiveDateTime,
}

impl Ctx<'_> {
    /// A mistake in the published format: recorded as a violation and answered as the business
    /// error the service gives for it.
    pub(crate) fn format_error(&mut self, message: String) -> Answer {
        self.violations.push(message.clone());
        Answer::result(codes::INVALID, &message)
    }

    /// The firm's display name.
    pub(crate) fn firm_title(&self) -> String {
        self.store.accounts.get(&self.firm).map(|a| a.title.clone()).unwrap_or_default()
    }
}

/// Runs an operation. `None` when the fake does not simulate it (a valid operation of the
/// service that the fake has no behaviour for).
pub(crate) fn dispatch(ctx: &mut Ctx, op: &str, el: &Element) -> Option<Answer> {
    match ctx.service {
        Service::Arizi => arizi::handle(ctx, op, el),
        Service::Esya => esya::handle(ctx, op, el),
        Service::Tarifeli => tarifeli::handle(ctx, op, el),
    }
}

/// A child's text, trimmed, when present and not empty.
pub(crate) fn text(el: &Element, name: &str) -> Option<String> {
    el.child_text(name).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// A child's text, trimmed (empty when absent).
pub(crate) fn text_or_empty(el: &Element, name: &str) -> String {
    text(el, name).unwrap_or_default()
}

/// A child parsed as a whole number.
pub(crate) fn long(el: &Element, name: &str) -> Option<i64> {
    el.child_text(name)?.trim().parse().ok()
}

/// A plate compared the way the service does: upper case, without spaces.
pub(crate) fn plate_key(p: &str) -> String {
    p.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_uppercase).collect()
}

/// `HH:mm`.
pub(crate) fn is_hhmm(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 5
        && b[2] == b':'
        && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit())
        && s[..2] < *"24"
        && s[3..] < *"60"
}

/// `dd/MM/yyyy`.
pub(crate) fn parse_dmy(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[2] != b'/' || b[5] != b'/' {
        return None;
    }
    NaiveDate::parse_from_str(s, "%d/%m/%Y").ok()
}

/// `YYYY-MM-DD`.
pub(crate) fn parse_ymd(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

/// The Istanbul calendar date of an `xs:dateTime` (a value with an offset is converted to
/// +03:00 first, as the service stores it; one without an offset is taken as local).
pub(crate) fn istanbul_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        let tr = FixedOffset::east_opt(3 * 3600).expect("+03:00");
        return Some(dt.with_timezone(&tr).date_naive());
    }
    parse_ymd(s.get(..10)?)
}

/// `E` / `K` (the input codes; outputs spell them out).
pub(crate) fn is_gender(s: &str) -> bool {
    matches!(s, "E" | "K")
}

/// Output spelling of a gender code.
pub(crate) fn gender_label(s: &str) -> &str {
    match s {
        "E" => "Erkek",
        "K" => "Kadın",
        other => other,
    }
}

/// A two-letter country code (`TR`).
pub(crate) fn is_country(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// `dd/MM/yyyy HH:mm:ss`, the service's timestamp format in lists.
pub(crate) fn timestamp(t: NaiveDateTime) -> String {
    t.format("%d/%m/%Y %H:%M:%S").to_string()
}

/// An `xs:dateTime` for a calendar date at local midnight, as the service writes it.
pub(crate) fn date_time(d: NaiveDate) -> String {
    format!("{}T00:00:00+03:00", d.format("%Y-%m-%d"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(is_hhmm("09:30") && is_hhmm("23:59") && !is_hhmm("24:00") && !is_hhmm("9:30") && !is_hhmm("09:30:00"));
        assert_eq!(parse_dmy("01/05/2024"), NaiveDate::from_ymd_opt(2024, 5, 1));
        assert_eq!(parse_dmy("2024-05-01"), None);
        assert_eq!(parse_dmy("1/5/2024"), None);
        assert_eq!(parse_ymd("2024-05-01"), NaiveDate::from_ymd_opt(2024, 5, 1));
        assert_eq!(istanbul_date("2024-05-01T00:00:00"), NaiveDate::from_ymd_opt(2024, 5, 1));
        assert_eq!(istanbul_date("2024-05-01T00:00:00+05:00"), NaiveDate::from_ymd_opt(2024, 4, 30));
        assert_eq!(istanbul_date("2018-07-30T00:00:00.000-04:00"), NaiveDate::from_ymd_opt(2018, 7, 30));
        assert_eq!(plate_key("34 abc 111"), "34ABC111");
    }
}
