//! Support ticket rows, scoped by organization.

use sqlx::{PgPool, Postgres, QueryBuilder};
use tns_core::ids::{OrgId, TicketId, UserId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::kinds::{Priority, TicketStatus};

/// A support ticket row.
#[derive(Debug, sqlx::FromRow)]
pub struct Ticket {
    pub id: TicketId,
    pub subject: String,
    /// Read when the ticket is created; lists do not read it.
    pub body: Option<String>,
    pub priority: Priority,
    pub status: TicketStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Ticket {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

pub async fn insert(
    db: &PgPool,
    org: OrgId,
    user: UserId,
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
