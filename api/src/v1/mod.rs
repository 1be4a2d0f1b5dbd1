//! The versioned API (`/api/v1`): routes, their OpenAPI document, and the admission layer.

pub mod answers;
pub mod endpoints;
pub mod openapi;
pub mod registry;
pub mod resource;

use std::sync::OnceLock;

use axum::{
    extract::{MatchedPath, Request, State},
    http::{header, HeaderValue},
    middleware::{from_fn_with_state, Next},
    response::{IntoResponse, Response},
    Router,
};
use serde::Serialize;
use tower::ServiceBuilder;
use utoipa::{OpenApi, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    admission::{admission, API_PREFIX},
    error::ApiError,
    idempotency::idempotency,
    state::AppState,
};
use endpoints::{cargo, downstream, journeys, passengers, personnel};

/// `{"ok": true}`: the answer of deletes and actions.
#[derive(Serialize, ToSchema)]
pub struct Ok {
    ok: bool,
}

impl Default for Ok {
    fn default() -> Self {
        Ok { ok: true }
    }
}

static DOCUMENT: OnceLock<String> = OnceLock::new();
/// The adapters the document describes: the first router's (one plugin directory per process).
static ADAPTERS: OnceLock<Vec<tns_adapter::Description>> = OnceLock::new();

/// This document.
#[utoipa::path(get, path = "/openapi.json", operation_id = "get_openapi", tag = "meta", responses((status = 200, description = "OpenAPI 3.1 document", body = Object)), security(()))]
async fn openapi_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.get().cloned().unwrap_or_default())
}

fn build() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(endpoints::routes())
        .routes(routes!(openapi_json))
        .split_for_parts()
}

/// The OpenAPI document as JSON. Built once, after the reference data is installed (its
/// enums list the reference data) and the adapter plugins are loaded (`PUT /portal/downstream`
/// takes what they describe).
pub fn openapi_document() -> &'static str {
    DOCUMENT.get_or_init(|| {
        use openapi::AcrossFields;
        let across = [
            (journeys::JourneyIn::name().to_string(), journeys::JourneyIn::json_rules()),
            (journeys::StopIn::name().to_string(), journeys::StopIn::json_rules()),
            (cargo::CargoIn::name().to_string(), cargo::CargoIn::json_rules()),
            (cargo::CargoItemIn::name().to_string(), cargo::CargoItemIn::json_rules()),
            (personnel::PersonIn::name().to_string(), personnel::PersonIn::json_rules()),
            (passengers::PassengerIn::name().to_string(), passengers::PassengerIn::json_rules()),
            (
                downstream::DownstreamIn::name().to_string(),
                downstream::schema_of(ADAPTERS.get().map(Vec::as_slice).unwrap_or_default()),
            ),
        ];
        serde_json::to_string(&openapi::finish(build().1, &across)).expect("the document serializes")
    })
}

pub fn router(state: AppState) -> Router {
    ADAPTERS.get_or_init(|| state.downstreams.registry().descriptions());
    openapi_document();
    let (router, _) = build();
    router
        .fallback(|| async { ApiError::NotFound("no such endpoint; see /api/v1/openapi.json".into()) })
        // One layer, outermost first (see `startup::with_platform_layers`).
        .layer(
            ServiceBuilder::new()
                .layer(from_fn_with_state(state.clone(), database_gate))
                .layer(from_fn_with_state(state.clone(), admission))
                .layer(from_fn_with_state(state.clone(), idempotency)),
        )
        .with_state(state)
}

/// While the database is known down, a request is answered 503 at once instead of waiting the
/// pool's acquire timeout for a connection that will not come (the OpenAPI document needs none).
async fn database_gate(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().and_then(|m| m.as_str().strip_prefix(API_PREFIX));
    if st.db_health.is_down() && route != Some("/openapi.json") {
        let mut res = ApiError::DatabaseUnavailable.into_response();
        // As every `/api/v1` answer (the admission layer says so for those it makes).
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return res;
    }
    next.run(req).await
}
