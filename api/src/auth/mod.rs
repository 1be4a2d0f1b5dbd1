//! Authentication and authorization: who is calling (API key, access token or portal
//! session) and what they may do. One place decides; handlers ask through [`Auth`].

pub mod jwt;
pub mod password;
pub mod session;

use std::time::Duration;
use tns_core::ids::{KeyId, OrgId, UserId};

use axum::{
    extract::FromRequestParts,
    http::{header, request::Parts, HeaderMap, Method},
};
use sqlx::PgPool;
use subtle::ConstantTimeEq;

use crate::{
    cache::TtlMap,
    error::{ApiError, Code},
    state::AppState,
};
use tns_core::{
    keys,
    scopes::{self, Scope, Scopes},
};

pub use tns_store::api_keys::KeyRecord;

/// Key lookups with a short per-process cache. The TTL (at most 4 s, see config) bounds how
/// long a key revoked on another process keeps working here.
pub struct KeyStore {
    /// Counts the lookups that reach the database.
    lookups: prometheus::IntCounter,
    by_hash: TtlMap<[u8; 32], Option<KeyRecord>>,
    by_id: TtlMap<KeyId, Option<KeyRecord>>,
    /// A session's member: their role, and whether their sessions were ended; `None` once they
    /// are removed (or never belonged).
    members: TtlMap<UserId, Option<tns_store::members::Standing>>,
}

impl KeyStore {
    pub fn new(ttl: Duration, lookups: prometheus::IntCounter) -> KeyStore {
        KeyStore {
            lookups,
            by_hash: TtlMap::new(ttl, 100_000),
            by_id: TtlMap::new(ttl, 100_000),
            members: TtlMap::new(ttl, 100_000),
        }
    }

    /// Member `user` and the organization they belong to, as a session needs them: a session
    /// outlives nothing it was made for.
    async fn member(&self, db: &PgPool, user: UserId) -> sqlx::Result<Option<tns_store::members::Standing>> {
        if let Some(hit) = self.members.get(&user) {
            return Ok(hit);
        }
        let found = tns_store::members::standing(db, user).await?;
        self.members.insert(user, found);
        Ok(found)
    }

    /// `user` as a member of `org`; `None` once removed, or if they belong to another.
    pub async fn member_of(
        &self,
        db: &PgPool,
        org: OrgId,
        user: UserId,
    ) -> sqlx::Result<Option<tns_store::members::Standing>> {
        Ok(self.member(db, user).await?.filter(|m| m.org_id == org))
    }

    /// Forget what this process knows of member `user` (their role or sessions changed here).
    pub fn forget_member(&self, user: UserId) {
        self.members.remove_where(|k, _| *k == user);
    }

    pub async fn by_hash(&self, db: &PgPool, hash: [u8; 32]) -> sqlx::Result<Option<KeyRecord>> {
        if let Some(hit) = self.by_hash.get(&hash) {
            return Ok(hit);
        }
        self.lookups.inc();
        let rec = tns_store::api_keys::by_hash(db, &hash).await?;
        self.by_hash.insert(hash, rec.clone());
        Ok(rec)
    }

    pub async fn by_id(&self, db: &PgPool, id: KeyId) -> sqlx::Result<Option<KeyRecord>> {
        if let Some(hit) = self.by_id.get(&id) {
            return Ok(hit);
        }
        let rec = tns_store::api_keys::by_id(db, id).await?;
        self.by_id.insert(id, rec.clone());
        Ok(rec)
    }

    /// Whether this process knows the key behind `hash` (or that there is none) without asking
    /// the database.
    pub fn knows(&self, hash: &[u8; 32]) -> bool {
        self.by_hash.get(hash).is_some()
    }

    /// Drop a revoked key from this process's cache at once.
    pub fn forget(&self, id: KeyId) {
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
    pub org_id: OrgId,
    pub user_id: UserId,
    /// The key behind an API key or token; `None` for a portal session.
    pub key_id: Option<KeyId>,
    pub scopes: Scopes,
    pub credential: Credential,
}

impl Principal {
    /// A cookie session's unsafe request must echo the session's CSRF token; other credentials
    /// need none.
    pub fn csrf_ok(&self, method: &Method, headers: &HeaderMap) -> bool {
        match &self.credential {
            Credential::Session { csrf } => {
                let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
                let sent = headers.get(session::CSRF_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
                safe || bool::from(sent.ct_eq(csrf.as_bytes()))
            }
            Credential::ApiKey | Credential::Token => true,
        }
    }

    /// Who this is, as the audit log records an organization's member or API key.
    pub fn actor(&self) -> tns_store::audit::Actor {
        tns_store::audit::Actor::Tenant { user: self.user_id, key: self.key_id }
    }

    /// Which credential this is, for binding what it did to it (an API key and its tokens are
    /// one credential; a session acts as its user).
    pub fn credential_id(&self) -> String {
        match self.key_id {
            Some(k) => format!("key:{k}"),
            None => format!("user:{}", self.user_id),
        }
    }

    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.scopes.allows(scope) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(
                Code::MissingScope,
                format!("this credential lacks the `{}` scope", scope.as_str()),
            ))
        }
    }
}

/// Why credentials that were sent were refused; surfaced by [`Auth`] as the 401 detail.
#[derive(Debug, Clone)]
pub struct AuthFailure(pub String);

/// True when authenticating these headers would ask the database about an API key this
/// process has not seen lately: the work an invented key costs, which the admission layer
/// throttles before it is done.
pub fn costs_a_lookup(st: &AppState, headers: &HeaderMap) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .map(|(_, v)| v.trim());
    bearer.is_some_and(|b| b.starts_with(keys::KEY_PREFIX) && !st.keys.knows(&keys::hash(b)))
}

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
    Ok(signed_in(st, headers).await?.map(|(p, _)| p))
}

/// The portal session the request's cookie names, if any, with who it acts for. A session
/// whose user is gone is refused (401).
pub async fn signed_in(st: &AppState, headers: &HeaderMap) -> Result<Option<(Principal, session::Session)>, ApiError> {
    let Some(token) = session::cookie(headers, session::SESSION_COOKIE) else {
        return Ok(None);
    };
    match session::lookup(&st.redis, token).await {
        Ok(Some(s)) => {
            let member = st.keys.member(&st.db, s.user_id).await?;
            let Some(member) = member.filter(|m| m.org_id.get() == s.org_id && !s.ended_by(m.sessions_valid_after))
            else {
                return Err(ApiError::Unauthorized(
                    "this session has ended (its member was removed or changed their password); sign in again".into(),
                ));
            };
            let p = Principal {
                org_id: member.org_id,
                user_id: s.user_id,
                key_id: None,
                // A member may do what their role allows.
                scopes: Scopes::of_role(member.role),
                credential: Credential::Session { csrf: s.csrf.clone() },
            };
            Ok(Some((p, s)))
        }
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
    let key = st.keys.by_id(&st.db, KeyId(claims.kid)).await?;
    match key {
        Some(k) if !k.revoked && k.org_id.get() == claims.org => Ok(Principal {
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

pub fn csrf_refused() -> ApiError {
    ApiError::Forbidden(Code::InvalidCsrfToken, "missing or wrong X-CSRF-Token for a cookie session".into())
}

/// The caller of a request, as the admission layer authenticated it: 401 without credentials,
/// 403 for a cookie-authenticated unsafe request without the session's CSRF token.
fn caller(parts: &Parts) -> Result<Principal, ApiError> {
    let Some(p) = parts.extensions.get::<Principal>().cloned() else {
        let detail =
            parts.extensions.get::<AuthFailure>().map(|f| f.0.clone()).unwrap_or_else(|| {
                "missing credentials: send `Authorization: Bearer <api key or access token>`".into()
            });
        return Err(ApiError::Unauthorized(detail));
    };
    if !p.csrf_ok(&parts.method, &parts.headers) {
        return Err(csrf_refused());
    }
    Ok(p)
}

/// Extractor for handlers that need a caller, whatever its scopes.
pub struct Auth(pub Principal);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _st: &AppState) -> Result<Self, ApiError> {
        caller(parts).map(Auth)
    }
}

/// Extractor for handlers that need a caller holding scope `S` (a type of [`scopes::need`]):
/// the route's permission is part of its signature, and it is checked before the body is read,
/// so a credential without the scope gets 403 whatever it sent.
pub struct Caller<S: scopes::Needed>(Principal, std::marker::PhantomData<S>);

impl<S: scopes::Needed> std::ops::Deref for Caller<S> {
    type Target = Principal;
    fn deref(&self) -> &Principal {
        &self.0
    }
}

impl<S: scopes::Needed> FromRequestParts<AppState> for Caller<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _st: &AppState) -> Result<Self, ApiError> {
        let p = caller(parts)?;
        p.require(S::SCOPE)?;
        Ok(Caller(p, std::marker::PhantomData))
    }
}
