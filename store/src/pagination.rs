//! Keyset pagination shared by every list: newest first by id, `limit` (default 50, max
//! 200), an opaque `next_cursor`, and `has_more` (the envelope is `tns_http::wire::Paged`).

use sqlx::{Postgres, QueryBuilder};

use tns_core::domain::fields::{Cursor, Int, Limit};

pub const DEFAULT_LIMIT: i64 = 50;
pub use tns_core::domain::fields::MAX_LIMIT;

#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: i64,
    /// Only rows with a smaller id (the cursor's position).
    pub before: Option<i64>,
}

impl Page {
    /// A page from the list's `limit` and `cursor` parameters, parsed by their field types.
    pub fn new(limit: Option<Limit>, cursor: Option<Cursor>) -> Page {
        Page { limit: limit.map_or(DEFAULT_LIMIT, Int::get), before: cursor.map(|c| c.0) }
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

/// Rows that know their keyset position.
pub trait Keyed {
    fn key(&self) -> i64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_from_its_parameters() {
        let p = Page::new(None, Some(Cursor::parse(&Cursor::encode(7)).unwrap()));
        assert_eq!((p.limit, p.before), (50, Some(7)));
        assert_eq!(Page::new(Some(Int::new(2).unwrap()), None).limit, 2);
    }
}
