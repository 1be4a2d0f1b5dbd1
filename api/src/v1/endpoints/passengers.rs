//! `/portal/journeys/{id}/passengers`: add, list, change, remove, and bulk upsert (up to
//! 1000 per call, keyed by identity number within the journey, all or nothing).

use std::collections::HashMap;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use utoipa::ToSchema;

use crate::{
    auth::Caller,
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
    v1::{
        openapi::{patch_schema, AcrossFields},
        resource::{conflict_on, created, merged_conflict, not_found, patched, Created, ListQuery},
        Ok as OkBody,
    },
};
use tns_core::{
    domain::{
        fields::{ceiling, Amount, Day, Text},
        kinds::{Gender, RecordStatus},
        uetds::{
            check_identity, identity_rule, IdentityNumber, Nationality, PersonName, Phone, PlaceId, SeatNo,
            TicketSerial,
        },
    },
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    pagination::Paged,
    passengers::{Passenger, PassengerFields, MAX_PER_JOURNEY},
};

/// Passengers one bulk call may carry.
pub const MAX_BULK: usize = 1000;

ceiling!(
    /// A ticket fare: non-negative, below a billion.
    Fare / FareCeiling, 1e9, "Ticket fare, non-negative, below 1000000000."
);

/// A passenger as sent on create; any subset of it on update.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassengerIn {
    first_name: PersonName,
    last_name: PersonName,
    identity_number: IdentityNumber,
    gender: Gender,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nationality: Option<Nationality>,
    boarding_place_code: PlaceId,
    destination_place_code: PlaceId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket_serial_no: Option<TicketSerial>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket_issue_date: Option<Day>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    amount: Option<Fare>,
    /// Seat number (U-ETDS `koltukNo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seat_no: Option<SeatNo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phone: Option<Phone>,
}

patch_schema!(PassengerPatch, PassengerIn);

impl AcrossFields for PassengerIn {
    fn json_rules() -> serde_json::Value {
        identity_rule()
    }
}

impl PassengerIn {
    /// The rule across a passenger's fields; `at` prefixes the field (`passengers[3].`) in a
    /// bulk call.
    fn check_across(&self, at: &str) -> ApiResult<()> {
        check_identity(&self.identity_number, self.nationality.as_ref())
            .map_err(|why| ApiError::validation(format!("{at}identity_number"), why))
    }
}

impl From<PassengerIn> for PassengerFields {
    fn from(p: PassengerIn) -> Self {
        PassengerFields {
            first_name: p.first_name.into_inner(),
            last_name: p.last_name.into_inner(),
            identity_number: p.identity_number.into_inner(),
            gender: p.gender,
            nationality: p.nationality.map(Nationality::into_inner),
            boarding_place_code: p.boarding_place_code.0,
            destination_place_code: p.destination_place_code.0,
            ticket_serial_no: p.ticket_serial_no.map(Text::into_inner),
            ticket_issue_date: p.ticket_issue_date.map(|d| d.0),
            amount: p.amount.map(Amount::get),
            seat_no: p.seat_no.map(Text::into_inner),
            phone: p.phone.map(Phone::into_inner),
        }
    }
}

impl From<&Passenger> for PassengerIn {
    fn from(p: &Passenger) -> Self {
        PassengerIn {
            first_name: Text::stored(p.first_name.clone()),
            last_name: Text::stored(p.last_name.clone()),
            identity_number: IdentityNumber::stored(p.identity_number.clone()),
            gender: p.gender,
            nationality: p.nationality.clone().map(Nationality::stored),
            boarding_place_code: PlaceId(p.boarding_place_code),
            destination_place_code: PlaceId(p.destination_place_code),
            ticket_serial_no: p.ticket_serial_no.clone().map(Text::stored),
            ticket_issue_date: p.ticket_issue_date.map(Day),
            amount: p.amount.map(Amount::stored),
            seat_no: p.seat_no.clone().map(Text::stored),
            phone: p.phone.clone().map(Phone::stored),
        }
    }
}

fn identity_taken(id: &str) -> impl FnOnce() -> String + '_ {
    move || format!("the journey already has a passenger with identity number {id}")
}

/// Lock the journey for a passenger change; 404 when the organization has no such journey.
async fn lock_journey(tx: &mut PgConnection, org: i64, journey: i64) -> ApiResult<()> {
    open_journey(journey, db::journeys::lock(tx, org, journey).await?)
}

/// A journey's passengers change in any state but `cancelled` (409).
fn open_journey(journey: i64, status: Option<RecordStatus>) -> ApiResult<()> {
    match status {
        None => Err(not_found("journey", journey)),
        Some(RecordStatus::Cancelled) => {
            Err(ApiError::Conflict(format!("journey {journey} is cancelled; its passengers take no more changes")))
        }
        Some(_) => Ok(()),
    }
}

/// Refuse a change that would take the journey past its passenger limit (the journey's state,
/// so a 409).
async fn check_capacity(tx: &mut PgConnection, journey: i64) -> ApiResult<()> {
    if db::passengers::count(tx, journey).await? > MAX_PER_JOURNEY {
        return Err(ApiError::Conflict(format!("a journey holds at most {MAX_PER_JOURNEY} passengers")));
    }
    Ok(())
}

/// Add a passenger. 409 when the journey already has this identity number.
/// Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers", operation_id = "create_passenger", tag = "journeys", params(("id" = i64, Path)),
    request_body = PassengerIn,
    responses((status = 201, body = Passenger), (status = 409, body = ErrorBody, description = "The journey already has a passenger with this identity number, or would exceed its passenger limit")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(journey): ApiPath<i64>,
    ApiJson(input): ApiJson<PassengerIn>,
) -> ApiResult<Created<Passenger>> {
    input.check_across("")?;
    let fields = PassengerFields::from(input);
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, p.org_id, journey).await?;
    let mut rows = db::passengers::write(&mut tx, p.org_id, journey, std::slice::from_ref(&fields), false)
        .await
        .map_err(|e| conflict_on(e, db::passengers::IDENTITY_KEY, identity_taken(&fields.identity_number)))?;
    check_capacity(&mut tx, journey).await?;
    tx.commit().await?;
    let row = rows.pop().ok_or_else(|| anyhow::anyhow!("insert returned no row"))?;
    Ok(created(row.passenger))
}

/// A journey's passengers, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}/passengers", operation_id = "list_passengers", tag = "journeys", params(("id" = i64, Path), ListQuery),
    responses((status = 200, body = Paged<Passenger>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(journey): ApiPath<i64>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Passenger>>> {
    let page = q.page();
    if db::journeys::status(&st.db, p.org_id, journey).await?.is_none() {
        return Err(not_found("journey", journey));
    }
    Ok(Json(Paged::from_rows(db::passengers::list(&st.db, p.org_id, journey, &page).await?, &page)))
}

/// Change any subset of a passenger's fields; answers the whole record. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}/passengers/{passenger_id}", operation_id = "update_passenger", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    request_body = PassengerPatch,
    responses((status = 200, body = Passenger), (status = 409, body = ErrorBody, description = "Another passenger of the journey has this identity number")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath((journey, id)): ApiPath<(i64, i64)>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Passenger>> {
    open_journey(journey, db::journeys::status(&st.db, p.org_id, journey).await?)?;
    let current =
        db::passengers::get(&st.db, p.org_id, journey, id).await?.ok_or_else(|| not_found("passenger", id))?;
    let merged = patched(&PassengerIn::from(&current), &patch)?;
    merged.check_across("").map_err(merged_conflict)?;
    let fields = PassengerFields::from(merged);
    db::passengers::update(&st.db, p.org_id, journey, id, &fields)
        .await
        .map_err(|e| conflict_on(e, db::passengers::IDENTITY_KEY, identity_taken(&fields.identity_number)))?
        .map(Json)
        .ok_or_else(|| not_found("passenger", id))
}

/// Remove a passenger. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}/passengers/{passenger_id}", operation_id = "delete_passenger", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    responses((status = 200, body = OkBody)),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath((journey, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<OkBody>> {
    open_journey(journey, db::journeys::status(&st.db, p.org_id, journey).await?)?;
    if !db::passengers::delete(&st.db, p.org_id, journey, id).await? {
        return Err(not_found("passenger", id));
    }
    Ok(Json(OkBody::default()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkIn {
    /// 1–1000 passengers. An identity number listed more than once is written once, with its
    /// last entry's fields.
    #[schema(min_items = 1, max_items = 1000)]
    passengers: Vec<PassengerIn>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkOut {
    created: usize,
    updated: usize,
    /// The stored records, one per identity number, in the order of their first entry.
    data: Vec<Passenger>,
}

/// Create or update up to 1000 passengers by identity number, all or nothing: one invalid
/// entry (named as `passengers[i].field`) stores nothing. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers:bulk-upsert", operation_id = "bulk_upsert_passengers", tag = "journeys", params(("id" = i64, Path)),
    request_body = BulkIn,
    responses((status = 200, body = BulkOut),
              (status = 409, body = ErrorBody, description = "the journey would exceed its passenger limit")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn bulk_upsert(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(journey): ApiPath<i64>,
    ApiJson(input): ApiJson<BulkIn>,
) -> ApiResult<Json<BulkOut>> {
    if input.passengers.is_empty() || input.passengers.len() > MAX_BULK {
        return Err(ApiError::validation("passengers", format!("must hold 1 to {MAX_BULK} passengers")));
    }
    // Upsert semantics within the call too: a repeated identity number takes its last entry's
    // fields, in its first entry's place.
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut fields: Vec<PassengerFields> = Vec::with_capacity(input.passengers.len());
    for (i, passenger) in input.passengers.into_iter().enumerate() {
        passenger.check_across(&format!("passengers[{i}]."))?;
        let f = PassengerFields::from(passenger);
        match at.get(&f.identity_number) {
            Some(&i) => fields[i] = f,
            None => {
                at.insert(f.identity_number.clone(), fields.len());
                fields.push(f);
            }
        }
    }
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, p.org_id, journey).await?;
    let mut rows = db::passengers::write(&mut tx, p.org_id, journey, &fields, true).await?;
    check_capacity(&mut tx, journey).await?;
    tx.commit().await?;
    rows.sort_by_key(|r| at.get(r.passenger.identity_number.as_str()).copied().unwrap_or(usize::MAX));
    let created = rows.iter().filter(|r| r.inserted).count();
    Ok(Json(BulkOut { created, updated: rows.len() - created, data: rows.into_iter().map(|r| r.passenger).collect() }))
}
