//! `/portal/journeys/{id}/passengers`: add, list, change, remove, and bulk upsert (up to
//! 1000 per call, keyed by identity number within the journey, all or nothing).

use std::collections::HashSet;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use utoipa::ToSchema;

use crate::{
    auth::{scopes::Scope, Auth},
    db::{
        self,
        passengers::{Passenger, PassengerFields, MAX_PER_JOURNEY},
    },
    domain::{
        opt_text, text,
        uetds::{self, IdOrText},
    },
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pagination::Paged,
    state::AppState,
    v1::{
        resource::{conflict_on, created, not_found, patched, Created, ListQuery},
        Ok as OkBody,
    },
};

/// Passengers one bulk call may carry.
pub const MAX_BULK: usize = 1000;

/// A passenger as sent on create (every required field) or update (any subset).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassengerIn {
    first_name: String,
    last_name: String,
    /// T.C. identity number (checksum verified) when `nationality` is `TR` or absent,
    /// otherwise a passport number of 1–30 characters.
    identity_number: String,
    /// `E` or `K`.
    gender: String,
    /// Two-letter country code; absent means `TR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nationality: Option<String>,
    /// Place id of the reference data (district or airport).
    #[schema(value_type = i64)]
    boarding_place_code: IdOrText,
    /// Place id of the reference data (district or airport).
    #[schema(value_type = i64)]
    destination_place_code: IdOrText,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket_serial_no: Option<String>,
    /// `YYYY-MM-DD`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ticket_issue_date: Option<String>,
    /// Ticket fare, non-negative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    amount: Option<f64>,
    /// Seat number (U-ETDS `koltukNo`), at most 10 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seat_no: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phone: Option<String>,
}

impl PassengerIn {
    /// Validate; `at` prefixes field names (`passengers[3].`) in bulk calls.
    fn validate(&self, st: &AppState, at: &str) -> ApiResult<PassengerFields> {
        let f = |n: &str| format!("{at}{n}");
        let nationality = self.nationality.as_deref().map(|n| uetds::nationality(&f("nationality"), n)).transpose()?;
        let place = |name: &str, v: &IdOrText| st.refdata.check_district(&f(name), v.code(&f(name))?);
        Ok(PassengerFields {
            first_name: text(&f("first_name"), &self.first_name, uetds::NAME_MAX)?,
            last_name: text(&f("last_name"), &self.last_name, uetds::NAME_MAX)?,
            identity_number: uetds::identity_number(
                &f("identity_number"),
                &self.identity_number,
                nationality.as_deref(),
            )?,
            gender: uetds::gender(&f("gender"), &self.gender)?,
            nationality,
            boarding_place_code: place("boarding_place_code", &self.boarding_place_code)?,
            destination_place_code: place("destination_place_code", &self.destination_place_code)?,
            ticket_serial_no: opt_text(&f("ticket_serial_no"), self.ticket_serial_no.as_deref(), 30)?,
            ticket_issue_date: self
                .ticket_issue_date
                .as_deref()
                .map(|d| uetds::date(&f("ticket_issue_date"), d))
                .transpose()?,
            amount: self.amount.map(|a| uetds::amount(&f("amount"), a, 1e9)).transpose()?,
            seat_no: opt_text(&f("seat_no"), self.seat_no.as_deref(), uetds::SEAT_MAX)?,
            phone: self.phone.as_deref().map(|p| uetds::phone(&f("phone"), p)).transpose()?,
        })
    }
}

impl From<&Passenger> for PassengerIn {
    fn from(p: &Passenger) -> Self {
        PassengerIn {
            first_name: p.first_name.clone(),
            last_name: p.last_name.clone(),
            identity_number: p.identity_number.clone(),
            gender: p.gender.clone(),
            nationality: p.nationality.clone(),
            boarding_place_code: IdOrText::Int(p.boarding_place_code.into()),
            destination_place_code: IdOrText::Int(p.destination_place_code.into()),
            ticket_serial_no: p.ticket_serial_no.clone(),
            ticket_issue_date: p.ticket_issue_date.map(|d| d.to_string()),
            amount: p.amount,
            seat_no: p.seat_no.clone(),
            phone: p.phone.clone(),
        }
    }
}

fn identity_taken(id: &str) -> impl FnOnce() -> String + '_ {
    move || format!("the journey already has a passenger with identity number {id}")
}

/// Lock the journey for a passenger change; 404 when the organization has no such journey.
async fn lock_journey(tx: &mut PgConnection, org: i64, journey: i64) -> ApiResult<()> {
    db::journeys::lock(tx, org, journey).await?.map(|_| ()).ok_or_else(|| not_found("journey", journey))
}

/// Refuse a change that would take the journey past its passenger limit.
async fn check_capacity(tx: &mut PgConnection, journey: i64) -> ApiResult<()> {
    if db::passengers::count(tx, journey).await? > MAX_PER_JOURNEY {
        return Err(ApiError::validation(
            "passengers",
            format!("a journey holds at most {MAX_PER_JOURNEY} passengers"),
        ));
    }
    Ok(())
}

/// Add a passenger. 409 when the journey already has this identity number.
/// Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers", tag = "journeys", params(("id" = i64, Path)),
    request_body = PassengerIn,
    responses((status = 201, body = Passenger), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(journey): ApiPath<i64>,
    ApiJson(input): ApiJson<PassengerIn>,
) -> ApiResult<Created<Passenger>> {
    p.require(Scope::JourneysWrite)?;
    let fields = input.validate(&st, "")?;
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
#[utoipa::path(get, path = "/portal/journeys/{id}/passengers", tag = "journeys", params(("id" = i64, Path), ListQuery),
    responses((status = 200, body = Paged<Passenger>), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(journey): ApiPath<i64>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Passenger>>> {
    p.require(Scope::JourneysRead)?;
    let page = q.page()?;
    if db::journeys::status(&st.db, p.org_id, journey).await?.is_none() {
        return Err(not_found("journey", journey));
    }
    Ok(Json(Paged::from_rows(db::passengers::list(&st.db, p.org_id, journey, &page).await?, &page)))
}

/// Change any subset of a passenger's fields; answers the whole record. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}/passengers/{passenger_id}", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    request_body(content = Object, description = "Any subset of the passenger fields"),
    responses((status = 200, body = Passenger), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath((journey, id)): ApiPath<(i64, i64)>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Passenger>> {
    p.require(Scope::JourneysWrite)?;
    let current =
        db::passengers::get(&st.db, p.org_id, journey, id).await?.ok_or_else(|| not_found("passenger", id))?;
    let fields = patched(&PassengerIn::from(&current), &patch)?.validate(&st, "")?;
    db::passengers::update(&st.db, p.org_id, journey, id, &fields)
        .await
        .map_err(|e| conflict_on(e, db::passengers::IDENTITY_KEY, identity_taken(&fields.identity_number)))?
        .map(Json)
        .ok_or_else(|| not_found("passenger", id))
}

/// Remove a passenger. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}/passengers/{passenger_id}", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath((journey, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<OkBody>> {
    p.require(Scope::JourneysWrite)?;
    if !db::passengers::delete(&st.db, p.org_id, journey, id).await? {
        return Err(not_found("passenger", id));
    }
    Ok(Json(OkBody::default()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkIn {
    /// 1–1000 passengers; identity numbers must be unique within the call.
    passengers: Vec<PassengerIn>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BulkOut {
    created: usize,
    updated: usize,
    /// The stored records, in the order sent.
    data: Vec<Passenger>,
}

/// Create or update up to 1000 passengers by identity number, all or nothing: one invalid
/// entry (named as `passengers[i].field`) stores nothing. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers:bulk-upsert", tag = "journeys", params(("id" = i64, Path)),
    request_body = BulkIn,
    responses((status = 200, body = BulkOut), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn bulk_upsert(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(journey): ApiPath<i64>,
    ApiJson(input): ApiJson<BulkIn>,
) -> ApiResult<Json<BulkOut>> {
    p.require(Scope::JourneysWrite)?;
    if input.passengers.is_empty() || input.passengers.len() > MAX_BULK {
        return Err(ApiError::validation("passengers", format!("must hold 1 to {MAX_BULK} passengers")));
    }
    let mut seen = HashSet::new();
    let mut fields = Vec::with_capacity(input.passengers.len());
    for (i, passenger) in input.passengers.iter().enumerate() {
        let f = passenger.validate(&st, &format!("passengers[{i}]."))?;
        if !seen.insert(f.identity_number.clone()) {
            return Err(ApiError::validation(format!("passengers[{i}].identity_number"), "appears twice in this call"));
        }
        fields.push(f);
    }
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, p.org_id, journey).await?;
    let mut rows = db::passengers::write(&mut tx, p.org_id, journey, &fields, true).await?;
    check_capacity(&mut tx, journey).await?;
    tx.commit().await?;
    let order: std::collections::HashMap<&str, usize> =
        fields.iter().enumerate().map(|(i, f)| (f.identity_number.as_str(), i)).collect();
    rows.sort_by_key(|r| order.get(r.passenger.identity_number.as_str()).copied().unwrap_or(usize::MAX));
    let created = rows.iter().filter(|r| r.inserted).count();
    Ok(Json(BulkOut { created, updated: rows.len() - created, data: rows.into_iter().map(|r| r.passenger).collect() }))
}
