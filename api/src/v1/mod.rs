//! The versioned API (`/api/v1`): routes, their OpenAPI document, and the admission layer.

pub mod endpoints;
pub mod openapi;
pub mod registry;
pub mod resource;

use std::sync::OnceLock;

use axum::{http::header, middleware::from_fn_with_state, response::IntoResponse, Router};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{admission::admission, error::ApiError, idempotency::idempotency, state::AppState};
use endpoints::{
    account, allowed_addresses, api_keys, auth, billing, cargo, closure, downstream, exports, journeys, passengers,
    personnel, preflight, reference, reports, submissions, support, usage, vehicles, webhooks,
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

static DOCUMENT: OnceLock<String> = OnceLock::new();

/// This document.
#[utoipa::path(get, path = "/openapi.json", operation_id = "get_openapi", tag = "meta", responses((status = 200, description = "OpenAPI 3.1 document", body = Object)), security(()))]
async fn openapi_json() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.get().cloned().unwrap_or_default())
}

fn build() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(auth::register))
        .routes(routes!(auth::token))
        .routes(routes!(auth::login))
        .routes(routes!(auth::logout))
        .routes(routes!(account::me))
        .routes(routes!(api_keys::list, api_keys::create))
        .routes(routes!(api_keys::revoke))
        .routes(routes!(usage::usage))
        .routes(routes!(billing::plans))
        .routes(routes!(billing::subscription))
        .routes(routes!(billing::change))
        .routes(routes!(billing::invoices))
        .routes(routes!(billing::upcoming))
        .routes(routes!(billing::invoice))
        .routes(routes!(billing::invoice_pdf))
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
        .routes(routes!(submissions::cancel_journey))
        .routes(routes!(submissions::cancel_cargo))
        .routes(routes!(submissions::reactivate_journey))
        .routes(routes!(submissions::reactivate_cargo))
        .routes(routes!(submissions::report_no_show))
        .routes(routes!(reports::journey))
        .routes(routes!(reports::cargo))
        .routes(routes!(submissions::list))
        .routes(routes!(submissions::get))
        .routes(routes!(downstream::get, downstream::put))
        .routes(routes!(allowed_addresses::list, allowed_addresses::add))
        .routes(routes!(allowed_addresses::remove))
        .routes(routes!(preflight::get, preflight::put))
        .routes(routes!(webhooks::list, webhooks::create))
        .routes(routes!(webhooks::get, webhooks::update, webhooks::delete))
        .routes(routes!(webhooks::rotate_secret))
        .routes(routes!(webhooks::deliveries))
        .routes(routes!(webhooks::delivery))
        .routes(routes!(webhooks::test_event))
        .routes(routes!(reference::cities))
        .routes(routes!(reference::districts))
        .routes(routes!(reference::code_lists))
        .routes(routes!(reference::code_list))
        .routes(routes!(support::list, support::create))
        .routes(routes!(exports::list, exports::create))
        .routes(routes!(exports::get))
        .routes(routes!(exports::download))
        .routes(routes!(closure::get, closure::close, closure::reopen))
        .routes(routes!(openapi_json))
        .split_for_parts()
}

/// The OpenAPI document as JSON. Built once, after the reference data is installed (its
/// enums list the reference data).
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
            (downstream::DownstreamIn::name().to_string(), downstream::DownstreamIn::json_rules()),
        ];
        serde_json::to_string(&openapi::finish(build().1, &across)).expect("the document serializes")
    })
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
