//! `/ref/cities` and `/ref/districts`: the downstream's place codes, served from memory;
//! `/ref/code-lists`: the downstream's code lists, as the jobs role last read them (or as
//! shipped).

use axum::{extract::State, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::Caller,
    error::{ApiError, ApiResult},
    extract::{ApiPath, ApiQuery},
    state::AppState,
};
use tns_core::{
    domain::{
        code_lists::{Code, CodeListName, CodeListSource},
        fields::Text,
        national::CityId,
    },
    refdata::{City, District, RefData},
    scopes::need::JourneysRead,
};
use utoipa_axum::{router::OpenApiRouter, routes};

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
    let data = districts_of(st.refdata, q.city_id).cloned().collect();
    Ok(Json(DistrictList { data }))
}

/// The districts and airports of `city` (all when `None`), by province then name.
pub fn districts_of(refdata: &RefData, city: Option<CityId>) -> impl Iterator<Item = &District> {
    refdata.districts.iter().filter(move |d| city.is_none_or(|c| d.city_id == c.0))
}

/// One of the downstream's code lists.
#[derive(Serialize, ToSchema)]
pub struct CodeListOut {
    name: CodeListName,
    /// `shipped`: the copy TNS ships (what public sources show; a list they do not show is
    /// empty); `downstream`: read from the downstream, refreshed daily.
    source: CodeListSource,
    /// When the downstream's copy was read; absent for the shipped one.
    #[serde(skip_serializing_if = "Option::is_none")]
    refreshed_at: Option<DateTime<Utc>>,
    codes: Vec<Code>,
}

#[derive(Serialize, ToSchema)]
pub struct CodeListList {
    data: Vec<CodeListOut>,
}

fn code_list_out(l: tns_store::code_lists::StoredList) -> CodeListOut {
    CodeListOut { name: l.name, source: l.source, refreshed_at: l.refreshed_at, codes: l.codes.0 }
}

/// Every code list of the downstream: why a goods trip is cancelled (`trip_cancel_kinds`, a
/// shipment cancellation's `cancel_kind`), goods types and units, how dangerous goods travel
/// and their exemptions. Scope `journeys:read`.
#[utoipa::path(get, path = "/ref/code-lists", operation_id = "list_code_lists", tag = "reference",
    responses((status = 200, body = CodeListList)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn code_lists(State(st): State<AppState>, _: Caller<JourneysRead>) -> ApiResult<Json<CodeListList>> {
    let data = tns_store::code_lists::all(&st.db).await?.into_iter().map(code_list_out).collect();
    Ok(Json(CodeListList { data }))
}

/// One code list by name (404 for a name there is no list of). Scope `journeys:read`.
#[utoipa::path(get, path = "/ref/code-lists/{name}", operation_id = "get_code_list", tag = "reference",
    params(("name" = String, Path, description = "The list's name, as `GET /ref/code-lists` gives it")),
    responses((status = 200, body = CodeListOut), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn code_list(
    State(st): State<AppState>,
    _: Caller<JourneysRead>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<CodeListOut>> {
    let missing = || ApiError::NotFound(format!("no code list named {name:?}"));
    let name = CodeListName::parse(&name).ok_or_else(missing)?;
    let list = tns_store::code_lists::one(&st.db, name).await?.ok_or_else(missing)?;
    Ok(Json(code_list_out(list)))
}

/// At most this many places answer a look-up.
pub const LOOKUP_LIMIT: usize = 20;

/// A look-up of places by what a person types: a province, or a district or airport (of one
/// province when `city` is given).
#[derive(Debug, Deserialize)]
pub struct PlaceQuery {
    pub kind: PlaceKind,
    /// Part of the name (Turkish letters or their plain Latin ones, any case), or the leading
    /// digits of the id; at most 40 characters.
    #[serde(default)]
    pub q: Option<Text<40>>,
    pub city: Option<CityId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaceKind {
    City,
    District,
}

/// `s` folded for matching what a person types: lower case, Turkish letters as their plain
/// Latin ones (`İstanbul`, `istanbul` and `Istanbul` are one), combining marks dropped.
fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .flat_map(|c| match c {
            'İ' | 'I' | 'ı' => vec!['i'],
            'Ş' | 'ş' => vec!['s'],
            'Ğ' | 'ğ' => vec!['g'],
            'Ü' | 'ü' => vec!['u'],
            'Ö' | 'ö' => vec!['o'],
            'Ç' | 'ç' => vec!['c'],
            'Â' | 'â' => vec!['a'],
            'Î' | 'î' => vec!['i'],
            'Û' | 'û' => vec!['u'],
            c => c.to_lowercase().collect(),
        })
        .collect()
}

/// The places of `q`, best first (names that start with the text, then those that contain it,
/// each by name), at most [`LOOKUP_LIMIT`]: `(id, name, province id)`.
pub fn look_up(refdata: &RefData, q: &PlaceQuery) -> Vec<(i32, String, i32)> {
    let text = q.q.as_ref().map(|t| fold(t.as_str())).unwrap_or_default();
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let places: Vec<(i32, &str, i32)> = match q.kind {
        PlaceKind::City => refdata.cities.iter().map(|c| (c.id, c.name.as_str(), c.id)).collect(),
        PlaceKind::District => districts_of(refdata, q.city).map(|d| (d.id, d.name.as_str(), d.city_id)).collect(),
    };
    let mut found: Vec<(bool, String, (i32, String, i32))> = places
        .into_iter()
        .filter_map(|(id, name, city)| {
            let folded = fold(name);
            let (starts, hit) = if digits {
                let id = id.to_string();
                (id == text, id.starts_with(&text))
            } else {
                (folded.starts_with(&text), folded.contains(&text))
            };
            hit.then(|| (!starts, folded, (id, name.to_string(), city)))
        })
        .collect();
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    found.into_iter().take(LOOKUP_LIMIT).map(|(_, _, p)| p).collect()
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(cities))
        .routes(routes!(districts))
        .routes(routes!(code_lists))
        .routes(routes!(code_list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_up_folds_turkish_letters_and_case() {
        assert_eq!(fold("İSTANBUL"), "istanbul");
        assert_eq!(fold("Şanlıurfa"), "sanliurfa");
        assert_eq!(fold("Çanakkale Ğ Ü Ö"), "canakkale g u o");
    }
}
