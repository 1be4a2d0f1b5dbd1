//! What the handlers of the journey, shipment and passenger endpoints all import: the state,
//! the extractors, the caller and its scopes, results and errors, and the routing macros.

pub(crate) use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
    v1::{
        openapi::{patch_schema, AcrossFields},
        Ok as OkBody,
    },
};
pub(crate) use axum::{extract::State, Json};
pub(crate) use tns_core::{
    ids::{CargoId, JourneyId, OrgId, PassengerId, PersonId, Target, VehicleId},
    scopes::need::{JourneysRead, JourneysWrite},
};
pub(crate) use utoipa_axum::{router::OpenApiRouter, routes};
