//! The downstream's code lists (`code_lists`): one row per list, the shipped copy until the
//! jobs role writes the downstream's own.

use chrono::{DateTime, Utc};

use sqlx::{types::Json, PgPool};
use tns_core::domain::code_lists::{bounded, Code, CodeListName, CodeListSource};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredList {
    pub name: CodeListName,
    pub source: CodeListSource,
    pub codes: Json<Vec<Code>>,
    pub refreshed_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "name, source, codes, refreshed_at";

/// Every list, by name.
pub async fn all(db: &PgPool) -> sqlx::Result<Vec<StoredList>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM code_lists ORDER BY name")).fetch_all(db).await
}

pub async fn one(db: &PgPool, name: CodeListName) -> sqlx::Result<Option<StoredList>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM code_lists WHERE name = $1")).bind(name).fetch_optional(db).await
}

/// Whether some list has not been answered by the downstream for `fresh_for` (or ever).
pub async fn due(db: &PgPool, fresh_for: std::time::Duration) -> sqlx::Result<bool> {
    sqlx::query_scalar(
        "SELECT coalesce(bool_or(checked_at IS NULL OR checked_at < now() - make_interval(secs => $1)), false)
           FROM code_lists",
    )
    .bind(fresh_for.as_secs_f64())
    .fetch_one(db)
    .await
}

/// Replace the lists the downstream answered with its copy, bounded, in one transaction, and
/// mark them answered; an empty answer for a list keeps what it had (a downstream's empty list
/// is no better than the shipped one). How many lists changed.
pub async fn replace(db: &PgPool, lists: Vec<(CodeListName, Vec<Code>)>) -> sqlx::Result<u64> {
    let mut tx = db.begin().await?;
    let mut changed = 0;
    for (name, codes) in lists {
        let codes = bounded(codes);
        if codes.is_empty() {
            sqlx::query("UPDATE code_lists SET checked_at = now() WHERE name = $1")
                .bind(name)
                .execute(&mut *tx)
                .await?;
            continue;
        }
        changed += sqlx::query(
            "UPDATE code_lists SET source = 'downstream', codes = $2, refreshed_at = now(), checked_at = now()
              WHERE name = $1",
        )
        .bind(name)
        .bind(Json(codes))
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    tx.commit().await?;
    Ok(changed)
}
