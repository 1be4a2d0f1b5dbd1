//! What both APIs answer of the same rows (submissions and their attempts, invoices), and the
//! envelope of a page: answer types apart from the store's rows, so a column renamed changes a
//! row and its `#[sqlx]` mapping, never what a client reads. Each keeps the schema name clients
//! know (`Submission`, not `SubmissionOut`).

pub use crate::answers::each;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use tns_core::{
    domain::{
        drift::Drift,
        fields::Cursor,
        kinds::{Currency, InvoiceStatus, Operation, SubmissionState, TargetType},
        money::Money,
        warnings::Warning,
    },
    ids::{InvoiceId, SubmissionId},
};
use tns_store::{
    billing::invoices::Invoice,
    pagination::{Keyed, Page},
    submissions::{Attempt, Submission},
};

crate::answer! {
    #[derive(Debug, Clone)]
    SubmissionOut as Submission from Submission {
        #[schema(value_type = i64)]
        id: SubmissionId,
        target_type: TargetType,
        target_id: i64,
        /// `journey` (a full notification), `amendment` (trip fields, crew or passengers changed
        /// since the journey's last delivery), `cargo`, or `cancel` (withdrawing a delivered journey
        /// or shipment).
        operation: Operation,
        /// The adapter it goes to (a loaded plugin's name).
        adapter: String,
        state: SubmissionState,
        downstream_reference: Option<String>,
        error_message: Option<String>,
        /// Attempts made so far.
        attempts: i32,
        /// When a pending submission is next tried.
        next_attempt_at: Option<DateTime<Utc>>,
        created_at: DateTime<Utc>,
        finished_at: Option<DateTime<Utc>>,
        /// What the downstream will want but the record lacked when it was submitted; never a
        /// refusal.
        warnings: Vec<Warning>,
        /// Who queued it: `user:<id>` (a member in the portal, or with a session on the API),
        /// `key:<id>` (an API key or its tokens), `operator:<name>` (re-queued by an operator);
        /// `null` for submissions older than this field.
        submitted_by: Option<String>,
        /// What the downstream holds now that differs from what was delivered (cancelled or edited
        /// outside TNS), as the last drift check found it; absent while nothing differs. Only on
        /// the record's latest submission (no-show reports aside); cleared when another is queued.
        #[serde(skip_serializing_if = "Option::is_none")]
        drift: Option<Drift>,
    }
}

crate::answer! {
    /// One attempt of a submission.
    #[derive(Debug, Clone)]
    AttemptOut as Attempt from Attempt {
        started_at: DateTime<Utc>,
        finished_at: DateTime<Utc>,
        /// `delivered`, `partial` (some passengers refused), `found` (an earlier attempt had
        /// delivered it, learned by lookup), `transient`, `timeout`, `permanent`, `configuration`,
        /// `abandoned` (the scheduler holding it stopped; looked up before sending again) or
        /// `given_back` (its lease would have ended before the next call could finish; the next
        /// claim goes on from the calls already made).
        outcome: String,
        error: Option<String>,
        downstream_reference: Option<String>,
    }
}

crate::answer! {
    #[derive(Debug, Clone)]
    InvoiceOut as Invoice from Invoice {
        #[schema(value_type = i64)]
        id: InvoiceId,
        /// The first day the invoice covers.
        period_start: NaiveDate,
        /// The last day it covers (inclusive).
        period_end: NaiveDate,
        /// In Turkish lira, KDV included: `subtotal + tax_amount`.
        total_amount: Money,
        status: InvoiceStatus,
        created_at: DateTime<Utc>,
        /// The lines before KDV.
        subtotal: Money,
        /// KDV in percent.
        #[schema(value_type = f64)]
        tax_rate: Money,
        tax_amount: Money,
        /// Unpaid past this day, the organization is suspended.
        due_on: NaiveDate,
        currency: Currency,
        /// The organization's name as it was when the invoice was issued.
        billed_name: String,
        /// Its tax number then.
        billed_tax_number: String,
    }
}

/// One page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Paged<T> {
    pub data: Vec<T>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(value_type = Option<Cursor>)]
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

impl<T: Keyed> Paged<T> {
    /// From rows fetched with [`Page::push`] (at most `limit + 1`).
    pub fn from_rows(mut rows: Vec<T>, page: &Page) -> Paged<T> {
        let has_more = rows.len() as i64 > page.limit;
        rows.truncate(page.limit as usize);
        let next_cursor = if has_more { rows.last().map(|r| Cursor::encode(r.key())) } else { None };
        Paged { data: rows, next_cursor, has_more }
    }
}

impl<T> Paged<T> {
    /// The same page, each entry turned into `U` (a row into its answer).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Paged<U> {
        Paged { data: self.data.into_iter().map(f).collect(), next_cursor: self.next_cursor, has_more: self.has_more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tns_core::domain::fields::Int;

    struct Row(i64);
    impl Keyed for Row {
        fn key(&self) -> i64 {
            self.0
        }
    }

    #[test]
    fn a_page_and_its_cursor() {
        let page = Page::new(Some(Int::new(2).unwrap()), None);
        let paged = Paged::from_rows(vec![Row(9), Row(8), Row(7)], &page);
        assert!(paged.has_more);
        assert_eq!(paged.data.len(), 2);
        assert_eq!(Cursor::parse(paged.next_cursor.as_deref().unwrap()).unwrap().0, 8);
        assert!(Paged::from_rows(vec![Row(1)], &page).next_cursor.is_none());
    }
}
