//! Field rules of the downstream (U-ETDS, `uetds/PROTOCOL.md` §5–6), checked before anything is
//! stored so that bad data fails now with a 422 naming the field instead of later downstream.

use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;

/// Downstream string limits (PROTOCOL.md §2.1): names 50, identity numbers 30, plates and
/// phones 20, addresses 100, HES codes 50, seat numbers 10, country codes 10.
pub const NAME_MAX: usize = 50;
pub const IDENTITY_MAX: usize = 30;
pub const PLATE_MAX: usize = 20;
pub const PHONE_MAX: usize = 20;
pub const ADDRESS_MAX: usize = 100;
pub const HES_MAX: usize = 50;
pub const SEAT_MAX: usize = 10;
/// Sender and receiver titles (`gonderenUnvan`, `aliciUnvan`) have no published bound; this
/// one is generous for a company title and keeps rows small.
pub const TITLE_MAX: usize = 250;

/// A code or id sent either as a JSON integer or as a string of digits (the spec types some
/// ids as strings, others as integers; integrators send both).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(untagged)]
pub enum IdOrText {
    Int(i64),
    Text(String),
}

impl IdOrText {
    /// The value as an integer, if it is one (a digit string counts).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            IdOrText::Int(n) => Some(*n),
            IdOrText::Text(s) => {
                let t = s.trim();
                (!t.is_empty() && t.len() <= 18 && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
            }
        }
    }

    /// A positive integer code that fits the database column.
    pub fn code(&self, field: &str) -> Result<i32, ApiError> {
        self.as_int()
            .filter(|n| *n > 0 && *n <= i32::MAX as i64)
            .map(|n| n as i32)
            .ok_or_else(|| ApiError::validation(field, "must be a positive integer code"))
    }
}

/// T.C. kimlik numarası checksum (PROTOCOL.md §6).
pub fn is_tckn(s: &str) -> bool {
    let d: Vec<i32> = s.bytes().map(|b| b.wrapping_sub(b'0') as i32).collect();
    if d.len() != 11 || d.iter().any(|x| !(0..=9).contains(x)) || d[0] == 0 {
        return false;
    }
    let odd = d[0] + d[2] + d[4] + d[6] + d[8];
    let even = d[1] + d[3] + d[5] + d[7];
    let d10 = (7 * odd - even).rem_euclid(10);
    let d11 = d[..10].iter().sum::<i32>().rem_euclid(10);
    d[9] == d10 && d[10] == d11
}

/// Vergi kimlik numarası (VKN) checksum (PROTOCOL.md §6).
pub fn is_vkn(s: &str) -> bool {
    let d: Vec<u32> = s.bytes().map(|b| b.wrapping_sub(b'0') as u32).collect();
    if d.len() != 10 || d.iter().any(|x| *x > 9) {
        return false;
    }
    let sum: u32 = (0..9)
        .map(|p| {
            let tmp = (d[p] + 9 - p as u32) % 10;
            let v = (tmp * (1 << (9 - p))) % 9;
            if tmp != 0 && v == 0 {
                9
            } else {
                v
            }
        })
        .sum();
    (10 - sum % 10) % 10 == d[9]
}

/// A country code as U-ETDS takes it: two letters (ISO 3166-1 alpha-2 style), upper-cased.
pub fn nationality(field: &str, raw: &str) -> Result<String, ApiError> {
    let v = raw.trim().to_ascii_uppercase();
    if v.len() != 2 || !v.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(ApiError::validation(field, "must be a two-letter country code such as TR"));
    }
    Ok(v)
}

/// True when a nationality (absent means Turkish) calls for a T.C. identity number.
pub fn is_turkish(nationality: Option<&str>) -> bool {
    nationality.is_none_or(|n| n == "TR")
}

/// An identity number: a checksum-valid T.C. number for Turkish nationals (nationality `TR`
/// or absent), otherwise a passport or foreign id number of 1–30 letters, digits or `-`.
pub fn identity_number(field: &str, raw: &str, nationality: Option<&str>) -> Result<String, ApiError> {
    let v = raw.trim().to_ascii_uppercase();
    if is_turkish(nationality) {
        if !is_tckn(&v) {
            return Err(ApiError::validation(
                field,
                "must be a valid 11-digit T.C. identity number (checksum failed); for foreign nationals \
                 send `nationality` and the passport number",
            ));
        }
        return Ok(v);
    }
    if v.is_empty() || v.len() > IDENTITY_MAX || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(ApiError::validation(field, "must be a passport number of 1–30 letters, digits or `-`"));
    }
    Ok(v)
}

/// A tax number of a sender or receiver: a 10-digit VKN (company) or an 11-digit T.C. number
/// (person), checksum verified.
pub fn tax_id(field: &str, raw: &str) -> Result<String, ApiError> {
    let v = raw.trim();
    let ok = match v.len() {
        10 => is_vkn(v),
        11 => is_tckn(v),
        _ => false,
    };
    if !ok {
        return Err(ApiError::validation(
            field,
            "must be a 10-digit VKN or an 11-digit T.C. identity number with a valid checksum",
        ));
    }
    Ok(v.to_string())
}

/// `E` (erkek) or `K` (kadın).
pub fn gender(field: &str, raw: &str) -> Result<String, ApiError> {
    match raw.trim() {
        "E" | "e" => Ok("E".into()),
        "K" | "k" => Ok("K".into()),
        _ => Err(ApiError::validation(field, "must be `E` or `K`")),
    }
}

/// A plate, upper-cased and stripped of spaces: letters and digits only, at most 20. The civil
/// pattern is not enforced: the downstream's own test plate (`06TARIFESIZ123`) breaks it.
pub fn plate(field: &str, raw: &str) -> Result<String, ApiError> {
    let v: String = raw.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase();
    if v.is_empty() || v.len() > PLATE_MAX || !v.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ApiError::validation(field, "must be a plate of 1–20 letters and digits (spaces are removed)"));
    }
    Ok(v)
}

/// A phone number: digits with optional `+`, spaces, `-` and parentheses, at most 20.
pub fn phone(field: &str, raw: &str) -> Result<String, ApiError> {
    let v = raw.trim();
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    if v.len() > PHONE_MAX || digits < 3 || !v.bytes().all(|b| b.is_ascii_digit() || b" +-()".contains(&b)) {
        return Err(ApiError::validation(field, "must be a phone number of at most 20 characters"));
    }
    Ok(v.to_string())
}

/// A calendar date, exactly `YYYY-MM-DD`.
pub fn date(field: &str, raw: &str) -> Result<NaiveDate, ApiError> {
    let v = raw.trim();
    let d = (v.len() == 10).then(|| NaiveDate::parse_from_str(v, "%Y-%m-%d").ok()).flatten();
    d.filter(|d| (2000..=2100).contains(&chrono::Datelike::year(d)))
        .ok_or_else(|| ApiError::validation(field, "must be a date YYYY-MM-DD (years 2000–2100)"))
}

/// A time of day, exactly `HH:MM` (24-hour).
pub fn time(field: &str, raw: &str) -> Result<NaiveTime, ApiError> {
    let v = raw.trim();
    (v.len() == 5)
        .then(|| NaiveTime::parse_from_str(v, "%H:%M").ok())
        .flatten()
        .ok_or_else(|| ApiError::validation(field, "must be a time HH:MM (24-hour)"))
}

/// A money or quantity amount: finite, non-negative, below `max`.
pub fn amount(field: &str, v: f64, max: f64) -> Result<f64, ApiError> {
    if !v.is_finite() || v < 0.0 || v >= max {
        return Err(ApiError::validation(field, format!("must be a non-negative number below {max}")));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tckn_vectors() {
        for ok in ["17291716060", "10000000146", "11111111110", "23695921030"] {
            assert!(is_tckn(ok), "{ok}");
        }
        for bad in ["17291716050", "11111111111", "01729171606", "1729171606", "1729171606a", ""] {
            assert!(!is_tckn(bad), "{bad}");
        }
    }

    #[test]
    fn vkn_vectors() {
        assert!(is_vkn("4540536920"));
        assert!(is_vkn("1234567890"));
        assert!(!is_vkn("4540536921"));
        assert!(!is_vkn("123456789"));
    }

    #[test]
    fn identity_depends_on_nationality() {
        assert!(identity_number("i", "17291716060", None).is_ok());
        assert!(identity_number("i", "17291716060", Some("TR")).is_ok());
        assert!(identity_number("i", "U1234567", Some("TR")).is_err());
        assert_eq!(identity_number("i", "u123-45", Some("DE")).unwrap(), "U123-45");
        assert!(identity_number("i", &"A".repeat(31), Some("DE")).is_err());
        assert!(identity_number("i", "", Some("DE")).is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(plate("p", " 34 abc 123 ").unwrap(), "34ABC123");
        assert_eq!(plate("p", "06TARIFESIZ123").unwrap(), "06TARIFESIZ123");
        assert!(plate("p", "34-ABC-12").is_err());
        assert!(plate("p", &"1".repeat(21)).is_err());
        assert!(date("d", "2026-02-29").is_err());
        assert!(date("d", "2026-2-1").is_err());
        assert!(date("d", "2028-02-29").is_ok());
        assert!(time("t", "24:00").is_err());
        assert!(time("t", "9:30").is_err());
        assert!(time("t", "09:30").is_ok());
        assert!(tax_id("t", "4540536920").is_ok());
        assert!(tax_id("t", "17291716060").is_ok());
        assert!(tax_id("t", "4540536921").is_err());
        assert!(nationality("n", "de").unwrap() == "DE");
        assert!(nationality("n", "DEU").is_err());
        assert_eq!(IdOrText::Text("1421".into()).code("x").unwrap(), 1421);
        assert!(IdOrText::Text("14x".into()).code("x").is_err());
        assert!(IdOrText::Int(-3).code("x").is_err());
    }
}
