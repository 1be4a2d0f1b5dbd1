//! The `data_exports` table, and what an export holds: every row TNS keeps for an
//! organization, table by table, as JSON objects (secrets and queue bookkeeping left out).

use std::time::Duration;
use tns_core::ids::{ExportId, OrgId, UserId};

use chrono::{DateTime, Utc};
use futures::stream::BoxStream;
use sqlx::PgPool;
use tns_core::domain::kinds::{AuditAction, ExportState};

use crate::audit::{self, Actor, Entry};

/// An export request, without its archive.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Export {
    pub id: ExportId,
    pub state: ExportState,
    pub created_at: DateTime<Utc>,
    pub ready_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub size_bytes: Option<i64>,
    pub error: Option<String>,
}

const COLUMNS: &str = "id, state, created_at, ready_at, expires_at, size_bytes, error";

/// Exports an organization may ask for in a day (each is a read of everything it holds).
pub const PER_DAY: i64 = 3;

/// How a request went.
pub enum Requested {
    Queued(Export),
    /// One is being built already (its id).
    Busy(ExportId),
    /// [`PER_DAY`] were asked for in the last 24 hours.
    TooMany,
}

/// Ask for an export of `org` for member `user`, audited in the same transaction.
pub async fn request(db: &PgPool, org: OrgId, user: UserId, actor: &Actor) -> sqlx::Result<Requested> {
    let mut tx = db.begin().await?;
    // One request at a time per organization, so the count and the pending check hold.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('tns-export:' || $1::text, 0))")
        .bind(org)
        .execute(&mut *tx)
        .await?;
    let pending: Option<ExportId> =
        sqlx::query_scalar("SELECT id FROM data_exports WHERE org_id = $1 AND state = 'pending'")
            .bind(org)
            .fetch_optional(&mut *tx)
            .await?;
    if let Some(id) = pending {
        return Ok(Requested::Busy(id));
    }
    let today: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM data_exports WHERE org_id = $1 AND created_at > now() - interval '1 day'",
    )
    .bind(org)
    .fetch_one(&mut *tx)
    .await?;
    if today >= PER_DAY {
        return Ok(Requested::TooMany);
    }
    let export: Export =
        sqlx::query_as(&format!("INSERT INTO data_exports (org_id, requested_by) VALUES ($1, $2) RETURNING {COLUMNS}"))
            .bind(org)
            .bind(user)
            .fetch_one(&mut *tx)
            .await?;
    let entry = Entry {
        actor,
        action: AuditAction::RequestExport,
        org: Some(org),
        before: serde_json::Value::Null,
        after: serde_json::json!({ "export_id": export.id }),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Requested::Queued(export))
}

pub async fn get(db: &PgPool, org: OrgId, id: ExportId) -> sqlx::Result<Option<Export>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM data_exports WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// The organization's exports, newest first (a few a day at most, so no paging).
pub async fn list(db: &PgPool, org: OrgId) -> sqlx::Result<Vec<Export>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM data_exports WHERE org_id = $1 ORDER BY id DESC LIMIT 100"))
        .bind(org)
        .fetch_all(db)
        .await
}

/// A ready export's archive, its download audited (it holds personal data in the clear);
/// `None` when there is no such export, or it is not ready.
pub async fn download(db: &PgPool, org: OrgId, id: ExportId, actor: &Actor) -> sqlx::Result<Option<Vec<u8>>> {
    let mut tx = db.begin().await?;
    let archive: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT archive FROM data_exports WHERE org_id = $1 AND id = $2 AND state = 'ready' AND expires_at > now()",
    )
    .bind(org)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?
    .flatten();
    if archive.is_some() {
        let entry = Entry {
            actor,
            action: AuditAction::DownloadExport,
            org: Some(org),
            before: serde_json::Value::Null,
            after: serde_json::json!({ "export_id": id }),
            reason: None,
        };
        audit::record(&mut tx, entry).await?;
    }
    tx.commit().await?;
    Ok(archive)
}

/// Take the oldest pending export to build for `lease` (one that a stopped builder held is
/// taken again once its lease ran out): its id, organization and builds started so far.
pub async fn claim(db: &PgPool, lease: Duration) -> sqlx::Result<Option<(ExportId, OrgId, i32)>> {
    sqlx::query_as(
        "UPDATE data_exports SET leased_until = now() + make_interval(secs => $1), attempts = attempts + 1
          WHERE id = (SELECT id FROM data_exports
                       WHERE state = 'pending' AND (leased_until IS NULL OR leased_until < now())
                       ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING id, org_id, attempts",
    )
    .bind(lease.as_secs_f64())
    .fetch_optional(db)
    .await
}

/// Store a built archive, ready for `keep`.
pub async fn finish(db: &PgPool, id: ExportId, archive: &[u8], keep: Duration) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE data_exports SET state = 'ready', archive = $2, size_bytes = $3, ready_at = now(),
                expires_at = now() + make_interval(secs => $4), leased_until = NULL
          WHERE id = $1 AND state = 'pending'",
    )
    .bind(id)
    .bind(archive)
    .bind(archive.len() as i64)
    .bind(keep.as_secs_f64())
    .execute(db)
    .await?;
    Ok(())
}

pub async fn fail(db: &PgPool, id: ExportId, error: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE data_exports SET state = 'failed', error = left($2, 2000), leased_until = NULL WHERE id = $1 AND state = 'pending'")
        .bind(id)
        .bind(error)
        .execute(db)
        .await?;
    Ok(())
}

/// Drop the archives past their time; how many.
pub async fn expire(db: &PgPool) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "UPDATE data_exports SET state = 'expired', archive = NULL WHERE state = 'ready' AND expires_at <= now()",
    )
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}

/// One file of an export: a table's rows of the organization (`$1`), each as a JSON object.
pub struct Part {
    /// The file's name without its extension.
    pub name: &'static str,
    sql: &'static str,
}

/// A part that is one table's rows of the organization (`org_id = $1`; the table is `from`, else
/// the part's name): every column but those named by `without` (a `-` operand of `jsonb`), in
/// the order of `by`, else by `id`.
macro_rules! owned {
    ($name:literal $(, from $table:literal)? $(, by $order:literal)? $(, without $drop:literal)?) => {
        Part {
            name: $name,
            sql: concat!(
                "SELECT to_jsonb(t)", $(" - ", $drop,)? " FROM ", owned!(@or $name $(, $table)?),
                " t WHERE t.org_id = $1 ORDER BY ", owned!(@or "t.id" $(, $order)?)
            ),
        }
    };
    (@or $default:literal) => { $default };
    (@or $default:literal, $given:literal) => { $given };
}

/// Everything an organization has in TNS. Left out: secrets and their hashes (passwords, key
/// and token hashes, sealed U-ETDS passwords and webhook secrets), queue bookkeeping (leases),
/// cached answers to repeated requests (kept a day), and the archives themselves.
pub const PARTS: &[Part] = &[
    Part { name: "organization", sql: "SELECT to_jsonb(t) FROM organizations t WHERE t.id = $1" },
    owned!("members", from "users", without "'{password_hash,sessions_valid_after}'::text[]"),
    Part {
        name: "password_resets",
        sql: "SELECT to_jsonb(t) - 'token_hash' FROM password_resets t JOIN users u ON u.id = t.user_id
               WHERE u.org_id = $1 ORDER BY t.created_at",
    },
    owned!("invitations", without "'token_hash'"),
    owned!("api_keys", without "'key_hash'"),
    owned!("subscription", from "subscriptions", by "t.org_id"),
    owned!("plan_terms"),
    owned!("invoices"),
    Part {
        name: "invoice_lines",
        sql: "SELECT to_jsonb(t) FROM invoice_lines t JOIN invoices i ON i.id = t.invoice_id
               WHERE i.org_id = $1 ORDER BY t.invoice_id, t.position",
    },
    owned!("credit_balance", from "credit_balances", by "t.org_id"),
    owned!("usage", from "usage_monthly", by "t.month, t.endpoint"),
    owned!("usage_overage", by "t.month"),
    owned!("vehicles"),
    owned!("personnel"),
    owned!("journeys"),
    owned!("journey_crew", by "t.journey_id, t.position"),
    owned!("passengers"),
    owned!("cargo"),
    owned!("submissions", without "'{lease_token,leased_at,run_at,traceparent}'::text[]"),
    owned!("submission_attempts"),
    owned!("downstream", from "downstream_settings", by "t.org_id", without "'secrets'"),
    owned!("preflight_policy", from "preflight_policies", by "t.org_id"),
    owned!("preflight_results", by "t.day, t.subject"),
    owned!("webhook_subscriptions", without "'{secret_sealed,previous_secret_sealed}'::text[]"),
    owned!("webhook_events"),
    owned!("webhook_deliveries", without "'{run_at}'::text[]"),
    owned!("webhook_attempts"),
    owned!("webhook_attempt_history", by "t.delivery_id, t.seq"),
    owned!("support_tickets"),
    owned!("audit_log"),
    owned!("data_exports", without "'{archive,leased_until,attempts}'::text[]"),
];

/// The rows of `part` for `org`, streamed (an organization's passengers may be millions).
pub fn rows<'a>(db: &'a PgPool, org: OrgId, part: &'a Part) -> BoxStream<'a, sqlx::Result<serde_json::Value>> {
    sqlx::query_scalar(part.sql).bind(org).fetch(db)
}
