//! `/portal/personnel`: create, list, get, partial update, delete (retire).

use std::future::Future;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::{
    auth::Auth,
    db::{
        self,
        personnel::{Person, PersonFields},
        retire::Retirable,
    },
    domain::{opt_text, text, uetds},
    error::{ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pagination::{Page, Paged},
    state::AppState,
    v1::{
        registry::{self, Registry},
        resource::{one_of, Created, ListQuery},
        Ok as OkBody,
    },
};

pub const ROLE_TYPES: &[&str] = &["driver", "host", "guide", "other"];

/// A person as sent on create (every field) or update (any subset).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonIn {
    /// T.C. identity number (checksum verified) when `nationality` is `TR` or absent,
    /// otherwise a passport number of 1–30 characters.
    identity_number: String,
    first_name: String,
    last_name: String,
    /// `E` or `K`.
    gender: String,
    /// Two-letter country code; absent means `TR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nationality: Option<String>,
    /// One of `driver`, `host`, `guide`, `other`.
    role_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hes_code: Option<String>,
}

impl PersonIn {
    fn validate(&self) -> ApiResult<PersonFields> {
        let nationality = self.nationality.as_deref().map(|n| uetds::nationality("nationality", n)).transpose()?;
        Ok(PersonFields {
            identity_number: uetds::identity_number("identity_number", &self.identity_number, nationality.as_deref())?,
            first_name: text("first_name", &self.first_name, uetds::NAME_MAX)?,
            last_name: text("last_name", &self.last_name, uetds::NAME_MAX)?,
            gender: uetds::gender("gender", &self.gender)?,
            nationality,
            role_type: one_of("role_type", &self.role_type, ROLE_TYPES)?,
            phone: self.phone.as_deref().map(|p| uetds::phone("phone", p)).transpose()?,
            address: opt_text("address", self.address.as_deref(), uetds::ADDRESS_MAX)?,
            hes_code: opt_text("hes_code", self.hes_code.as_deref(), uetds::HES_MAX)?,
        })
    }
}

impl From<&Person> for PersonIn {
    fn from(p: &Person) -> Self {
        PersonIn {
            identity_number: p.identity_number.clone(),
            first_name: p.first_name.clone(),
            last_name: p.last_name.clone(),
            gender: p.gender.clone(),
            nationality: p.nationality.clone(),
            role_type: p.role_type.clone(),
            phone: p.phone.clone(),
            address: p.address.clone(),
            hes_code: p.hes_code.clone(),
        }
    }
}

/// Vehicles and personnel share one flow ([`registry`]); this says what differs.
pub struct Personnel;

impl Registry for Personnel {
    type Record = Person;
    type Input = PersonIn;
    type Fields = PersonFields;
    const KIND: &'static str = "person";
    const RETIRE: Retirable = Retirable::Person;
    const UNIQUE_KEY: &'static str = db::personnel::IDENTITY_KEY;

    fn validate(input: &PersonIn) -> ApiResult<PersonFields> {
        input.validate()
    }
    fn duplicate(f: &PersonFields) -> String {
        format!("an active person with identity number {} already exists", f.identity_number)
    }
    fn is_active(r: &Person) -> bool {
        r.status == "active"
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
#[utoipa::path(post, path = "/portal/personnel", tag = "personnel", request_body = PersonIn,
    responses((status = 201, body = Person), (status = 409, description = "identity number already registered", body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<PersonIn>,
) -> ApiResult<Created<Person>> {
    registry::create::<Personnel>(&st, &p, input).await
}

/// Active personnel, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/personnel", tag = "personnel", params(ListQuery),
    responses((status = 200, body = Paged<Person>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Person>>> {
    registry::list::<Personnel>(&st, &p, &q).await.map(Json)
}

/// One person (also a retired one, status `inactive`). Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/personnel/{id}", tag = "personnel", params(("id" = i64, Path)),
    responses((status = 200, body = Person), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Person>> {
    registry::get::<Personnel>(&st, &p, id).await.map(Json)
}

/// Change any subset of fields (`null` clears an optional one); answers the whole record.
/// Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/personnel/{id}", tag = "personnel", params(("id" = i64, Path)),
    request_body(content = Object, description = "Any subset of the personnel fields"),
    responses((status = 200, body = Person), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Person>> {
    registry::update::<Personnel>(&st, &p, id, &patch).await.map(Json)
}

/// Delete a person; one that journeys or cargo refer to is kept as `inactive` and leaves the
/// list. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/personnel/{id}", tag = "personnel", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<OkBody>> {
    registry::delete::<Personnel>(&st, &p, id).await.map(|_| Json(OkBody::default()))
}
