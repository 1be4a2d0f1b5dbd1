//! `/ref/cities` and `/ref/districts`: the downstream's place codes, served from memory.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{scopes::Scope, Auth},
    error::{ApiResult, ErrorBody},
    extract::ApiQuery,
    refdata::{City, District},
    state::AppState,
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
#[utoipa::path(get, path = "/ref/cities", tag = "reference",
    responses((status = 200, body = CityList), (status = 401, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn cities(State(st): State<AppState>, Auth(p): Auth) -> ApiResult<Json<CityList>> {
    p.require(Scope::JourneysRead)?;
    Ok(Json(CityList { data: st.refdata.cities.clone() }))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct DistrictQuery {
    /// Only this province's districts and airports; all when absent.
    city_id: Option<i32>,
}

/// Districts and airports (`kind`), by province then name. Scope `journeys:read`.
#[utoipa::path(get, path = "/ref/districts", tag = "reference", params(DistrictQuery),
    responses((status = 200, body = DistrictList), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn districts(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<DistrictQuery>,
) -> ApiResult<Json<DistrictList>> {
    p.require(Scope::JourneysRead)?;
    let data = st.refdata.districts.iter().filter(|d| q.city_id.is_none_or(|c| d.city_id == c)).cloned().collect();
    Ok(Json(DistrictList { data }))
}
