//! `/portal/personnel`: create, list, get, partial update, delete (retire).

use std::future::Future;
use tns_core::ids::OrgId;

use axum::{extract::State, Json};
use sqlx::PgPool;

use crate::{
    auth::Caller,
    error::{ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
    v1::{
        openapi::{patch_schema, AcrossFields},
        registry::{self, Registry},
        resource::{Created, ListQuery},
        Ok as OkBody,
    },
};
pub use tns_core::domain::person::PersonIn;
use tns_core::{
    domain::{kinds::RegistryStatus, national::identity_rule, person::NewPerson, Invalid},
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    pagination::{Page, Paged},
    personnel::Person,
    retire::Retirable,
};
use utoipa_axum::{router::OpenApiRouter, routes};

patch_schema!(PersonPatch, PersonIn);

impl AcrossFields for PersonIn {
    fn json_rules() -> serde_json::Value {
        identity_rule()
    }
}

pub struct Personnel;

impl Registry for Personnel {
    type Record = Person;
    type Input = PersonIn;
    type Value = NewPerson;
    const KIND: &'static str = "person";
    const RETIRE: Retirable = Retirable::Person;
    const UNIQUE_KEY: &'static str = db::personnel::IDENTITY_KEY;

    fn parse(input: PersonIn) -> Result<NewPerson, Invalid> {
        input.try_into()
    }
    fn duplicate(f: &NewPerson) -> String {
        format!("an active person with identity number {} already exists", f.identity.number())
    }
    fn is_active(r: &Person) -> bool {
        r.status == RegistryStatus::Active
    }
    fn insert(db: &PgPool, org: OrgId, f: &NewPerson, by: &str) -> impl Future<Output = sqlx::Result<Person>> + Send {
        db::personnel::insert(db, org, f, by)
    }
    fn update(
        db: &PgPool,
        org: OrgId,
        id: i64,
        f: &NewPerson,
        by: &str,
    ) -> impl Future<Output = sqlx::Result<Option<Person>>> + Send {
        db::personnel::update(db, org, id, f, by)
    }
    fn get(db: &PgPool, org: OrgId, id: i64) -> impl Future<Output = sqlx::Result<Option<Person>>> + Send {
        db::personnel::get(db, org, id)
    }
    fn list(db: &PgPool, org: OrgId, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Person>>> + Send {
        db::personnel::list(db, org, page)
    }
}

/// Register a person. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/personnel", operation_id = "create_person", tag = "personnel", request_body = PersonIn,
    responses((status = 201, body = Person), (status = 409, description = "identity number already registered", body = ErrorBody)),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<PersonIn>,
) -> ApiResult<Created<Person>> {
    registry::create::<Personnel>(&st, &p, input).await
}

/// Active personnel, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/personnel", operation_id = "list_personnel", tag = "personnel", params(ListQuery),
    responses((status = 200, body = Paged<Person>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Person>>> {
    registry::list::<Personnel>(&st, &p, &q).await.map(Json)
}

/// One person (also a retired one, status `inactive`). Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/personnel/{id}", operation_id = "get_person", tag = "personnel", params(("id" = i64, Path)),
    responses((status = 200, body = Person)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Person>> {
    registry::get::<Personnel>(&st, &p, id).await.map(Json)
}

/// Change any subset of fields (`null` clears an optional one); answers the whole record.
/// Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/personnel/{id}", operation_id = "update_person", tag = "personnel", params(("id" = i64, Path)),
    request_body = PersonPatch,
    responses((status = 200, body = Person), (status = 409, body = ErrorBody, description = "Another active person has this identity number")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Person>> {
    registry::update::<Personnel>(&st, &p, id, &patch).await.map(Json)
}

/// Delete a person; one that journeys or cargo refer to is kept as `inactive` and leaves the
/// list. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/personnel/{id}", operation_id = "delete_person", tag = "personnel", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody)),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<OkBody>> {
    registry::delete::<Personnel>(&st, &p, id).await.map(|_| Json(OkBody::default()))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, delete))
}
