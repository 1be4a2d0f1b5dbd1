pub mod account;
pub mod allowed_addresses;
pub mod api_keys;
pub mod auth;
pub mod billing;
pub mod cargo;
pub mod closure;
pub mod downstream;
pub mod exports;
pub mod journeys;
pub mod passengers;
pub mod personnel;
pub mod preflight;
mod prelude;
pub mod reference;
pub mod reports;
pub mod submissions;
pub mod support;
pub mod usage;
pub mod vehicles;
pub mod webhooks;

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

/// Every resource's routes (each module lists its own).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(auth::routes())
        .merge(account::routes())
        .merge(api_keys::routes())
        .merge(usage::routes())
        .merge(billing::routes())
        .merge(vehicles::routes())
        .merge(personnel::routes())
        .merge(journeys::routes())
        .merge(passengers::routes())
        .merge(cargo::routes())
        .merge(submissions::routes())
        .merge(reports::routes())
        .merge(downstream::routes())
        .merge(allowed_addresses::routes())
        .merge(preflight::routes())
        .merge(webhooks::routes())
        .merge(reference::routes())
        .merge(support::routes())
        .merge(exports::routes())
        .merge(closure::routes())
}
