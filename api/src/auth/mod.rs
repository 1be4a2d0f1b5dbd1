//! Authentication and authorization: who is calling (API key, access token or portal
//! session) and what they may do. One place decides; handlers ask through [`Auth`].

pub mod jwt;
pub mod keys;
pub mod password;
pub mod scopes;
pub mod session;

use std::time::Duration;

use axum::{
    extract::FromRequestParts,
    http::{header, request::Parts, HeaderMap, Method},
};
use sqlx::PgPool;
use subtle::ConstantTimeEq;

use crate::{cache::TtlMap, error::ApiError, state::AppState};
use scopes::{Scope, Scopes};

/// An API key as authentication needs it.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub id: i64,
    pub org_id: i64,
    pub user_id: i64,
    pub scopes: Scopes,
    pub revoked: bool,
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    id: i64,
    org_id: i64,
    created_by: i64,
    scopes: Vec<String>,
    revoked: bool,
}

impl From<KeyRow> for KeyRecord {
    fn from(r: KeyRow) -> Self {
        KeyRecord {
            id: r.id,
            org_id: r.org_id,
            user_id: r.created_by,
            scopes: Scopes::from_stored(&r.scopes),
            revoked: r.revoked,
        }
    }
}

const KEY_COLUMNS: &str = "SELECT id, org_id, created_by, scopes, revoked_at IS NOT NULL AS revoked FROM api_keys";

/// Key lookups with a short per-process cache. The TTL (at most 4 s, see config) bounds how
/// long a key revoked on another process keeps working here.
pub struct KeyStore {
    by_hash: TtlMap<[u8; 32], Option<KeyRecord>>,
    by_id: TtlMap<i64, Option<KeyRecord>>,
}

impl KeyStore {
    pub fn new(ttl: Duration) -> KeyStore {
        KeyStore { by_hash: TtlMap::new(ttl, 100_000), by_id: TtlMap::new(ttl, 100_000) }
    }

    pub async fn by_hash(&self, db: &PgPool, hash: [u8; 32]) -> sqlx::Result<Option<KeyRecord>> {
        if let Some(hit) = self.by_hash.get(&hash) {
            return Ok(hit);
        }
        let row: Option<KeyRow> =
            sqlx::query_as(&format!("{KEY_COLUMNS} WHERE key_hash = $1")).bind(&hash[..]).fetch_optional(db).await?;
        let rec = row.map(KeyRecord::from);
        self.by_hash.insert(hash, rec.clone());
        Ok(rec)
    }

    pub async fn by_id(&self, db: &PgPool, id: i64) -> sqlx::Result<Option<KeyRecord>> {
        if let Some(hit) = self.by_id.get(&id) {
            return Ok(hit);
        }
        let row: Option<KeyRow> =
            sqlx::query_as(&format!("{KEY_COLUMNS} WHERE id = $1")).bind(id).fetch_optional(db).await?;
        let rec = row.map(KeyRecord::from);
        self.by_id.insert(id, rec.clone());
        Ok(rec)
    }

    /// Drop a revoked key from this process's cache at once.
    pub fn forget(&self, id: i64) {
        self.by_id.remove_where(|k, _| *k == id);
        self.by_hash.remove_where(|_, v| v.as_ref().is_some_and(|r| r.id == id));
    }
}

#[derive(Debug, Clone)]
pub enum Credential {
    ApiKey,
    Token,
    Session { csrf: String },
}

/// The authenticated caller, placed in request extensions by the admission middleware.
#[derive(Debug, Clone)]
pub struct Principal {
    pub org_id: i64,
    pub user_id: i64,
    /// The key behind an API key or token; `None` for a portal session.
    pub key_id: Option<i64>,
    pub scopes: Scopes,
    pub credential: Credential,
}

impl Principal {
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.scopes.allows(scope) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!("this credential lacks the `{}` scope", scope.as_str())))
        }
    }
}

/// Why credentials that were sent were refused; surfaced by [`Auth`] as the 401 detail.
#[derive(Debug, Clone)]
pub struct AuthFailure(pub String);

/// Resolve the caller. `Ok(None)`: no credentials (or an expired session cookie);
/// `Err`: credentials that were sent but are not valid.
pub async fn authenticate(st: &AppState, headers: &HeaderMap) -> Result<Option<Principal>, ApiError> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let bearer = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ApiError::Unauthorized("Authorization must be `Bearer <api key or access token>`".into()))?;
        return bearer_principal(st, bearer).await.map(Some);
    }
    let Some(token) = session::cookie(headers, session::SESSION_COOKIE) else {
        return Ok(None);
    };
    match session::lookup(&st.redis, token).await {
        Ok(Some(s)) => Ok(Some(Principal {
            org_id: s.org_id,
            user_id: s.user_id,
            key_id: None,
            // Portal users act as the owner (DESIGN.md).
            scopes: Scopes::all(),
            credential: Credential::Session { csrf: s.csrf },
        })),
        Ok(None) => Ok(None),
        Err(e) => {
            tracing::warn!(error = %e, "session lookup failed");
            Err(ApiError::Unavailable("the session store is unavailable; use an API key or retry".into()))
        }
    }
}

async fn bearer_principal(st: &AppState, bearer: &str) -> Result<Principal, ApiError> {
    if bearer.starts_with(keys::KEY_PREFIX) {
        let key = st
            .keys
            .by_hash(&st.db, keys::hash(bearer))
            .await?
            .ok_or_else(|| ApiError::Unauthorized("invalid API key".into()))?;
        if key.revoked {
            return Err(ApiError::Unauthorized("this API key has been revoked".into()));
        }
        return Ok(Principal {
            org_id: key.org_id,
            user_id: key.user_id,
            key_id: Some(key.id),
            scopes: key.scopes,
            credential: Credential::ApiKey,
        });
    }
    let claims =
        st.jwt.verify(bearer).ok_or_else(|| ApiError::Unauthorized("invalid or expired access token".into()))?;
    let key = st.keys.by_id(&st.db, claims.kid).await?;
    match key {
        Some(k) if !k.revoked && k.org_id == claims.org => Ok(Principal {
            org_id: k.org_id,
            user_id: k.user_id,
            key_id: Some(k.id),
            scopes: Scopes::from_stored(&claims.scope.split(' ').map(String::from).collect::<Vec<_>>())
                .intersect(k.scopes),
            credential: Credential::Token,
        }),
        _ => Err(ApiError::Unauthorized("the API key behind this access token has been revoked".into())),
    }
}

/// Extractor for handlers that need a caller. Cookie-authenticated unsafe requests must
/// carry the session's CSRF token.
pub struct Auth(pub Principal);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _st: &AppState) -> Result<Self, ApiError> {
        let Some(p) = parts.extensions.get::<Principal>().cloned() else {
            let detail = parts.extensions.get::<AuthFailure>().map(|f| f.0.clone()).unwrap_or_else(|| {
                "missing credentials: send `Authorization: Bearer <api key or access token>`".into()
            });
            return Err(ApiError::Unauthorized(detail));
        };
        if let Credential::Session { csrf } = &p.credential {
            let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
            let sent = parts.headers.get(session::CSRF_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
            if !safe && !bool::from(sent.ct_eq(csrf.as_bytes())) {
                return Err(ApiError::Forbidden("missing or wrong X-CSRF-Token for a cookie session".into()));
            }
        }
        Ok(Auth(p))
    }
}
