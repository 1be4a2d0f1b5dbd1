//! `/portal/cargo`: create, list (status filter), get, and update or delete while `draft`.

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
        fields::{ceiling, Amount, Cursor, Day, Int, Limit, RecordId, Text, Time},
        kinds::{AdapterName, CargoUnit, RecordStatus, RegistryStatus},
        uetds::{CargoTypeCode, CityId, PlaceId, TaxId, Title, TransportMode, TransportType},
    },
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::{
    self as db,
    cargo::{Cargo, CargoFields},
    pagination::{Page, Paged},
};

ceiling!(
    /// A cargo amount: non-negative, below ten billion units.
    CargoAmount / CargoCeiling, 1e10, "Amount of cargo in `cargo_unit`, non-negative, below 10000000000."
);

/// A shipment as sent on create; any subset of it on update.
///
/// Rules across fields: each district belongs to its city; unloading is not before loading.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CargoIn {
    /// An active vehicle record of the organization.
    vehicle_id: RecordId,
    /// The driver, an active personnel record (U-ETDS's goods service wants the driver's
    /// identity; a shipment without one, or with a person who is not a driver, is submitted with a
    /// warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    driver_id: Option<RecordId>,
    transport_type: TransportType,
    cargo_type: CargoTypeCode,
    transport_mode: TransportMode,
    cargo_amount: CargoAmount,
    cargo_unit: CargoUnit,
    sender_tax_number: TaxId,
    sender_name: Title,
    receiver_tax_number: TaxId,
    receiver_name: Title,
    loading_date: Day,
    loading_time: Time,
    loading_city_id: CityId,
    /// A district of `loading_city_id`.
    loading_district_id: PlaceId,
    /// Not before loading.
    unloading_date: Day,
    unloading_time: Time,
    unloading_city_id: CityId,
    /// A district of `unloading_city_id`.
    unloading_district_id: PlaceId,
}

patch_schema!(CargoPatch, CargoIn);

impl CargoIn {
    /// The rules across this shipment's fields: a 422 on create, a 409 on an update's merged
    /// record.
    fn check_across(&self) -> ApiResult<()> {
        for (kind, city, district) in [
            ("loading", self.loading_city_id, self.loading_district_id),
            ("unloading", self.unloading_city_id, self.unloading_district_id),
        ] {
            if district.city() != Some(city.0) {
                return Err(ApiError::validation(
                    format!("{kind}_district_id"),
                    format!("district {} is not in province {}", district.0, city.0),
                ));
            }
        }
        if (self.unloading_date, self.unloading_time) < (self.loading_date, self.loading_time) {
            return Err(ApiError::validation("unloading_date", "unloading must not be before loading"));
        }
        Ok(())
    }

    /// The shipment's fields, its vehicle and driver checked within the organization (404 for a
    /// record it does not have active).
    /// U-ETDS's goods service notifies road shipments, in the units it has codes for: an
    /// organization that submits to it is told now (409: the values are valid, the
    /// organization's downstream cannot take them), not when the submission fails. (The sandbox
    /// takes everything the fields allow.)
    async fn fits_downstream(&self, st: &AppState, org: i64) -> ApiResult<()> {
        let mut conn = st.db.acquire().await?;
        if db::downstream::adapter_of(&mut conn, org).await?.as_deref() != Some(AdapterName::Uetds.as_str()) {
            return Ok(());
        }
        if self.transport_type.get() != 1 {
            return Err(ApiError::Conflict(
                "transport_type: U-ETDS's goods service takes road shipments only (1); this organization submits to \
                 U-ETDS"
                    .into(),
            ));
        }
        if self.cargo_unit.uetds_code().is_none() {
            return Err(ApiError::Conflict(format!(
                "cargo_unit: U-ETDS has no unit for {}; use KG, TON, ADET or LITRE (this organization submits to U-ETDS)",
                self.cargo_unit.as_str()
            )));
        }
        Ok(())
    }

    async fn resolve(self, st: &AppState, org: i64) -> ApiResult<CargoFields> {
        self.fits_downstream(st, org).await?;
        let vehicle = db::vehicles::get(&st.db, org, self.vehicle_id.get()).await?;
        if !vehicle.is_some_and(|v| v.status == RegistryStatus::Active) {
            return Err(missing_reference("vehicle_id", "active vehicle", self.vehicle_id.get()));
        }
        if let Some(driver) = self.driver_id {
            if db::personnel::active_roles(&st.db, org, &[driver.get()]).await?.is_empty() {
                return Err(missing_reference("driver_id", "active person", driver.get()));
            }
        }
        Ok(CargoFields {
            vehicle_id: self.vehicle_id.get(),
            driver_id: self.driver_id.map(Int::get),
            transport_type: self.transport_type.get() as i16,
            cargo_type: self.cargo_type.get() as i32,
            transport_mode: self.transport_mode.get() as i16,
            cargo_amount: self.cargo_amount.get(),
            cargo_unit: self.cargo_unit,
            sender_tax_number: self.sender_tax_number.into_inner(),
            sender_name: self.sender_name.into_inner(),
            receiver_tax_number: self.receiver_tax_number.into_inner(),
            receiver_name: self.receiver_name.into_inner(),
            loading: (self.loading_date.0, self.loading_time.0, self.loading_city_id.0, self.loading_district_id.0),
            unloading: (
                self.unloading_date.0,
                self.unloading_time.0,
                self.unloading_city_id.0,
                self.unloading_district_id.0,
            ),
        })
    }
}

impl AcrossFields for CargoIn {
    fn json_rules() -> serde_json::Value {
        // Each district with its province: one alternative per province, listing its places.
        let provinces = |kind: &str| -> serde_json::Value {
            let data = tns_core::refdata::installed();
            let alternatives: Vec<serde_json::Value> = data
                .map(|r| {
                    r.cities
                        .iter()
                        .map(|c| {
                            let ids: Vec<i32> =
                                r.districts.iter().filter(|d| d.city_id == c.id).map(|d| d.id).collect();
                            let texts: Vec<String> = ids.iter().map(i32::to_string).collect();
                            serde_json::json!({"properties": {
                                format!("{kind}_city_id"): {"const": c.id},
                                format!("{kind}_district_id"): {"anyOf": [{"enum": ids}, {"enum": texts}]},
                            }})
                        })
                        .collect()
                })
                .unwrap_or_default();
            serde_json::json!({"anyOf": alternatives})
        };
        serde_json::json!({
            "allOf": [provinces("loading"), provinces("unloading")],
            "x-tns-not-before": [[["/loading_date", "/loading_time"], ["/unloading_date", "/unloading_time"]]],
        })
    }
}

impl From<&Cargo> for CargoIn {
    fn from(c: &Cargo) -> Self {
        CargoIn {
            vehicle_id: Int::stored(c.vehicle_id),
            driver_id: c.driver_id.map(Int::stored),
            transport_type: Int::stored(c.transport_type.into()),
            cargo_type: Int::stored(c.cargo_type.into()),
            transport_mode: Int::stored(c.transport_mode.into()),
            cargo_amount: Amount::stored(c.cargo_amount),
            cargo_unit: c.cargo_unit,
            sender_tax_number: TaxId::stored(c.sender_tax_number.clone()),
            sender_name: Text::stored(c.sender_name.clone()),
            receiver_tax_number: TaxId::stored(c.receiver_tax_number.clone()),
            receiver_name: Text::stored(c.receiver_name.clone()),
            loading_date: Day(c.loading_date),
            loading_time: Time(c.loading_time),
            loading_city_id: CityId(c.loading_city_id),
            loading_district_id: PlaceId(c.loading_district_id),
            unloading_date: Day(c.unloading_date),
            unloading_time: Time(c.unloading_time),
            unloading_city_id: CityId(c.unloading_city_id),
            unloading_district_id: PlaceId(c.unloading_district_id),
        }
    }
}

/// Create a shipment (status `draft`). Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/cargo", operation_id = "create_cargo", tag = "cargo", request_body = CargoIn,
    responses((status = 201, body = Cargo),
              (status = 404, body = ErrorBody, description = "`vehicle_id` or `driver_id` names no active record of the organization"),
              (status = 409, body = ErrorBody, description = "The organization submits to U-ETDS, whose goods service takes road shipments (`transport_type` 1) in KG, TON, ADET or LITRE only (`detail` names the field)"),
              (status = 422, body = ErrorBody, description = "A field breaks its rule, or a rule across fields: a district not in its province, unloading before loading")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiJson(input): ApiJson<CargoIn>,
) -> ApiResult<Created<Cargo>> {
    input.check_across()?;
    let f = input.resolve(&st, p.org_id).await?;
    Ok(created(db::cargo::insert(&st.db, p.org_id, &f).await.map_err(|e| vanished_reference(e, "vehicle_id"))?))
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
    responses((status = 200, body = Paged<Cargo>)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<CargoQuery>,
) -> ApiResult<Json<Paged<Cargo>>> {
    let page = Page::new(q.limit, q.cursor);
    Ok(Json(Paged::from_rows(db::cargo::list(&st.db, p.org_id, q.status, &page).await?, &page)))
}

async fn load(st: &AppState, org: i64, id: i64) -> ApiResult<Cargo> {
    db::cargo::get(&st.db, org, id).await?.ok_or_else(|| not_found("cargo shipment", id))
}

/// One shipment. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo/{id}", operation_id = "get_cargo", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = Cargo)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Cargo>> {
    load(&st, p.org_id, id).await.map(Json)
}

/// Change any subset of a draft shipment's fields; answers the whole record. Scope `journeys:write`.
#[utoipa::path(put, path = "/portal/cargo/{id}", operation_id = "update_cargo", tag = "cargo", params(("id" = i64, Path)),
    request_body = CargoPatch,
    responses((status = 200, body = Cargo),
              (status = 404, body = ErrorBody, description = "No such shipment, or `vehicle_id` / `driver_id` names no active record"),
              (status = 409, body = ErrorBody, description = "Not a draft any more, or the merged shipment breaks a rule across fields")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Cargo>> {
    let current = load(&st, p.org_id, id).await?;
    if current.status != RecordStatus::Draft {
        return Err(not_draft("cargo shipment", id, current.status, "changed"));
    }
    let merged = patched(&CargoIn::from(&current), &patch)?;
    merged.check_across().map_err(merged_conflict)?;
    let f = merged.resolve(&st, p.org_id).await?;
    db::cargo::update_draft(&st.db, p.org_id, id, &f)
        .await
        .map_err(|e| vanished_reference(e, "vehicle_id"))?
        .map(Json)
        .ok_or_else(|| ApiError::Conflict(format!("cargo shipment {id} is no longer a draft")))
}

/// Delete a draft shipment. Scope `journeys:write`.
#[utoipa::path(delete, path = "/portal/cargo/{id}", operation_id = "delete_cargo", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 409, body = ErrorBody, description = "Not a draft: submitted shipments stay")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<OkBody>> {
    if !db::cargo::delete_draft(&st.db, p.org_id, id).await? {
        let current = load(&st, p.org_id, id).await?;
        return Err(not_draft("cargo shipment", id, current.status, "deleted"));
    }
    Ok(Json(OkBody::default()))
}
