//! Type-ahead pickers for places: a form's province and district inputs (`data-picker`, see
//! [`super::forms`]) ask `GET /reference/places` for the options of their `<datalist>` as the
//! member types (api/assets/portal.js). The look-up is the API's reference data, parsed and
//! matched by the reference endpoints' module.

use axum::{
    extract::{RawQuery, State},
    response::Html,
};
use maud::html;
use tns_core::scopes::need::JourneysRead;

use super::{member::Member, page::PortalError};
use crate::{
    extract::parse_query,
    state::AppState,
    v1::endpoints::reference::{look_up, PlaceKind, PlaceQuery},
};

/// `GET /reference/places?kind=city|district&q=…[&city=…]`: `<option>`s of the matching
/// places (at most 20), as the reference endpoints (`GET /api/v1/ref/…`, `journeys:read`) serve
/// them. A district's province is named when no province was given.
pub(super) async fn places(
    State(st): State<AppState>,
    _m: Member<JourneysRead>,
    RawQuery(raw): RawQuery,
) -> Result<Html<String>, PortalError> {
    // A form sends an empty field too: absent, as the API takes it.
    let filled: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form_urlencoded::parse(raw.unwrap_or_default().as_bytes()).filter(|(_, v)| !v.trim().is_empty()))
        .finish();
    let q: PlaceQuery = parse_query(&filled)?;
    let found = look_up(st.refdata, &q);
    let with_city = q.kind == PlaceKind::District && q.city.is_none();
    Ok(Html(
        html! {
            @for (id, name, city) in &found {
                @let province = st.refdata.city(*city).map(|c| c.name.as_str()).filter(|_| with_city);
                option value=(id) {
                    (name)
                    @if let Some(p) = province { " (" (p) ")" }
                }
            }
        }
        .into_string(),
    ))
}
