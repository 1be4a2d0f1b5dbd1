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

use crate::{
    auth::{self, Principal},
    error::ApiError,
    limits::MAX_BODY_BYTES,
    state::AppState,
};

pub const HEADER: &str = "idempotency-key";
pub const KEY_MAX: usize = 255;
/// How long an answer is replayed.
pub const RETENTION_HOURS: i64 = 24;
/// A first request that has not finished after this long is presumed dead (its process
/// crashed) and the key may be used again.
const ABANDONED_AFTER_SECS: i64 = 120;
/// Largest answer kept for replay (list pages and bulk results fit well within it).
const MAX_STORED_BYTES: usize = 4 * 1024 * 1024;

/// Where a key's record lives: its organization, the credential that used it, the key.
struct Slot {
    org: i64,
    credential: String,
    key: String,
}

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
    let bytes = to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| ApiError::PayloadTooLarge)?;
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
    let claimed: Option<bool> = sqlx::query_scalar(
        "INSERT INTO idempotency_keys (org_id, credential, key, request_hash) VALUES ($1, $6, $2, $3)
         ON CONFLICT (org_id, credential, key) DO UPDATE
            SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL, created_at = now()
          WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
             OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - make_interval(secs => $5))
         RETURNING true",
    )
    .bind(slot.org)
    .bind(&slot.key)
    .bind(&hash[..])
    .bind(RETENTION_HOURS as i32)
    .bind(ABANDONED_AFTER_SECS as f64)
    .bind(&slot.credential)
    .fetch_optional(&st.db)
    .await?;

    if claimed.is_none() {
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
    type Row = (Vec<u8>, Option<i16>, Option<String>, Option<Vec<u8>>);
    let row: Option<Row> = sqlx::query_as(
        "SELECT request_hash, status, content_type, body FROM idempotency_keys
          WHERE org_id = $1 AND credential = $2 AND key = $3",
    )
    .bind(slot.org)
    .bind(&slot.credential)
    .bind(&slot.key)
    .fetch_optional(&st.db)
    .await?;
    // The row vanished between the two statements only if its first request failed with a
    // 5xx; asking the client to retry is right.
    let (stored_hash, status, content_type, body) =
        row.ok_or_else(|| ApiError::Conflict("the first request with this Idempotency-Key failed; retry".into()))?;
    if stored_hash != hash {
        return Err(ApiError::validation(
            "Idempotency-Key",
            "was already used with a different request (method, path or body); use a new key",
        ));
    }
    let Some(status) = status else {
        return Err(ApiError::Conflict("a request with this Idempotency-Key is still being processed".into()));
    };
    let Some(body) = body else {
        return Err(ApiError::Conflict(
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
    sqlx::query(
        "UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6
          WHERE org_id = $1 AND credential = $2 AND key = $3",
    )
    .bind(slot.org)
    .bind(&slot.credential)
    .bind(&slot.key)
    .bind(status.as_u16() as i16)
    .bind(content_type)
    .bind(body)
    .execute(&st.db)
    .await
    .map(|_| ())
}

async fn forget(st: &AppState, slot: &Slot) {
    let r = sqlx::query(
        "DELETE FROM idempotency_keys WHERE org_id = $1 AND credential = $2 AND key = $3 AND status IS NULL",
    )
    .bind(slot.org)
    .bind(&slot.credential)
    .bind(&slot.key)
    .execute(&st.db)
    .await;
    if let Err(e) = r {
        tracing::warn!(error = tns_store::redacted(&e), "could not release an Idempotency-Key");
    }
}

/// Drop answers older than the retention period (run periodically by every API process).
pub async fn purge(db: &sqlx::PgPool) {
    let r = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)")
        .bind(RETENTION_HOURS as i32)
        .execute(db)
        .await;
    if let Err(e) = r {
        tracing::warn!(error = tns_store::redacted(&e), "could not purge old Idempotency-Key records");
    }
}
