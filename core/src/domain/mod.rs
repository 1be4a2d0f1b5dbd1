//! Input parsing: each field type parses a raw request value once, by a rule the OpenAPI
//! document states too ([`fields`]), so handlers and the database only see valid data.
//! The rules of Türkiye's national records (identity and tax numbers, plates, MERNIS places),
//! which the spec's fields follow, live in [`national`]; the closed sets of values in [`kinds`]. Each
//! aggregate a request writes ([`vehicle`], [`person`], [`journey`], [`passenger`], [`cargo`],
//! [`downstream`], [`webhooks`]) has its request shape here; where rules span its fields, it is
//! parsed once more, from that shape into a value those rules hold for, and the store is handed
//! only such values.

pub mod billing;
pub mod cargo;
pub mod code_lists;
pub mod downstream;
pub mod drift;
pub mod fields;
pub mod journey;
pub mod kinds;
pub mod money;
pub mod month;
pub mod national;
pub mod passenger;
pub mod person;
pub mod personal;
pub mod preflight;
pub mod stamp;
pub mod vehicle;
pub mod warnings;
pub mod webhooks;

use std::borrow::Cow;

use serde_json::{json, Value};

use fields::{as_given, blank, field_impls, pattern, string, string_field, Field};

/// A rule across a request's fields that it breaks, naming the field to fix. The API answers
/// it as any bad field (422), or as the record's state refusing a partial update (409) when
/// the fields broke it only once merged with the stored record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub reason: String,
}

impl Invalid {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Invalid {
        Invalid { field: field.into(), reason: reason.into() }
    }
}

pattern!(
    /// One `@`, a local part of 1–64 characters, a dotted domain; no whitespace or control
    /// characters anywhere.
    EMAIL = concat!("^[^@", blank!(), "]{1,64}@[^@.", blank!(), "]+(?:\\.[^@.", blank!(), "]+)+$")
);

/// Longest e-mail address.
pub const EMAIL_MAX: usize = 254;

string_field! {
    /// An e-mail address: a pragmatic check (deliverability is not ours to prove). Stored as
    /// given; uniqueness is case-insensitive in the database.
    pub struct Email as "Email" {
        pattern: EMAIL,
        max: Some(EMAIL_MAX),
        error: "must be a valid e-mail address",
        normalize: as_given,
        schema: {"description": "An e-mail address: one @, a dotted domain, no spaces.", "examples": ["ayse@acme.com.tr"]},
    }
}

/// A new password: 8 to 1024 characters, anything allowed. Bounded so that hashing a huge one
/// cannot be a denial of service. Never shown, never logged.
pub struct Password(String);

impl Password {
    pub const MIN: usize = 8;
    pub const MAX: usize = 1024;

    pub fn parse(raw: String) -> Result<Password, String> {
        let n = raw.chars().count();
        if n < Self::MIN {
            return Err(format!("must be at least {} characters", Self::MIN));
        }
        if n > Self::MAX {
            return Err(format!("must be at most {} characters", Self::MAX));
        }
        Ok(Password(raw))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(***)")
    }
}

impl Field for Password {
    fn name() -> Cow<'static, str> {
        "Password".into()
    }
    fn json_schema() -> Value {
        json!({"type": "string", "minLength": Self::MIN, "maxLength": Self::MAX, "format": "password",
               "description": "8–1024 characters."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::parse(string(v)?)
    }
}
field_impls!(Password);

pattern!(TAX_NUMBER = r"^[0-9]{10}$");

string_field! {
    /// A Turkish tax number (VKN) of an organization: exactly 10 digits. The VKN check digit is
    /// not enforced at sign-up (sign-up asks only for 10 digits); U-ETDS checks it against the
    /// organization's own credentials.
    pub struct TaxNumber as "TaxNumber" {
        pattern: TAX_NUMBER,
        max: None,
        error: "must be exactly 10 digits",
        normalize: as_given,
        schema: {"description": "Exactly 10 digits.", "examples": ["1234567890"]},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        for ok in ["a@b.co", "ops+tns@firma.com.tr", "ayşe@örnek.com.tr"] {
            assert!(Email::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a", "a@b", "@b.co", "a@@b.co", "a b@c.de", "a@.b", "a@b.", "a@b..c", " x@y.z", "a\u{0}@b.co"] {
            assert!(Email::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Email::parse(&format!("{}@b.co", "a".repeat(65))).is_err());
    }

    #[test]
    fn tax_numbers_and_passwords() {
        assert!(TaxNumber::parse("1234567890").is_ok());
        for bad in ["123456789", "12345678901", "12345abcde", ""] {
            assert!(TaxNumber::parse(bad).is_err(), "{bad}");
        }
        assert!(Password::parse("1234567".into()).is_err());
        assert!(Password::parse("12345678".into()).is_ok());
        assert!(Password::parse("ü".repeat(1024)).is_ok(), "characters, not bytes");
        assert!(Password::parse("x".repeat(1025)).is_err());
    }
}
