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

/// Whether `code` is on the list `name`; `None` when the list is empty (nothing to check it
/// against).
pub async fn holds(db: &PgPool, name: CodeListName, code: &str) -> sqlx::Result<Option<bool>> {
    let row: Option<(bool, bool)> = sqlx::query_as(
        "SELECT jsonb_array_length(codes) = 0, codes @> jsonb_build_array(jsonb_build_object('code', $2::text))
           FROM code_lists WHERE name = $1",
    )
    .bind(name)
    .bind(code)
    .fetch_optional(db)
    .await?;
    Ok(row.and_then(|(empty, held)| (!empty).then_some(held)))
}

/// When a list was last read from the downstream; `None` if never.
pub async fn last_refresh(db: &PgPool) -> sqlx::Result<Option<DateTime<Utc>>> {
    sqlx::query_scalar("SELECT max(refreshed_at) FROM code_lists").fetch_one(db).await
}

/// Replace the lists the downstream answered with its copy, bounded, in one transaction; an
/// empty answer for a list keeps what it had (a downstream's empty list is no better than the
/// shipped one). How many lists changed.
pub async fn replace(db: &PgPool, lists: Vec<(CodeListName, Vec<Code>)>) -> sqlx::Result<u64> {
    let mut tx = db.begin().await?;
    let mut changed = 0;
    for (name, codes) in lists {
        let codes = bounded(codes);
        if codes.is_empty() {
            continue;
        }
        changed += sqlx::query(
            "UPDATE code_lists SET source = 'downstream', codes = $2, refreshed_at = now() WHERE name = $1",
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
