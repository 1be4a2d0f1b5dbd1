//! Billing arithmetic, kept pure so every rule has a unit test: which days of a plan term are
//! charged or credited, which term holds a day when the plan changes, and what an invoice costs.
//!
//! Fixed fees are billed in advance. A plan term (the days an organization spends on one plan)
//! is cut into periods: calendar months on a monthly plan, years counted from the term's first
//! day on a yearly plan. Each period is charged on its first day; a term that starts mid-month
//! is charged by day for the rest of its month (`price × days / days in the full period`). A
//! term cut short is credited for the days charged that it no longer covers, at the rate they
//! were charged. Overage (calls beyond a soft quota) is billed in arrears, per calendar month,
//! once the month is over. KDV is its own line on the sum of the others.
//!
//! Billing follows the quota: a day is billed at the most expensive plan held at any moment of
//! it ([`follow`]), so no pattern of changes gets a plan's quota without its price.

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
    /// The first day no longer on this plan; `None` while it is the current one. Equal to
    /// `starts_on` for a term cut before its first day ended (kept only to credit it).
    pub ends_on: Option<NaiveDate>,
    /// The first day not charged yet. Ahead of today once a period is charged in advance;
    /// ahead of `ends_on` when the term was cut short after being charged (a credit is due
    /// once `ends_on` has come).
    pub billed_until: NaiveDate,
}

/// Days a line covers, `start..=end`, and the length of the full period they belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub days: i64,
    pub full_days: i64,
}

/// What a term owes, or is owed, by a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Movement {
    /// Days of a period charged in advance (or late, when invoicing was behind).
    Charge(Span),
    /// Days charged that the term no longer covers.
    Credit(Span),
}

impl Term {
    /// The period `day` falls in: its first day and the first day after it.
    pub fn period_at(&self, day: NaiveDate) -> (NaiveDate, NaiveDate) {
        match self.cycle {
            BillingCycle::Monthly => {
                let m = Month::of_day(day);
                (m.first_day(), m.next().first_day())
            }
            BillingCycle::Yearly => {
                // Whole years since the term began; a term begun on 29 February counts its
                // years from the 28th in common years (chrono clamps to the month's end).
                let mut years = 0u32;
                while add_years(self.starts_on, years + 1) <= day {
                    years += 1;
                }
                (add_years(self.starts_on, years), add_years(self.starts_on, years + 1))
            }
        }
    }

    /// `from..to` cut at the period boundaries it crosses.
    fn spans(&self, from: NaiveDate, to: NaiveDate) -> Vec<Span> {
        let mut out = vec![];
        let mut day = from;
        while day < to {
            let (start, end) = self.period_at(day);
            let until = end.min(to);
            out.push(Span {
                start: day,
                end: until - Days::new(1),
                days: (until - day).num_days(),
                full_days: (end - start).num_days(),
            });
            day = until;
        }
        out
    }

    /// What is due on this term by `today`: first a credit for the days charged beyond its
    /// end, once that end has come (so a change's credit and the next plan's charge fall on one
    /// day), then a charge for every period begun by `today` and not charged yet (a period is
    /// charged whole, in advance, unless the term ends inside it). The movements, and the
    /// term's `billed_until` once they are invoiced.
    pub fn due(&self, today: NaiveDate) -> (Vec<Movement>, NaiveDate) {
        let mut out = vec![];
        let mut billed = self.billed_until;
        if let Some(end) = self.ends_on.filter(|e| billed > *e && *e <= today) {
            out.extend(self.spans(end, billed).into_iter().map(Movement::Credit));
            billed = end;
        }
        while billed <= today && self.ends_on.is_none_or(|e| billed < e) {
            let (_, period_end) = self.period_at(billed);
            let until = self.ends_on.map_or(period_end, |e| e.min(period_end));
            out.extend(self.spans(billed, until).into_iter().map(Movement::Charge));
            billed = until;
        }
        (out, billed)
    }

    /// The first day something will be due on this term: its next charge, or the credit of a
    /// cut; `None` when it is settled for good.
    pub fn next_due(&self) -> Option<NaiveDate> {
        match self.ends_on {
            Some(end) if self.billed_until > end => Some(end),
            Some(end) if self.billed_until == end => None,
            _ => Some(self.billed_until),
        }
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

impl Price {
    /// What a year on the plan costs (a monthly price twelve times): how plans are ranked when
    /// two are held on one day.
    pub fn yearly(&self) -> Decimal {
        match self.cycle {
            BillingCycle::Monthly => self.price.0 * Decimal::from(12),
            BillingCycle::Yearly => self.price.0,
        }
    }

    /// The line of a charge or credit on this plan, invoiced on `day`: a charge at the plan's
    /// price, a credit at `charged`, the price the days were charged at.
    pub fn line(&self, m: &Movement, day: NaiveDate, charged: Money) -> Line {
        let (span, kind, price) = match m {
            Movement::Charge(s) => (s, InvoiceLineKind::Plan, self.price),
            Movement::Credit(s) => (s, InvoiceLineKind::Credit, charged),
        };
        let cycle = match self.cycle {
            BillingCycle::Monthly => "month",
            BillingCycle::Yearly => "year",
        };
        let share = if span.days == span.full_days {
            format!("the full {cycle}")
        } else {
            format!("{} of the {} days of its {cycle}", span.days, span.full_days)
        };
        let amount = Money::kurus(price.0 * Decimal::from(span.days) / Decimal::from(span.full_days));
        let (what, amount) = match kind {
            InvoiceLineKind::Credit => ("unused, credited", -amount),
            // Invoicing that was behind (or a term that ended before it ran) charges late.
            _ if span.start < day => ("charged late", amount),
            _ => ("in advance", amount),
        };
        Line {
            kind,
            description: format!("{} ({}), {} to {}: {share}, {what}", self.name, self.code, span.start, span.end),
            quantity: span.days,
            unit_price: price,
            period_days: Some(span.full_days),
            usage_month: None,
            covers: Some((span.start, span.end)),
            amount,
        }
    }
}

/// The line of `calls` beyond the quota in `month`, at `unit` each.
pub fn overage_line(unit: Money, month: Month, calls: i64) -> Line {
    Line {
        kind: InvoiceLineKind::Overage,
        description: format!("{calls} calls beyond the monthly quota in {month}"),
        quantity: calls,
        unit_price: unit,
        period_days: None,
        usage_month: Some(month.first_day()),
        covers: Some((month.first_day(), month.last_day())),
        amount: Money::kurus(unit.0 * Decimal::from(calls)),
    }
}

/// A term of an organization, with its plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub id: i64,
    pub price: Price,
    pub starts_on: NaiveDate,
    pub ends_on: Option<NaiveDate>,
    pub billed_until: NaiveDate,
    /// The price the last period charged was charged at (`None` before the first charge):
    /// what its unused days are credited at, whatever the plan costs now.
    pub charged: Option<Money>,
}

impl Held {
    pub fn term(&self) -> Term {
        Term {
            cycle: self.price.cycle,
            starts_on: self.starts_on,
            ends_on: self.ends_on,
            billed_until: self.billed_until,
        }
    }
}

/// A change to the terms, in the order they must be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    Delete(i64),
    /// Set a term's end (`None`: it goes on).
    End(i64, Option<NaiveDate>),
    Insert {
        price: Price,
        starts_on: NaiveDate,
    },
}

/// Bring the terms in line with a plan or standing that changed on `today`: `wanted` is the
/// plan billed from now on, `None` when billing stops (a trial). `held` are the terms that do
/// not end before `today` (one covering today, one starting tomorrow, ones ending today).
///
/// A day is billed at the most expensive plan held at any moment of it: a dearer plan takes
/// today from the plan it replaces; a cheaper one (or none) starts tomorrow, the plan it
/// replaces keeping today. A term that never held a day is dropped unless it was charged (then
/// it is kept, zero days long, to be credited); changing back to a plan that ends where the new
/// one would start continues that term (after a change to a cheaper plan and back, say).
pub fn follow(held: &[Held], today: NaiveDate, wanted: Option<&Price>) -> Vec<Edit> {
    let tomorrow = today + Days::new(1);
    let holder = held.iter().find(|t| t.starts_on <= today && t.ends_on.is_none_or(|e| e > today));
    let mut cuts = vec![];
    let start = match (holder, wanted) {
        (Some(h), Some(w)) if h.price.code == w.code => {
            if h.ends_on.is_some() {
                cuts.push(Edit::End(h.id, None));
            }
            None
        }
        (Some(h), Some(w)) if w.yearly() > h.price.yearly() => {
            cuts.push(if h.starts_on == today && h.billed_until == h.starts_on {
                Edit::Delete(h.id)
            } else {
                Edit::End(h.id, Some(today))
            });
            Some((w, today))
        }
        (Some(h), w) => {
            if h.ends_on != Some(tomorrow) {
                cuts.push(Edit::End(h.id, Some(tomorrow)));
            }
            w.map(|w| (w, tomorrow))
        }
        (None, w) => w.map(|w| (w, today)),
    };
    let mut edits = vec![];
    // A term starting tomorrow never held a day: it goes, unless it is exactly the one wanted
    // (or was charged already, should clocks disagree: then it ends on its first day, to be
    // credited).
    let mut keep_pending = false;
    for t in held.iter().filter(|t| t.starts_on > today) {
        if start.is_some_and(|(w, day)| w.code == t.price.code && day == t.starts_on && t.ends_on.is_none()) {
            keep_pending = true;
        } else if t.billed_until > t.starts_on {
            edits.push(Edit::End(t.id, Some(t.starts_on)));
        } else {
            edits.push(Edit::Delete(t.id));
        }
    }
    edits.extend(cuts);
    if let Some((w, day)) = start.filter(|_| !keep_pending) {
        let adjoining = held.iter().find(|t| t.price.code == w.code && t.ends_on == Some(day) && t.starts_on < day);
        edits.push(match adjoining {
            Some(t) => Edit::End(t.id, None),
            None => Edit::Insert { price: w.clone(), starts_on: day },
        });
    }
    edits
}

/// `edits` applied to `terms` in memory (to preview a change); inserted terms get negative ids.
pub fn apply(terms: &mut Vec<Held>, edits: &[Edit]) {
    for e in edits {
        match e {
            Edit::Delete(id) => terms.retain(|t| t.id != *id),
            Edit::End(id, end) => terms.iter_mut().filter(|t| t.id == *id).for_each(|t| t.ends_on = *end),
            Edit::Insert { price, starts_on } => {
                let id = -1 - terms.len() as i64;
                terms.push(Held {
                    id,
                    price: price.clone(),
                    starts_on: *starts_on,
                    ends_on: None,
                    billed_until: *starts_on,
                    charged: None,
                })
            }
        }
    }
}

/// Where a term stands once an invoice is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Billed {
    pub id: i64,
    pub billed_until: NaiveDate,
    pub charged: Option<Money>,
}

/// What every term owes or is owed by `today`, as invoice lines in the order of the terms'
/// first days, and where each term that moved stands once they are invoiced.
pub fn settle(terms: &[Held], today: NaiveDate) -> (Vec<Line>, Vec<Billed>) {
    let mut sorted: Vec<&Held> = terms.iter().collect();
    sorted.sort_by_key(|t| (t.starts_on, t.id));
    let (mut lines, mut moved) = (vec![], vec![]);
    for t in sorted {
        let (ms, billed_until) = t.term().due(today);
        let charged_before = t.charged.unwrap_or(t.price.price);
        lines.extend(ms.iter().map(|m| t.price.line(m, today, charged_before)));
        if billed_until != t.billed_until {
            let charged_now = ms.iter().any(|m| matches!(m, Movement::Charge(_)));
            let charged = if charged_now { Some(t.price.price) } else { t.charged };
            moved.push(Billed { id: t.id, billed_until, charged });
        }
    }
    (lines, moved)
}

/// The first day anything will be due on `terms`.
pub fn next_due(terms: &[Held]) -> Option<NaiveDate> {
    terms.iter().filter_map(|t| t.term().next_due()).min()
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
    /// Days on the plan (charged or credited), calls beyond the quota, or 1 for a balance or
    /// the tax.
    pub quantity: i64,
    /// The plan's price for a full period, the price of one call, the balance moved, or the
    /// taxed sum.
    pub unit_price: Money,
    /// Plan and credit lines: the length of the full period the days are counted against.
    pub period_days: Option<i64>,
    /// Overage lines: the month whose calls they are.
    pub usage_month: Option<NaiveDate>,
    /// The first and last day the line is for (none for a balance or the tax).
    pub covers: Option<(NaiveDate, NaiveDate)>,
    /// Negative for a credit.
    pub amount: Money,
}

/// An invoice before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub lines: Vec<Line>,
    /// The first and last day its lines cover.
    pub period: (NaiveDate, NaiveDate),
    /// The lines before KDV, never below zero: what credits leave over is carried forward.
    pub subtotal: Money,
    pub tax_rate: TaxRate,
    pub tax: Money,
    pub total: Money,
    /// The organization's credit once this invoice is issued.
    pub balance: Money,
}

/// The invoice of `lines` (charges, credits, overage) for an organization holding `balance`
/// in credit: the credit pays what it can; what credits exceed is carried forward as credit
/// (the invoice then costs nothing); KDV is charged on what is left. `None` when there is
/// nothing to invoice: no lines, or only lines of nothing (a plan priced at zero).
pub fn draft(mut lines: Vec<Line>, balance: Money, tax_rate: TaxRate) -> Option<Draft> {
    if lines.iter().all(|l| l.amount.is_zero()) {
        return None;
    }
    let period = (
        lines.iter().filter_map(|l| l.covers.map(|c| c.0)).min()?,
        lines.iter().filter_map(|l| l.covers.map(|c| c.1)).max()?,
    );
    let net: Money = lines.iter().map(|l| l.amount).sum();
    let moved = if net < Money::ZERO {
        Some(("credit carried forward to later invoices", -net))
    } else {
        let used = balance.min(net);
        (!used.is_zero()).then_some(("credit from earlier invoices", -used))
    };
    let mut after = balance;
    if let Some((description, amount)) = moved {
        after = balance + amount;
        lines.push(Line {
            kind: InvoiceLineKind::Balance,
            description: description.into(),
            quantity: 1,
            unit_price: amount.abs(),
            period_days: None,
            usage_month: None,
            covers: None,
            amount,
        });
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
        covers: None,
        amount: tax,
    });
    Some(Draft { lines, period, subtotal, tax_rate, tax, total: subtotal + tax, balance: after })
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
    fn starter() -> Price {
        plan("starter", BillingCycle::Monthly, "99.00", None)
    }
    fn growth() -> Price {
        plan("growth", BillingCycle::Monthly, "499.00", Some("0.0500"))
    }
    fn y999() -> Price {
        plan("Y-999", BillingCycle::Yearly, "100000.00", None)
    }
    fn kdv() -> TaxRate {
        TaxRate::percent(Decimal::from(20)).unwrap()
    }
    fn term(cycle: BillingCycle, starts: &str, ends: Option<&str>, billed: &str) -> Term {
        Term { cycle, starts_on: d(starts), ends_on: ends.map(d), billed_until: d(billed) }
    }
    fn spans(ms: &[Movement]) -> Vec<(char, NaiveDate, NaiveDate, i64, i64)> {
        ms.iter()
            .map(|m| match m {
                Movement::Charge(s) => ('+', s.start, s.end, s.days, s.full_days),
                Movement::Credit(s) => ('-', s.start, s.end, s.days, s.full_days),
            })
            .collect()
    }

    #[test]
    fn a_monthly_term_is_charged_for_each_calendar_month_on_its_first_day() {
        let t = term(BillingCycle::Monthly, "2026-09-15", None, "2026-09-15");
        let (ms, billed) = t.due(d("2026-09-15"));
        assert_eq!(spans(&ms), [('+', d("2026-09-15"), d("2026-09-30"), 16, 30)], "the rest of its first month");
        assert_eq!(billed, d("2026-10-01"));
        let t = Term { billed_until: billed, ..t };
        assert!(t.due(d("2026-09-30")).0.is_empty(), "October is not begun");
        let (ms, billed) = t.due(d("2026-10-01"));
        assert_eq!(spans(&ms), [('+', d("2026-10-01"), d("2026-10-31"), 31, 31)]);
        assert_eq!(billed, d("2026-11-01"));
        // Invoicing that was behind catches up, a month at a time.
        let (ms, _) = t.due(d("2026-12-05"));
        assert_eq!(ms.len(), 3);
    }

    #[test]
    fn a_yearly_term_is_charged_for_the_whole_year_on_its_first_day() {
        let t = term(BillingCycle::Yearly, "2025-03-10", None, "2025-03-10");
        let (ms, billed) = t.due(d("2025-03-10"));
        assert_eq!(spans(&ms), [('+', d("2025-03-10"), d("2026-03-09"), 365, 365)]);
        assert_eq!(billed, d("2026-03-10"));
        assert!(Term { billed_until: billed, ..t }.due(d("2026-03-09")).0.is_empty());
        // A leap year's cycle has 366 days.
        let leap = term(BillingCycle::Yearly, "2027-06-01", None, "2027-06-01");
        assert_eq!(spans(&leap.due(d("2027-06-01")).0)[0].4, 366);
    }

    #[test]
    fn a_term_cut_short_is_credited_for_the_days_it_no_longer_covers() {
        // Charged for November in advance, left on the 15th: 16 days back.
        let t = term(BillingCycle::Monthly, "2026-10-01", Some("2026-11-15"), "2026-12-01");
        let (ms, billed) = t.due(d("2026-11-15"));
        assert_eq!(spans(&ms), [('-', d("2026-11-15"), d("2026-11-30"), 16, 30)]);
        assert_eq!(billed, d("2026-11-15"));
        // A yearly plan left after 100 days: 265 days back.
        let y = term(BillingCycle::Yearly, "2026-01-01", Some("2026-04-11"), "2027-01-01");
        assert_eq!(spans(&y.due(d("2026-04-11")).0), [('-', d("2026-04-11"), d("2026-12-31"), 265, 365)]);
        // A term ended before invoicing caught up is charged for what it held, late.
        let late = term(BillingCycle::Monthly, "2026-10-01", Some("2026-11-15"), "2026-11-01");
        assert_eq!(spans(&late.due(d("2026-11-20")).0), [('+', d("2026-11-01"), d("2026-11-14"), 14, 30)]);
        // A term cut before its first day ended, after being charged: all of it back.
        let zero = term(BillingCycle::Monthly, "2026-11-16", Some("2026-11-16"), "2026-12-01");
        assert_eq!(spans(&zero.due(d("2026-11-16")).0), [('-', d("2026-11-16"), d("2026-11-30"), 15, 30)]);
        // A cut that takes effect tomorrow (a cheaper plan chosen today) is credited tomorrow,
        // with the cheaper plan's first charge.
        let tomorrow = term(BillingCycle::Monthly, "2026-10-01", Some("2026-11-16"), "2026-12-01");
        assert!(tomorrow.due(d("2026-11-15")).0.is_empty());
        assert_eq!(tomorrow.next_due(), Some(d("2026-11-16")));
        assert_eq!(spans(&tomorrow.due(d("2026-11-16")).0), [('-', d("2026-11-16"), d("2026-11-30"), 15, 30)]);
        assert_eq!(term(BillingCycle::Monthly, "2026-10-01", Some("2026-11-16"), "2026-11-16").next_due(), None);
    }

    #[test]
    fn days_are_credited_at_the_price_they_were_charged_at_and_late_charges_say_so() {
        // November charged at 99.00; the plan costs 120.00 since; left on the 16th.
        let dearer = Price { price: money("120.00"), ..starter() };
        let t =
            Held { charged: Some(money("99.00")), ..held(1, &dearer, "2026-10-01", Some("2026-11-16"), "2026-12-01") };
        let (lines, moved) = settle(std::slice::from_ref(&t), d("2026-11-16"));
        assert_eq!(lines[0].amount, money("-49.50"), "15 of 30 days at 99.00, not at 120.00");
        assert_eq!(moved, [Billed { id: 1, billed_until: d("2026-11-16"), charged: Some(money("99.00")) }]);
        // The next charge is at the new price, and remembered as what was charged.
        let open = Held { charged: Some(money("99.00")), ..held(2, &dearer, "2026-10-01", None, "2026-12-01") };
        let (lines, moved) = settle(std::slice::from_ref(&open), d("2026-12-01"));
        assert_eq!((lines[0].amount, moved[0].charged), (money("120.00"), Some(money("120.00"))));
        assert!(lines[0].description.ends_with("in advance"), "{}", lines[0].description);
        // Charged after its period began (invoicing behind): said so.
        let (lines, _) = settle(std::slice::from_ref(&open), d("2026-12-03"));
        assert!(lines[0].description.ends_with("charged late"), "{}", lines[0].description);
    }

    fn held(id: i64, p: &Price, starts: &str, ends: Option<&str>, billed: &str) -> Held {
        Held {
            id,
            price: p.clone(),
            starts_on: d(starts),
            ends_on: ends.map(d),
            billed_until: d(billed),
            charged: None,
        }
    }

    #[test]
    fn a_dearer_plan_takes_today_and_a_cheaper_one_starts_tomorrow() {
        let today = d("2026-11-15");
        let a = held(1, &starter(), "2026-10-01", None, "2026-12-01");
        // Upgrade: starter ends today, growth holds today.
        assert_eq!(
            follow(std::slice::from_ref(&a), today, Some(&growth())),
            [Edit::End(1, Some(today)), Edit::Insert { price: growth(), starts_on: today }]
        );
        // Downgrade: growth keeps today, starter from tomorrow.
        let g = held(2, &growth(), "2026-10-01", None, "2026-12-01");
        assert_eq!(
            follow(std::slice::from_ref(&g), today, Some(&starter())),
            [Edit::End(2, Some(d("2026-11-16"))), Edit::Insert { price: starter(), starts_on: d("2026-11-16") }]
        );
        // Billing stops (back to trial): today is still billed.
        assert_eq!(follow(std::slice::from_ref(&g), today, None), [Edit::End(2, Some(d("2026-11-16")))]);
        // Nothing held today (a trial that chose a plan): from today.
        assert_eq!(follow(&[], today, Some(&starter())), [Edit::Insert { price: starter(), starts_on: today }]);
        // The plan already held: nothing to do.
        assert!(follow(std::slice::from_ref(&a), today, Some(&starter())).is_empty());
    }

    /// Invoice every term as the jobs would on `today`: the sum of the plan lines.
    fn invoice(terms: &mut [Held], today: NaiveDate) -> Money {
        let (lines, moved) = settle(terms, today);
        for b in moved {
            terms.iter_mut().filter(|t| t.id == b.id).for_each(|t| {
                t.billed_until = b.billed_until;
                t.charged = b.charged;
            });
        }
        lines.iter().map(|l| l.amount).sum()
    }

    #[test]
    fn flipping_to_the_unlimited_plan_every_morning_and_back_every_evening_costs_its_days() {
        let prices = [starter(), y999()];
        // On starter since 1 November, November charged.
        let mut terms = vec![held(1, &starter(), "2026-11-01", None, "2026-12-01")];
        let mut paid = money("99.00");
        for day in 10..15 {
            let today = d(&format!("2026-11-{day}"));
            // Invoicing runs after each change, as the jobs do within minutes.
            for (w, when) in [(&prices[1], "morning"), (&prices[0], "evening")] {
                let edits = follow(&terms, today, Some(w));
                apply(&mut terms, &edits);
                paid = paid + invoice(&mut terms, today);
                assert!(!paid.0.is_sign_negative(), "{when} of day {day}");
            }
            // The night: the next day's first invoicing.
            paid = paid + invoice(&mut terms, today + Days::new(1));
        }
        // Five days of Y-999 instead of five of starter, to the kuruş of rounding.
        let y_day = 100000.0 / 365.0;
        let s_day = 99.0 / 30.0;
        let expected = 99.0 + 5.0 * (y_day - s_day);
        let got: f64 = paid.0.to_string().parse().unwrap();
        assert!((got - expected).abs() < 0.1, "paid {got}, a Y-999 day each flip: {expected}");
        // Staying on starter afterwards costs nothing more this month.
        assert!(invoice(&mut terms, d("2026-11-30")).is_zero());
    }

    #[test]
    fn a_change_and_its_reversal_on_one_day_leave_the_dearer_plan_holding_it() {
        let today = d("2026-11-15");
        let mut terms = vec![held(1, &starter(), "2026-10-01", None, "2026-12-01")];
        let edits = follow(&terms, today, Some(&growth()));
        apply(&mut terms, &edits);
        // growth holds today; back to starter: growth keeps today, starter from tomorrow.
        let edits = follow(&terms, today, Some(&starter()));
        apply(&mut terms, &edits);
        let shape: Vec<_> = terms.iter().map(|t| (t.price.code.as_str(), t.starts_on, t.ends_on)).collect();
        assert_eq!(
            shape,
            [
                ("starter", d("2026-10-01"), Some(today)),
                ("growth", today, Some(d("2026-11-16"))),
                ("starter", d("2026-11-16"), None)
            ]
        );
        // Up again the same day: the pending starter goes, growth goes on.
        let edits = follow(&terms, today, Some(&growth()));
        apply(&mut terms, &edits);
        let shape: Vec<_> = terms.iter().map(|t| (t.price.code.as_str(), t.starts_on, t.ends_on)).collect();
        assert_eq!(shape, [("starter", d("2026-10-01"), Some(today)), ("growth", today, None)]);
        // A term begun today and never charged is dropped when a dearer plan replaces it.
        let fresh = vec![held(7, &starter(), "2026-11-15", None, "2026-11-15")];
        assert_eq!(follow(&fresh, today, Some(&growth()))[0], Edit::Delete(7), "never charged: nothing to credit");
        let charged = vec![held(7, &starter(), "2026-11-15", None, "2026-12-01")];
        assert_eq!(follow(&charged, today, Some(&growth()))[0], Edit::End(7, Some(today)), "kept to be credited");
        // A term starting tomorrow that was charged already (clocks disagreeing) is not dropped
        // but ended on its first day, so its charge is credited.
        let early = vec![
            held(1, &growth(), "2026-10-01", Some("2026-11-16"), "2026-12-01"),
            held(2, &starter(), "2026-11-16", None, "2026-12-01"),
        ];
        assert_eq!(follow(&early, today, Some(&growth())), [Edit::End(2, Some(d("2026-11-16"))), Edit::End(1, None)]);
    }

    /// The lines of `ms` invoiced on their first day, credits at the plan's price.
    fn lines(ms: &[Movement], p: &Price) -> Vec<Line> {
        ms.iter()
            .map(|m| {
                let (Movement::Charge(s) | Movement::Credit(s)) = m;
                p.line(m, s.start, p.price)
            })
            .collect()
    }

    #[test]
    fn amounts_for_each_plan_kind() {
        let y10 = plan("Y-10", BillingCycle::Yearly, "14000.00", None);
        let month = term(BillingCycle::Monthly, "2026-11-01", None, "2026-11-01");

        // Monthly, a full month: the price, and KDV 20 % on it.
        let inv = draft(lines(&month.due(d("2026-11-01")).0, &starter()), Money::ZERO, kdv()).unwrap();
        assert_eq!((inv.subtotal, inv.tax, inv.total), (money("99.00"), money("19.80"), money("118.80")));
        assert_eq!(inv.period, (d("2026-11-01"), d("2026-11-30")));
        assert_eq!(inv.lines.len(), 2);
        assert_eq!((inv.lines[1].kind, inv.lines[1].description.as_str()), (InvoiceLineKind::Tax, "KDV 20%"));

        // Yearly, a full year in advance.
        let year = term(BillingCycle::Yearly, "2026-01-01", None, "2026-01-01");
        assert_eq!(
            draft(lines(&year.due(d("2026-01-01")).0, &y10), Money::ZERO, kdv()).unwrap().total,
            money("16800.00")
        );

        // Overage on the soft plan: 2000 calls at 0.05, with December's fee.
        let m = Month { year: 2026, month: 11 };
        let dec = term(BillingCycle::Monthly, "2026-12-01", None, "2026-12-01");
        let mut ls = lines(&dec.due(d("2026-12-01")).0, &growth());
        ls.push(overage_line(money("0.0500"), m, 2000));
        let inv = draft(ls, Money::ZERO, kdv()).unwrap();
        assert_eq!(inv.lines[1].amount, money("100.00"));
        assert_eq!(inv.lines[1].usage_month, Some(d("2026-11-01")));
        assert_eq!(inv.period, (d("2026-11-01"), d("2026-12-31")), "November's calls, December's fee");
        assert_eq!((inv.subtotal, inv.total), (money("599.00"), money("718.80")));

        // Upgrade starter → growth on 15 November (November charged): 16 starter days back,
        // 16 growth days charged.
        let old = term(BillingCycle::Monthly, "2026-11-01", Some("2026-11-15"), "2026-12-01");
        let new = term(BillingCycle::Monthly, "2026-11-15", None, "2026-11-15");
        let mut ls = lines(&old.due(d("2026-11-15")).0, &starter());
        ls.extend(lines(&new.due(d("2026-11-15")).0, &growth()));
        assert_eq!(ls.iter().map(|l| l.amount).collect::<Vec<_>>(), [money("-52.80"), money("266.13")]);
        assert_eq!(ls[0].kind, InvoiceLineKind::Credit);
        assert!(
            ls[0].description.contains("16 of the 30 days of its month, unused, credited"),
            "{}",
            ls[0].description
        );
        assert_eq!(draft(ls, Money::ZERO, kdv()).unwrap().subtotal, money("213.33"));

        // A yearly plan left after 100 days: 14000 × 265 / 365 = 10164.38 back, more than the
        // month of starter that replaces it: nothing to pay, the rest carried forward.
        let left = term(BillingCycle::Yearly, "2026-01-01", Some("2026-04-11"), "2027-01-01");
        let next = term(BillingCycle::Monthly, "2026-04-11", None, "2026-04-11");
        let mut ls = lines(&left.due(d("2026-04-11")).0, &y10);
        ls.extend(lines(&next.due(d("2026-04-11")).0, &starter()));
        let inv = draft(ls, Money::ZERO, kdv()).unwrap();
        assert_eq!(inv.lines[0].amount, money("-10164.38"));
        assert_eq!(inv.lines[1].amount, money("66.00"), "20 of April's 30 days");
        assert_eq!((inv.lines[2].kind, inv.lines[2].amount), (InvoiceLineKind::Balance, money("10098.38")));
        assert_eq!(
            (inv.subtotal, inv.tax, inv.total, inv.balance),
            (Money::ZERO, Money::ZERO, Money::ZERO, money("10098.38"))
        );
        // The credit pays May, and what is left stays.
        let may = term(BillingCycle::Monthly, "2026-04-11", None, "2026-05-01");
        let inv = draft(lines(&may.due(d("2026-05-01")).0, &starter()), money("10098.38"), kdv()).unwrap();
        assert_eq!((inv.lines[1].amount, inv.total, inv.balance), (money("-99.00"), Money::ZERO, money("9999.38")));
        // A credit smaller than the invoice: the rest is paid, KDV on it.
        let inv = draft(lines(&may.due(d("2026-05-01")).0, &starter()), money("9.00"), kdv()).unwrap();
        assert_eq!(
            (inv.subtotal, inv.tax, inv.total, inv.balance),
            (money("90.00"), money("18.00"), money("108.00"), Money::ZERO)
        );
    }

    #[test]
    fn nothing_is_invoiced_for_nothing() {
        assert!(draft(vec![], money("5.00"), kdv()).is_none());
        let free = plan("free", BillingCycle::Monthly, "0.00", None);
        let t = term(BillingCycle::Monthly, "2026-11-01", None, "2026-11-01");
        assert!(draft(lines(&t.due(d("2026-11-01")).0, &free), Money::ZERO, kdv()).is_none());
    }

    #[test]
    fn the_tax_rate_is_configurable_and_bounded() {
        let t = term(BillingCycle::Monthly, "2026-11-01", None, "2026-11-01");
        let ls = lines(&t.due(d("2026-11-01")).0, &starter());
        let ten = TaxRate::percent(Decimal::from(10)).unwrap();
        assert_eq!(draft(ls.clone(), Money::ZERO, ten).unwrap().tax, money("9.90"));
        let zero = TaxRate::percent(Decimal::ZERO).unwrap();
        assert_eq!(draft(ls, Money::ZERO, zero).unwrap().total, money("99.00"));
        assert!(TaxRate::percent(Decimal::from(101)).is_none());
        assert!(TaxRate::percent("-1".parse().unwrap()).is_none());
        assert!(TaxRate::percent("18.125".parse().unwrap()).is_none());
    }
}
