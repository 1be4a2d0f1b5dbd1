//! Who is using the portal, and what they may do: the session cookie the JSON API takes too,
//! looked up once per request by [`resolve`]; the scope a page needs, checked by the [`Member`]
//! extractor as the API's `Caller` checks it; and [`admit`], through which every action passes
//! the API's own admission for the route it mirrors (quota, suspension), so the portal allows
//! nothing the API would refuse. Page views are not metered.

use std::marker::PhantomData;
use tns_core::ids::OrgId;

use axum::{
    body::Body,
    extract::{FromRequest, FromRequestParts, Path, Request},
    http::{header, request::Parts, HeaderMap, Method},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq;
use tns_core::scopes::Needed;

use super::{i18n::Lang, page::PortalError};
use crate::{
    admission::{spared_when_suspended, QUOTA_EXEMPT},
    auth::{self, Principal},
    error::{ApiError, Code},
    limits::MAX_BODY_BYTES,
    quota::Exempt,
    state::AppState,
};

/// The signed-in member of a request, placed by [`resolve`].
#[derive(Debug, Clone)]
pub(super) struct SignedIn {
    pub principal: Principal,
    pub csrf: String,
    pub session_ends: Option<DateTime<Utc>>,
}

/// The request's session (if any), looked up before the page runs. An unsafe request must echo
/// its session's CSRF token, as on the API: in `X-CSRF-Token` (htmx sends it) or, from a plain
/// form, in its `_csrf` field. The request comes back whole (its body read only for that).
pub(super) async fn resolve(st: &AppState, req: Request) -> Result<(Request, Option<SignedIn>), PortalError> {
    let (principal, session) = match auth::signed_in(st, req.headers()).await {
        Ok(Some(found)) => found,
        Ok(None) | Err(ApiError::Unauthorized(_)) => return Ok((req, None)),
        Err(e) => return Err(e.into()),
    };
    tns_http::request_id::record_org(principal.org_id.get());
    let req = if anonymous_form(req.uri().path()) || principal.csrf_ok(req.method(), req.headers()) {
        req
    } else {
        let (parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| PortalError::Api(ApiError::PayloadTooLarge(crate::limits::MAX_BODY_BYTES)))?;
        let multipart =
            parts.headers.get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"multipart/"));
        let sent = if multipart {
            multipart_csrf(&bytes)
        } else {
            form_urlencoded::parse(&bytes).find(|(k, _)| k == "_csrf").map(|(_, v)| v.into_owned())
        };
        if !sent.is_some_and(|t| bool::from(t.as_bytes().ct_eq(session.csrf.as_bytes()))) {
            return Err(PortalError::Stale);
        }
        Request::from_parts(parts, Body::from(bytes))
    };
    let session_ends = session.expires_at.and_then(|t| DateTime::from_timestamp(t, 0));
    Ok((req, Some(SignedIn { principal, csrf: session.csrf, session_ends })))
}

/// The `_csrf` field of a `multipart/form-data` body (a form that uploads a file), which a
/// plain form sends first.
fn multipart_csrf(body: &[u8]) -> Option<String> {
    const NAME: &[u8] = b"name=\"_csrf\"";
    let at = body.windows(NAME.len()).position(|w| w == NAME)?;
    let rest = &body[at..];
    let start = rest.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let len = rest[start..].windows(2).position(|w| w == b"\r\n")?;
    String::from_utf8(rest[start..start + len].to_vec()).ok()
}

/// Forms posted by visitors without a session, each carrying a secret of its own (the sign-in and
/// registration forms' tokens, an invitation's or a reset's in the path), so no session's token
/// is asked.
fn anonymous_form(path: &str) -> bool {
    path == "/login"
        || path == "/register"
        || path == "/password/forgot"
        || path.starts_with("/invite/")
        || path.starts_with("/password/reset/")
}

/// A page that needs scope `S` (a type of [`tns_core::scopes::need`]): a visitor who is not signed
/// in is sent to sign in, a member without the scope gets a 403 page.
pub(super) struct Member<S: Needed> {
    pub signed_in: SignedIn,
    pub lang: Lang,
    _scope: PhantomData<S>,
}

impl<S: Needed> Member<S> {
    pub(super) fn principal(&self) -> &Principal {
        &self.signed_in.principal
    }

    pub(super) fn org(&self) -> OrgId {
        self.signed_in.principal.org_id
    }
}

impl<S: Needed> FromRequestParts<AppState> for Member<S> {
    type Rejection = PortalError;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, PortalError> {
        let signed_in = parts.extensions.get::<SignedIn>().cloned().ok_or(PortalError::SignIn)?;
        signed_in.principal.require(S::SCOPE)?;
        Ok(Member { signed_in, lang: Lang::of(&parts.headers), _scope: PhantomData })
    }
}

/// A member's action on one record: the state, the member with scope `S`, the request's
/// headers (an htmx request is answered differently) and the record's id `I` from the path.
pub(super) struct Acting<S: Needed, I> {
    pub st: AppState,
    pub m: Member<S>,
    pub headers: HeaderMap,
    pub id: I,
}

impl<S: Needed, I: DeserializeOwned + Send> FromRequestParts<AppState> for Acting<S, I> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> Result<Self, Response> {
        let m = Member::<S>::from_request_parts(parts, st).await.map_err(IntoResponse::into_response)?;
        let Path(id) = Path::<I>::from_request_parts(parts, st).await.map_err(IntoResponse::into_response)?;
        Ok(Acting { st: st.clone(), m, headers: parts.headers.clone(), id })
    }
}

/// A member's look at a page: the state, the member with scope `S`, and the page's query as
/// the pairs that say something (trimmed, empty ones left out), in order (a list's filters,
/// the `done` an action sends its page back with).
pub(super) struct Viewing<S: Needed> {
    pub st: AppState,
    pub m: Member<S>,
    pub query: Vec<(String, String)>,
}

impl<S: Needed> FromRequestParts<AppState> for Viewing<S> {
    type Rejection = PortalError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> Result<Self, PortalError> {
        let m = Member::<S>::from_request_parts(parts, st).await?;
        let query = form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
            .map(|(k, v)| (k.into_owned(), v.trim().to_string()))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        Ok(Viewing { st: st.clone(), m, query })
    }
}

/// Any signed-in member, whatever their role (their own password, say).
pub(super) struct Me {
    pub signed_in: SignedIn,
    pub lang: Lang,
}

impl Me {
    pub(super) fn principal(&self) -> &Principal {
        &self.signed_in.principal
    }

    pub(super) fn org(&self) -> OrgId {
        self.signed_in.principal.org_id
    }
}

impl FromRequestParts<AppState> for Me {
    type Rejection = PortalError;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, PortalError> {
        let signed_in = parts.extensions.get::<SignedIn>().cloned().ok_or(PortalError::SignIn)?;
        Ok(Me { signed_in, lang: Lang::of(&parts.headers) })
    }
}

/// Admit an action of `member` as the API admits the call it mirrors (`method` and `route`, an
/// `/api/v1` route template): counted against the month's quota, refused over a hard quota, and
/// refused for a suspended organization unless the API spares that call.
pub(super) async fn admit(st: &AppState, member: &Principal, method: Method, route: &str) -> Result<(), PortalError> {
    let exempt = Exempt { quota: QUOTA_EXEMPT.contains(&route), suspension: spared_when_suspended(&method, route) };
    let decision = st.quota.admit(member.org_id, &format!("{method} {route}"), exempt).await?;
    if decision.admitted {
        Ok(())
    } else {
        Err(PortalError::QuotaUsedUp)
    }
}

/// An anonymous form (sign-in, registration, a forgotten password): read, then admitted by
/// the per-address limit the API's unauthenticated routes have; with the request's language
/// and headers (its form-token cookie).
pub(super) struct Anonymous<T> {
    pub form: T,
    pub lang: Lang,
    pub headers: HeaderMap,
}

impl<T: DeserializeOwned + Send> FromRequest<AppState> for Anonymous<T> {
    type Rejection = PortalError;

    async fn from_request(req: Request, st: &AppState) -> Result<Self, PortalError> {
        let ip = st.throttle.client_ip(&req);
        let headers = req.headers().clone();
        let axum::Form(form) = <axum::Form<T> as FromRequest<AppState>>::from_request(req, st)
            .await
            .map_err(|e| PortalError::Api(ApiError::BadRequest(Code::BadRequest, e.body_text())))?;
        if !st.throttle.hit(&st.redis, ip).await.admitted {
            return Err(PortalError::Api(ApiError::TooManyRequests {
                code: Code::RateLimited,
                detail: "too many requests from this address; wait a minute".into(),
                retry_after_secs: 60,
            }));
        }
        Ok(Anonymous { form, lang: Lang::of(&headers), headers })
    }
}
