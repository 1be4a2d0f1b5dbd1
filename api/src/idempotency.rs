//! `Idempotency-Key` on POST (the IETF httpapi draft's semantics): the same key with the same
//! request within 24 hours replays the first answer; the same key with another request is
//! refused with 422; a repeat while the first is still running gets 409.
//!
//! Keys belong to the credential that used them (an API key with its tokens, or a portal
//! user): another credential's same key is a key of its own, judged by the handler's checks, so
//! the layer runs after authentication, and a replay passes the CSRF check the handler would
//! have made. The unauthenticated POSTs
//! (`/auth/*`) refuse the header: their answers carry secrets. Answers of 5xx are not kept (the
//! client should retry).
//! An answer that carries a secret (a new API key) is marked [`NoReplay`]: only the fact that
//! the key was used is kept, and a repeat is refused rather than shown the secret again.

use axum::{
    body::{to_bytes, Body},
    extract::{Request, State},
    http::{header, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

use tns_store::idempotency::{self as db, Kept, Slot};

use crate::{
    auth::{self, Principal},
    error::{ApiError, Code},
    limits::MAX_BODY_BYTES,
    state::AppState,
};

pub const HEADER: &str = "idempotency-key";
pub const KEY_MAX: usize = 255;
/// Largest answer kept for replay (list pages and bulk results fit well within it).
const MAX_STORED_BYTES: usize = 4 * 1024 * 1024;

/// Response extension: this answer must not be stored or replayed.
#[derive(Clone, Copy)]
pub struct NoReplay;

pub async fn idempotency(State(st): State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST || !req.headers().contains_key(HEADER) {
        return next.run(req).await;
    }
    let Some(principal) = req.extensions().get::<Principal>().cloned() else {
        // The anonymous routes (`/auth/*`) answer secrets (keys, tokens, sessions): nothing of
        // theirs is ever kept for replay, so the header is refused rather than ignored.
        return ApiError::validation(
            "Idempotency-Key",
            "is not taken by /auth/* (their answers carry secrets, which are never kept for replay)",
        )
        .into_response();
    };
    // A replay answers without the handler, so the handler's checks run here first: the
    // cookie session's CSRF token, and (by binding the key to the credential) the scope.
    if !principal.csrf_ok(req.method(), req.headers()) {
        return auth::csrf_refused().into_response();
    }
    match run(&st, &principal, req, next).await {
        Ok(res) => res,
        Err(e) => e.into_response(),
    }
}

async fn run(st: &AppState, principal: &Principal, req: Request, next: Next) -> Result<Response, ApiError> {
    let org = principal.org_id;
    let key = req
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty() && k.len() <= KEY_MAX && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            ApiError::validation("Idempotency-Key", format!("must be 1–{KEY_MAX} visible ASCII characters"))
        })?
        .to_string();
    let (parts, body) = req.into_parts();
    let bytes = to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| ApiError::PayloadTooLarge(MAX_BODY_BYTES))?;
    let hash = Sha256::new()
        .chain_update(parts.method.as_str())
        .chain_update(b" ")
        .chain_update(parts.uri.path())
        .chain_update(b"\n")
        .chain_update(&bytes)
        .finalize();
    // Keys are the credential's own: another credential of the organization (with other
    // scopes) using the same key makes a request of its own, judged by the handler's checks,
    // never answered from this one's.
    let slot = Slot { org, credential: principal.credential_id(), key };

    // Claim the key, or take over one that expired or whose first request died.
    if !db::claim(&st.db, &slot, &hash).await? {
        return replay(st, &slot, &hash).await;
    }

    let res = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    let status = res.status();
    if status.is_server_error() {
        forget(st, &slot).await;
        return Ok(res);
    }
    if res.extensions().get::<NoReplay>().is_some() {
        store(st, &slot, status, None, None).await?;
        return Ok(res);
    }
    let (parts, body) = res.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_STORED_BYTES).await else {
        forget(st, &slot).await;
        return Err(anyhow::anyhow!("response too large to keep for Idempotency-Key").into());
    };
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    store(st, &slot, status, content_type, Some(&bytes)).await?;
    Ok(Response::from_parts(parts, Body::from(bytes)))
}

async fn replay(st: &AppState, slot: &Slot, hash: &[u8]) -> Result<Response, ApiError> {
    let kept = db::kept(&st.db, slot).await?;
    // The row vanished between the two statements only if its first request failed with a
    // 5xx; asking the client to retry is right.
    let Kept { request_hash: stored_hash, status, content_type, body } = kept.ok_or_else(|| {
        ApiError::Conflict(
            Code::IdempotencyConflict,
            "the first request with this Idempotency-Key failed; retry".into(),
        )
    })?;
    if stored_hash != hash {
        return Err(ApiError::validation(
            "Idempotency-Key",
            "was already used with a different request (method, path or body); use a new key",
        ));
    }
    let Some(status) = status else {
        return Err(ApiError::Conflict(
            Code::IdempotencyConflict,
            "a request with this Idempotency-Key is still being processed".into(),
        ));
    };
    let Some(body) = body else {
        return Err(ApiError::Conflict(
            Code::IdempotencyConflict,
            "the first request with this Idempotency-Key created a secret that is shown only once; use a new key"
                .into(),
        ));
    };
    let mut res = Response::new(Body::from(body));
    *res.status_mut() = StatusCode::from_u16(status as u16).unwrap_or(StatusCode::OK);
    if let Some(ct) = content_type.and_then(|c| HeaderValue::from_str(&c).ok()) {
        res.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    res.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    Ok(res)
}

async fn store(
    st: &AppState,
    slot: &Slot,
    status: StatusCode,
    content_type: Option<&str>,
    body: Option<&[u8]>,
) -> sqlx::Result<()> {
    db::keep(&st.db, slot, status.as_u16(), content_type, body).await
}

async fn forget(st: &AppState, slot: &Slot) {
    if let Err(e) = db::release(&st.db, slot).await {
        tracing::warn!(error = tns_store::redacted(&e), "could not release an Idempotency-Key");
    }
}
