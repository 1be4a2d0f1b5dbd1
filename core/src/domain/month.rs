//! A UTC calendar month: the unit of the quota, of usage counters and of monthly billing.

use chrono::{DateTime, Datelike, Days, NaiveDate, TimeZone, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    pub year: i32,
    pub month: u32,
}

impl Month {
    pub fn now() -> Month {
        Month::of(Utc::now())
    }

    pub fn of(t: DateTime<Utc>) -> Month {
        Month { year: t.year(), month: t.month() }
    }

    pub fn of_day(d: NaiveDate) -> Month {
        Month { year: d.year(), month: d.month() }
    }

    pub fn parse(s: &str) -> Option<Month> {
        let (y, m) = s.split_once('-')?;
        let (year, month) = (y.parse().ok()?, m.parse().ok()?);
        (y.len() == 4 && m.len() == 2 && (1..=12).contains(&month)).then_some(Month { year, month })
    }

    pub fn first_day(self) -> NaiveDate {
        NaiveDate::from_ymd_opt(self.year, self.month, 1).expect("valid month")
    }

    pub fn last_day(self) -> NaiveDate {
        self.next().first_day() - Days::new(1)
    }

    pub fn days(self) -> i64 {
        (self.next().first_day() - self.first_day()).num_days()
    }

    pub fn next(self) -> Month {
        if self.month == 12 {
            Month { year: self.year + 1, month: 1 }
        } else {
            Month { year: self.year, month: self.month + 1 }
        }
    }

    pub fn previous(self) -> Month {
        if self.month == 1 {
            Month { year: self.year - 1, month: 12 }
        } else {
            Month { year: self.year, month: self.month - 1 }
        }
    }

    /// Unix time of the first instant of the next month (the `X-RateLimit-Reset` value).
    pub fn reset_at(self) -> i64 {
        let n = self.next();
        Utc.with_ymd_and_hms(n.year, n.month, 1, 0, 0, 0).single().expect("valid instant").timestamp()
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months() {
        let m = Month::parse("2026-12").unwrap();
        assert_eq!(m.next(), Month { year: 2027, month: 1 });
        assert_eq!(m.next().previous(), m);
        assert_eq!(m.reset_at(), Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap().timestamp());
        assert_eq!(m.to_string(), "2026-12");
        assert_eq!((m.days(), m.last_day().day()), (31, 31));
        assert_eq!(Month::parse("2028-02").unwrap().days(), 29);
        assert!(Month::parse("2026-13").is_none());
        assert!(Month::parse("26-01").is_none());
    }
}
