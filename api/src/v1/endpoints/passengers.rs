//! `/portal/journeys/{id}/passengers`: add, list, change, remove, and bulk upsert (up to
//! 1000 per call, keyed by identity number within the journey, all or nothing).

use serde::Serialize;
use sqlx::PgConnection;
use utoipa::ToSchema;

use super::prelude::*;
use crate::v1::answers::PassengerOut;
use crate::v1::resource::{
    conflict_on, created, merged_conflict, not_found, patched, refuse_erased, Created, ListQuery,
};
pub use tns_core::domain::passenger::{BulkIn, PassengerIn};
use tns_core::domain::{
    kinds::RecordStatus,
    national::{baggage_rule, identity_rule},
    passenger::{Manifest, NewPassenger},
};
use tns_http::wire::Paged;
use tns_store::{self as db, passengers::MAX_PER_JOURNEY};

patch_schema!(PassengerPatch, PassengerIn);

impl AcrossFields for PassengerIn {
    fn json_rules() -> serde_json::Value {
        serde_json::json!({"allOf": [identity_rule(), baggage_rule()]})
    }
}

fn identity_taken(id: &str) -> impl FnOnce() -> String + '_ {
    move || format!("the journey already has a passenger with identity number {id}")
}

/// Lock the journey for a passenger change; 404 when the organization has no such journey, 409
/// when its people's data was erased past retention.
async fn lock_journey(tx: &mut PgConnection, org: OrgId, journey: JourneyId) -> ApiResult<()> {
    open_journey(journey, db::journeys::lock(&mut *tx, org, journey).await?)?;
    refuse_erased(tx, Target::Journey(journey), org).await
}

/// A journey's passengers change in any state but `cancelled` (409).
fn open_journey(journey: JourneyId, status: Option<RecordStatus>) -> ApiResult<()> {
    match status {
        None => Err(not_found("journey", journey)),
        Some(RecordStatus::Cancelled) => Err(ApiError::Conflict(
            Code::Cancelled,
            format!("journey {journey} is cancelled; its passengers take no more changes"),
        )),
        Some(_) => Ok(()),
    }
}

/// Refuse a change that would take the journey past its passenger limit (the journey's state,
/// so a 409).
async fn check_capacity(tx: &mut PgConnection, journey: JourneyId) -> ApiResult<()> {
    if db::passengers::count(tx, journey).await? > MAX_PER_JOURNEY {
        return Err(ApiError::Conflict(
            Code::LimitReached,
            format!("a journey holds at most {MAX_PER_JOURNEY} passengers"),
        ));
    }
    Ok(())
}

/// Refuse a change that leaves one baggage barcode on two passengers of the journey (a tag is
/// on one bag): 409 naming it.
async fn check_baggage(tx: &mut PgConnection, journey: JourneyId) -> ApiResult<()> {
    match db::passengers::shared_barcode(tx, journey).await? {
        Some((barcode, ids)) => Err(ApiError::Conflict(
            Code::Duplicate,
            format!(
                "baggage: barcode {barcode} would be on more than one passenger of this journey (ids {ids:?}); a tag is on one bag"
            ),
        )),
        None => Ok(()),
    }
}

/// Add a passenger. 409 when the journey already has this identity number, or is cancelled.
/// Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers", operation_id = "create_passenger", tag = "journeys", params(("id" = i64, Path)),
    request_body = PassengerIn,
    responses((status = 201, body = PassengerOut), (status = 409, body = ErrorBody, description = "The journey is cancelled, its people's data was erased past the retention period, it already has a passenger with this identity number, would exceed its passenger limit, or another passenger of it carries one of the baggage barcodes")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(journey): ApiPath<JourneyId>,
    ApiJson(input): ApiJson<PassengerIn>,
) -> ApiResult<Created<PassengerOut>> {
    let passenger = NewPassenger::try_from(input)?;
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, p.org_id, journey).await?;
    let mut rows =
        db::passengers::write(&mut tx, p.org_id, journey, std::slice::from_ref(&passenger), false, &p.credential_id())
            .await
            .map_err(|e| {
                conflict_on(e, db::passengers::IDENTITY_KEY, identity_taken(passenger.who.identity.number()))
            })?;
    check_capacity(&mut tx, journey).await?;
    check_baggage(&mut tx, journey).await?;
    tx.commit().await?;
    let row = rows.pop().ok_or_else(|| anyhow::anyhow!("insert returned no row"))?;
    Ok(created(row.passenger.into()))
}

/// A journey's passengers, newest first. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}/passengers", operation_id = "list_passengers", tag = "journeys", params(("id" = i64, Path), ListQuery),
    responses((status = 200, body = Paged<PassengerOut>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(journey): ApiPath<JourneyId>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<PassengerOut>>> {
    let page = q.page();
    if db::journeys::status(&st.db, p.org_id, journey).await?.is_none() {
        return Err(not_found("journey", journey));
    }
    Ok(Json(
        Paged::from_rows(db::passengers::list(&st.db, p.org_id, journey, &page).await?, &page).map(PassengerOut::from),
    ))
}

/// Change any subset of a passenger's fields; answers the whole record. 409 once the journey is
/// cancelled. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/journeys/{id}/passengers/{passenger_id}", operation_id = "update_passenger", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    request_body = PassengerPatch,
    responses((status = 200, body = PassengerOut), (status = 409, body = ErrorBody, description = "The journey is cancelled, its people's data was erased past the retention period, another passenger of it has this identity number or one of the baggage barcodes, or the merged passenger breaks a rule across fields")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath((journey, id)): ApiPath<(JourneyId, PassengerId)>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<PassengerOut>> {
    open_journey(journey, db::journeys::status(&st.db, p.org_id, journey).await?)?;
    let current =
        db::passengers::get(&st.db, p.org_id, journey, id).await?.ok_or_else(|| not_found("passenger", id))?;
    let merged = patched(&PassengerIn::from(&current), &patch)?;
    let passenger = NewPassenger::try_from(merged).map_err(merged_conflict)?;
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, p.org_id, journey).await?;
    let row = db::passengers::update(&mut *tx, p.org_id, journey, id, &passenger, &p.credential_id())
        .await
        .map_err(|e| conflict_on(e, db::passengers::IDENTITY_KEY, identity_taken(passenger.who.identity.number())))?
        .ok_or_else(|| not_found("passenger", id))?;
    check_baggage(&mut tx, journey).await?;
    tx.commit().await?;
    Ok(Json(row.into()))
}

/// Remove a passenger. 409 once the journey is cancelled. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/journeys/{id}/passengers/{passenger_id}", operation_id = "delete_passenger", tag = "journeys",
    params(("id" = i64, Path), ("passenger_id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 409, body = ErrorBody, description = "The journey is cancelled or its people's data was erased past the retention period")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath((journey, id)): ApiPath<(JourneyId, PassengerId)>,
) -> ApiResult<Json<OkBody>> {
    open_journey(journey, db::journeys::status(&st.db, p.org_id, journey).await?)?;
    refuse_erased(&st.db, Target::Journey(journey), p.org_id).await?;
    if !db::passengers::delete(&st.db, p.org_id, journey, id).await? {
        return Err(not_found("passenger", id));
    }
    Ok(Json(OkBody::default()))
}

#[derive(Serialize, ToSchema)]
pub struct BulkOut {
    pub created: usize,
    pub updated: usize,
    /// The stored records, one per identity number, in the order of their first entry.
    pub data: Vec<PassengerOut>,
}

/// Create or update up to 1000 passengers by identity number, all or nothing: one invalid
/// entry (named as `passengers[i].field`) stores nothing. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers:bulk-upsert", operation_id = "bulk_upsert_passengers", tag = "journeys", params(("id" = i64, Path)),
    request_body = BulkIn,
    responses((status = 200, body = BulkOut),
              (status = 409, body = ErrorBody, description = "The journey is cancelled, its people's data was erased past the retention period, it would exceed its passenger limit, or two passengers would carry one baggage barcode")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn bulk_upsert(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(journey): ApiPath<JourneyId>,
    ApiJson(input): ApiJson<BulkIn>,
) -> ApiResult<Json<BulkOut>> {
    let manifest = Manifest::try_from(input)?;
    upsert(&st, &p, journey, Some(&manifest), &[]).await.map(Json)
}

/// Write `manifest` to journey `journey` of `p`'s organization (as written by `p`) as the bulk upsert does, and remove the
/// passengers `remove` names (the portal's passenger table drops rows), all in one transaction:
/// the journey locked, then open, then within its passenger limit, or nothing changes.
pub async fn upsert(
    st: &AppState,
    p: &Principal,
    journey: JourneyId,
    manifest: Option<&Manifest>,
    remove: &[PassengerId],
) -> ApiResult<BulkOut> {
    let org = p.org_id;
    let mut tx = st.db.begin().await?;
    lock_journey(&mut tx, org, journey).await?;
    for id in remove {
        if !db::passengers::delete(&mut *tx, org, journey, *id).await? {
            return Err(not_found("passenger", *id));
        }
    }
    let mut rows = match manifest {
        Some(m) => db::passengers::write(&mut tx, org, journey, m.entries(), true, &p.credential_id()).await?,
        None => vec![],
    };
    check_capacity(&mut tx, journey).await?;
    check_baggage(&mut tx, journey).await?;
    tx.commit().await?;
    if let Some(m) = manifest {
        rows.sort_by_key(|r| m.position(r.passenger.passenger.who.identity.number()));
    }
    let created = rows.iter().filter(|r| r.inserted).count();
    Ok(BulkOut { created, updated: rows.len() - created, data: rows.into_iter().map(|r| r.passenger.into()).collect() })
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(update, delete)).routes(routes!(bulk_upsert))
}
