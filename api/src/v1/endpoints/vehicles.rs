//! `/portal/vehicles`: create, list, get, partial update, delete (retire).

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
        openapi::patch_schema,
        registry::{self, Registry},
        resource::{Created, ListQuery},
        Ok as OkBody,
    },
};
pub use tns_core::domain::vehicle::VehicleIn;
use tns_core::{
    domain::{kinds::RegistryStatus, vehicle::NewVehicle, Invalid},
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    pagination::{Page, Paged},
    retire::Retirable,
    vehicles::Vehicle,
};
use utoipa_axum::{router::OpenApiRouter, routes};

patch_schema!(VehiclePatch, VehicleIn);

pub struct Vehicles;

impl Registry for Vehicles {
    type Record = Vehicle;
    type Input = VehicleIn;
    type Value = NewVehicle;
    const KIND: &'static str = "vehicle";
    const RETIRE: Retirable = Retirable::Vehicle;
    const UNIQUE_KEY: &'static str = db::vehicles::PLATE_KEY;

    fn parse(input: VehicleIn) -> Result<NewVehicle, Invalid> {
        Ok(input.into())
    }
    fn duplicate(f: &NewVehicle) -> String {
        format!("an active vehicle with plate {} already exists", f.plate)
    }
    fn is_active(r: &Vehicle) -> bool {
        r.status == RegistryStatus::Active
    }
    fn insert(db: &PgPool, org: OrgId, f: &NewVehicle, by: &str) -> impl Future<Output = sqlx::Result<Vehicle>> + Send {
        db::vehicles::insert(db, org, f, by)
    }
    fn update(
        db: &PgPool,
        org: OrgId,
        id: i64,
        f: &NewVehicle,
        by: &str,
    ) -> impl Future<Output = sqlx::Result<Option<Vehicle>>> + Send {
        db::vehicles::update(db, org, id, f, by)
    }
    fn get(db: &PgPool, org: OrgId, id: i64) -> impl Future<Output = sqlx::Result<Option<Vehicle>>> + Send {
        db::vehicles::get(db, org, id)
    }
    fn list(db: &PgPool, org: OrgId, page: &Page) -> impl Future<Output = sqlx::Result<Vec<Vehicle>>> + Send {
        db::vehicles::list(db, org, page)
    }
}

/// Register a vehicle. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/vehicles", operation_id = "create_vehicle", tag = "vehicles", request_body = VehicleIn,
    responses((status = 201, body = Vehicle), (status = 409, description = "plate already registered", body = ErrorBody)),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<VehicleIn>,
) -> ApiResult<Created<Vehicle>> {
    registry::create::<Vehicles>(&st, &p, input).await
}

/// Active vehicles, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/vehicles", operation_id = "list_vehicles", tag = "vehicles", params(ListQuery),
    responses((status = 200, body = Paged<Vehicle>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Vehicle>>> {
    registry::list::<Vehicles>(&st, &p, &q).await.map(Json)
}

/// One vehicle (also a retired one, status `inactive`). Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/vehicles/{id}", operation_id = "get_vehicle", tag = "vehicles", params(("id" = i64, Path)),
    responses((status = 200, body = Vehicle)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Vehicle>> {
    registry::get::<Vehicles>(&st, &p, id).await.map(Json)
}

/// Change any subset of fields (`null` clears an optional one); answers the whole record.
/// Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/vehicles/{id}", operation_id = "update_vehicle", tag = "vehicles", params(("id" = i64, Path)),
    request_body = VehiclePatch,
    responses((status = 200, body = Vehicle), (status = 409, body = ErrorBody, description = "Another active vehicle has this plate")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Vehicle>> {
    registry::update::<Vehicles>(&st, &p, id, &patch).await.map(Json)
}

/// Delete a vehicle; one that journeys or cargo refer to is kept as `inactive` and leaves
/// the list. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/vehicles/{id}", operation_id = "delete_vehicle", tag = "vehicles", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody)),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<OkBody>> {
    registry::delete::<Vehicles>(&st, &p, id).await.map(|_| Json(OkBody::default()))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, delete))
}
