//! Registering an organization from the portal: the API's own registration
//! (`POST /auth/register`'s parser and service function, behind the same per-address limit),
//! then the new owner signed in and shown the first API key once, on the way to the dashboard. Like the sign-in form, the form
//! carries a token of its own (a cookie and a hidden field that must match), so no other site
//! can register a visitor and sign them in to an account of its choosing.

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{Html, IntoResponse, Response},
};
use maud::{html, Markup};

use super::{
    forms::{self, FieldSpec, Typed},
    i18n::{Lang, Msg},
    member::Anonymous,
    page::{card_page, flash, PortalError},
    signin::{open_session, with_form_token},
};
use crate::{
    auth::session::cookie,
    error::{ApiError, Code},
    extract::parse_value,
    state::AppState,
    v1::endpoints::auth::{register_organization, RegisterIn},
};

/// The registration form's own token (see the module's comment).
const FORM_COOKIE: &str = "tns_register";
const PATH: &str = "/register";
/// The request schema the form follows.
const SCHEMA: &str = "RegisterIn";

/// Each field: its label, input type and `autocomplete` (the password is never shown again).
const FIELDS: &[(&str, Msg, &str, &str)] = &[
    ("organization_name", Msg::OrganizationName, "text", "organization"),
    ("tax_number", Msg::TaxNumber, "text", "off"),
    ("full_name", Msg::Name, "text", "name"),
    ("email", Msg::Email, "email", "email"),
    ("password", Msg::PasswordMin, "password", "new-password"),
];

fn render(lang: Lang, token: &str, typed: &Typed, error: Option<&ApiError>) -> Markup {
    let specs = forms::fields(SCHEMA);
    let named = error.and_then(|e| forms::field_error(specs, e));
    let content = html! {
        @if let Some(e) = error {
            @let text = match &named { Some(_) => lang.t(Msg::FixErrors).to_string(), None => e.to_string() };
            div role="alert" { (flash(&text, "error")) }
        }
        form.record method="post" action=(PATH) novalidate {
            input type="hidden" name="token" value=(token);
            @for (name, label, kind, autocomplete) in FIELDS {
                (field(lang, specs, name, *label, kind, autocomplete, typed, named.as_ref()))
            }
            div { button type="submit" { (lang.t(Msg::Register)) } }
        }
        p { (lang.t(Msg::HaveAccount)) " " a href="/login" { (lang.t(Msg::SignIn)) } }
    };
    card_page(lang, PATH, lang.t(Msg::RegisterTitle), content)
}

/// The page after registering: the first API key, shown once, and the way on.
fn welcome(lang: Lang, api_key: &str) -> Markup {
    let content = html! {
        div.flash.ok.secret role="status" {
            p { (lang.t(Msg::WelcomeKey)) }
            p { code #new-secret { (api_key) } }
        }
        p { a.button href="/dashboard" { (lang.t(Msg::ToDashboard)) } }
    };
    card_page(lang, PATH, lang.t(Msg::Welcome), content)
}

#[allow(clippy::too_many_arguments)]
fn field(
    lang: Lang,
    specs: &[FieldSpec],
    name: &str,
    label: Msg,
    kind: &str,
    autocomplete: &str,
    typed: &Typed,
    error: Option<&(String, String)>,
) -> Markup {
    let spec = specs.iter().find(|s| s.name == name);
    let max = spec.and_then(|s| match s.kind {
        forms::Kind::Text { max } => max,
        _ => None,
    });
    let err = error.filter(|(f, _)| f == name).map(|(_, r)| r);
    let id = format!("f-{name}");
    let value = if kind == "password" { None } else { typed.get(name) };
    html! {
        div.field {
            label for=(id) { (lang.t(label)) }
            input #(id) type=(kind) name=(name) value=[value] maxlength=[max] required autocomplete=(autocomplete)
                inputmode=[(name == "tax_number").then_some("numeric")]
                aria-invalid=[err.map(|_| "true")] aria-describedby=[err.map(|_| format!("{id}-error"))];
            @if let Some(r) = err { p.error-text id=(format!("{id}-error")) { (r) } }
        }
    }
}

/// `GET /register`.
pub(super) async fn form(State(st): State<AppState>, headers: HeaderMap) -> Response {
    let lang = Lang::of(&headers);
    with_form_token(&st, FORM_COOKIE, PATH, StatusCode::OK, |token| render(lang, token, &Typed::new(), None))
}

/// `POST /register`: the organization registered as `POST /api/v1/auth/register` registers it,
/// its owner signed in and sent to the dashboard; the form again, with what was typed (but the
/// password) and the API's reason beside its field, otherwise.
pub(super) async fn submit(
    State(st): State<AppState>,
    a: Anonymous<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    let (lang, headers, pairs) = (a.lang, a.headers, a.form);
    let sent_token = pairs.iter().find(|(k, _)| k == "token").map(|(_, v)| v.clone()).unwrap_or_default();
    // A password is taken as typed (spaces are characters of it); the rest trimmed, as forms are.
    let password = pairs.iter().find(|(k, _)| k == "password").map(|(_, v)| v.clone()).filter(|p| !p.is_empty());
    let specs = forms::fields(SCHEMA);
    let mut typed = forms::typed(specs, pairs);
    typed.remove("password");
    let again = |status: StatusCode, typed: &Typed, error: &ApiError| {
        with_form_token(&st, FORM_COOKIE, PATH, status, |token| render(lang, token, typed, Some(error)))
    };
    if cookie(&headers, FORM_COOKIE) != Some(sent_token.as_str()) {
        let stale = ApiError::Forbidden(Code::Forbidden, lang.t(Msg::ReloadPage).into());
        return Ok(again(StatusCode::FORBIDDEN, &typed, &stale));
    }
    let mut all = typed.clone();
    if let Some(p) = password {
        all.insert("password".into(), p);
    }
    let outcome = match parse_value::<RegisterIn>(forms::json(specs, &all, false)) {
        Ok(input) => register_organization(&st, input).await,
        Err(e) => Err(e),
    };
    match outcome {
        // The first API key is shown here, once (as the API's answer carries it); a key
        // nobody ever saw would be a credential with every scope and no holder.
        Ok(made) => {
            let welcome = welcome(lang, &made.api_key).into_string();
            open_session(&st, made.user_id, made.organization_id, Html(welcome).into_response()).await
        }
        Err(e @ (ApiError::Validation { .. } | ApiError::Conflict(..) | ApiError::BadRequest(..))) => {
            Ok(again(e.status(), &typed, &e))
        }
        Err(e) => Err(e.into()),
    }
}
