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
use tns_http::wire::Paged;
use tns_store::{
    pagination::{Keyed, Page},
    retire::{retire, Retirable},
};

pub trait Registry {
    /// The id of its records.
    type Id: Copy + std::fmt::Display + DeserializeOwned + Into<i64> + Send + Sync + 'static;
    /// The store's row.
    type Record: Keyed;
    /// What the API answers for a row.
    type Answer: Serialize + From<Self::Record>;
    /// The input view: every field on create, any subset on update (via a merge patch).
    type Input: DeserializeOwned + Serialize + for<'a> From<&'a Self::Record>;
    /// What the input parses into: every rule, the ones across fields too, holds.
    type Value: Sync;
    /// As error messages name it (`vehicle`).
    const KIND: &'static str;
    /// Record `id` to retire.
    fn retirable(id: Self::Id) -> Retirable;
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
        id: Self::Id,
        f: &Self::Value,
        by: &str,
    ) -> impl Future<Output = sqlx::Result<Option<Self::Record>>> + Send;
    fn get(db: &PgPool, org: OrgId, id: Self::Id) -> impl Future<Output = sqlx::Result<Option<Self::Record>>> + Send;
    fn list(db: &PgPool, org: OrgId, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Self::Record>>> + Send;
}

/// The store functions of a `Registry` impl, delegated to the `$store` module's functions of the
/// same names (every registry's store module has them, on its own record and value types).
macro_rules! registry_store {
    ($store:path, $id:ty, $record:ty, $value:ty) => {
        fn insert(
            db: &sqlx::PgPool,
            org: tns_core::ids::OrgId,
            f: &$value,
            by: &str,
        ) -> impl std::future::Future<Output = sqlx::Result<$record>> + Send {
            use $store as store;
            store::insert(db, org, f, by)
        }
        fn update(
            db: &sqlx::PgPool,
            org: tns_core::ids::OrgId,
            id: $id,
            f: &$value,
            by: &str,
        ) -> impl std::future::Future<Output = sqlx::Result<Option<$record>>> + Send {
            use $store as store;
            store::update(db, org, id, f, by)
        }
        fn get(
            db: &sqlx::PgPool,
            org: tns_core::ids::OrgId,
            id: $id,
        ) -> impl std::future::Future<Output = sqlx::Result<Option<$record>>> + Send {
            use $store as store;
            store::get(db, org, id)
        }
        fn list(
            db: &sqlx::PgPool,
            org: tns_core::ids::OrgId,
            page: &tns_store::pagination::Page,
        ) -> impl std::future::Future<Output = sqlx::Result<Vec<$record>>> + Send {
            use $store as store;
            store::list(db, org, page)
        }
    };
}
pub(crate) use registry_store;

/// A registry's five handlers (create, list, get, update, delete) and its `routes()`: the same
/// extractors, scopes and answers for every registry, told apart by paths, operation ids, tag,
/// types, the 409 descriptions and doc text.
macro_rules! registry_endpoints {
    (
        registry: $registry:ident, answer: $answer:ident, input: $input:ident, patch: $patch:ident, tag: $tag:literal,
        path: $path:literal, one: $one:literal;
        $(#[$create_doc:meta])* create: $create_id:literal, duplicate: $create_duplicate:literal;
        $(#[$list_doc:meta])* list: $list_id:literal;
        $(#[$get_doc:meta])* get: $get_id:literal;
        $(#[$update_doc:meta])* update: $update_id:literal, duplicate: $update_duplicate:literal;
        $(#[$delete_doc:meta])* delete: $delete_id:literal;
    ) => {
        $(#[$create_doc])*
        #[utoipa::path(post, path = $path, operation_id = $create_id, tag = $tag, request_body = $input,
            responses((status = 201, body = $answer), (status = 409, description = $create_duplicate, body = $crate::error::ErrorBody)),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn create(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysWrite>,
            $crate::extract::ApiJson(input): $crate::extract::ApiJson<$input>,
        ) -> $crate::error::ApiResult<$crate::v1::resource::Created<$answer>> {
            let (status, axum::Json(row)) = $crate::v1::registry::create::<$registry>(&st, &p, input).await?;
            Ok((status, axum::Json(row.into())))
        }

        $(#[$list_doc])*
        #[utoipa::path(get, path = $path, operation_id = $list_id, tag = $tag, params($crate::v1::resource::ListQuery),
            responses((status = 200, body = tns_http::wire::Paged<$answer>)),
            security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
        pub async fn list(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysRead>,
            $crate::extract::ApiQuery(q): $crate::extract::ApiQuery<$crate::v1::resource::ListQuery>,
        ) -> $crate::error::ApiResult<axum::Json<tns_http::wire::Paged<$answer>>> {
            $crate::v1::registry::list::<$registry>(&st, &p, &q).await.map(axum::Json)
        }

        $(#[$get_doc])*
        #[utoipa::path(get, path = $one, operation_id = $get_id, tag = $tag, params(("id" = i64, Path)),
            responses((status = 200, body = $answer)),
            security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
        pub async fn get(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysRead>,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<<$registry as $crate::v1::registry::Registry>::Id>,
        ) -> $crate::error::ApiResult<axum::Json<$answer>> {
            $crate::v1::registry::get::<$registry>(&st, &p, id).await.map(|r| axum::Json(r.into()))
        }

        $(#[$update_doc])*
        #[utoipa::path(put, path = $one, operation_id = $update_id, tag = $tag, params(("id" = i64, Path)),
            request_body = $patch,
            responses((status = 200, body = $answer), (status = 409, body = $crate::error::ErrorBody, description = $update_duplicate)),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn update(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysWrite>,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<<$registry as $crate::v1::registry::Registry>::Id>,
            $crate::extract::ApiJson(patch): $crate::extract::ApiJson<serde_json::Value>,
        ) -> $crate::error::ApiResult<axum::Json<$answer>> {
            $crate::v1::registry::update::<$registry>(&st, &p, id, &patch).await.map(|r| axum::Json(r.into()))
        }

        $(#[$delete_doc])*
        #[utoipa::path(delete, path = $one, operation_id = $delete_id, tag = $tag, params(("id" = i64, Path)),
            responses((status = 200, body = $crate::v1::Ok)),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn delete(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysWrite>,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<<$registry as $crate::v1::registry::Registry>::Id>,
        ) -> $crate::error::ApiResult<axum::Json<$crate::v1::Ok>> {
            $crate::v1::registry::delete::<$registry>(&st, &p, id).await.map(|_| axum::Json($crate::v1::Ok::default()))
        }

        /// This module's routes, with their OpenAPI operations.
        pub fn routes() -> utoipa_axum::router::OpenApiRouter<$crate::state::AppState> {
            use utoipa_axum::routes;
            utoipa_axum::router::OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, delete))
        }
    };
}
pub(crate) use registry_endpoints;

pub async fn create<R: Registry>(st: &AppState, p: &Principal, input: R::Input) -> ApiResult<Created<R::Record>> {
    let f = R::parse(input)?;
    let rec = R::insert(&st.db, p.org_id, &f, &p.credential_id())
        .await
        .map_err(|e| conflict_on(e, R::UNIQUE_KEY, || R::duplicate(&f)))?;
    Ok(created(rec))
}

/// Active records, newest first, as the API answers them.
pub async fn list<R: Registry>(st: &AppState, p: &Principal, q: &ListQuery) -> ApiResult<Paged<R::Answer>> {
    let page = q.page();
    Ok(Paged::from_rows(R::list(&st.db, p.org_id, &page).await?, &page).map(R::Answer::from))
}

/// One record, also a retired one (history may point at it).
pub async fn get<R: Registry>(st: &AppState, p: &Principal, id: R::Id) -> ApiResult<R::Record> {
    R::get(&st.db, p.org_id, id).await?.ok_or_else(|| not_found(R::KIND, id))
}

/// Any subset of fields of an active record; the whole record back.
pub async fn update<R: Registry>(
    st: &AppState,
    p: &Principal,
    id: R::Id,
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
pub async fn delete<R: Registry>(st: &AppState, p: &Principal, id: R::Id) -> ApiResult<()> {
    if !retire(&st.db, R::retirable(id), p.org_id, &p.actor()).await? {
        return Err(not_found(R::KIND, id));
    }
    Ok(())
}
