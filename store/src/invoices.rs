//! Invoice rows, scoped by organization. Issuing them is the billing jobs' work; the API lists
//! them.

use chrono::NaiveDate;
use serde::Serialize;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;

use crate::pagination::{Keyed, Page};
use tns_core::domain::kinds::InvoiceStatus;

#[derive(Debug, Serialize, ToSchema, sqlx::FromRow)]
pub struct Invoice {
    pub id: i64,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
    /// In Turkish lira, tax included.
    pub total_amount: f64,
    pub status: InvoiceStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Invoice {
    fn key(&self) -> i64 {
        self.id
    }
}

pub async fn list(db: &PgPool, org: i64, page: &Page) -> sqlx::Result<Vec<Invoice>> {
    let mut qb = QueryBuilder::<Postgres>::new(
        "SELECT id, period_start, period_end, total_amount::float8 AS total_amount, status, created_at
           FROM invoices WHERE org_id = ",
    );
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}
