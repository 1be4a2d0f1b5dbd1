//! Billing: the plans, the organization's subscription, and its invoices' lines, the detail and
//! the preview (the invoice itself is both APIs': `tns_http::wire::InvoiceOut`).

use chrono::{DateTime, NaiveDate, Utc};
use tns_core::domain::{
    kinds::{BillingCycle, Currency, InvoiceLineKind},
    money::Money,
};
use tns_http::{
    answer,
    wire::{each, InvoiceOut},
};
use tns_store::billing::{
    invoices::{InvoiceDetail, InvoiceLine, UpcomingInvoice},
    plans::{Plan, Subscription},
};

answer! {
    /// A plan as the plan list shows it. `monthly_quota` is -1 for unlimited.
    PlanOut as Plan from Plan {
        code: String,
        name: String,
        /// Calls per month; -1 means unlimited.
        monthly_quota: i64,
        /// For one billing period, tax (KDV) not included.
        price_try: Money,
        /// The period `price_try` pays for.
        billing_period: BillingCycle,
        /// Price per call beyond the quota; `null` for plans that answer 429 instead.
        overage_unit_try: Option<Money>,
    }
}

answer! {
    /// The organization's current subscription (its plan).
    SubscriptionOut as PlanSubscription from Subscription {
        code: String,
        name: String,
        /// Calls per month; -1 means unlimited.
        monthly_quota: i64,
        price_try: Money,
        billing_period: BillingCycle,
        /// `active`.
        status: String,
        started_at: DateTime<Utc>,
    }
}

answer! {
    /// One line of an invoice.
    InvoiceLineOut as InvoiceLine from InvoiceLine {
        kind: InvoiceLineKind,
        description: String,
        /// Days on the plan (charged or credited), calls beyond the quota, or 1 for a balance or
        /// the tax.
        quantity: i64,
        /// The plan's price for a full period, the price of one call, the credit moved, or the
        /// taxed sum.
        unit_price: Money,
        /// Plan and credit lines: the days of the full period `quantity` counts against.
        period_days: Option<i32>,
        /// Overage lines: the month of the calls.
        usage_month: Option<NaiveDate>,
        /// The first day the line is for (plan, credit and overage lines).
        covers_from: Option<NaiveDate>,
        /// The last day it is for.
        covers_to: Option<NaiveDate>,
        /// Negative for a credit, or credit used.
        amount: Money,
    }
}

answer! {
    /// An invoice with its lines.
    InvoiceDetailOut as InvoiceDetail from InvoiceDetail {
        #[serde(flatten)]
        invoice: InvoiceOut,
        lines: Vec<InvoiceLineOut> = each,
    }
}

answer! {
    /// The invoice TNS would issue next, as it stands now.
    UpcomingInvoiceOut as UpcomingInvoice from UpcomingInvoice {
        /// The day it would be issued: today when something is due now (the jobs issue it within
        /// minutes), else the first day of the next period.
        issue_on: NaiveDate,
        /// The plan billed from then on (`null` when billing stops).
        plan_code: Option<String>,
        period_start: NaiveDate,
        period_end: NaiveDate,
        subtotal: Money,
        /// KDV in percent.
        #[schema(value_type = f64)]
        tax_rate: Money,
        tax_amount: Money,
        total_amount: Money,
        currency: Currency,
        /// The organization's credit (before KDV) once it is issued.
        credit_balance: Money,
        lines: Vec<InvoiceLineOut> = each,
    }
}
