//! `/portal/cargo`: create, list (status filter), get, and update or delete while `draft`.

use serde::Deserialize;
use utoipa::IntoParams;

use super::prelude::*;
use crate::v1::answers::CargoOut;
use crate::v1::resource::{
    created, delete_draft, merged_conflict, missing_reference, not_editable, not_found, patched, refuse_erased,
    vanished_reference, Created,
};
pub use tns_core::domain::cargo::{CargoIn, CargoItemIn};
use tns_core::domain::{
    cargo::{CargoFields, CargoShipment},
    fields::{Cursor, Limit},
    kinds::{RecordStatus, RegistryStatus},
};
use tns_http::wire::Paged;
use tns_store::{self as db, cargo::Cargo, pagination::Page};

patch_schema!(CargoPatch, CargoIn);

impl AcrossFields for CargoIn {
    fn json_rules() -> serde_json::Value {
        CargoShipment::schema_rules()
    }
}

impl AcrossFields for CargoItemIn {
    fn json_rules() -> serde_json::Value {
        CargoItemIn::schema_rules()
    }
}

/// The shipment's columns, its vehicle and driver checked within the organization (404 for a
/// record it does not have active).
async fn resolve(st: &AppState, org: OrgId, shipment: &CargoShipment) -> ApiResult<CargoFields> {
    let vehicle = db::vehicles::get(&st.db, org, shipment.vehicle_id()).await?;
    if !vehicle.is_some_and(|v| v.status == RegistryStatus::Active) {
        return Err(missing_reference("vehicle_id", "active vehicle", shipment.vehicle_id()));
    }
    for (field, person) in [("driver_id", shipment.driver_id()), ("second_driver_id", shipment.second_driver_id())] {
        if let Some(person) = person {
            if db::personnel::active_roles(&st.db, org, &[person]).await?.is_empty() {
                return Err(missing_reference(field, "active person", person));
            }
        }
    }
    Ok(CargoFields::from(shipment))
}

/// Create a shipment (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/cargo", operation_id = "create_cargo", tag = "cargo", request_body = CargoIn,
    responses((status = 201, body = CargoOut),
              (status = 404, body = ErrorBody, description = "`vehicle_id`, `driver_id` or `second_driver_id` names no active record of the organization"),
              (status = 409, body = ErrorBody, description = "The organization's downstream would refuse a value (its plugin screens the shipment; `detail` names each field)"),
              (status = 422, body = ErrorBody, description = "A field breaks its rule, or a rule across fields: a district not in its province, unloading before loading")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<CargoIn>,
) -> ApiResult<Created<CargoOut>> {
    Ok(created(create_shipment(&st, &p, input).await?.into()))
}

/// Create a shipment of `input` (status `draft`) in `p`'s organization, made by `p`.
pub async fn create_shipment(st: &AppState, p: &Principal, input: CargoIn) -> ApiResult<Cargo> {
    let f = resolve(st, p.org_id, &CargoShipment::try_from(input)?).await?;
    let mut tx = st.db.begin().await?;
    let c = db::cargo::insert(&mut tx, p.org_id, &f, &p.credential_id())
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?;
    fits_downstream(st, &mut tx, p.org_id, &c).await?;
    tx.commit().await?;
    Ok(c)
}

/// Values the organization's downstream cannot take are refused now (409 naming the field, as
/// its plugin screens the shipment it would be sent), not when the submission fails: the
/// shipment as written, inside the transaction that writes it.
async fn fits_downstream(st: &AppState, tx: &mut sqlx::PgConnection, org: OrgId, c: &Cargo) -> ApiResult<()> {
    // Through the transaction: a second connection while it is open could wait on a pool it fills.
    let chosen = db::downstream::adapter_of(tx, org).await?;
    let Some(adapter) = chosen.or_else(|| st.downstreams.registry().default_name().map(str::to_string)) else {
        return Ok(());
    };
    let (work, _) = crate::submit::cargo_work(st, tx, org, c).await?;
    st.downstreams.screen(&adapter, tns_adapter::Work::Cargo(work)).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CargoQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<Limit>,
    /// `next_cursor` of the previous page.
    cursor: Option<Cursor>,
    status: Option<RecordStatus>,
}

/// Shipments, newest first, optionally by status. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo", operation_id = "list_cargo", tag = "cargo", params(CargoQuery),
    responses((status = 200, body = Paged<CargoOut>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<CargoQuery>,
) -> ApiResult<Json<Paged<CargoOut>>> {
    Ok(Json(list_page(&st, p.org_id, &q).await?.map(CargoOut::from)))
}

/// A page of `org`'s shipments, newest first, by the filter of `q`.
pub async fn list_page(st: &AppState, org: OrgId, q: &CargoQuery) -> ApiResult<Paged<Cargo>> {
    let page = Page::new(q.limit, q.cursor);
    Ok(Paged::from_rows(db::cargo::list(&st.db, org, q.status, &page).await?, &page))
}

/// `org`'s shipment `id` (404 for another organization's).
pub async fn load(st: &AppState, org: OrgId, id: CargoId) -> ApiResult<Cargo> {
    db::cargo::get(&st.db, org, id).await?.ok_or_else(|| not_found("cargo shipment", id))
}

/// One shipment. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo/{id}", operation_id = "get_cargo", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = CargoOut)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<CargoId>,
) -> ApiResult<Json<CargoOut>> {
    load(&st, p.org_id, id).await.map(|c| Json(c.into()))
}

/// Change any subset of a shipment's fields; answers the whole record. A delivered one's change
/// goes downstream as an amendment when it is submitted again (U-ETDS: the trip and its loads
/// edited in place, loads added or withdrawn as `items` changed). 409 while a submission of it is pending and once it is cancelled. Scope
/// `journeys:write`.
#[utoipa::path(put, path = "/portal/cargo/{id}", operation_id = "update_cargo", tag = "cargo", params(("id" = i64, Path)),
    request_body = CargoPatch,
    responses((status = 200, body = CargoOut),
              (status = 404, body = ErrorBody, description = "No such shipment, or `vehicle_id`, `driver_id` or `second_driver_id` names no active record"),
              (status = 409, body = ErrorBody, description = "A submission of it is pending, it is cancelled, its parties' data was erased past the retention period, the merged shipment breaks a rule across fields, or the organization's downstream would refuse a value (`detail` names each field)")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<CargoId>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<CargoOut>> {
    update_shipment(&st, &p, id, &patch).await.map(|c| Json(c.into()))
}

/// Change `p`'s organization's shipment `id` by the merge patch `patch`, changed by `p`.
pub async fn update_shipment(st: &AppState, p: &Principal, id: CargoId, patch: &serde_json::Value) -> ApiResult<Cargo> {
    let current = load(st, p.org_id, id).await?;
    if !current.status.is_editable() {
        return Err(not_editable("cargo shipment", id, current.status));
    }
    refuse_erased(&st.db, Target::Cargo(id), p.org_id).await?;
    let merged = patched(&CargoIn::from(&current.shipment), patch)?;
    let f = resolve(st, p.org_id, &CargoShipment::try_from(merged).map_err(merged_conflict)?).await?;
    let mut tx = st.db.begin().await?;
    match db::cargo::update_editable(&mut tx, p.org_id, id, &f, &p.credential_id())
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
    {
        Some(c) => {
            fits_downstream(st, &mut tx, p.org_id, &c).await?;
            tx.commit().await?;
            Ok(c)
        }
        // Its state changed meanwhile (a submit queued, a cancellation delivered).
        None => {
            drop(tx);
            Err(not_editable("cargo shipment", id, load(st, p.org_id, id).await?.status))
        }
    }
}

/// Delete a draft shipment. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/cargo/{id}", operation_id = "delete_cargo", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 409, body = ErrorBody, description = "Not a draft: submitted shipments stay")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<CargoId>,
) -> ApiResult<Json<OkBody>> {
    delete_draft(&st.db, Target::Cargo(id), &p).await.map(|()| Json(OkBody::default()))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, delete))
}
