//! `/portal/exports`: the owner's copy of everything TNS holds about the organization (KVKK),
//! built by the jobs role as a ZIP of JSON and CSV files and kept 7 days.

use axum::{
    extract::State,
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use tns_core::ids::{ExportId, OrgId};

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::ApiPath,
    state::AppState,
    v1::{answers::ExportOut, endpoints::reports::Binary},
};
use tns_core::{
    domain::kinds::{ExportState, Role},
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::{
    self as db,
    exports::{Export, Requested},
};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Only the owner's own credentials (a session, or an API key the owner made): the archive
/// holds every person's data in the clear.
pub async fn owner(st: &AppState, p: &Principal) -> ApiResult<()> {
    match st.keys.member_of(&st.db, p.org_id, p.user_id).await? {
        Some(s) if s.role == Role::Owner => Ok(()),
        _ => Err(ApiError::Forbidden(Code::OwnerOnly, "only the organization's owner may export its data".into())),
    }
}

/// Ask for an export of everything held about the organization: `202` with the export, which
/// is `pending` until the archive is built (poll `GET /portal/exports/{id}`). One at a time
/// (409 while one is being built), three a day (429). The owner only; scope `account:write`.
#[utoipa::path(post, path = "/portal/exports", operation_id = "create_export", tag = "account",
    responses((status = 202, body = ExportOut), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 429, body = ErrorBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn create(State(st): State<AppState>, p: Caller<AccountWrite>) -> ApiResult<(StatusCode, Json<ExportOut>)> {
    Ok((StatusCode::ACCEPTED, Json(request(&st, &p).await?.into())))
}

/// Ask for an export for `p` (what `POST /portal/exports` does; the portal's button too).
pub async fn request(st: &AppState, p: &Principal) -> ApiResult<Export> {
    owner(st, p).await?;
    match db::exports::request(&st.db, p.org_id, p.user_id, &p.actor()).await? {
        Requested::Queued(export) => Ok(export),
        Requested::Busy(id) => {
            Err(ApiError::Conflict(Code::ExportNotReady, format!("export {id} is being built; wait for it")))
        }
        Requested::TooMany => Err(ApiError::TooManyRequests {
            code: Code::RateLimited,
            detail: format!(
                "at most {} exports a day; the archives already made are kept 7 days",
                db::exports::PER_DAY
            ),
            retry_after_secs: 3600,
        }),
    }
}

/// The organization's exports, newest first. The owner only; scope `account:read`.
#[utoipa::path(get, path = "/portal/exports", operation_id = "list_exports", tag = "account",
    responses((status = 200, body = Vec<ExportOut>), (status = 403, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn list(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<Vec<ExportOut>>> {
    owner(&st, &p).await?;
    Ok(Json(db::exports::list(&st.db, p.org_id).await?.into_iter().map(ExportOut::from).collect()))
}

/// One export. The owner only; scope `account:read`.
#[utoipa::path(get, path = "/portal/exports/{id}", operation_id = "get_export", tag = "account", params(("id" = i64, Path)),
    responses((status = 200, body = ExportOut), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiPath(id): ApiPath<ExportId>,
) -> ApiResult<Json<ExportOut>> {
    owner(&st, &p).await?;
    Ok(Json(find(&st, p.org_id, id).await?.into()))
}

async fn find(st: &AppState, org: OrgId, id: ExportId) -> ApiResult<Export> {
    db::exports::get(&st.db, org, id).await?.ok_or_else(|| ApiError::not_found("export", id))
}

/// The archive (`application/zip`) of a `ready` export; each download is in the audit log.
/// 409 while it is `pending` or once `failed`, 404 once `expired`, 429 while the server is
/// busy serving other archives. The owner only; scope `account:read`.
#[utoipa::path(get, path = "/portal/exports/{id}/download", operation_id = "download_export", tag = "account", params(("id" = i64, Path)),
    responses((status = 200, content_type = "application/zip", body = Binary), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn download(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiPath(id): ApiPath<ExportId>,
) -> ApiResult<Response> {
    archive(&st, &p, id).await
}

/// Archives one API process holds in memory to serve at once (each up to 64 MiB).
static DOWNLOADS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// Export `id`'s archive as a download for `p` (the API's route and the portal's link).
pub async fn archive(st: &AppState, p: &Principal, id: ExportId) -> ApiResult<Response> {
    owner(st, p).await?;
    let Ok(_serving) = DOWNLOADS.try_acquire() else {
        return Err(ApiError::TooManyRequests {
            code: Code::RateLimited,
            detail: "too many exports are being downloaded from this server; retry shortly".into(),
            retry_after_secs: 5,
        });
    };
    let export = find(st, p.org_id, id).await?;
    match export.state {
        ExportState::Pending => {
            return Err(ApiError::Conflict(Code::ExportNotReady, format!("export {id} is still being built")))
        }
        ExportState::Failed => {
            return Err(ApiError::Conflict(Code::ExportFailed, format!("export {id} failed; ask for a new one")))
        }
        ExportState::Expired => return Err(ApiError::NotFound(format!("export {id} expired; ask for a new one"))),
        ExportState::Ready => {}
    }
    let archive = db::exports::download(&st.db, p.org_id, id, &p.actor())
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("export {id} expired; ask for a new one")))?;
    let name = format!("attachment; filename=\"tns-export-{}-{id}.zip\"", p.org_id);
    let disposition = HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("attachment"));
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/zip")),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        archive,
    )
        .into_response())
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get)).routes(routes!(download))
}
