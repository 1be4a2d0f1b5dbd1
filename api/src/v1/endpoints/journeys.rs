//! `/portal/journeys`: create, list (filters), get, update (a draft, or a delivered journey
//! whose changes then go downstream as an amendment), and delete while `draft`.

use std::collections::HashSet;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::Caller,
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
    v1::{
        openapi::{patch_schema, AcrossFields},
        resource::{
            created, merged_conflict, missing_reference, not_draft, not_found, patched, vanished_reference, Created,
        },
        Ok as OkBody,
    },
};
use tns_core::{
    domain::{
        fields::{Cursor, Day, Int, Limit, Time},
        kinds::{RecordStatus, TripKind},
        uetds::{Crew, PlaceId, PositiveCode, TravelHours, VehicleRef},
    },
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    journeys::{Filter, Journey, JourneyFields, TarifeliContext, VehicleChoice},
    pagination::{Page, Paged},
};

/// Departure or arrival.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopIn {
    date: Day,
    time: Time,
    /// District or airport id of the reference data (`GET /ref/districts`), string or integer.
    district_id: PlaceId,
}

/// Context of a scheduled (tarifeli) trip.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TarifeliIn {
    firma_id: PositiveCode,
    unet_guzergah_kodu: PositiveCode,
    /// Departure place id (reference data).
    kalkis_yer_id: PlaceId,
    /// Arrival place id (reference data).
    varis_yer_id: PlaceId,
    seyahat_suresi_saat: TravelHours,
}

/// A journey as sent on create; any subset of it on update.
///
/// Rules across fields: arrival is not before departure; `tarifeli_context` is present exactly
/// when `trip_kind` is `tarifeli` (the default).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JourneyIn {
    vehicle_id: VehicleRef,
    departure: StopIn,
    /// Not before departure.
    arrival: StopIn,
    /// `tarifeli` (a scheduled trip, the default) or `tarifesiz` (a non-scheduled one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trip_kind: Option<TripKind>,
    /// Required for a `tarifeli` trip; absent (or null) for a `tarifesiz` one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tarifeli_context: Option<TarifeliIn>,
    /// Crew; none when absent or null. What U-ETDS will want (a driver) is checked when the
    /// journey is submitted, as a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    personnel_ids: Option<Crew>,
}

patch_schema!(JourneyPatch, JourneyIn);

impl JourneyIn {
    fn trip_kind(&self) -> TripKind {
        self.trip_kind.unwrap_or(TripKind::Tarifeli)
    }

    /// The rules across this journey's fields: a 422 on create, a 409 on an update's merged
    /// record (its parts were each valid).
    fn check_across(&self) -> ApiResult<()> {
        let at = |s: &StopIn| (s.date, s.time);
        if at(&self.arrival) < at(&self.departure) {
            return Err(ApiError::validation("arrival", "must not be before departure"));
        }
        match (self.trip_kind(), &self.tarifeli_context) {
            (TripKind::Tarifeli, None) => Err(ApiError::validation(
                "tarifeli_context",
                "is required for a `tarifeli` (scheduled) trip; send `trip_kind: tarifesiz` for a non-scheduled one",
            )),
            (TripKind::Tarifesiz, Some(_)) => {
                Err(ApiError::validation("tarifeli_context", "must be absent for a `tarifesiz` (non-scheduled) trip"))
            }
            _ => Ok(()),
        }
    }
}

impl AcrossFields for JourneyIn {
    fn json_rules() -> serde_json::Value {
        serde_json::json!({
            "if": {"properties": {"trip_kind": {"const": TripKind::Tarifesiz.as_str()}}, "required": ["trip_kind"]},
            "then": {"properties": {"tarifeli_context": {"type": "null"}}},
            "else": {"required": ["tarifeli_context"], "properties": {"tarifeli_context": {"type": "object"}}},
            "x-tns-not-before": [[["/departure/date", "/departure/time"], ["/arrival/date", "/arrival/time"]]],
        })
    }
}

impl From<&Journey> for JourneyIn {
    fn from(j: &Journey) -> Self {
        let stop = |s: &db::journeys::Stop| StopIn { date: s.date, time: s.time, district_id: PlaceId(s.district_id) };
        JourneyIn {
            vehicle_id: VehicleRef::stored(&j.vehicle_id),
            departure: stop(&j.departure),
            arrival: stop(&j.arrival),
            trip_kind: Some(j.trip_kind),
            tarifeli_context: j.tarifeli_context.as_ref().map(|t| TarifeliIn {
                firma_id: Int::stored(t.firma_id),
                unet_guzergah_kodu: Int::stored(t.unet_guzergah_kodu),
                kalkis_yer_id: PlaceId(t.kalkis_yer_id as i32),
                varis_yer_id: PlaceId(t.varis_yer_id as i32),
                seyahat_suresi_saat: Int::stored(t.seyahat_suresi_saat),
            }),
            personnel_ids: Some(Crew(j.personnel_ids.clone())).filter(|c| !c.0.is_empty()),
        }
    }
}

/// The journey's fields, its crew checked within the organization (404 for a person it does not
/// have active; the vehicle is resolved by the write itself).
async fn resolve(st: &AppState, org: i64, input: JourneyIn) -> ApiResult<JourneyFields> {
    let crew = input.personnel_ids.as_ref().map(|c| c.0.as_slice()).unwrap_or_default();
    let active: HashSet<i64> = if crew.is_empty() {
        HashSet::new()
    } else {
        db::personnel::active_roles(&st.db, org, crew).await?.into_iter().map(|(id, _)| id).collect()
    };
    if let Some(i) = crew.iter().position(|id| !active.contains(id)) {
        return Err(missing_reference(&format!("personnel_ids[{i}]"), "active person", crew[i]));
    }
    let stop = |s: &StopIn| (s.date.0, s.time.0, s.district_id.0);
    Ok(JourneyFields {
        vehicle: match &input.vehicle_id {
            VehicleRef::Record(id) => VehicleChoice::Record(*id),
            VehicleRef::Plate(p) => VehicleChoice::Plate(p.as_str().to_string()),
        },
        departure: stop(&input.departure),
        arrival: stop(&input.arrival),
        trip_kind: input.trip_kind(),
        tarifeli_context: input.tarifeli_context.as_ref().map(|t| TarifeliContext {
            firma_id: t.firma_id.get(),
            unet_guzergah_kodu: t.unet_guzergah_kodu.get(),
            kalkis_yer_id: t.kalkis_yer_id.0.into(),
            varis_yer_id: t.varis_yer_id.0.into(),
            seyahat_suresi_saat: t.seyahat_suresi_saat.get(),
        }),
        personnel_ids: crew.to_vec(),
    })
}

/// Create a journey (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys", operation_id = "create_journey", tag = "journeys", request_body = JourneyIn,
    responses((status = 201, body = Journey),
              (status = 404, body = ErrorBody, description = "`vehicle_id` (a record id) or a `personnel_ids` entry names no active record of the organization"),
              (status = 422, body = ErrorBody, description = "A field breaks its rule, or a rule across fields: arrival before departure, `tarifeli_context` missing for a tarifeli trip or present for a tarifesiz one")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<JourneyIn>,
) -> ApiResult<Created<Journey>> {
    input.check_across()?;
    let f = resolve(&st, p.org_id, input).await?;
    let missing = no_vehicle(&f);
    st.journeys.insert(p.org_id, f).await.map_err(|e| vanished_reference(e, "vehicle_id"))?.map(created).ok_or(missing)
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
}

/// Journeys, newest first, filtered by status and departure date range. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys", operation_id = "list_journeys", tag = "journeys", params(JourneyQuery),
    responses((status = 200, body = Paged<Journey>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<JourneyQuery>,
) -> ApiResult<Json<Paged<Journey>>> {
    let page = Page::new(q.limit, q.cursor);
    let filter = Filter {
        status: q.status,
        departure_from: q.departure_from.map(|d| d.0),
        departure_to: q.departure_to.map(|d| d.0),
    };
    let rows = db::journeys::list(&st.db, p.org_id, &filter, &page).await?;
    Ok(Json(Paged::from_rows(rows, &page)))
}

async fn load(st: &AppState, org: i64, id: i64) -> ApiResult<Journey> {
    let mut conn = st.db.acquire().await?;
    db::journeys::get(&mut conn, org, id).await?.ok_or_else(|| not_found("journey", id))
}

fn no_vehicle(f: &JourneyFields) -> ApiError {
    missing_reference("vehicle_id", "active vehicle", f.vehicle.as_ref_text())
}

/// One journey. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}", operation_id = "get_journey", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = Journey)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Journey>> {
    load(&st, p.org_id, id).await.map(Json)
}

/// Change any subset of a journey's fields; answers the whole record. A draft (or a journey
/// never delivered) changes freely. A delivered one keeps its kind and scheduled context (409
/// to change them), and its other changes (vehicle, times, places, crew) go downstream as an
/// amendment when it is submitted again. 409 while a submission of it is pending and once it
/// is cancelled. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}", operation_id = "update_journey", tag = "journeys", params(("id" = i64, Path)),
    request_body = JourneyPatch,
    responses((status = 200, body = Journey),
              (status = 404, body = ErrorBody, description = "No such journey, or the body names a vehicle or person the organization has not active"),
              (status = 409, body = ErrorBody, description = "A submission of it is pending, it is cancelled, a delivered journey's kind or context would change, or the merged journey breaks a rule across fields")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Journey>> {
    let current = load(&st, p.org_id, id).await?;
    if !current.status.is_editable() {
        return Err(not_editable(id, current.status));
    }
    let merged = patched(&JourneyIn::from(&current), &patch)?;
    merged.check_across().map_err(merged_conflict)?;
    let f = resolve(&st, p.org_id, merged).await?;
    if current.downstream_reference.is_some() {
        if f.trip_kind != current.trip_kind || f.tarifeli_context != current.tarifeli_context {
            return Err(ApiError::Conflict(format!(
                "journey {id} was notified downstream as it is: its trip_kind and tarifeli_context cannot change \
                 (cancel it and create a new journey)"
            )));
        }
        // U-ETDS's scheduled service publishes no trip update: a notified scheduled trip keeps
        // its vehicle, times and places.
        let stop = |s: &db::journeys::Stop| (s.date.0, s.time.0, s.district_id);
        let same_trip = f.vehicle.as_ref_text() == current.vehicle_id
            && f.departure == stop(&current.departure)
            && f.arrival == stop(&current.arrival);
        if current.trip_kind == TripKind::Tarifeli && !same_trip {
            return Err(ApiError::Conflict(format!(
                "journey {id} is a notified scheduled trip: its vehicle_id, departure and arrival cannot change \
                 (its crew and passengers can; cancel it and create a new journey to change the trip)"
            )));
        }
    }
    let mut tx = st.db.begin().await?;
    if !db::journeys::update_editable(&mut tx, p.org_id, id, &f)
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
    {
        // Either the vehicle record is gone or the journey's state changed meanwhile.
        return Err(match db::journeys::status(&st.db, p.org_id, id).await? {
            Some(s) if !s.is_editable() => not_editable(id, s),
            _ => no_vehicle(&f),
        });
    }
    let journey = db::journeys::get(&mut tx, p.org_id, id).await?.ok_or_else(|| not_found("journey", id))?;
    tx.commit().await?;
    Ok(Json(journey))
}

fn not_editable(id: i64, status: RecordStatus) -> ApiError {
    ApiError::Conflict(match status {
        RecordStatus::Cancelled => format!("journey {id} is cancelled; it takes no more changes"),
        _ => format!("journey {id} has a pending submission; change it once that has finished"),
    })
}

/// Delete a draft journey with its passengers. 409 once it has been submitted.
/// Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}", operation_id = "delete_journey", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 409, body = ErrorBody, description = "Not a draft: submitted journeys stay")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<OkBody>> {
    if !db::journeys::delete_draft(&st.db, p.org_id, id).await? {
        let current = load(&st, p.org_id, id).await?;
        return Err(not_draft("journey", id, current.status, "deleted"));
    }
    Ok(Json(OkBody::default()))
}
