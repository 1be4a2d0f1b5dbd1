//! The settings pages: where submissions go (the downstream and its U-ETDS credentials), the
//! team, API keys, webhooks, billing, support and the organization's data, under one sub-navigation ([`nav`]). Each is
//! the API's `/portal/...` resource of the same name, through its own service functions.

pub(super) mod addresses;
pub(super) mod billing;
pub(super) mod data;
pub(super) mod downstream;
pub(super) mod keys;
pub(super) mod preflight;
mod prelude;
pub(super) mod support;
pub(super) mod webhooks;

use axum::{
    http::{HeaderMap, StatusCode},
    response::{Html, IntoResponse, Response},
};
use maud::{html, Markup};
use tns_core::scopes::{Scope, Scopes};

use super::{
    i18n::{Lang, Msg},
    member::SignedIn,
    page::{flash, go, page, PortalError, Shell},
};
use crate::error::ApiError;

/// The settings pages, each shown to a member holding the scope its API route reads with.
const PAGES: [(Msg, &str, Scope); 7] = [
    (Msg::Downstream, "/settings/downstream", Scope::AccountRead),
    (Msg::Team, "/settings/team", Scope::AccountWrite),
    (Msg::ApiKeys, "/settings/keys", Scope::AccountRead),
    (Msg::Webhooks, "/settings/webhooks", Scope::WebhooksRead),
    (Msg::Billing, "/settings/billing", Scope::AccountRead),
    (Msg::Support, "/settings/support", Scope::AccountRead),
    (Msg::YourData, data::PATH, Scope::AccountRead),
];

/// The first settings page a member holding `scopes` may open (where the main navigation's
/// Settings leads), if any.
pub(super) fn first_page(scopes: Scopes) -> Option<&'static str> {
    PAGES.iter().find(|(_, _, scope)| scopes.allows(*scope)).map(|(_, path, _)| *path)
}

/// The settings' own navigation, the page at `current` marked.
pub(super) fn nav(lang: Lang, scopes: Scopes, current: &str) -> Markup {
    html! {
        nav.subnav aria-label=(lang.t(Msg::SettingsMenu)) {
            ul {
                @for (name, path, scope) in PAGES {
                    @if scopes.allows(scope) {
                        li { a href=(path) aria-current=[current.starts_with(path).then_some("page")] { (lang.t(name)) } }
                    }
                }
            }
        }
    }
}

/// A settings page: the shell, the settings' navigation, the title and `content`.
fn settings_page(lang: Lang, signed_in: &SignedIn, path: &str, title: &str, content: Markup) -> String {
    let shell = Shell { lang, signed_in: Some(signed_in), path };
    let body = html! {
        (nav(lang, signed_in.principal.scopes, path))
        h1 { (title) }
        (content)
    };
    page(&shell, title, body).into_string()
}

/// Whether the member can put an API error right in the form it came from (a field, a
/// duplicate, a limit to wait out, a service to try again).
fn correctable(e: &ApiError) -> bool {
    matches!(
        e.status(),
        StatusCode::BAD_REQUEST
            | StatusCode::UNPROCESSABLE_ENTITY
            | StatusCode::CONFLICT
            | StatusCode::TOO_MANY_REQUESTS
            | StatusCode::SERVICE_UNAVAILABLE
    )
}

/// What to tell the member about an error shown above a form (a 5xx's detail stays hidden).
fn problem(lang: Lang, e: &ApiError) -> String {
    match e.status() {
        StatusCode::SERVICE_UNAVAILABLE => lang.t(Msg::TryAgainLater).to_string(),
        s if s.is_server_error() => lang.t(Msg::SomethingWrong).to_string(),
        _ => e.to_string(),
    }
}

/// A field's error beside it, linked for assistive technology.
fn field_error(id: &str, error: Option<&str>) -> Markup {
    html! { @if let Some(r) = error { p.error-text id=(format!("{id}-error")) { (r) } } }
}

/// An error above a form or a list, announced as it appears.
fn alert(lang: Lang, e: &ApiError) -> Markup {
    html! { div role="alert" { (flash(&problem(lang, e), "error")) } }
}

/// The alert atop a form after `error`: where a field says what is wrong (`field_named`), only
/// that the fields want fixing.
fn form_alert(lang: Lang, error: Option<&ApiError>, field_named: bool) -> Markup {
    html! {
        @if let Some(e) = error {
            @let text = if field_named { lang.t(Msg::FixErrors).to_string() } else { problem(lang, e) };
            div role="alert" { (flash(&text, "error")) }
        }
    }
}

/// The form below a list that makes a new entry, under a heading (`heading`: its id and text)
/// that names it: the CSRF token, `alert` (after a refused attempt), `fields` and the `submit`
/// button.
fn new_entry_form(
    signed_in: &SignedIn,
    action: &str,
    (heading_id, heading): (&str, &str),
    submit: &str,
    alert: Markup,
    fields: Markup,
) -> Markup {
    html! {
        h2 #(heading_id) { (heading) }
        form.record method="post" action=(action) aria-labelledby=(heading_id) novalidate {
            input type="hidden" name="_csrf" value=(signed_in.csrf);
            (alert)
            (fields)
            div { button type="submit" { (submit) } }
        }
    }
}

/// The page again after a change the member can put right, answered with the error's status.
fn shown_again(e: &ApiError, page: String) -> Response {
    (e.status(), Html(page)).into_response()
}

/// A change's answer: on to `to` (the page, saying what was done) once made; the page again
/// from `again`, with the API's reason, when the member can put it right; else the failure.
async fn changed<T>(
    outcome: Result<T, ApiError>,
    to: &str,
    headers: &HeaderMap,
    again: impl AsyncFnOnce(&ApiError) -> Result<String, PortalError>,
) -> Result<Response, PortalError> {
    match outcome {
        Ok(_) => Ok(go(to, headers)),
        Err(e) if correctable(&e) => Ok(shown_again(&e, again(&e).await?)),
        Err(e) => Err(e.into()),
    }
}

/// Whether the page was sent back with `?done={what}` after a change.
fn done_is(query: &[(String, String)], what: &str) -> bool {
    query.iter().any(|(k, v)| k == "done" && v == what)
}
