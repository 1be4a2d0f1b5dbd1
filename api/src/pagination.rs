//! Keyset pagination shared by every list: newest first by id, `limit` (default 50, max
//! 200), an opaque `next_cursor`, and `has_more`.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use serde::Serialize;
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;

use crate::error::ApiError;

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: i64,
    /// Only rows with a smaller id (the cursor's position).
    pub before: Option<i64>,
}

impl Page {
    pub fn parse(limit: Option<i64>, cursor: Option<&str>) -> Result<Page, ApiError> {
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(ApiError::validation("limit", format!("must be between 1 and {MAX_LIMIT}")));
        }
        let before = match cursor.filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => {
                Some(decode(c).ok_or_else(|| ApiError::validation("cursor", "is not a cursor this API issued"))?)
            }
        };
        Ok(Page { limit, before })
    }

    /// Append ` AND <id_col> < cursor ORDER BY <id_col> DESC LIMIT limit+1` to a query whose
    /// WHERE clause is already open. One extra row tells whether there is a next page.
    pub fn push(&self, qb: &mut QueryBuilder<'_, Postgres>, id_col: &str) {
        if let Some(before) = self.before {
            qb.push(format!(" AND {id_col} < ")).push_bind(before);
        }
        qb.push(format!(" ORDER BY {id_col} DESC LIMIT ")).push_bind(self.limit + 1);
    }
}

/// For tables where one tenant may hold a large share of old rows (journeys, cargo): pick the
/// page's ids with an index-only scan of the tenant's index first, then fetch those rows.
/// A single query tempts the planner into walking the primary key backwards past every newer
/// row of other tenants (it assumes the tenant's rows are spread evenly), which is fine with
/// 10 k rows and takes 100 ms with 1 M.
pub fn ids_then_rows(select: &str, alias: &str, table: &str) -> QueryBuilder<'static, Postgres> {
    QueryBuilder::new(format!("{select} WHERE {alias}.id IN (SELECT id FROM {table} WHERE org_id = "))
}

/// Close an [`ids_then_rows`] query after its filters.
pub fn close_ids_then_rows(qb: &mut QueryBuilder<'_, Postgres>, page: &Page, alias: &str) {
    page.push(qb, "id");
    qb.push(format!(") ORDER BY {alias}.id DESC"));
}

fn encode(id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("v1:{id}"))
}

fn decode(c: &str) -> Option<i64> {
    let raw = URL_SAFE_NO_PAD.decode(c).ok()?;
    std::str::from_utf8(&raw).ok()?.strip_prefix("v1:")?.parse().ok()
}

/// Rows that know their keyset position.
pub trait Keyed {
    fn key(&self) -> i64;
}

/// One page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Paged<T> {
    pub data: Vec<T>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

impl<T: Keyed> Paged<T> {
    /// From rows fetched with [`Page::push`] (at most `limit + 1`).
    pub fn from_rows(mut rows: Vec<T>, page: &Page) -> Paged<T> {
        let has_more = rows.len() as i64 > page.limit;
        rows.truncate(page.limit as usize);
        let next_cursor = if has_more { rows.last().map(|r| encode(r.key())) } else { None };
        Paged { data: rows, next_cursor, has_more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_bounds() {
        assert_eq!(decode(&encode(42)), Some(42));
        assert!(Page::parse(Some(0), None).is_err());
        assert!(Page::parse(Some(201), None).is_err());
        assert!(Page::parse(None, Some("garbage!")).is_err());
        let p = Page::parse(None, Some(&encode(7))).unwrap();
        assert_eq!((p.limit, p.before), (50, Some(7)));
    }
}
