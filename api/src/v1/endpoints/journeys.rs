//! `/portal/journeys`: create, list (filters), get, update (a draft, or a delivered journey
//! whose changes then go downstream as an amendment), and delete while `draft`.

use std::collections::HashSet;

use serde::Deserialize;
use utoipa::IntoParams;

use super::prelude::*;
use crate::v1::answers::JourneyOut;
use crate::v1::resource::{
    created, delete_draft, merged_conflict, missing_reference, not_editable, not_found, patched, vanished_reference,
    Created,
};
pub use tns_core::domain::journey::{JourneyIn, StopIn};
use tns_core::domain::{
    fields::{Cursor, Day, Limit, RecordId},
    journey::NewJourney,
    kinds::{RecordStatus, TripKind},
};
use tns_http::wire::Paged;
use tns_store::{
    self as db,
    journeys::{Filter, Journey, JourneyFields},
    pagination::Page,
};

patch_schema!(JourneyPatch, JourneyIn);

impl AcrossFields for JourneyIn {
    fn json_rules() -> serde_json::Value {
        NewJourney::schema_rules()
    }
}

impl AcrossFields for StopIn {
    fn json_rules() -> serde_json::Value {
        NewJourney::stop_schema_rules()
    }
}

/// The journey's columns, its crew checked within the organization (404 for a person it does
/// not have active; the vehicle is resolved by the write itself).
async fn resolve(st: &AppState, org: OrgId, journey: &NewJourney) -> ApiResult<JourneyFields> {
    let crew = journey.crew();
    let active: HashSet<PersonId> = if crew.is_empty() {
        HashSet::new()
    } else {
        db::personnel::active_roles(&st.db, org, crew).await?.into_iter().map(|(id, _)| id).collect()
    };
    if let Some(i) = crew.iter().position(|id| !active.contains(id)) {
        return Err(missing_reference(&format!("personnel_ids[{i}]"), "active person", crew[i]));
    }
    Ok(JourneyFields::from(journey))
}

/// Create a journey (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys", operation_id = "create_journey", tag = "journeys", request_body = JourneyIn,
    responses((status = 201, body = JourneyOut),
              (status = 404, body = ErrorBody, description = "`vehicle_id` (a record id) or a `personnel_ids` entry names no active record of the organization"),
              (status = 422, body = ErrorBody, description = "A field breaks its rule, or a rule across fields: arrival before departure, `tarifeli_context` missing for a tarifeli trip or present for a tarifesiz one")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<JourneyIn>,
) -> ApiResult<Created<JourneyOut>> {
    create_journey(&st, &p, input).await.map(|j| created(j.into()))
}

/// Create a journey in `p`'s organization, made by `p` (what `POST /portal/journeys` does once
/// admitted and parsed).
pub async fn create_journey(st: &AppState, p: &Principal, input: JourneyIn) -> ApiResult<Journey> {
    let org = p.org_id;
    let f = resolve(st, org, &NewJourney::try_from(input)?).await?;
    let missing = no_vehicle(&f);
    st.journeys
        .insert(org, f, &p.credential_id())
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
        .ok_or(missing)
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JourneyQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<Limit>,
    /// `next_cursor` of the previous page.
    cursor: Option<Cursor>,
    status: Option<RecordStatus>,
    /// Departure on or after this date.
    departure_from: Option<Day>,
    /// Departure on or before this date.
    departure_to: Option<Day>,
    /// Only journeys running under this vehicle record.
    vehicle_id: Option<RecordId>,
}

/// Journeys, newest first, filtered by status and departure date range. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys", operation_id = "list_journeys", tag = "journeys", params(JourneyQuery),
    responses((status = 200, body = Paged<JourneyOut>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<JourneyQuery>,
) -> ApiResult<Json<Paged<JourneyOut>>> {
    Ok(Json(list_journeys(&st, p.org_id, &q).await?.map(JourneyOut::from)))
}

/// A page of `org`'s journeys as `GET /portal/journeys` lists them for query `q`.
pub async fn list_journeys(st: &AppState, org: OrgId, q: &JourneyQuery) -> ApiResult<Paged<Journey>> {
    let page = Page::new(q.limit, q.cursor);
    let filter = Filter {
        status: q.status,
        departure_from: q.departure_from.map(|d| d.0),
        departure_to: q.departure_to.map(|d| d.0),
        vehicle_record_id: q.vehicle_id.map(|v| VehicleId(v.get())),
    };
    let rows = db::journeys::list(&st.db, org, &filter, &page).await?;
    Ok(Paged::from_rows(rows, &page))
}

/// One journey of `org`; 404 when it has none with this id.
pub async fn load(st: &AppState, org: OrgId, id: JourneyId) -> ApiResult<Journey> {
    let mut conn = st.db.acquire().await?;
    db::journeys::get(&mut conn, org, id).await?.ok_or_else(|| not_found("journey", id))
}

fn no_vehicle(f: &JourneyFields) -> ApiError {
    missing_reference("vehicle_id", "active vehicle", f.vehicle.as_ref_text())
}

/// One journey. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}", operation_id = "get_journey", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = JourneyOut)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<JourneyId>,
) -> ApiResult<Json<JourneyOut>> {
    load(&st, p.org_id, id).await.map(|j| Json(j.into()))
}

/// Change any subset of a journey's fields; answers the whole record. A draft (or a journey
/// never delivered) changes freely. A delivered one keeps its kind and scheduled context (409
/// to change them), and its other changes (vehicle, times, places, crew) go downstream as an
/// amendment when it is submitted again. 409 while a submission of it is pending and once it
/// is cancelled. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}", operation_id = "update_journey", tag = "journeys", params(("id" = i64, Path)),
    request_body = JourneyPatch,
    responses((status = 200, body = JourneyOut),
              (status = 404, body = ErrorBody, description = "No such journey, or the body names a vehicle or person the organization has not active"),
              (status = 409, body = ErrorBody, description = "A submission of it is pending, it is cancelled, a delivered journey's kind or context would change, or the merged journey breaks a rule across fields")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<JourneyId>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<JourneyOut>> {
    update_journey(&st, &p, id, &patch).await.map(|j| Json(j.into()))
}

/// Change journey `id` of `p`'s organization by a merge `patch`, changed by `p` (what
/// `PUT /portal/journeys/{id}` does).
pub async fn update_journey(
    st: &AppState,
    p: &Principal,
    id: JourneyId,
    patch: &serde_json::Value,
) -> ApiResult<Journey> {
    let org = p.org_id;
    let current = load(st, org, id).await?;
    if !current.status.is_editable() {
        return Err(not_editable("journey", id, current.status));
    }
    let merged = patched(&JourneyIn::from(&current), patch)?;
    let f = resolve(st, org, &NewJourney::try_from(merged).map_err(merged_conflict)?).await?;
    if current.downstream_reference.is_some() {
        let stored = &current.journey;
        if f.trip_kind != stored.trip_kind || f.tarifeli_context != stored.tarifeli_context {
            return Err(ApiError::Conflict(
                Code::NotEditable,
                format!(
                    "journey {id} was notified downstream as it is: its trip_kind and tarifeli_context cannot \
                     change (cancel it and create a new journey)"
                ),
            ));
        }
        // U-ETDS's scheduled service publishes no trip update: a notified scheduled trip keeps
        // its vehicle, times and places.
        let same_trip = f.vehicle.as_ref_text() == stored.vehicle_id
            && f.departure == stored.departure
            && f.arrival == stored.arrival;
        if stored.trip_kind == TripKind::Tarifeli && !same_trip {
            return Err(ApiError::Conflict(
                Code::NotEditable,
                format!(
                    "journey {id} is a notified scheduled trip: its vehicle_id, departure and arrival cannot \
                     change (its crew and passengers can; cancel it and create a new journey to change the trip)"
                ),
            ));
        }
    }
    let mut tx = st.db.begin().await?;
    if !db::journeys::update_editable(&mut tx, org, id, &f, &p.credential_id())
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
    {
        // Either the vehicle record is gone or the journey's state changed meanwhile.
        return Err(match db::journeys::status(&st.db, org, id).await? {
            Some(s) if !s.is_editable() => not_editable("journey", id, s),
            _ => no_vehicle(&f),
        });
    }
    let journey = db::journeys::get(&mut tx, org, id).await?.ok_or_else(|| not_found("journey", id))?;
    tx.commit().await?;
    Ok(journey)
}

/// Delete a draft journey with its passengers. 409 once it has been submitted.
/// Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}", operation_id = "delete_journey", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 409, body = ErrorBody, description = "Not a draft: submitted journeys stay")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<JourneyId>,
) -> ApiResult<Json<OkBody>> {
    delete_draft(&st.db, Target::Journey(id), &p).await.map(|()| Json(OkBody::default()))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, delete))
}
