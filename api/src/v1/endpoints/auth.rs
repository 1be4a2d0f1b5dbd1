//! `/auth/*`: sign-up, key-for-token exchange, portal login and logout. No Authorization
//! header needed (and none is looked at): these are throttled per client by the admission
//! layer, and sign-in per account too.

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::IntoResponse,
    Json,
};
use serde::{Deserialize, Serialize};
use tns_core::ids::{OrgId, UserId};
use utoipa::ToSchema;

use crate::{
    auth::{jwt::TOKEN_TTL_SECS, password, session},
    error::{is_unique_violation, ApiError, ApiResult, Code, ErrorBody},
    extract::ApiJson,
    state::AppState,
    throttle::Account,
    v1::answers::UserOut,
};
use tns_core::keys;
use tns_core::{
    domain::{
        fields::{Opaque1024, Opaque254, Opaque256, Text200},
        Email, Password, TaxNumber,
    },
    scopes::Scopes,
};
use tns_store as db;
use utoipa_axum::{router::OpenApiRouter, routes};

/// New organizations start on this plan, in `trial` status.
pub const DEFAULT_PLAN: &str = "starter";

#[derive(Deserialize, ToSchema)]
pub struct RegisterIn {
    /// Company name.
    organization_name: Text200,
    tax_number: TaxNumber,
    full_name: Text200,
    email: Email,
    password: Password,
}

#[derive(Serialize, ToSchema)]
pub struct RegisterOut {
    ok: bool,
    #[schema(value_type = i64)]
    pub organization_id: OrgId,
    #[schema(value_type = i64)]
    pub user_id: UserId,
    /// The first API key (all scopes). Shown once.
    pub api_key: String,
    api_key_prefix: String,
}

/// Register an organization with its owner and first API key.
#[utoipa::path(post, path = "/auth/register", operation_id = "register", tag = "auth", request_body = RegisterIn,
    responses((status = 201, body = RegisterOut), (status = 409, description = "e-mail already registered, or an organization with this tax number exists (one per company)", body = ErrorBody)), security(()))]
pub async fn register(State(st): State<AppState>, ApiJson(input): ApiJson<RegisterIn>) -> ApiResult<impl IntoResponse> {
    Ok((StatusCode::CREATED, Json(register_organization(&st, input).await?)))
}

/// Register an organization with its owner, its subscription and first API key, in one
/// transaction (the portal's registration page does the same). 409 naming `tax_number` or
/// `email` when either is taken.
pub async fn register_organization(st: &AppState, input: RegisterIn) -> ApiResult<RegisterOut> {
    let RegisterIn { organization_name, tax_number: tax, full_name, email, password } = input;
    let (org_name, full_name) = (organization_name.into_inner(), full_name.into_inner());
    let hash = password::hash(password).await?;

    let mut tx = st.db.begin().await?;
    let org = match db::accounts::insert_organization(&mut tx, &org_name, &tax, st.cfg.trial_days).await {
        Ok(org) => org,
        // Who holds it is not said: the company's owner invites its other people.
        Err(e) if is_unique_violation(&e, db::accounts::TAX_NUMBER_KEY) => {
            return Err(ApiError::Conflict(
                Code::Duplicate,
                "tax_number: the company with this tax number already has an account; ask its owner to invite you"
                    .into(),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let user = match db::accounts::insert_owner(&mut tx, org, &email, &full_name, &hash).await {
        Ok(u) => u,
        Err(e) if is_unique_violation(&e, "users_email_key") => {
            return Err(ApiError::Conflict(
                Code::Duplicate,
                "email: an account with this e-mail address already exists".into(),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    db::accounts::insert_subscription(&mut tx, org, DEFAULT_PLAN).await?;
    let key = db::api_keys::insert(&mut tx, org, user.user_id, "default", Scopes::all()).await?;
    tx.commit().await?;
    tracing::info!(org = org.get(), user = user.user_id.get(), "organization registered");

    let out = RegisterOut {
        ok: true,
        organization_id: org,
        user_id: user.user_id,
        api_key: key.api_key,
        api_key_prefix: key.info.api_key_prefix,
    };
    Ok(out)
}

#[derive(Deserialize, ToSchema)]
pub struct TokenIn {
    /// Unused; may be empty.
    #[allow(dead_code)]
    client_id: Option<Opaque256>,
    /// The API key.
    client_secret: Opaque256,
}

#[derive(Serialize, ToSchema)]
pub struct TokenOut {
    access_token: String,
    /// `Bearer`.
    token_type: &'static str,
    /// Seconds (86400).
    expires_in: i64,
    /// Space-separated scopes of the key.
    scope: String,
}

/// Exchange an API key for a 24-hour access token. The token stops working when its key is revoked.
#[utoipa::path(post, path = "/auth/token", operation_id = "create_token", tag = "auth", request_body = TokenIn,
    responses((status = 200, body = TokenOut), (status = 401, body = ErrorBody, description = "`client_secret` is not a valid, unrevoked API key")), security(()))]
pub async fn token(State(st): State<AppState>, ApiJson(input): ApiJson<TokenIn>) -> ApiResult<Json<TokenOut>> {
    let invalid = || ApiError::Unauthorized("client_secret is not a valid API key".into());
    let secret = input.client_secret.as_str();
    if !secret.starts_with(keys::KEY_PREFIX) {
        return Err(invalid());
    }
    let key = st.keys.by_hash(&st.db, keys::hash(secret)).await?.ok_or_else(invalid)?;
    if key.revoked {
        return Err(ApiError::Unauthorized("this API key has been revoked".into()));
    }
    let access_token = st.jwt.mint(key.user_id, key.org_id.get(), key.id, key.scopes)?;
    Ok(Json(TokenOut { access_token, token_type: "Bearer", expires_in: TOKEN_TTL_SECS, scope: key.scopes.to_string() }))
}

#[derive(Deserialize, ToSchema)]
pub struct LoginIn {
    email: Opaque254,
    password: Opaque1024,
}

#[derive(Serialize, ToSchema)]
pub struct LoginOut {
    ok: bool,
    user: UserOut,
    /// Send back as `X-CSRF-Token` on POST/PUT/DELETE made with the session cookie
    /// (also set as the readable `tns_csrf` cookie).
    csrf_token: String,
}

/// Portal login: sets the `tns_session` cookie (HttpOnly, SameSite=Lax, Secure outside dev).
#[utoipa::path(post, path = "/auth/login", operation_id = "login", tag = "auth", request_body = LoginIn,
    responses((status = 200, body = LoginOut, headers(("set-cookie" = String))), (status = 401, body = ErrorBody, description = "Wrong e-mail or password"),
              (status = 429, body = ErrorBody, description = "Too many failed sign-ins for this account (after 5, a wait of 1 s doubling up to 15 min; `Retry-After`), or from this address")), security(()))]
pub async fn login(State(st): State<AppState>, ApiJson(input): ApiJson<LoginIn>) -> ApiResult<impl IntoResponse> {
    let (user, token, sess) = sign_in(&st, input.email.as_str(), input.password.into_inner()).await?;
    let [c1, c2] = session::cookies(&token, &sess, st.cfg.session_ttl, st.cfg.cookie_secure);
    let mut res = Json(LoginOut { ok: true, user: user.into(), csrf_token: sess.csrf }).into_response();
    res.headers_mut().append(header::SET_COOKIE, c1);
    res.headers_mut().append(header::SET_COOKIE, c2);
    Ok(res)
}

/// Check an e-mail address and password and open a session (the portal's sign-in form does the
/// same): the user, the session's cookie token and the session. 401 for a wrong address or
/// password, alike; 429 while the account waits after failures.
pub async fn sign_in(
    st: &AppState,
    email: &str,
    password: String,
) -> ApiResult<(db::accounts::User, String, session::Session)> {
    let user = check_password(st, email, password).await?;
    let (token, sess) = session::create(&st.redis, st.cfg.session_ttl, user.user_id, user.organization_id)
        .await
        .map_err(|_| ApiError::Unavailable("the session store is unavailable; retry shortly".into()))?;
    Ok((user, token, sess))
}

/// The user an e-mail address and password are, checked as signing in checks them (the same
/// back-off, the same answer for an unknown address and a wrong password).
pub async fn check_password(st: &AppState, email: &str, password: String) -> ApiResult<db::accounts::User> {
    let email = email.trim();
    let found = db::accounts::by_email(&st.db, email).await?;
    // Guessing one account's password from many addresses, or with many guesses at once, meets
    // this, whatever the per-address limit lets through: each attempt is counted before the
    // password is checked.
    let account = match &found {
        Some((u, _)) => Account::User(u.user_id.get()),
        None => Account::Unknown(email),
    };
    st.signins.reserve(&st.redis, &account).await?;
    let (user, hash) = match found {
        Some((u, h)) => (Some(u), Some(h)),
        None => (None, None),
    };
    // Unknown e-mail and wrong password take the same time and give the same answer.
    let ok = password::verify(hash, password).await?;
    let Some(user) = user.filter(|_| ok) else {
        return Err(ApiError::Unauthorized("wrong e-mail or password".into()));
    };
    st.signins.succeeded(&st.redis, &account).await;
    Ok(user)
}

/// End the session `headers` name (on every API process at once); the cookies that clear it.
pub async fn sign_out(st: &AppState, headers: &axum::http::HeaderMap) -> ApiResult<[axum::http::HeaderValue; 2]> {
    if let Some(token) = session::cookie(headers, session::SESSION_COOKIE) {
        session::destroy(&st.redis, token)
            .await
            .map_err(|_| ApiError::Unavailable("the session store is unavailable; retry shortly".into()))?;
    }
    Ok(session::cleared(st.cfg.cookie_secure))
}

/// End the portal session the `tns_session` cookie names (its entry is deleted at once, on every
/// API process) and clear the cookies. Without a session, nothing to end: `{"ok": true}` all
/// the same.
#[utoipa::path(post, path = "/auth/logout", operation_id = "logout", tag = "auth",
    responses((status = 200, body = crate::v1::Ok, headers(("set-cookie" = String)))), security(()))]
pub async fn logout(State(st): State<AppState>, headers: axum::http::HeaderMap) -> ApiResult<impl IntoResponse> {
    let mut res = Json(crate::v1::Ok::default()).into_response();
    for c in sign_out(&st, &headers).await? {
        res.headers_mut().append(header::SET_COOKIE, c);
    }
    Ok(res)
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(register)).routes(routes!(token)).routes(routes!(login)).routes(routes!(logout))
}
