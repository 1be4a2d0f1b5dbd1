//! Keyset pagination shared by every list: newest first by id, `limit` (default 50, max
//! 200), an opaque `next_cursor`, and `has_more`.

use serde::Serialize;
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;

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

/// One page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Paged<T> {
    pub data: Vec<T>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(value_type = Option<Cursor>)]
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

impl<T: Keyed> Paged<T> {
    /// From rows fetched with [`Page::push`] (at most `limit + 1`).
    pub fn from_rows(mut rows: Vec<T>, page: &Page) -> Paged<T> {
        let has_more = rows.len() as i64 > page.limit;
        rows.truncate(page.limit as usize);
        let next_cursor = if has_more { rows.last().map(|r| Cursor::encode(r.key())) } else { None };
        Paged { data: rows, next_cursor, has_more }
    }
}

impl<T> Paged<T> {
    /// The same page, each entry turned into `U` (a row into its answer).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Paged<U> {
        Paged { data: self.data.into_iter().map(f).collect(), next_cursor: self.next_cursor, has_more: self.has_more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row(i64);
    impl Keyed for Row {
        fn key(&self) -> i64 {
            self.0
        }
    }

    #[test]
    fn pages_and_cursors() {
        let p = Page::new(None, Some(Cursor::parse(&Cursor::encode(7)).unwrap()));
        assert_eq!((p.limit, p.before), (50, Some(7)));
        let page = Page::new(Some(Int::new(2).unwrap()), None);
        let paged = Paged::from_rows(vec![Row(9), Row(8), Row(7)], &page);
        assert!(paged.has_more);
        assert_eq!(paged.data.len(), 2);
        assert_eq!(Cursor::parse(paged.next_cursor.as_deref().unwrap()).unwrap().0, 8);
        assert!(Paged::from_rows(vec![Row(1)], &page).next_cursor.is_none());
    }
}
