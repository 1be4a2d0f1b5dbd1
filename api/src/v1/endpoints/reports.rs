//! The downstream's own report of a delivered journey or shipment, as a PDF
//! (`GET /portal/journeys/{id}/report`, `GET /portal/cargo/{id}/report`).

use axum::{
    extract::State,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};
use base64::Engine;
use tns_adapter::{Credentials, Kind, ReportRequest};
use tns_core::ids::{CargoId, JourneyId, OrgId};

use crate::{
    auth::Caller,
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::ApiPath,
    state::AppState,
    v1::resource::not_found,
};
use tns_adapter_host::credentials;
use tns_core::{domain::kinds::TripKind, scopes::need::JourneysRead};
use tns_store::{self as db, submissions::Target};
use utoipa_axum::{router::OpenApiRouter, routes};

/// A file (a PDF document, a ZIP archive), in the document's words: its bytes.
pub struct Binary;

impl utoipa::PartialSchema for Binary {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        tns_core::domain::fields::raw_schema(serde_json::json!({"type": "string", "format": "binary"}))
    }
}

impl utoipa::ToSchema for Binary {
    fn name() -> std::borrow::Cow<'static, str> {
        "Binary".into()
    }
}

/// The organization's credentials for `adapter`, opened for one call (none when it has none
/// for that adapter: one adapter's credentials never reach another's plugin).
pub(crate) async fn credentials(st: &AppState, org: OrgId, adapter: &str) -> ApiResult<Option<Credentials>> {
    let Some(stored) = db::downstream::credentials_for(&st.db, org, adapter).await? else {
        return Ok(None);
    };
    let sealed = credentials::Sealed { fields: stored.fields, secrets: stored.secrets };
    let opened =
        credentials::open(&st.cfg.data_key, org, &sealed).map_err(|e| anyhow::anyhow!("organization {org}: {e}"))?;
    Ok(Some(opened))
}

async fn report(
    st: &AppState,
    org: OrgId,
    target: Target,
    reference: Option<String>,
    kind: Kind,
) -> ApiResult<Response> {
    let what = match target {
        Target::Journey(_) => "journey",
        Target::Cargo(_) => "cargo shipment",
    };
    let Some(downstream_reference) = reference else {
        return Err(ApiError::Conflict(
            Code::NotDelivered,
            format!("{what} {} has not been delivered downstream yet; its report exists once it is", target.id()),
        ));
    };
    let mut conn = st.db.acquire().await?;
    let (adapter, state) = db::submissions::delivered_state(&mut conn, org, target)
        .await?
        .ok_or_else(|| anyhow::anyhow!("{target:?} has a downstream reference but no delivered submission"))?;
    drop(conn);
    let req = ReportRequest {
        credentials: credentials(st, org, &adapter).await?,
        kind,
        downstream_reference: downstream_reference.clone(),
        downstream_state: state.0,
    };
    let doc = st.downstreams.report(&adapter, req).await?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(doc.base64.as_bytes())
        .map_err(|e| ApiError::BadGateway(format!("the downstream's report is not readable: {e}")))?;
    Ok(pdf_response(bytes, &format!("{}-{}-{}.pdf", what.replace(' ', "-"), target.id(), downstream_reference)))
}

/// A PDF as a download named `filename`.
pub fn pdf_response(bytes: Vec<u8>, filename: &str) -> Response {
    let name = format!("attachment; filename=\"{filename}\"");
    let disposition = HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/pdf")),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        bytes,
    )
        .into_response()
}

/// The downstream's report of a delivered journey (U-ETDS `seferDetayCiktisiAl`), as
/// `application/pdf`. 409 before the journey is delivered. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/journeys/{id}/report", operation_id = "get_journey_report", tag = "journeys", params(("id" = i64, Path)),
    responses((status = 200, content_type = "application/pdf", body = Binary),
              (status = 409, body = ErrorBody, description = "Not delivered downstream yet, the downstream refused the organization's credentials, or it does not give this report (its message in `detail`)"),
              (status = 502, body = ErrorBody, description = "The downstream answered with a report that is not readable")),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn journey(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<JourneyId>,
) -> ApiResult<Response> {
    journey_report(&st, p.org_id, id).await
}

/// The report of journey `id` of `org` (the portal's download calls it too).
pub async fn journey_report(st: &AppState, org: OrgId, id: JourneyId) -> ApiResult<Response> {
    let mut conn = st.db.acquire().await?;
    let j = db::journeys::get(&mut conn, org, id).await?.ok_or_else(|| not_found("journey", id))?;
    drop(conn);
    let kind = if j.journey.trip_kind == TripKind::Tarifeli { Kind::Scheduled } else { Kind::NonScheduled };
    report(st, org, Target::Journey(id), j.downstream_reference, kind).await
}

/// The downstream's report of a delivered cargo shipment (U-ETDS `seferRaporuV3`), as
/// `application/pdf`. 409 before the shipment is delivered. Scope `journeys:read`.
#[utoipa::path(get, path = "/portal/cargo/{id}/report", operation_id = "get_cargo_report", tag = "cargo", params(("id" = i64, Path)),
    responses((status = 200, content_type = "application/pdf", body = Binary),
              (status = 409, body = ErrorBody, description = "Not delivered downstream yet, the downstream refused the organization's credentials, or it does not give this report (its message in `detail`)"),
              (status = 502, body = ErrorBody, description = "The downstream answered with a report that is not readable")),
    security(("bearer" = ["journeys:read"]), ("session" = ["journeys:read"])))]
pub async fn cargo(
    State(st): State<AppState>,
    p: Caller<JourneysRead>,
    ApiPath(id): ApiPath<CargoId>,
) -> ApiResult<Response> {
    cargo_report(&st, p.org_id, id).await
}

/// The downstream's PDF report of `org`'s delivered shipment `id`.
pub async fn cargo_report(st: &AppState, org: OrgId, id: CargoId) -> ApiResult<Response> {
    let c = db::cargo::get(&st.db, org, id).await?.ok_or_else(|| not_found("cargo shipment", id))?;
    report(st, org, Target::Cargo(id), c.downstream_reference, Kind::Goods).await
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(journey)).routes(routes!(cargo))
}
