//! `/portal/vehicles`: create, list, get, partial update, delete (retire).

use std::future::Future;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::{
    auth::Auth,
    db::{
        self,
        retire::Retirable,
        vehicles::{Vehicle, VehicleFields},
    },
    domain::{opt_text, uetds},
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pagination::{Page, Paged},
    state::AppState,
    v1::{
        registry::{self, Registry},
        resource::{one_of, Created, ListQuery},
        Ok as OkBody,
    },
};

pub const VEHICLE_TYPES: &[&str] = &["otobus", "minibus", "midibus", "sedan", "van", "kamyon", "tir", "dorse"];

/// A vehicle as sent on create (every field) or update (any subset).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VehicleIn {
    /// Upper-cased and stripped of spaces; letters and digits, at most 20.
    plate: String,
    /// One of `otobus`, `minibus`, `midibus`, `sedan`, `van`, `kamyon`, `tir`, `dorse`.
    vehicle_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_year: Option<i32>,
    /// Seats or load capacity, 0–100000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capacity: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phone: Option<String>,
}

impl VehicleIn {
    fn validate(&self) -> ApiResult<VehicleFields> {
        let this_year = chrono::Datelike::year(&chrono::Utc::now());
        if let Some(y) = self.model_year.filter(|y| !(1950..=this_year + 1).contains(y)) {
            return Err(ApiError::validation("model_year", format!("{y} is not between 1950 and {}", this_year + 1)));
        }
        if self.capacity.is_some_and(|c| !(0..=100_000).contains(&c)) {
            return Err(ApiError::validation("capacity", "must be between 0 and 100000"));
        }
        Ok(VehicleFields {
            plate: uetds::plate("plate", &self.plate)?,
            vehicle_type: one_of("vehicle_type", &self.vehicle_type, VEHICLE_TYPES)?,
            brand: opt_text("brand", self.brand.as_deref(), 50)?,
            model: opt_text("model", self.model.as_deref(), 50)?,
            model_year: self.model_year,
            capacity: self.capacity,
            phone: self.phone.as_deref().map(|p| uetds::phone("phone", p)).transpose()?,
        })
    }
}

impl From<&Vehicle> for VehicleIn {
    fn from(v: &Vehicle) -> Self {
        VehicleIn {
            plate: v.plate.clone(),
            vehicle_type: v.vehicle_type.clone(),
            brand: v.brand.clone(),
            model: v.model.clone(),
            model_year: v.model_year,
            capacity: v.capacity,
            phone: v.phone.clone(),
        }
    }
}

/// Vehicles and personnel share one flow ([`registry`]); this says what differs.
pub struct Vehicles;

impl Registry for Vehicles {
    type Record = Vehicle;
    type Input = VehicleIn;
    type Fields = VehicleFields;
    const KIND: &'static str = "vehicle";
    const RETIRE: Retirable = Retirable::Vehicle;
    const UNIQUE_KEY: &'static str = db::vehicles::PLATE_KEY;

    fn validate(input: &VehicleIn) -> ApiResult<VehicleFields> {
        input.validate()
    }
    fn duplicate(f: &VehicleFields) -> String {
        format!("an active vehicle with plate {} already exists", f.plate)
    }
    fn is_active(r: &Vehicle) -> bool {
        r.status == "active"
    }
    fn insert(db: &PgPool, org: i64, f: &VehicleFields) -> impl Future<Output = sqlx::Result<Vehicle>> + Send {
        db::vehicles::insert(db, org, f)
    }
    fn update(
        db: &PgPool,
        org: i64,
        id: i64,
        f: &VehicleFields,
    ) -> impl Future<Output = sqlx::Result<Option<Vehicle>>> + Send {
        db::vehicles::update(db, org, id, f)
    }
    fn get(db: &PgPool, org: i64, id: i64) -> impl Future<Output = sqlx::Result<Option<Vehicle>>> + Send {
        db::vehicles::get(db, org, id)
    }
    fn list(db: &PgPool, org: i64, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Vehicle>>> + Send {
        db::vehicles::list(db, org, page)
    }
}

/// Register a vehicle. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/vehicles", tag = "vehicles", request_body = VehicleIn,
    responses((status = 201, body = Vehicle), (status = 409, description = "plate already registered", body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<VehicleIn>,
) -> ApiResult<Created<Vehicle>> {
    registry::create::<Vehicles>(&st, &p, input).await
}

/// Active vehicles, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/vehicles", tag = "vehicles", params(ListQuery),
    responses((status = 200, body = Paged<Vehicle>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Vehicle>>> {
    registry::list::<Vehicles>(&st, &p, &q).await.map(Json)
}

/// One vehicle (also a retired one, status `inactive`). Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/vehicles/{id}", tag = "vehicles", params(("id" = i64, Path)),
    responses((status = 200, body = Vehicle), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vehicle>> {
    registry::get::<Vehicles>(&st, &p, id).await.map(Json)
}

/// Change any subset of fields (`null` clears an optional one); answers the whole record.
/// Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/vehicles/{id}", tag = "vehicles", params(("id" = i64, Path)),
    request_body(content = Object, description = "Any subset of the vehicle fields"),
    responses((status = 200, body = Vehicle), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Vehicle>> {
    registry::update::<Vehicles>(&st, &p, id, &patch).await.map(Json)
}

/// Delete a vehicle; one that journeys or cargo refer to is kept as `inactive` and leaves
/// the list. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/vehicles/{id}", tag = "vehicles", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<OkBody>> {
    registry::delete::<Vehicles>(&st, &p, id).await.map(|_| Json(OkBody::default()))
}
