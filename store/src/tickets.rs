//! Support ticket rows, scoped by organization.

use serde::Serialize;
use sqlx::{PgPool, Postgres, QueryBuilder};
use tns_core::ids::OrgId;
use utoipa::ToSchema;

use crate::pagination::{Keyed, Page};
use tns_core::domain::kinds::{Priority, TicketStatus};

#[derive(Debug, Serialize, ToSchema, sqlx::FromRow)]
pub struct Ticket {
    pub id: i64,
    pub subject: String,
    /// Present on the created record; lists leave it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub priority: Priority,
    /// `open` when created.
    pub status: TicketStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Ticket {
    fn key(&self) -> i64 {
        self.id
    }
}

pub async fn insert(
    db: &PgPool,
    org: OrgId,
    user: i64,
    subject: &str,
    body: &str,
    priority: Priority,
) -> sqlx::Result<Ticket> {
    sqlx::query_as(
        "INSERT INTO support_tickets (org_id, user_id, subject, body, priority) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, subject, body, priority, status, created_at",
    )
    .bind(org)
    .bind(user)
    .bind(subject)
    .bind(body)
    .bind(priority)
    .fetch_one(db)
    .await
}

pub async fn list(db: &PgPool, org: OrgId, page: &Page) -> sqlx::Result<Vec<Ticket>> {
    let mut qb = QueryBuilder::<Postgres>::new(
        "SELECT id, subject, NULL::text AS body, priority, status, created_at FROM support_tickets WHERE org_id = ",
    );
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}
