//! `/portal/journeys`: create, list (filters), get, and update or delete while `draft`.

use std::collections::HashSet;

use axum::{extract::State, Json};
use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{scopes::Scope, Auth},
    db::{
        self,
        journeys::{Filter, Journey, JourneyFields, TarifeliContext, VehicleChoice},
    },
    domain::uetds::{self, IdOrText},
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pagination::{Page, Paged},
    state::AppState,
    v1::{
        resource::{created, not_draft, not_found, one_of, patched, vanished_reference, Created},
        Ok as OkBody,
    },
};

pub const STATUSES: &[&str] = &["draft", "submitted", "delivered", "failed"];
/// Crew members one journey may name.
pub const MAX_CREW: usize = 10;

/// Departure or arrival.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopIn {
    /// `YYYY-MM-DD`
    date: String,
    /// `HH:MM`
    time: String,
    /// District or airport id of the reference data (`GET /ref/districts`), string or integer.
    #[schema(value_type = String)]
    district_id: IdOrText,
}

/// A journey as sent on create (every required field) or update (any subset).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JourneyIn {
    /// A vehicle record id, or a plate (linked to the vehicle record holding it, if any).
    #[schema(value_type = String)]
    vehicle_id: IdOrText,
    departure: StopIn,
    /// Not before departure.
    arrival: StopIn,
    /// Present for a scheduled (tarifeli) trip; absent for a non-scheduled (tarifesiz) one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tarifeli_context: Option<TarifeliContext>,
    /// Crew (personnel record ids, at most 10). U-ETDS needs at least one driver; that is
    /// checked when the journey is submitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    personnel_ids: Vec<i64>,
}

impl From<&Journey> for JourneyIn {
    fn from(j: &Journey) -> Self {
        let stop = |s: &db::journeys::Stop| StopIn {
            date: s.date.clone(),
            time: s.time.clone(),
            district_id: IdOrText::Text(s.district_id.clone()),
        };
        JourneyIn {
            vehicle_id: IdOrText::Text(j.vehicle_id.clone()),
            departure: stop(&j.departure),
            arrival: stop(&j.arrival),
            tarifeli_context: j.tarifeli_context.clone(),
            personnel_ids: j.personnel_ids.clone(),
        }
    }
}

fn parse_stop(st: &AppState, name: &str, s: &StopIn) -> ApiResult<(NaiveDate, NaiveTime, i32)> {
    let district = s.district_id.code(&format!("{name}.district_id"))?;
    Ok((
        uetds::date(&format!("{name}.date"), &s.date)?,
        uetds::time(&format!("{name}.time"), &s.time)?,
        st.refdata.check_district(&format!("{name}.district_id"), district)?,
    ))
}

fn check_tarifeli(st: &AppState, t: &TarifeliContext) -> ApiResult<()> {
    let f = |n: &str| format!("tarifeli_context.{n}");
    for (name, v) in [("firma_id", t.firma_id), ("unet_guzergah_kodu", t.unet_guzergah_kodu)] {
        if v <= 0 {
            return Err(ApiError::validation(f(name), "must be a positive integer"));
        }
    }
    for (name, v) in [("kalkis_yer_id", t.kalkis_yer_id), ("varis_yer_id", t.varis_yer_id)] {
        let code = i32::try_from(v).map_err(|_| ApiError::validation(f(name), "unknown place id"))?;
        st.refdata.check_district(&f(name), code)?;
    }
    if !(1..=72).contains(&t.seyahat_suresi_saat) {
        return Err(ApiError::validation(f("seyahat_suresi_saat"), "must be between 1 and 72 hours"));
    }
    Ok(())
}

/// Validate a journey and check its crew within the organization (the vehicle is resolved by
/// the write itself).
async fn resolve(st: &AppState, org: i64, input: &JourneyIn) -> ApiResult<JourneyFields> {
    let vehicle = match &input.vehicle_id {
        IdOrText::Int(id) => VehicleChoice::Record(*id),
        IdOrText::Text(raw) => match input.vehicle_id.as_int() {
            Some(id) => VehicleChoice::Record(id),
            None => VehicleChoice::Plate(uetds::plate("vehicle_id", raw)?),
        },
    };
    let departure = parse_stop(st, "departure", &input.departure)?;
    let arrival = parse_stop(st, "arrival", &input.arrival)?;
    if (arrival.0, arrival.1) < (departure.0, departure.1) {
        return Err(ApiError::validation("arrival", "must not be before departure"));
    }
    if let Some(t) = &input.tarifeli_context {
        check_tarifeli(st, t)?;
    }
    let crew = &input.personnel_ids;
    if crew.len() > MAX_CREW {
        return Err(ApiError::validation("personnel_ids", format!("at most {MAX_CREW} crew members")));
    }
    let mut seen = HashSet::new();
    if let Some(i) = crew.iter().position(|id| !seen.insert(*id)) {
        return Err(ApiError::validation(format!("personnel_ids[{i}]"), "is listed twice"));
    }
    let active: HashSet<i64> = if crew.is_empty() {
        HashSet::new()
    } else {
        db::personnel::active_roles(&st.db, org, crew).await?.into_iter().map(|(id, _)| id).collect()
    };
    if let Some(i) = crew.iter().position(|id| !active.contains(id)) {
        return Err(ApiError::validation(
            format!("personnel_ids[{i}]"),
            format!("no active person with id {}", crew[i]),
        ));
    }
    Ok(JourneyFields {
        vehicle,
        departure,
        arrival,
        tarifeli_context: input.tarifeli_context.clone(),
        personnel_ids: crew.clone(),
    })
}

/// Create a journey (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys", tag = "journeys", request_body = JourneyIn,
    responses((status = 201, body = Journey), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<JourneyIn>,
) -> ApiResult<Created<Journey>> {
    p.require(Scope::JourneysWrite)?;
    let f = resolve(&st, p.org_id, &input).await?;
    let missing = no_vehicle(&f);
    st.journeys.insert(p.org_id, f).await.map_err(|e| vanished_reference(e, "vehicle_id"))?.map(created).ok_or(missing)
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct JourneyQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
    /// `draft`, `submitted`, `delivered` or `failed`.
    status: Option<String>,
    /// Departure on or after this date (`YYYY-MM-DD`).
    departure_from: Option<String>,
    /// Departure on or before this date (`YYYY-MM-DD`).
    departure_to: Option<String>,
}

/// Journeys, newest first, filtered by status and departure date range. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys", tag = "journeys", params(JourneyQuery),
    responses((status = 200, body = Paged<Journey>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<JourneyQuery>,
) -> ApiResult<Json<Paged<Journey>>> {
    p.require(Scope::JourneysRead)?;
    let page = Page::parse(q.limit, q.cursor.as_deref())?;
    let filter = Filter {
        status: q.status.as_deref().map(|s| one_of("status", s, STATUSES)).transpose()?,
        departure_from: q.departure_from.as_deref().map(|d| uetds::date("departure_from", d)).transpose()?,
        departure_to: q.departure_to.as_deref().map(|d| uetds::date("departure_to", d)).transpose()?,
    };
    let rows = db::journeys::list(&st.db, p.org_id, &filter, &page).await?;
    Ok(Json(Paged::from_rows(rows, &page)))
}

async fn load(st: &AppState, org: i64, id: i64) -> ApiResult<Journey> {
    let mut conn = st.db.acquire().await?;
    db::journeys::get(&mut conn, org, id).await?.ok_or_else(|| not_found("journey", id))
}

fn no_vehicle(f: &JourneyFields) -> ApiError {
    ApiError::validation("vehicle_id", format!("no active vehicle with id {}", f.vehicle.as_ref_text()))
}

/// One journey. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = Journey), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Journey>> {
    p.require(Scope::JourneysRead)?;
    load(&st, p.org_id, id).await.map(Json)
}

/// Change any subset of a draft journey's fields; answers the whole record. 409 once it has
/// been submitted. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}", tag = "journeys", params(("id" = i64, Path)),
    request_body(content = Object, description = "Any subset of the journey fields"),
    responses((status = 200, body = Journey), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Journey>> {
    p.require(Scope::JourneysWrite)?;
    let current = load(&st, p.org_id, id).await?;
    if current.status != "draft" {
        return Err(not_draft("journey", id, &current.status, "changed"));
    }
    let f = resolve(&st, p.org_id, &patched(&JourneyIn::from(&current), &patch)?).await?;
    let mut tx = st.db.begin().await?;
    if !db::journeys::update_draft(&mut tx, p.org_id, id, &f).await.map_err(|e| vanished_reference(e, "vehicle_id"))? {
        // Either the vehicle record is gone or the journey stopped being a draft meanwhile.
        return Err(match db::journeys::status(&st.db, p.org_id, id).await? {
            Some(s) if s != "draft" => ApiError::Conflict(format!("journey {id} is no longer a draft")),
            _ => no_vehicle(&f),
        });
    }
    let journey = db::journeys::get(&mut tx, p.org_id, id).await?.ok_or_else(|| not_found("journey", id))?;
    tx.commit().await?;
    Ok(Json(journey))
}

/// Delete a draft journey with its passengers. 409 once it has been submitted.
/// Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<OkBody>> {
    p.require(Scope::JourneysWrite)?;
    if !db::journeys::delete_draft(&st.db, p.org_id, id).await? {
        let current = load(&st, p.org_id, id).await?;
        return Err(not_draft("journey", id, &current.status, "deleted"));
    }
    Ok(Json(OkBody::default()))
}
