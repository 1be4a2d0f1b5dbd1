//! The versioned API (`/api/v1`): routes, their OpenAPI document, and the admission layer.

pub mod endpoints;
pub mod registry;
pub mod resource;

use std::sync::OnceLock;

use axum::{http::header, middleware::from_fn_with_state, response::IntoResponse, Router};
use serde::Serialize;
use utoipa::{
    openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi, ToSchema,
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{admission::admission, error::ApiError, idempotency::idempotency, state::AppState};
use endpoints::{
    account, api_keys, auth, billing, cargo, downstream, journeys, passengers, personnel, reference, submissions,
    support, usage, vehicles, webhooks,
};

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

#[derive(OpenApi)]
#[openapi(
    info(title = "TNS — Transport Notification Service", version = "1.0.0",
         description = "Multi-tenant API for U-ETDS notifications. Every authenticated response carries \
X-RateLimit-Limit, X-RateLimit-Remaining (-1 = unlimited) and X-RateLimit-Reset (Unix time of the next UTC month); \
unauthenticated calls carry the same headers for the per-client-IP limit."),
    servers((url = "/api/v1")),
    modifiers(&Security),
    components(schemas(crate::error::ErrorBody)),
    tags((name = "auth"), (name = "account"), (name = "billing"), (name = "journeys"), (name = "vehicles"),
         (name = "personnel"), (name = "cargo"), (name = "submissions"), (name = "reference"), (name = "support"), (name = "webhooks"), (name = "meta"))
)]
struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key (`sk_live_…`) or an access token from /auth/token"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "tns_session",
                "Portal session from /auth/login; unsafe methods also need X-CSRF-Token",
            ))),
        );
    }
}

static DOCUMENT: OnceLock<String> = OnceLock::new();

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", responses((status = 200, description = "OpenAPI 3.1 document")), security(()))]
async fn openapi_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.get().cloned().unwrap_or_default())
}

fn build() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(auth::register))
        .routes(routes!(auth::token))
        .routes(routes!(auth::login))
        .routes(routes!(account::me))
        .routes(routes!(api_keys::list, api_keys::create))
        .routes(routes!(api_keys::revoke))
        .routes(routes!(usage::usage))
        .routes(routes!(billing::plans))
        .routes(routes!(billing::subscription))
        .routes(routes!(billing::change))
        .routes(routes!(vehicles::list, vehicles::create))
        .routes(routes!(vehicles::get, vehicles::update, vehicles::delete))
        .routes(routes!(personnel::list, personnel::create))
        .routes(routes!(personnel::get, personnel::update, personnel::delete))
        .routes(routes!(journeys::list, journeys::create))
        .routes(routes!(journeys::get, journeys::update, journeys::delete))
        .routes(routes!(passengers::list, passengers::create))
        .routes(routes!(passengers::update, passengers::delete))
        .routes(routes!(passengers::bulk_upsert))
        .routes(routes!(cargo::list, cargo::create))
        .routes(routes!(cargo::get, cargo::update, cargo::delete))
        .routes(routes!(submissions::submit_journey))
        .routes(routes!(submissions::submit_cargo))
        .routes(routes!(submissions::list))
        .routes(routes!(submissions::get))
        .routes(routes!(downstream::get, downstream::put))
        .routes(routes!(webhooks::list, webhooks::create))
        .routes(routes!(webhooks::get, webhooks::update, webhooks::delete))
        .routes(routes!(webhooks::deliveries))
        .routes(routes!(webhooks::delivery))
        .routes(routes!(webhooks::test_event))
        .routes(routes!(reference::cities))
        .routes(routes!(reference::districts))
        .routes(routes!(support::list, support::create))
        .routes(routes!(openapi_json))
        .split_for_parts()
}

/// The OpenAPI document as JSON.
pub fn openapi_document() -> &'static str {
    DOCUMENT.get_or_init(|| build().1.to_pretty_json().expect("OpenAPI document serializes"))
}

pub fn router(state: AppState) -> Router {
    openapi_document();
    let (router, _) = build();
    router
        .fallback(|| async { ApiError::NotFound("no such endpoint; see /api/v1/openapi.json".into()) })
        .layer(from_fn_with_state(state.clone(), idempotency))
        .layer(from_fn_with_state(state.clone(), admission))
        .with_state(state)
}
