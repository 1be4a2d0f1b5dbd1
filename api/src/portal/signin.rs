//! Signing in and out of the portal, and choosing its language. Signing in is the API's own
//! (`POST /auth/login`'s checks, back-off and session), behind the same per-address limit; the
//! form carries a token of its own (a cookie and a hidden field that must match), so no other
//! site can sign a visitor in to an account of its choosing.

use axum::{
    extract::{Path, Query, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
};
use maud::{html, Markup};
use serde::Deserialize;
use tns_core::ids::{OrgId, UserId};

use super::{
    i18n::{Lang, Msg, LANG_COOKIE},
    member::{Anonymous, SignedIn},
    page::{card_page, flash, PortalError},
};
use crate::{
    auth::session::{cookie, Session},
    error::ApiError,
    state::AppState,
    v1::endpoints::auth::{sign_in, sign_out},
};
use tns_core::keys::random_token;

/// The sign-in form's own token (see the module's comment).
const FORM_COOKIE: &str = "tns_signin";

#[derive(Deserialize)]
pub(super) struct Next {
    next: Option<String>,
}

/// Only a path of this site is a place to come back to.
fn local(next: Option<&str>) -> &str {
    match next {
        // Browsers drop tabs and newlines from a URL, so `/\t/evil` would become `//evil`.
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(|c| c.is_control() || c.is_whitespace()) =>
        {
            n
        }
        _ => "/dashboard",
    }
}

/// `GET /`: the dashboard for a member, the sign-in form for anyone else.
pub(super) async fn home(req: Request) -> Redirect {
    if req.extensions().get::<SignedIn>().is_some() {
        Redirect::to("/dashboard")
    } else {
        Redirect::to("/login")
    }
}

/// `GET /login`.
pub(super) async fn form(State(st): State<AppState>, headers: HeaderMap, Query(q): Query<Next>) -> Response {
    let lang = Lang::of(&headers);
    let next = local(q.next.as_deref());
    with_form_token(&st, FORM_COOKIE, "/login", StatusCode::OK, |token| render(lang, next, token, "", None))
}

/// An anonymous form's page (`status`) drawn by `render` with a new token of the form's own,
/// which the cookie `name`, sent back only to `path`, holds too.
pub(super) fn with_form_token(
    st: &AppState,
    name: &str,
    path: &str,
    status: StatusCode,
    render: impl FnOnce(&str) -> Markup,
) -> Response {
    let token = random_token();
    let mut res = (status, Html(render(&token).into_string())).into_response();
    let secure = if st.cfg.cookie_secure { "; Secure" } else { "" };
    let cookie =
        HeaderValue::from_str(&format!("{name}={token}; Path={path}; Max-Age=3600; HttpOnly; SameSite=Strict{secure}"))
            .expect("cookie is ASCII");
    res.headers_mut().append(header::SET_COOKIE, cookie);
    res
}

fn render(lang: Lang, next: &str, token: &str, email: &str, error: Option<&str>) -> Markup {
    let content = html! {
        @if let Some(e) = error { (flash(e, "error")) }
        form.record method="post" action="/login" {
            input type="hidden" name="token" value=(token);
            input type="hidden" name="next" value=(next);
            div.field {
                label for="email" { (lang.t(Msg::Email)) }
                input #email type="email" name="email" value=(email) autocomplete="username" required
                    autofocus[email.is_empty()];
            }
            div.field {
                label for="password" { (lang.t(Msg::Password)) }
                input #password type="password" name="password" autocomplete="current-password" required
                    autofocus[!email.is_empty()];
            }
            div { button type="submit" { (lang.t(Msg::SignIn)) } }
        }
        p { a href="/password/forgot" { (lang.t(Msg::ForgotPassword)) } }
        p { (lang.t(Msg::NoAccountYet)) " " a href="/register" { (lang.t(Msg::Register)) } }
    };
    card_page(lang, "/login", lang.t(Msg::SignIn), content)
}

#[derive(Deserialize)]
pub(super) struct SignInForm {
    email: String,
    password: String,
    token: String,
    next: Option<String>,
}

/// `POST /login`: a session, and back where the member was going; the form again, with what
/// was typed (but the password) and why, otherwise.
pub(super) async fn submit(State(st): State<AppState>, a: Anonymous<SignInForm>) -> Result<Response, PortalError> {
    let (lang, headers, f) = (a.lang, a.headers, a.form);
    let next = local(f.next.as_deref()).to_string();
    let again = |message: &str, status: StatusCode| {
        with_form_token(&st, FORM_COOKIE, "/login", status, |token| render(lang, &next, token, &f.email, Some(message)))
    };
    if cookie(&headers, FORM_COOKIE) != Some(f.token.as_str()) {
        return Ok(again(lang.t(Msg::ReloadPage), StatusCode::FORBIDDEN));
    }
    match sign_in(&st, &f.email, f.password.clone()).await {
        Ok((_, token, sess)) => Ok(with_session(&st, &token, &sess, Redirect::to(&next).into_response())),
        Err(ApiError::Unauthorized(_)) => Ok(again(lang.t(Msg::WrongCredentials), StatusCode::UNAUTHORIZED)),
        Err(e @ ApiError::TooManyRequests { .. }) => Ok(again(&e.to_string(), StatusCode::TOO_MANY_REQUESTS)),
        Err(e) => Err(e.into()),
    }
}

/// `res` setting a session's cookies.
pub(super) fn with_session(st: &AppState, token: &str, sess: &Session, mut res: Response) -> Response {
    for c in crate::auth::session::cookies(token, sess, st.cfg.session_ttl, st.cfg.cookie_secure) {
        res.headers_mut().append(header::SET_COOKIE, c);
    }
    res
}

/// `res` with a new session for `user` of `org` (who just joined, or whose other sessions just
/// ended).
pub(super) async fn open_session(
    st: &AppState,
    user: UserId,
    org: OrgId,
    res: Response,
) -> Result<Response, PortalError> {
    let (token, sess) = crate::auth::session::create(&st.redis, st.cfg.session_ttl, user, org).await.map_err(|_| {
        PortalError::Api(ApiError::Unavailable("the session store is unavailable; sign in shortly".into()))
    })?;
    Ok(with_session(st, &token, &sess, res))
}

/// `POST /logout`: the session ends on every API process, the cookies are cleared.
pub(super) async fn logout(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, PortalError> {
    let cleared = sign_out(&st, &headers).await?;
    let mut res = Redirect::to("/login").into_response();
    // htmx follows this header rather than swapping the redirect's page in.
    res.headers_mut().insert("hx-redirect", HeaderValue::from_static("/login"));
    for c in cleared {
        res.headers_mut().append(header::SET_COOKIE, c);
    }
    Ok(res)
}

#[derive(Deserialize)]
pub(super) struct Back {
    back: Option<String>,
}

/// `GET /lang/{code}`: switch language (remembered for a year) and go back: to the very page
/// (its record, its filters) when the browser names it as this site's, else to `back`.
pub(super) async fn language(
    State(st): State<AppState>,
    Path(code): Path<String>,
    Query(q): Query<Back>,
    headers: HeaderMap,
) -> Response {
    let Some(lang) = Lang::parse(&code) else { return StatusCode::NOT_FOUND.into_response() };
    let secure = if st.cfg.cookie_secure { "; Secure" } else { "" };
    let back = referring_page(&headers).or(q.back.as_deref());
    let mut res = Redirect::to(local(back)).into_response();
    let c = format!("{LANG_COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax{secure}", lang.code());
    res.headers_mut().append(header::SET_COOKIE, HeaderValue::from_str(&c).expect("cookie is ASCII"));
    res
}

/// The path and query of the page that linked here, when it is a page of this site (the
/// portal's pages send their address to themselves only: `Referrer-Policy: same-origin`).
fn referring_page(headers: &HeaderMap) -> Option<&str> {
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let rest = referer.strip_prefix("https://").or_else(|| referer.strip_prefix("http://"))?;
    rest.strip_prefix(host).filter(|p| p.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_site_are_followed() {
        assert_eq!(local(Some("/vehicles")), "/vehicles");
        for bad in [
            "https://evil.example/",
            "//evil.example",
            "/\\evil.example",
            "vehicles",
            "/\t/evil.example",
            "/\n/evil",
            "/ /x",
        ] {
            assert_eq!(local(Some(bad)), "/dashboard", "{bad}");
        }
        assert_eq!(local(None), "/dashboard");
    }

    #[test]
    fn back_to_the_referring_page_of_this_site_only() {
        let with = |referer: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static("tns.example:8080"));
            h.insert(header::REFERER, HeaderValue::from_str(referer).unwrap());
            referring_page(&h).map(str::to_string)
        };
        assert_eq!(with("http://tns.example:8080/journeys/7?done=saved").as_deref(), Some("/journeys/7?done=saved"));
        assert_eq!(with("https://tns.example:8080/cargo").as_deref(), Some("/cargo"));
        for other in ["https://evil.example/", "https://tns.example:8080.evil.example/x", "https://tns.example:8080"] {
            assert_eq!(with(other), None, "{other}");
        }
    }
}
