//! Input parsing: each function or newtype parses a raw request value once, so handlers and
//! the database only see valid data. Downstream (U-ETDS) rules live in [`uetds`].

pub mod uetds;

use crate::error::ApiError;

/// A trimmed, non-empty string of at most `max` characters.
pub fn text(field: &str, raw: &str, max: usize) -> Result<String, ApiError> {
    let v = raw.trim();
    if v.is_empty() {
        return Err(ApiError::validation(field, "must not be empty"));
    }
    if v.chars().count() > max {
        return Err(ApiError::validation(field, format!("must be at most {max} characters")));
    }
    if v.chars().any(|c| c.is_control()) {
        return Err(ApiError::validation(field, "must not contain control characters"));
    }
    Ok(v.to_string())
}

/// [`text`] for an optional field: absent or blank is `None`.
pub fn opt_text(field: &str, raw: Option<&str>, max: usize) -> Result<Option<String>, ApiError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => text(field, v, max).map(Some),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub const MAX: usize = 254;

    /// A pragmatic check (one `@`, a dotted domain, no spaces); deliverability is not ours
    /// to prove. Stored as given; uniqueness is case-insensitive in the database.
    pub fn parse(raw: &str) -> Result<Email, ApiError> {
        let v = raw.trim();
        let bad = || ApiError::validation("email", "must be a valid e-mail address");
        if v.is_empty() || v.len() > Self::MAX || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad());
        }
        let (local, domain) = v.split_once('@').ok_or_else(bad)?;
        if local.is_empty()
            || local.len() > 64
            || domain.contains('@')
            || !domain.contains('.')
            || domain.starts_with('.')
            || domain.ends_with('.')
            || domain.contains("..")
        {
            return Err(bad());
        }
        Ok(Email(v.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

pub struct Password(String);

impl Password {
    pub const MIN: usize = 8;
    /// Bounded so a huge password cannot make hashing a denial of service.
    pub const MAX: usize = 1024;

    pub fn parse(raw: String) -> Result<Password, ApiError> {
        let n = raw.chars().count();
        if n < Self::MIN {
            return Err(ApiError::validation("password", format!("must be at least {} characters", Self::MIN)));
        }
        if raw.len() > Self::MAX {
            return Err(ApiError::validation("password", format!("must be at most {} bytes", Self::MAX)));
        }
        Ok(Password(raw))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// A Turkish tax number (VKN) of an organization: exactly 10 digits. The VKN checksum is
/// not enforced at sign-up (the spec asks only for 10 digits); U-ETDS checks it against the
/// organization's own credentials.
pub struct TaxNumber(String);

impl TaxNumber {
    pub fn parse(raw: &str) -> Result<TaxNumber, ApiError> {
        let v = raw.trim();
        if v.len() != 10 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::validation("tax_number", "must be exactly 10 digits"));
        }
        Ok(TaxNumber(v.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        for ok in ["a@b.co", "ops+tns@firma.com.tr", " x@y.z "] {
            assert!(Email::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a", "a@b", "@b.co", "a@@b.co", "a b@c.de", "a@.b", "a@b.", "a@b..c"] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tax_numbers_and_passwords() {
        assert!(TaxNumber::parse("1234567890").is_ok());
        for bad in ["123456789", "12345678901", "12345abcde", ""] {
            assert!(TaxNumber::parse(bad).is_err(), "{bad}");
        }
        assert!(Password::parse("1234567".into()).is_err());
        assert!(Password::parse("12345678".into()).is_ok());
        assert!(Password::parse("x".repeat(1025)).is_err());
    }

    #[test]
    fn text_bounds() {
        assert_eq!(text("name", "  Acme  ", 10).unwrap(), "Acme");
        assert!(text("name", "   ", 10).is_err());
        assert!(text("name", "abcdefghijk", 10).is_err());
        assert!(text("name", "a\u{0}b", 10).is_err());
    }
}
