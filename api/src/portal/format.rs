//! How the portal writes times, numbers and money for people: times in Europe/Istanbul, numbers
//! and amounts in the language's way (`1.234,56` in Turkish, `1,234.56` in English).

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use rust_decimal::Decimal;

use super::i18n::Lang;

/// Europe/Istanbul: UTC+3 all year since 2016 (Turkey keeps no daylight saving time), so a fixed
/// offset is the zone, without shipping a time-zone database.
pub fn istanbul() -> FixedOffset {
    FixedOffset::east_opt(3 * 3600).expect("a valid offset")
}

/// `25.11.2026 17:30` (Turkish) or `2026-11-25 17:30` (English), Istanbul time.
pub fn datetime(lang: Lang, t: DateTime<Utc>) -> String {
    let local = t.with_timezone(&istanbul());
    match lang {
        Lang::Tr => local.format("%d.%m.%Y %H:%M").to_string(),
        Lang::En => local.format("%Y-%m-%d %H:%M").to_string(),
    }
}

/// A day as the language writes it.
pub fn date(lang: Lang, d: NaiveDate) -> String {
    match lang {
        Lang::Tr => d.format("%d.%m.%Y").to_string(),
        Lang::En => d.format("%Y-%m-%d").to_string(),
    }
}

/// Whole numbers with thousands grouped.
pub fn int(lang: Lang, n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let sep = match lang {
        Lang::Tr => '.',
        Lang::En => ',',
    };
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// An amount in lira with its two decimals: `1.234,50 ₺` or `₺1,234.50`.
pub fn money(lang: Lang, amount: Decimal) -> String {
    let rounded = amount.round_dp(2);
    let sign = if rounded < Decimal::ZERO { "-" } else { "" };
    let abs = rounded.abs();
    let whole = abs.trunc();
    let cents = ((abs - whole) * Decimal::from(100)).round();
    let whole: i64 = whole.try_into().unwrap_or(i64::MAX);
    match lang {
        Lang::Tr => format!("{sign}{},{cents:02} ₺", int(lang, whole)),
        Lang::En => format!("{sign}₺{}.{cents:02}", int(lang, whole)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn istanbul_time_and_the_languages_numbers() {
        let t: DateTime<Utc> = "2026-11-25T14:30:00Z".parse().unwrap();
        assert_eq!(datetime(Lang::Tr, t), "25.11.2026 17:30");
        assert_eq!(datetime(Lang::En, t), "2026-11-25 17:30");
        // Past midnight in Istanbul is the next day.
        let late: DateTime<Utc> = "2026-11-25T22:15:00Z".parse().unwrap();
        assert_eq!(datetime(Lang::Tr, late), "26.11.2026 01:15");
        assert_eq!(int(Lang::Tr, 1234567), "1.234.567");
        assert_eq!(int(Lang::En, 1234567), "1,234,567");
        assert_eq!(int(Lang::En, -999), "-999");
        assert_eq!(money(Lang::Tr, "1234.5".parse().unwrap()), "1.234,50 ₺");
        assert_eq!(money(Lang::En, "100000".parse().unwrap()), "₺100,000.00");
        assert_eq!(money(Lang::Tr, "-52.80".parse().unwrap()), "-52,80 ₺");
        assert_eq!(money(Lang::En, "-0.05".parse().unwrap()), "-₺0.05");
        assert_eq!(money(Lang::En, "-1234.5".parse().unwrap()), "-₺1,234.50");
    }
}
