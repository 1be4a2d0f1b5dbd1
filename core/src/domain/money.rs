//! Money: exact decimals in Turkish lira, never floating point. Amounts are rounded to the
//! kuruş (two places) half away from zero, once, where they are computed; unit prices keep
//! the precision their column gives them (overage is priced in fractions of a kuruş).

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Serialize, Serializer};

/// An exact amount in TRY. In JSON it is a number written with its own digits (`99.00`,
/// `0.0500`), so a client reads exactly what was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, sqlx::Type)]
#[sqlx(transparent)]
pub struct Money(pub Decimal);

impl Money {
    pub const ZERO: Money = Money(Decimal::ZERO);

    /// `value` rounded to the kuruş.
    pub fn kurus(value: Decimal) -> Money {
        let mut d = value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
        d.rescale(2);
        Money(d)
    }

    /// Parse a decimal literal (`"99.00"`), for configuration and tests.
    pub fn parse(s: &str) -> Option<Money> {
        s.parse::<Decimal>().ok().map(Money)
    }

    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }

    pub fn abs(self) -> Money {
        Money(self.0.abs())
    }
}

impl std::ops::Neg for Money {
    type Output = Money;
    fn neg(self) -> Money {
        let mut d = -self.0;
        if d.is_zero() {
            d.set_sign_positive(true);
        }
        Money(d)
    }
}

impl std::ops::Sub for Money {
    type Output = Money;
    fn sub(self, o: Money) -> Money {
        Money(self.0 - o.0)
    }
}

impl std::ops::Add for Money {
    type Output = Money;
    fn add(self, o: Money) -> Money {
        Money(self.0 + o.0)
    }
}

impl std::iter::Sum for Money {
    fn sum<I: Iterator<Item = Money>>(it: I) -> Money {
        it.fold(Money::ZERO, |a, b| a + b)
    }
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A decimal's text is a valid JSON number; as a raw value it is written digit for digit,
        // with the kuruş always shown (PostgreSQL hands a zero back without its places) and
        // never a negative zero.
        let mut d = self.0;
        if d.scale() < 2 {
            d.rescale(2);
        }
        if d.is_zero() {
            d.set_sign_positive(true);
        }
        let raw = serde_json::value::RawValue::from_string(d.to_string()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl utoipa::PartialSchema for Money {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        super::fields::raw_schema(serde_json::json!({
            "type": "number",
            "description": "An exact amount in Turkish lira (TRY), written with its decimal places.",
            "examples": [99.00],
        }))
    }
}

impl utoipa::ToSchema for Money {
    fn name() -> std::borrow::Cow<'static, str> {
        "Money".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_half_away_from_zero_to_the_kurus_and_writes_its_digits() {
        let m = |s: &str| s.parse::<Decimal>().unwrap();
        assert_eq!(Money::kurus(m("46.2")).to_string(), "46.20");
        assert_eq!(Money::kurus(m("0.005")).to_string(), "0.01");
        assert_eq!(Money::kurus(m("3835.616438")).to_string(), "3835.62");
        assert_eq!(Money::kurus(m("-0.005")).to_string(), "-0.01");
        assert_eq!(serde_json::to_string(&Money::kurus(m("99"))).unwrap(), "99.00");
        assert_eq!(serde_json::to_string(&Money(m("0.0500"))).unwrap(), "0.0500");
        // Zero as PostgreSQL hands it back, and negated: written with its places, unsigned.
        assert_eq!(serde_json::to_string(&Money(Decimal::ZERO)).unwrap(), "0.00");
        assert_eq!(serde_json::to_string(&-Money::kurus(m("0"))).unwrap(), "0.00");
        assert_eq!(serde_json::to_string(&Money(m("7"))).unwrap(), "7.00");
        let v: serde_json::Value = serde_json::from_str(&serde_json::to_string(&Money(m("118.80"))).unwrap()).unwrap();
        assert_eq!(v.as_f64(), Some(118.8));
    }
}
