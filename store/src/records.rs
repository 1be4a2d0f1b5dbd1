//! What journeys and cargo shipments share as records sent downstream: a status that mirrors
//! their latest submission, and the downstream reference of the first delivered one, or of the
//! latest finished amendment (a failed first notification's reference stays on that
//! submission, for a cancellation), and deletion only
//! while a draft. Both tables are otherwise their own modules'; this part of their lifecycle is
//! written here, once.

use sqlx::{PgConnection, PgPool};
use tns_core::domain::kinds::{RecordStatus, TargetType};
use tns_core::ids::{OrgId, Target};

use crate::audit::{self, Actor};

fn table(target: TargetType) -> &'static str {
    match target {
        TargetType::Journey => "journeys",
        TargetType::Cargo => "cargo",
    }
}

/// Common table expressions (for a statement that finishes submissions) that bring each record
/// in line with its finished submission, read from the CTE `finished`: one row per finished
/// submission with `org_id`, `target_type`, `target_id`, `operation`, `state`,
/// `downstream_reference` and the record's new `status`.
pub(crate) fn mirror(finished: &str) -> String {
    TargetType::ALL
        .iter()
        .map(|target| {
            format!(
                "{name} AS (
            UPDATE {name} t
               SET status = f.status, updated_at = now(),
                   downstream_reference = CASE
                       -- An amendment's answer names the trip anew (U-ETDS may give another
                       -- reference on an update): that one holds from now on, also when a later
                       -- step of the amendment failed (the trip is known by it only now).
                       WHEN f.operation = 'amendment'
                           THEN COALESCE(NULLIF(f.downstream_reference, ''), t.downstream_reference)
                       WHEN f.state = 'delivered' THEN COALESCE(t.downstream_reference, f.downstream_reference)
                       ELSE t.downstream_reference END
              FROM {finished} f
             WHERE f.target_type = '{kind}' AND t.id = f.target_id AND t.org_id = f.org_id
         )",
                name = table(*target),
                kind = target.as_str(),
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Delete the record if it is still a draft, in the audit log as `by`; `false` when it is not
/// one, or there is none.
pub async fn delete_draft(db: &PgPool, record: Target, org: OrgId, by: &Actor) -> sqlx::Result<bool> {
    let (target, id) = (record.kind(), record.id());
    let mut tx = db.begin().await?;
    let r = sqlx::query(&format!("DELETE FROM {} WHERE org_id = $1 AND id = $2 AND status = 'draft'", table(target)))
        .bind(org)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if r.rows_affected() != 1 {
        return Ok(false);
    }
    audit::record(&mut tx, by.deleted(org, target.as_str(), id, false)).await?;
    tx.commit().await?;
    Ok(true)
}

/// Hold the record against submissions being queued for it until the transaction ends (each
/// queuing locks it for update first); false when there is none.
pub(crate) async fn hold(tx: &mut sqlx::PgConnection, record: Target, org: OrgId) -> sqlx::Result<bool> {
    let held = sqlx::query(&format!("SELECT 1 FROM {} WHERE org_id = $1 AND id = $2 FOR SHARE", table(record.kind())))
        .bind(org)
        .bind(record.id())
        .fetch_optional(tx)
        .await?;
    Ok(held.is_some())
}

/// The day a record's trip ends, from which its personal data's retention counts.
fn ended(target: TargetType) -> &'static str {
    match target {
        TargetType::Journey => "arrival_date",
        TargetType::Cargo => "unloading_date",
    }
}

/// Records of every organization whose trip ended more than `days` days ago (Türkiye's
/// calendar) and that still keep personal data, with no submission in flight (it sends what it
/// holds; the record waits for a later run), as (id, organization): at most `limit`, oldest
/// first, locked for the transaction. Ones locked elsewhere (a change, a submit) are left to a
/// later run.
pub async fn past_retention(
    tx: &mut PgConnection,
    target: TargetType,
    days: u32,
    limit: i64,
) -> sqlx::Result<Vec<(i64, i64)>> {
    sqlx::query_as(&format!(
        "SELECT r.id, r.org_id FROM {table} r
          WHERE r.personal_data_erased_at IS NULL
            AND r.{ended} < (now() AT TIME ZONE 'Europe/Istanbul')::date - $1::int
            AND NOT EXISTS (SELECT 1 FROM submissions s
                             WHERE s.org_id = r.org_id AND s.target_type = '{kind}' AND s.target_id = r.id
                               AND s.state IN ('pending', 'unknown'))
          ORDER BY r.{ended}, r.id
          LIMIT $2
          FOR UPDATE OF r SKIP LOCKED",
        table = table(target),
        ended = ended(target),
        kind = target.as_str(),
    ))
    .bind(days as i32)
    .bind(limit)
    .fetch_all(tx)
    .await
}

/// Whether the record's personal data was erased past its retention period (false when there
/// is no such record). It is history from then on: what it would send is the erased form.
pub async fn erased(db: impl sqlx::PgExecutor<'_>, record: Target, org: OrgId) -> sqlx::Result<bool> {
    let erased: Option<bool> = sqlx::query_scalar(&format!(
        "SELECT personal_data_erased_at IS NOT NULL FROM {} WHERE org_id = $1 AND id = $2",
        table(record.kind())
    ))
    .bind(org)
    .bind(record.id())
    .fetch_optional(db)
    .await?;
    Ok(erased.unwrap_or(false))
}

pub async fn status(db: &PgPool, record: Target, org: OrgId) -> sqlx::Result<Option<RecordStatus>> {
    sqlx::query_scalar(&format!("SELECT status FROM {} WHERE org_id = $1 AND id = $2", table(record.kind())))
        .bind(org)
        .bind(record.id())
        .fetch_optional(db)
        .await
}
