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
/// extractors, scopes, answers and words for every registry, told apart by its types, its tag
/// (the collection's name, which is also its path under `/portal` and in its operation ids),
/// what one record is called (`$one`) and what makes two the same (`$unique`).
macro_rules! registry_endpoints {
    (
        registry: $registry:ident, answer: $answer:ident, input: $input:ident, patch: $patch:ident,
        tag: $tag:literal, one: $one:literal, unique: $unique:literal
    ) => {
        #[utoipa::path(post, path = concat!("/portal/", $tag), operation_id = concat!("create_", $one), tag = $tag,
            summary = concat!("Register a ", $one, ". Scope `journeys:write`."), request_body = $input,
            responses((status = 201, body = $answer),
                (status = 409, description = concat!($unique, " already registered"), body = $crate::error::ErrorBody)),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn create(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysWrite>,
            $crate::extract::ApiJson(input): $crate::extract::ApiJson<$input>,
        ) -> $crate::error::ApiResult<$crate::v1::resource::Created<$answer>> {
            let (status, axum::Json(row)) = $crate::v1::registry::create::<$registry>(&st, &p, input).await?;
            Ok((status, axum::Json(row.into())))
        }

        #[utoipa::path(get, path = concat!("/portal/", $tag), operation_id = concat!("list_", $tag), tag = $tag,
            summary = concat!("Active ", $tag, ", newest first. Scope `journeys:read`."), params($crate::v1::resource::ListQuery),
            responses((status = 200, body = tns_http::wire::Paged<$answer>)),
            security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
        pub async fn list(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysRead>,
            $crate::extract::ApiQuery(q): $crate::extract::ApiQuery<$crate::v1::resource::ListQuery>,
        ) -> $crate::error::ApiResult<axum::Json<tns_http::wire::Paged<$answer>>> {
            $crate::v1::registry::list::<$registry>(&st, &p, &q).await.map(axum::Json)
        }

        #[utoipa::path(get, path = concat!("/portal/", $tag, "/{id}"), operation_id = concat!("get_", $one), tag = $tag,
            summary = concat!("One ", $one, " (also a retired one, status `inactive`). Scope `journeys:read`."),
            params(("id" = i64, Path)),
            responses((status = 200, body = $answer)),
            security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
        pub async fn get(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysRead>,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<<$registry as $crate::v1::registry::Registry>::Id>,
        ) -> $crate::error::ApiResult<axum::Json<$answer>> {
            $crate::v1::registry::get::<$registry>(&st, &p, id).await.map(|r| axum::Json(r.into()))
        }

        #[utoipa::path(put, path = concat!("/portal/", $tag, "/{id}"), operation_id = concat!("update_", $one), tag = $tag,
            summary = "Change any subset of fields (`null` clears an optional one); answers the whole record. Scope `journeys:write`.",
            params(("id" = i64, Path)), request_body = $patch,
            responses((status = 200, body = $answer), (status = 409, body = $crate::error::ErrorBody,
                description = concat!("Another active ", $one, " has this ", $unique))),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn update(
            axum::extract::State(st): axum::extract::State<$crate::state::AppState>,
            p: $crate::auth::Caller<tns_core::scopes::need::JourneysWrite>,
            $crate::extract::ApiPath(id): $crate::extract::ApiPath<<$registry as $crate::v1::registry::Registry>::Id>,
            $crate::extract::ApiJson(patch): $crate::extract::ApiJson<serde_json::Value>,
        ) -> $crate::error::ApiResult<axum::Json<$answer>> {
            $crate::v1::registry::update::<$registry>(&st, &p, id, &patch).await.map(|r| axum::Json(r.into()))
        }

        #[utoipa::path(delete, path = concat!("/portal/", $tag, "/{id}"), operation_id = concat!("delete_", $one), tag = $tag,
            summary = concat!("Delete a ", $one, "; one that journeys or cargo refer to is kept as `inactive` and leaves the list. Scope `journeys:write`."),
            params(("id" = i64, Path)),
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

/// A registry: its type, its `Registry` impl and its endpoints, from what is its own — its
/// types (id, row → answer, input / patch → parsed value), its names, its unique key (the
/// index, and what it is called), its store module, how a record of it is retired, how its
/// input is parsed and what a duplicate's 409 says. Its rows' `status` says whether it is active.
macro_rules! registry {
    (
        $registry:ident: $id:ty, $record:ty => $answer:ident, $input:ident / $patch:ident => $value:ty;
        tag: $tag:literal, one: $one:literal, unique: $key:path, called $unique:literal;
        store: $store:path, retired: $retired:path;
        parse($in:ident) $parse:block
        duplicate($f:ident) $duplicate:block
    ) => {
        pub struct $registry;

        impl $crate::v1::registry::Registry for $registry {
            type Id = $id;
            type Record = $record;
            type Answer = $answer;
            type Input = $input;
            type Value = $value;
            const KIND: &'static str = $one;
            const UNIQUE_KEY: &'static str = $key;

            fn retirable(id: $id) -> tns_store::retire::Retirable {
                $retired(id)
            }
            fn parse($in: $input) -> Result<$value, tns_core::domain::Invalid> $parse
            fn duplicate($f: &$value) -> String $duplicate
            fn is_active(r: &$record) -> bool {
                r.status == tns_core::domain::kinds::RegistryStatus::Active
            }
            $crate::v1::registry::registry_store!($store, $id, $record, $value);
        }

        $crate::v1::registry::registry_endpoints! {
            registry: $registry, answer: $answer, input: $input, patch: $patch, tag: $tag, one: $one, unique: $unique
        }
    };
}
pub(crate) use registry;

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
