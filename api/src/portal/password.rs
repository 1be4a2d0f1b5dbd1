//! Passwords: a member changes theirs (the current one first), or resets a forgotten one by a
//! link e-mailed to them (valid an hour, once). Either way every session they had open ends;
//! the one that changed it is renewed. The reset form says the same whether or not an address
//! has an account, and is limited per client like signing in.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
    Form,
};
use chrono::{Duration, Utc};
use maud::html;
use serde::Deserialize;
use tns_core::domain::Password;
use tns_store::members;

use super::{
    i18n::{Lang, Msg},
    member::{Anonymous, Me},
    page::{card_page, flash, page, PortalError, Shell},
};
use crate::{auth::password, error::ApiError, state::AppState};

/// How long a reset link works.
const RESET_MINUTES: i64 = 60;

fn field(lang: Lang, id: &str, label: Msg, autocomplete: &str, error: Option<&str>) -> maud::Markup {
    html! {
        div.field {
            label for=(id) { (lang.t(label)) }
            input #(id) type="password" name=(id) required autocomplete=(autocomplete)
                aria-invalid=[error.map(|_| "true")] aria-describedby=[error.map(|_| format!("{id}-error"))];
            @if let Some(e) = error { p.error-text id=(format!("{id}-error")) { (e) } }
        }
    }
}

fn change_page(m: &Me, error: Option<(&str, &str)>, done: bool) -> String {
    let lang = m.lang;
    let err = |f: &str| error.filter(|(x, _)| *x == f).map(|(_, r)| r);
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/account/password" };
    let body = html! {
        h1 { (lang.t(Msg::ChangePassword)) }
        @if done { (flash(lang.t(Msg::PasswordChanged), "ok")) }
        form.record method="post" action="/account/password" {
            input type="hidden" name="_csrf" value=(m.signed_in.csrf);
            (field(lang, "current", Msg::CurrentPassword, "current-password", err("current")))
            (field(lang, "password", Msg::NewPassword, "new-password", err("password")))
            div { button type="submit" { (lang.t(Msg::ChangePassword)) } }
        }
    };
    page(&shell, lang.t(Msg::ChangePassword), body).into_string()
}

/// `GET /account/password`.
pub(super) async fn change_form(m: Me) -> Html<String> {
    Html(change_page(&m, None, false))
}

#[derive(Deserialize)]
pub(super) struct ChangeForm {
    current: String,
    password: String,
}

/// `POST /account/password`: the current password checked as signing in checks it (the same
/// back-off), the new one set, every session ended and this one renewed.
pub(super) async fn change(
    State(st): State<AppState>,
    m: Me,
    Form(f): Form<ChangeForm>,
) -> Result<Response, PortalError> {
    let refused = |field: &str, reason: &str| {
        (StatusCode::UNPROCESSABLE_ENTITY, Html(change_page(&m, Some((field, reason)), false))).into_response()
    };
    let new = match Password::parse(f.password) {
        Ok(p) => p,
        Err(reason) => return Ok(refused("password", &reason)),
    };
    let me = tns_store::accounts::profile(&st.db, m.org(), m.principal().user_id).await?.ok_or(PortalError::SignIn)?;
    match crate::v1::endpoints::auth::check_password(&st, &me.user.email, f.current).await {
        Ok(_) => {}
        Err(ApiError::Unauthorized(_)) => return Ok(refused("current", m.lang.t(Msg::WrongPassword))),
        Err(e) => return Err(e.into()),
    }
    let hash = password::hash(new).await?;
    members::set_password(&st.db, m.principal().user_id, &hash, Utc::now()).await?;
    st.keys.forget_member(m.principal().user_id);
    // Their sessions just ended, this one too: a new one for this browser.
    let page = Html(change_page(&m, None, true)).into_response();
    super::signin::open_session(&st, m.principal().user_id, m.org(), page).await
}

fn forgot_page(lang: Lang, notice: Option<&str>) -> String {
    let content = html! {
        @if let Some(n) = notice { (flash(n, "ok")) }
        form.record method="post" action="/password/forgot" {
            div.field {
                label for="email" { (lang.t(Msg::Email)) }
                input #email type="email" name="email" required autocomplete="username";
            }
            div { button type="submit" { (lang.t(Msg::SendResetLink)) } }
        }
        p { a href="/login" { (lang.t(Msg::SignIn)) } }
    };
    card_page(lang, "/password/forgot", lang.t(Msg::ForgotPassword), content).into_string()
}

/// `GET /password/forgot`.
pub(super) async fn forgot_form(headers: HeaderMap) -> Html<String> {
    Html(forgot_page(Lang::of(&headers), None))
}

#[derive(Deserialize)]
pub(super) struct ForgotForm {
    email: String,
}

/// `POST /password/forgot`: a link e-mailed to the address if it has an account; the same
/// answer either way.
pub(super) async fn forgot(State(st): State<AppState>, a: Anonymous<ForgotForm>) -> Result<Response, PortalError> {
    let (lang, f) = (a.lang, a.form);
    let (Some(base), true) = (&st.cfg.public_url, st.cfg.mailer.sends()) else {
        return Ok(
            (StatusCode::SERVICE_UNAVAILABLE, Html(forgot_page(lang, Some(lang.t(Msg::NoResetHere))))).into_response()
        );
    };
    if let Some((token, name, address)) =
        members::start_reset(&st.db, f.email.trim(), Duration::minutes(RESET_MINUTES)).await?
    {
        let body = format!(
            "{name},\n\n{}\n\n{base}/password/reset/{token}\n\n{}",
            lang.t(Msg::ResetMail),
            lang.t(Msg::ResetMailNotYou)
        );
        if let Err(e) = st.cfg.mailer.send(&address, lang.t(Msg::ResetSubject), body).await {
            tracing::warn!(error = %e, "a password reset was not sent");
        }
    }
    Ok(Html(forgot_page(lang, Some(lang.t(Msg::ResetSent)))).into_response())
}

fn reset_page(lang: Lang, token: &str, error: Option<&str>) -> String {
    let content = html! {
        form.record method="post" action=(format!("/password/reset/{token}")) {
            (field(lang, "password", Msg::NewPassword, "new-password", error))
            div { button type="submit" { (lang.t(Msg::Save)) } }
        }
    };
    card_page(lang, "/password/reset", lang.t(Msg::ChooseNewPassword), content).into_string()
}

fn reset_gone(lang: Lang) -> Response {
    let shell = Shell { lang, signed_in: None, path: "/password/reset" };
    let body =
        html! { h1 { (lang.t(Msg::ResetGone)) } p { a href="/password/forgot" { (lang.t(Msg::ForgotPassword)) } } };
    (StatusCode::NOT_FOUND, Html(page(&shell, lang.t(Msg::ResetGone), body).into_string())).into_response()
}

/// `GET /password/reset/{token}`.
pub(super) async fn reset_form(
    State(st): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, PortalError> {
    let lang = Lang::of(&headers);
    if !members::reset_is_open(&st.db, &token).await? {
        return Ok(reset_gone(lang));
    }
    Ok(Html(reset_page(lang, &token, None)).into_response())
}

#[derive(Deserialize)]
pub(super) struct ResetForm {
    password: String,
}

/// `POST /password/reset/{token}`: the new password set, every session ended; sign in again.
pub(super) async fn reset(
    State(st): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    Form(f): Form<ResetForm>,
) -> Result<Response, PortalError> {
    let lang = Lang::of(&headers);
    let new = match Password::parse(f.password) {
        Ok(p) => p,
        Err(reason) => {
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, Html(reset_page(lang, &token, Some(&reason)))).into_response())
        }
    };
    let hash = password::hash(new).await?;
    match members::finish_reset(&st.db, &token, &hash, Utc::now()).await? {
        Some(_) => Ok(Redirect::to("/login").into_response()),
        None => Ok(reset_gone(lang)),
    }
}
