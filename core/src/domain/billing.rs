//! Billing arithmetic, kept pure so every rule has a unit test: which days of a plan term an
//! invoice covers, and what they cost.
//!
//! TNS bills in arrears. A plan term (the days an organization spent on one plan) is cut into
//! periods: calendar months on a monthly plan, years counted from the term's first day on a
//! yearly plan. A period is invoiced once it is over; a plan change ends the term that day, so
//! the last period of the old plan is shorter and charged by day (`price × days / days in the
//! full period`), and the new plan's first period starts the same day. Soft-limited plans add
//! the calls beyond their quota, per calendar month, at the plan's overage price. KDV is its
//! own line on the sum of the others.

use chrono::{Days, Months, NaiveDate};
use rust_decimal::Decimal;

use super::{
    kinds::{BillingCycle, InvoiceLineKind},
    money::Money,
    month::Month,
};

/// The stretch of days one organization spent (or spends) on one plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    pub cycle: BillingCycle,
    pub starts_on: NaiveDate,
    /// The first day no longer on this plan; `None` while it is the current one.
    pub ends_on: Option<NaiveDate>,
    /// The first day not yet invoiced.
    pub billed_until: NaiveDate,
}

/// Days an invoice covers, `start..=end`, and the length of the full period they belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub days: i64,
    pub full_days: i64,
}

impl Period {
    /// The calendar months the period touches, in order.
    pub fn months(&self) -> Vec<Month> {
        let (mut m, last) = (Month::of_day(self.start), Month::of_day(self.end));
        let mut out = vec![m];
        while m != last {
            m = m.next();
            out.push(m);
        }
        out
    }
}

impl Term {
    /// The next period to invoice, once it is over: `today` is the first day not over yet.
    pub fn next_period(&self, today: NaiveDate) -> Option<Period> {
        let from = self.billed_until;
        if self.ends_on.is_some_and(|e| from >= e) {
            return None;
        }
        let (natural_start, natural_end) = match self.cycle {
            BillingCycle::Monthly => {
                let m = Month::of_day(from);
                (m.first_day(), m.next().first_day())
            }
            BillingCycle::Yearly => {
                // Whole years since the term began; a term begun on 29 February counts its
                // years from the 28th in common years (chrono clamps to the month's end).
                let mut years = 0u32;
                while add_years(self.starts_on, years + 1) <= from {
                    years += 1;
                }
                (add_years(self.starts_on, years), add_years(self.starts_on, years + 1))
            }
        };
        let end_exclusive = self.ends_on.map_or(natural_end, |e| e.min(natural_end));
        if end_exclusive > today {
            return None;
        }
        Some(Period {
            start: from,
            end: end_exclusive - Days::new(1),
            days: (end_exclusive - from).num_days(),
            full_days: (natural_end - natural_start).num_days(),
        })
    }
}

fn add_years(d: NaiveDate, years: u32) -> NaiveDate {
    d.checked_add_months(Months::new(12 * years)).expect("date in range")
}

/// What a plan costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Price {
    pub code: String,
    pub name: String,
    pub cycle: BillingCycle,
    /// For a full period.
    pub price: Money,
    /// Per call beyond the quota; `None` on a hard-limited plan.
    pub overage_unit: Option<Money>,
}

/// KDV (Turkish VAT) in percent, 0 to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaxRate(Decimal);

impl TaxRate {
    pub fn percent(p: Decimal) -> Option<TaxRate> {
        (p >= Decimal::ZERO && p <= Decimal::ONE_HUNDRED && p.scale() <= 2).then_some(TaxRate(p))
    }

    pub fn as_percent(self) -> Decimal {
        self.0
    }
}

/// One line of an invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: InvoiceLineKind,
    pub description: String,
    /// Days on the plan, calls beyond the quota, or 1 for the tax.
    pub quantity: i64,
    /// The plan's price for a full period, the price of one call, or the taxed sum.
    pub unit_price: Money,
    /// Plan lines: the length of the full period the days are counted against.
    pub period_days: Option<i64>,
    /// Overage lines: the month whose calls they are.
    pub usage_month: Option<NaiveDate>,
    pub amount: Money,
}

/// An invoice before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub lines: Vec<Line>,
    pub subtotal: Money,
    pub tax_rate: TaxRate,
    pub tax: Money,
    pub total: Money,
}

/// The invoice of `period` on `plan`: the plan's share of the period, the calls beyond the
/// quota in each month (`overage`: months and calls not yet invoiced), and KDV.
pub fn draft(plan: &Price, period: &Period, overage: &[(Month, i64)], tax_rate: TaxRate) -> Draft {
    let mut lines = vec![];
    let cycle = match plan.cycle {
        BillingCycle::Monthly => "month",
        BillingCycle::Yearly => "year",
    };
    let share = if period.days == period.full_days {
        format!("the full {cycle}")
    } else {
        format!("{} of the {} days of its {cycle}", period.days, period.full_days)
    };
    lines.push(Line {
        kind: InvoiceLineKind::Plan,
        description: format!("{} ({}), {} to {}: {share}", plan.name, plan.code, period.start, period.end),
        quantity: period.days,
        unit_price: plan.price,
        period_days: Some(period.full_days),
        usage_month: None,
        amount: Money::kurus(plan.price.0 * Decimal::from(period.days) / Decimal::from(period.full_days)),
    });
    if let Some(unit) = plan.overage_unit {
        for &(month, calls) in overage.iter().filter(|(_, calls)| *calls > 0) {
            lines.push(Line {
                kind: InvoiceLineKind::Overage,
                description: format!("{calls} calls beyond the monthly quota in {month}"),
                quantity: calls,
                unit_price: unit,
                period_days: None,
                usage_month: Some(month.first_day()),
                amount: Money::kurus(unit.0 * Decimal::from(calls)),
            });
        }
    }
    let subtotal: Money = lines.iter().map(|l| l.amount).sum();
    let tax = Money::kurus(subtotal.0 * tax_rate.0 / Decimal::ONE_HUNDRED);
    lines.push(Line {
        kind: InvoiceLineKind::Tax,
        description: format!("KDV {}%", tax_rate.0.normalize()),
        quantity: 1,
        unit_price: subtotal,
        period_days: None,
        usage_month: None,
        amount: tax,
    });
    Draft { lines, subtotal, tax_rate, tax, total: subtotal + tax }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }
    fn money(s: &str) -> Money {
        Money::parse(s).unwrap()
    }
    fn plan(code: &str, cycle: BillingCycle, price: &str, overage: Option<&str>) -> Price {
        Price { code: code.into(), name: code.into(), cycle, price: money(price), overage_unit: overage.map(money) }
    }
    fn kdv() -> TaxRate {
        TaxRate::percent(Decimal::from(20)).unwrap()
    }
    fn term(cycle: BillingCycle, starts: &str, ends: Option<&str>, billed: &str) -> Term {
        Term { cycle, starts_on: d(starts), ends_on: ends.map(d), billed_until: d(billed) }
    }
    /// Every period of a term until `today`, as the jobs would invoice them one by one.
    fn periods(mut t: Term, today: &str) -> Vec<Period> {
        let mut out = vec![];
        while let Some(p) = t.next_period(d(today)) {
            t.billed_until = p.end + Days::new(1);
            out.push(p);
        }
        out
    }

    #[test]
    fn a_monthly_term_is_invoiced_per_calendar_month_once_each_is_over() {
        let t = term(BillingCycle::Monthly, "2026-09-15", None, "2026-09-15");
        let ps = periods(t, "2026-11-24");
        assert_eq!(ps.len(), 2, "November is not over");
        assert_eq!((ps[0].start, ps[0].end, ps[0].days, ps[0].full_days), (d("2026-09-15"), d("2026-09-30"), 16, 30));
        assert_eq!((ps[1].start, ps[1].end, ps[1].days, ps[1].full_days), (d("2026-10-01"), d("2026-10-31"), 31, 31));
        assert_eq!(periods(t, "2026-12-01").len(), 3, "November is over on 1 December");
    }

    #[test]
    fn a_yearly_term_is_invoiced_per_year_from_its_first_day() {
        let t = term(BillingCycle::Yearly, "2025-03-10", None, "2025-03-10");
        assert!(periods(t, "2026-03-09").is_empty());
        let ps = periods(t, "2026-03-10");
        assert_eq!((ps[0].start, ps[0].end, ps[0].days, ps[0].full_days), (d("2025-03-10"), d("2026-03-09"), 365, 365));
        // A leap year's cycle has 366 days.
        let leap = periods(term(BillingCycle::Yearly, "2027-06-01", None, "2027-06-01"), "2028-06-01");
        assert_eq!(leap[0].full_days, 366);
    }

    #[test]
    fn a_term_that_ended_is_invoiced_up_to_its_last_day_at_once() {
        // Changed plan on 15 November: the old plan's 1–14 November is over on the 15th.
        let t = term(BillingCycle::Monthly, "2026-10-01", Some("2026-11-15"), "2026-11-01");
        let ps = periods(t, "2026-11-15");
        assert_eq!((ps[0].start, ps[0].end, ps[0].days, ps[0].full_days), (d("2026-11-01"), d("2026-11-14"), 14, 30));
        assert!(periods(Term { billed_until: d("2026-11-15"), ..t }, "2027-01-01").is_empty());
        // A yearly plan left after 100 days.
        let y = term(BillingCycle::Yearly, "2026-01-01", Some("2026-04-11"), "2026-01-01");
        let ps = periods(y, "2026-04-11");
        assert_eq!((ps[0].days, ps[0].full_days, ps[0].end), (100, 365, d("2026-04-10")));
    }

    #[test]
    fn amounts_for_each_plan_kind() {
        let starter = plan("starter", BillingCycle::Monthly, "99.00", None);
        let growth = plan("growth", BillingCycle::Monthly, "499.00", Some("0.0500"));
        let y10 = plan("Y-10", BillingCycle::Yearly, "14000.00", None);
        let full_month = Period { start: d("2026-11-01"), end: d("2026-11-30"), days: 30, full_days: 30 };

        // Monthly, a full month: the price, and KDV 20 % on it.
        let inv = draft(&starter, &full_month, &[], kdv());
        assert_eq!((inv.subtotal, inv.tax, inv.total), (money("99.00"), money("19.80"), money("118.80")));
        assert_eq!(inv.lines.len(), 2);
        assert_eq!(inv.lines[1].kind, InvoiceLineKind::Tax);
        assert_eq!(inv.lines[1].description, "KDV 20%");

        // Yearly, a full year.
        let year = Period { start: d("2026-01-01"), end: d("2026-12-31"), days: 365, full_days: 365 };
        assert_eq!(draft(&y10, &year, &[], kdv()).total, money("16800.00"));

        // Overage on the soft plan: 2000 calls beyond the quota at 0.05.
        let m = Month { year: 2026, month: 11 };
        let inv = draft(&growth, &full_month, &[(m, 2000)], kdv());
        assert_eq!(inv.lines[1].amount, money("100.00"));
        assert_eq!(inv.lines[1].usage_month, Some(d("2026-11-01")));
        assert_eq!((inv.subtotal, inv.total), (money("599.00"), money("718.80")));
        // No overage line without calls beyond the quota, nor on a hard plan.
        assert_eq!(draft(&growth, &full_month, &[(m, 0)], kdv()).lines.len(), 2);
        assert_eq!(draft(&starter, &full_month, &[(m, 50)], kdv()).lines.len(), 2);

        // Upgrade starter → growth on 15 November: 14 days of starter, 16 of growth.
        let before = Period { start: d("2026-11-01"), end: d("2026-11-14"), days: 14, full_days: 30 };
        let after = Period { start: d("2026-11-15"), end: d("2026-11-30"), days: 16, full_days: 30 };
        assert_eq!(draft(&starter, &before, &[], kdv()).subtotal, money("46.20"));
        assert_eq!(draft(&growth, &after, &[], kdv()).subtotal, money("266.13"));
        // Downgrade growth → starter on the same day: the same split, the other way round.
        assert_eq!(draft(&growth, &before, &[], kdv()).subtotal, money("232.87"));
        assert_eq!(draft(&starter, &after, &[], kdv()).subtotal, money("52.80"));

        // A yearly plan left after 100 days: 14000 × 100 / 365 = 3835.616… → 3835.62.
        let part = Period { start: d("2026-01-01"), end: d("2026-04-10"), days: 100, full_days: 365 };
        let inv = draft(&y10, &part, &[], kdv());
        assert_eq!((inv.subtotal, inv.tax, inv.total), (money("3835.62"), money("767.12"), money("4602.74")));
        assert!(inv.lines[0].description.contains("100 of the 365 days of its year"), "{}", inv.lines[0].description);
    }

    #[test]
    fn the_tax_rate_is_configurable_and_bounded() {
        let starter = plan("starter", BillingCycle::Monthly, "99.00", None);
        let p = Period { start: d("2026-11-01"), end: d("2026-11-30"), days: 30, full_days: 30 };
        let ten = TaxRate::percent(Decimal::from(10)).unwrap();
        assert_eq!(draft(&starter, &p, &[], ten).tax, money("9.90"));
        let zero = TaxRate::percent(Decimal::ZERO).unwrap();
        assert_eq!(draft(&starter, &p, &[], zero).total, money("99.00"));
        assert!(TaxRate::percent(Decimal::from(101)).is_none());
        assert!(TaxRate::percent("-1".parse().unwrap()).is_none());
        assert!(TaxRate::percent("18.125".parse().unwrap()).is_none());
    }

    #[test]
    fn a_period_lists_the_months_it_touches() {
        let p = Period { start: d("2026-11-20"), end: d("2027-01-05"), days: 47, full_days: 365 };
        let ms: Vec<String> = p.months().iter().map(|m| m.to_string()).collect();
        assert_eq!(ms, ["2026-11", "2026-12", "2027-01"]);
    }
}
