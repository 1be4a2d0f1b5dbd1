//! `/portal/personnel`: create, list, get, partial update, delete (retire).

use std::future::Future;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

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
use tns_core::{
    domain::{
        fields::Text,
        kinds::{Gender, RegistryStatus, RoleType},
        uetds::{check_identity, identity_rule, Address, HesCode, IdentityNumber, Nationality, PersonName, Phone},
    },
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    pagination::{Page, Paged},
    personnel::{Person, PersonFields},
    retire::Retirable,
};

/// A crew member as sent on create; any subset of it on update.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonIn {
    identity_number: IdentityNumber,
    first_name: PersonName,
    last_name: PersonName,
    gender: Gender,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nationality: Option<Nationality>,
    role_type: RoleType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phone: Option<Phone>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<Address>,
    /// Health-code value (HES), an obsolete field U-ETDS still carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hes_code: Option<HesCode>,
}

patch_schema!(PersonPatch, PersonIn);

impl AcrossFields for PersonIn {
    fn json_rules() -> serde_json::Value {
        identity_rule()
    }
}

impl From<PersonIn> for PersonFields {
    fn from(p: PersonIn) -> Self {
        PersonFields {
            identity_number: p.identity_number.into_inner(),
            first_name: p.first_name.into_inner(),
            last_name: p.last_name.into_inner(),
            gender: p.gender,
            nationality: p.nationality.map(Nationality::into_inner),
            role_type: p.role_type,
            phone: p.phone.map(Phone::into_inner),
            address: p.address.map(Text::into_inner),
            hes_code: p.hes_code.map(Text::into_inner),
        }
    }
}

impl From<&Person> for PersonIn {
    fn from(p: &Person) -> Self {
        PersonIn {
            identity_number: IdentityNumber::stored(p.identity_number.clone()),
            first_name: Text::stored(p.first_name.clone()),
            last_name: Text::stored(p.last_name.clone()),
            gender: p.gender,
            nationality: p.nationality.clone().map(Nationality::stored),
            role_type: p.role_type,
            phone: p.phone.clone().map(Phone::stored),
            address: p.address.clone().map(Text::stored),
            hes_code: p.hes_code.clone().map(Text::stored),
        }
    }
}

pub struct Personnel;

impl Registry for Personnel {
    type Record = Person;
    type Input = PersonIn;
    type Fields = PersonFields;
    const KIND: &'static str = "person";
    const RETIRE: Retirable = Retirable::Person;
    const UNIQUE_KEY: &'static str = db::personnel::IDENTITY_KEY;

    fn check_across(p: &PersonIn) -> ApiResult<()> {
        check_identity(&p.identity_number, p.nationality.as_ref())
            .map_err(|why| crate::error::ApiError::validation("identity_number", why))
    }
    fn fields(input: PersonIn) -> PersonFields {
        input.into()
    }
    fn duplicate(f: &PersonFields) -> String {
        format!("an active person with identity number {} already exists", f.identity_number)
    }
    fn is_active(r: &Person) -> bool {
        r.status == RegistryStatus::Active
    }
    fn insert(db: &PgPool, org: i64, f: &PersonFields) -> impl Future<Output = sqlx::Result<Person>> + Send {
        db::personnel::insert(db, org, f)
    }
    fn update(
        db: &PgPool,
        org: i64,
        id: i64,
        f: &PersonFields,
    ) -> impl Future<Output = sqlx::Result<Option<Person>>> + Send {
        db::personnel::update(db, org, id, f)
    }
    fn get(db: &PgPool, org: i64, id: i64) -> impl Future<Output = sqlx::Result<Option<Person>>> + Send {
        db::personnel::get(db, org, id)
    }
    fn list(db: &PgPool, org: i64, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Person>>> + Send {
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
