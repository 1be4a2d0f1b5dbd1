//! The shared flow of the two registries an organization keeps — vehicles and personnel:
//! create, list, get, partial update and delete-or-retire, with the same 404s and 409s (the
//! handlers' extractors carry the scopes).
//! Each registry says only what differs (its input and the value it parses into, queries,
//! unique key).

use std::future::Future;
use tns_core::ids::OrgId;

use serde::{de::DeserializeOwned, Serialize};
use sqlx::PgPool;

use crate::{
    auth::Principal,
    error::ApiResult,
    state::AppState,
    v1::resource::{conflict_on, created, merged_conflict, not_found, patched, Created, ListQuery},
};
use tns_core::domain::Invalid;
use tns_store::{
    pagination::{Keyed, Page, Paged},
    retire::{retire, Retirable},
};

pub trait Registry {
    type Record: Keyed;
    /// The input view: every field on create, any subset on update (via a merge patch).
    type Input: DeserializeOwned + Serialize + for<'a> From<&'a Self::Record>;
    /// What the input parses into: every rule, the ones across fields too, holds.
    type Value: Sync;
    /// As error messages name it (`vehicle`).
    const KIND: &'static str;
    const RETIRE: Retirable;
    /// The unique index that makes a duplicate a 409.
    const UNIQUE_KEY: &'static str;

    /// Apply the rules across the input's fields (each field's own rule was applied by
    /// deserializing it).
    fn parse(input: Self::Input) -> Result<Self::Value, Invalid>;
    /// The 409 detail for a duplicate.
    fn duplicate(value: &Self::Value) -> String;
    fn is_active(record: &Self::Record) -> bool;
    /// Insert, created `by` a credential (`Principal::credential_id`).
    fn insert(
        db: &PgPool,
        org: OrgId,
        f: &Self::Value,
        by: &str,
    ) -> impl Future<Output = sqlx::Result<Self::Record>> + Send;
    fn update(
        db: &PgPool,
        org: OrgId,
        id: i64,
        f: &Self::Value,
        by: &str,
    ) -> impl Future<Output = sqlx::Result<Option<Self::Record>>> + Send;
    fn get(db: &PgPool, org: OrgId, id: i64) -> impl Future<Output = sqlx::Result<Option<Self::Record>>> + Send;
    fn list(db: &PgPool, org: OrgId, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Self::Record>>> + Send;
}

pub async fn create<R: Registry>(st: &AppState, p: &Principal, input: R::Input) -> ApiResult<Created<R::Record>> {
    let f = R::parse(input)?;
    let rec = R::insert(&st.db, p.org_id, &f, &p.credential_id())
        .await
        .map_err(|e| conflict_on(e, R::UNIQUE_KEY, || R::duplicate(&f)))?;
    Ok(created(rec))
}

/// Active records, newest first.
pub async fn list<R: Registry>(st: &AppState, p: &Principal, q: &ListQuery) -> ApiResult<Paged<R::Record>> {
    let page = q.page();
    Ok(Paged::from_rows(R::list(&st.db, p.org_id, &page).await?, &page))
}

/// One record, also a retired one (history may point at it).
pub async fn get<R: Registry>(st: &AppState, p: &Principal, id: i64) -> ApiResult<R::Record> {
    R::get(&st.db, p.org_id, id).await?.ok_or_else(|| not_found(R::KIND, id))
}

/// Any subset of fields of an active record; the whole record back.
pub async fn update<R: Registry>(
    st: &AppState,
    p: &Principal,
    id: i64,
    patch: &serde_json::Value,
) -> ApiResult<R::Record> {
    let current = R::get(&st.db, p.org_id, id).await?.filter(R::is_active).ok_or_else(|| not_found(R::KIND, id))?;
    let merged = patched(&R::Input::from(&current), patch)?;
    let f = R::parse(merged).map_err(merged_conflict)?;
    R::update(&st.db, p.org_id, id, &f, &p.credential_id())
        .await
        .map_err(|e| conflict_on(e, R::UNIQUE_KEY, || R::duplicate(&f)))?
        .ok_or_else(|| not_found(R::KIND, id))
}

/// Delete, or retire as `inactive` when history refers to the record.
pub async fn delete<R: Registry>(st: &AppState, p: &Principal, id: i64) -> ApiResult<()> {
    if !retire(&st.db, R::RETIRE, p.org_id, id, &p.actor()).await? {
        return Err(not_found(R::KIND, id));
    }
    Ok(())
}
