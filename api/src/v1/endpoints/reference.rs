//! `/ref/cities` and `/ref/districts`: the downstream's place codes, served from memory.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{auth::Caller, error::ApiResult, extract::ApiQuery, state::AppState};
use tns_core::{
    domain::uetds::CityId,
    refdata::{City, District},
    scopes::need::JourneysRead,
};

#[derive(Serialize, ToSchema)]
pub struct CityList {
    data: Vec<City>,
}

#[derive(Serialize, ToSchema)]
pub struct DistrictList {
    data: Vec<District>,
}

/// The 81 provinces with their MERNIS codes. Scope `journeys:read`.
#[utoipa::path(get, path = "/ref/cities", operation_id = "list_cities", tag = "reference",
    responses((status = 200, body = CityList)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn cities(State(st): State<AppState>, _: Caller<JourneysRead>) -> ApiResult<Json<CityList>> {
    Ok(Json(CityList { data: st.refdata.cities.clone() }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DistrictQuery {
    /// Only this province's districts and airports; all when absent.
    city_id: Option<CityId>,
}

/// Districts and airports (`kind`), by province then name. Scope `journeys:read`.
#[utoipa::path(get, path = "/ref/districts", operation_id = "list_districts", tag = "reference", params(DistrictQuery),
    responses((status = 200, body = DistrictList)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn districts(
    State(st): State<AppState>,
    _: Caller<JourneysRead>,
    ApiQuery(q): ApiQuery<DistrictQuery>,
) -> ApiResult<Json<DistrictList>> {
    let data = st.refdata.districts.iter().filter(|d| q.city_id.is_none_or(|c| d.city_id == c.0)).cloned().collect();
    Ok(Json(DistrictList { data }))
}
