//! `/portal/cargo`: create, list (status filter), get, and update or delete while `draft`.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{scopes::Scope, Auth},
    db::{
        self,
        cargo::{Cargo, CargoFields},
    },
    domain::{text, uetds},
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pagination::{Page, Paged},
    state::AppState,
    v1::{
        endpoints::journeys::STATUSES,
        resource::{created, not_draft, not_found, one_of, patched, vanished_reference, Created},
        Ok as OkBody,
    },
};

pub const UNITS: &[&str] = &["KG", "TON", "ADET", "M3", "LITRE"];

/// A shipment as sent on create (every required field) or update (any subset).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CargoIn {
    /// An active vehicle record of the organization.
    vehicle_id: i64,
    /// The driver (an active personnel record with role `driver`); the goods service needs
    /// the driver's identity at submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    driver_id: Option<i64>,
    /// 1 road, 2 rail, 3 sea, 4 air.
    transport_type: i64,
    /// Cargo kind code (positive).
    cargo_type: i64,
    /// 1 full load, 2 partial load.
    transport_mode: i64,
    /// Non-negative.
    cargo_amount: f64,
    /// `KG`, `TON`, `ADET`, `M3` or `LITRE`.
    cargo_unit: String,
    /// 10-digit VKN or 11-digit T.C. number, checksum verified.
    sender_tax_number: String,
    sender_name: String,
    /// 10-digit VKN or 11-digit T.C. number, checksum verified.
    receiver_tax_number: String,
    receiver_name: String,
    loading_date: String,
    loading_time: String,
    loading_city_id: i64,
    loading_district_id: i64,
    /// Not before loading.
    unloading_date: String,
    unloading_time: String,
    unloading_city_id: i64,
    unloading_district_id: i64,
}

fn small(field: &str, v: i64, range: std::ops::RangeInclusive<i64>) -> ApiResult<i64> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(ApiError::validation(field, format!("must be between {} and {}", range.start(), range.end())))
    }
}

impl CargoIn {
    fn place(&self, st: &AppState, kind: &str) -> ApiResult<(chrono::NaiveDate, chrono::NaiveTime, i32, i32)> {
        let (date, time, city, district) = match kind {
            "loading" => (&self.loading_date, &self.loading_time, self.loading_city_id, self.loading_district_id),
            _ => (&self.unloading_date, &self.unloading_time, self.unloading_city_id, self.unloading_district_id),
        };
        let (cf, df) = (format!("{kind}_city_id"), format!("{kind}_district_id"));
        let city = small(&cf, city, 1..=81)? as i32;
        let district = i32::try_from(district).map_err(|_| ApiError::validation(&df, "unknown district id"))?;
        st.refdata.check_city_district(&cf, city, &df, district)?;
        Ok((uetds::date(&format!("{kind}_date"), date)?, uetds::time(&format!("{kind}_time"), time)?, city, district))
    }

    async fn resolve(&self, st: &AppState, org: i64) -> ApiResult<CargoFields> {
        let loading = self.place(st, "loading")?;
        let unloading = self.place(st, "unloading")?;
        if (unloading.0, unloading.1) < (loading.0, loading.1) {
            return Err(ApiError::validation("unloading_date", "unloading must not be before loading"));
        }
        let fields = CargoFields {
            vehicle_id: self.vehicle_id,
            driver_id: self.driver_id,
            transport_type: small("transport_type", self.transport_type, 1..=4)? as i16,
            cargo_type: small("cargo_type", self.cargo_type, 1..=i32::MAX as i64)? as i32,
            transport_mode: small("transport_mode", self.transport_mode, 1..=2)? as i16,
            cargo_amount: uetds::amount("cargo_amount", self.cargo_amount, 1e11)?,
            cargo_unit: one_of("cargo_unit", &self.cargo_unit.to_ascii_uppercase(), UNITS)?,
            sender_tax_number: uetds::tax_id("sender_tax_number", &self.sender_tax_number)?,
            sender_name: text("sender_name", &self.sender_name, uetds::TITLE_MAX)?,
            receiver_tax_number: uetds::tax_id("receiver_tax_number", &self.receiver_tax_number)?,
            receiver_name: text("receiver_name", &self.receiver_name, uetds::TITLE_MAX)?,
            loading,
            unloading,
        };
        let vehicle = db::vehicles::get(&st.db, org, self.vehicle_id).await?.filter(|v| v.status == "active");
        if vehicle.is_none() {
            return Err(ApiError::validation("vehicle_id", format!("no active vehicle with id {}", self.vehicle_id)));
        }
        if let Some(driver) = self.driver_id {
            let roles = db::personnel::active_roles(&st.db, org, &[driver]).await?;
            match roles.first().map(|(_, role)| role.as_str()) {
                None => return Err(ApiError::validation("driver_id", format!("no active person with id {driver}"))),
                Some("driver") => {}
                Some(other) => {
                    return Err(ApiError::validation(
                        "driver_id",
                        format!("person {driver} is a {other}, not a driver"),
                    ))
                }
            }
        }
        Ok(fields)
    }
}

impl From<&Cargo> for CargoIn {
    fn from(c: &Cargo) -> Self {
        CargoIn {
            vehicle_id: c.vehicle_id,
            driver_id: c.driver_id,
            transport_type: c.transport_type.into(),
            cargo_type: c.cargo_type.into(),
            transport_mode: c.transport_mode.into(),
            cargo_amount: c.cargo_amount,
            cargo_unit: c.cargo_unit.clone(),
            sender_tax_number: c.sender_tax_number.clone(),
            sender_name: c.sender_name.clone(),
            receiver_tax_number: c.receiver_tax_number.clone(),
            receiver_name: c.receiver_name.clone(),
            loading_date: c.loading_date.to_string(),
            loading_time: c.loading_time.format("%H:%M").to_string(),
            loading_city_id: c.loading_city_id.into(),
            loading_district_id: c.loading_district_id.into(),
            unloading_date: c.unloading_date.to_string(),
            unloading_time: c.unloading_time.format("%H:%M").to_string(),
            unloading_city_id: c.unloading_city_id.into(),
            unloading_district_id: c.unloading_district_id.into(),
        }
    }
}

/// Create a shipment (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/cargo", tag = "cargo", request_body = CargoIn,
    responses((status = 201, body = Cargo), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<CargoIn>,
) -> ApiResult<Created<Cargo>> {
    p.require(Scope::JourneysWrite)?;
    let f = input.resolve(&st, p.org_id).await?;
    Ok(created(db::cargo::insert(&st.db, p.org_id, &f).await.map_err(|e| vanished_reference(e, "vehicle_id"))?))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct CargoQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
    /// `draft`, `submitted`, `delivered` or `failed`.
    status: Option<String>,
}

/// Shipments, newest first, optionally by status. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo", tag = "cargo", params(CargoQuery),
    responses((status = 200, body = Paged<Cargo>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<CargoQuery>,
) -> ApiResult<Json<Paged<Cargo>>> {
    p.require(Scope::JourneysRead)?;
    let page = Page::parse(q.limit, q.cursor.as_deref())?;
    let status = q.status.as_deref().map(|s| one_of("status", s, STATUSES)).transpose()?;
    Ok(Json(Paged::from_rows(db::cargo::list(&st.db, p.org_id, status.as_deref(), &page).await?, &page)))
}

async fn load(st: &AppState, org: i64, id: i64) -> ApiResult<Cargo> {
    db::cargo::get(&st.db, org, id).await?.ok_or_else(|| not_found("cargo shipment", id))
}

/// One shipment. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo/{id}", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = Cargo), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Cargo>> {
    p.require(Scope::JourneysRead)?;
    load(&st, p.org_id, id).await.map(Json)
}

/// Change any subset of a draft shipment's fields; answers the whole record. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/cargo/{id}", tag = "cargo", params(("id" = i64, Path)),
    request_body(content = Object, description = "Any subset of the cargo fields"),
    responses((status = 200, body = Cargo), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Cargo>> {
    p.require(Scope::JourneysWrite)?;
    let current = load(&st, p.org_id, id).await?;
    if current.status != "draft" {
        return Err(not_draft("cargo shipment", id, &current.status, "changed"));
    }
    let f = patched(&CargoIn::from(&current), &patch)?.resolve(&st, p.org_id).await?;
    db::cargo::update_draft(&st.db, p.org_id, id, &f)
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
        .map(Json)
        .ok_or_else(|| ApiError::Conflict(format!("cargo shipment {id} is no longer a draft")))
}

/// Delete a draft shipment. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/cargo/{id}", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<OkBody>> {
    p.require(Scope::JourneysWrite)?;
    if !db::cargo::delete_draft(&st.db, p.org_id, id).await? {
        let current = load(&st, p.org_id, id).await?;
        return Err(not_draft("cargo shipment", id, &current.status, "deleted"));
    }
    Ok(Json(OkBody::default()))
}
