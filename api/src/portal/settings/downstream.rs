//! Where submissions go: the sandbox, or U-ETDS's test or production environment with the
//! firm's web-service credentials, which the API checks with U-ETDS before saving. The
//! password is never shown back, only that one is set.

use std::collections::HashMap;

use axum::{
    extract::{Query, State},
    http::{HeaderMap, Method},
    response::{Html, IntoResponse, Response},
    Form,
};
use maud::html;
use serde::Deserialize;
use serde_json::json;
use tns_core::{
    domain::kinds::{AdapterName, Environment},
    scopes::{
        need::{AccountRead, AccountWrite},
        Scope,
    },
};

use super::{correctable, field_error, problem, settings_page};
use crate::{
    error::ApiError,
    extract::parse_value,
    portal::{
        format,
        i18n::{Lang, Msg},
        member::{admit, Member, SignedIn},
        page::{flash, go, PortalError},
    },
    state::AppState,
    v1::endpoints::downstream::{self as api, Downstream, DownstreamIn},
};

const PATH: &str = "/settings/downstream";

/// What the form sends: one choice of target (an adapter, with U-ETDS's environment), and the
/// credentials U-ETDS needs.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct DownstreamForm {
    #[serde(default)]
    target: String,
    #[serde(default)]
    ws_username: String,
    #[serde(default)]
    ws_password: String,
}

/// The targets offered: each adapter, U-ETDS once per environment.
fn targets() -> Vec<(String, Msg)> {
    let mut out = vec![];
    for a in AdapterName::ALL {
        match a {
            AdapterName::Uetds => {
                for e in Environment::ALL {
                    let msg = match e {
                        Environment::Test => Msg::TargetUetdsTest,
                        Environment::Production => Msg::TargetUetdsProduction,
                    };
                    out.push((format!("{}:{}", a.as_str(), e.as_str()), msg));
                }
            }
            AdapterName::Sandbox => out.push((a.as_str().to_string(), Msg::TargetSandbox)),
        }
    }
    out
}

fn target_of(d: &Downstream) -> String {
    match d.environment {
        Some(e) => format!("{}:{}", d.adapter, e.as_str()),
        None => d.adapter.clone(),
    }
}

fn target_label(lang: Lang, target: &str) -> String {
    targets().into_iter().find(|(t, _)| t == target).map(|(_, m)| lang.t(m).to_string()).unwrap_or(target.into())
}

/// The form's field an API error names (the adapter and the environment are the target).
fn field_of(e: &ApiError) -> Option<(&'static str, String)> {
    let ApiError::Validation { field, reason } = e else { return None };
    let field = match field.as_str() {
        "adapter" | "environment" => "target",
        "ws_username" => "ws_username",
        "ws_password" => "ws_password",
        _ => return None,
    };
    Some((field, reason.clone()))
}

fn render(
    lang: Lang,
    signed_in: &SignedIn,
    current: &Downstream,
    typed: Option<&DownstreamForm>,
    error: Option<&ApiError>,
    saved: bool,
) -> String {
    let csrf = &signed_in.csrf;
    let may_change = signed_in.principal.scopes.allows(Scope::AccountWrite);
    let named = error.and_then(field_of);
    let err = |f: &str| named.as_ref().filter(|(n, _)| *n == f).map(|(_, r)| r.as_str());
    let chosen = typed.map(|t| t.target.clone()).unwrap_or_else(|| target_of(current));
    let username = typed.map(|t| t.ws_username.clone()).or_else(|| current.ws_username.clone()).unwrap_or_default();
    let body = html! {
        @if saved { (flash(lang.t(Msg::Saved), "ok")) }
        @if current.updated_at.is_none() {
            div.flash.callout role="note" { p { strong { (lang.t(Msg::DownstreamStart)) } } }
        }
        p { (lang.t(Msg::DownstreamIntro)) }
        section.card aria-labelledby="now-h" {
            h2 #now-h { (lang.t(Msg::SubmissionsGoTo)) }
            dl.facts {
                dt { (lang.t(Msg::Target)) } dd #current-target { (target_label(lang, &target_of(current))) }
                @if let Some(u) = &current.ws_username {
                    dt { (lang.t(Msg::WsUsername)) } dd { (u) }
                    dt { (lang.t(Msg::WsPassword)) } dd { (lang.t(Msg::PasswordSet)) }
                }
                dt { (lang.t(Msg::LastChanged)) }
                dd { @match current.updated_at { Some(t) => (format::datetime(lang, t)), None => (lang.t(Msg::NotChosenYet)) } }
            }
            // U-ETDS takes calls only from the addresses each firm registered there.
            @if current.adapter == AdapterName::Uetds.as_str() && current.ws_username.is_some() {
                p { a href=(super::addresses::PATH) { (lang.t(Msg::AllowedAddresses)) } }
            }
            p { a href=(super::preflight::PATH) { (lang.t(Msg::Preflight)) } }
        }
        @if may_change {
            form.record #downstream method="post" action=(PATH) novalidate {
                input type="hidden" name="_csrf" value=(csrf);
                @if let Some(e) = error {
                    @let text = if named.is_some() { lang.t(Msg::FixErrors).to_string() } else { problem(lang, e) };
                    div role="alert" { (flash(&text, "error")) }
                }
                fieldset.field aria-invalid=[err("target").map(|_| "true")] aria-describedby=[err("target").map(|_| "target-error")] {
                    legend { (lang.t(Msg::Target)) }
                    @for (value, label) in targets() {
                        @let id = format!("target-{}", value.replace(':', "-"));
                        div.choice {
                            input #(id) type="radio" name="target" value=(value) checked[value == chosen] required;
                            " " label for=(id) { (lang.t(label)) }
                        }
                    }
                    (field_error("target", err("target")))
                }
                div.field.uetds {
                    label for="ws_username" { (lang.t(Msg::WsUsername)) }
                    input #ws_username type="text" name="ws_username" value=(username) inputmode="numeric" autocomplete="off"
                        aria-invalid=[err("ws_username").map(|_| "true")] aria-describedby=[err("ws_username").map(|_| "ws_username-error")];
                    (field_error("ws_username", err("ws_username")))
                }
                div.field.uetds {
                    label for="ws_password" { (lang.t(Msg::WsPassword)) }
                    // Never filled in: the password is not shown back, not even as typed.
                    input #ws_password type="password" name="ws_password" autocomplete="new-password"
                        aria-invalid=[err("ws_password").map(|_| "true")]
                        aria-describedby=(if err("ws_password").is_some() { "ws_password-hint ws_password-error" } else { "ws_password-hint" });
                    p.hint #ws_password-hint { (lang.t(Msg::WsPasswordHint)) }
                    (field_error("ws_password", err("ws_password")))
                }
                div { button type="submit" { (lang.t(Msg::Save)) } }
            }
        }
    };
    settings_page(lang, signed_in, PATH, lang.t(Msg::Downstream), body)
}

/// `GET /settings/downstream`.
pub(crate) async fn show(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let current = api::current(&st, m.org()).await?;
    let saved = q.get("done").is_some_and(|d| d == "saved");
    Ok(Html(render(m.lang, &m.signed_in, &current, None, None, saved)))
}

/// `POST /settings/downstream`: as `PUT /api/v1/portal/downstream` (the credentials checked
/// with U-ETDS before anything is saved).
pub(crate) async fn save(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<DownstreamForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::PUT, "/portal/downstream").await?;
    let (adapter, environment) = match f.target.split_once(':') {
        Some((a, e)) => (a, Some(e)),
        None => (f.target.as_str(), None),
    };
    let mut body = json!({ "adapter": adapter });
    // The credential fields belong to U-ETDS: what was typed for another target is not sent.
    if adapter == AdapterName::Uetds.as_str() {
        for (k, v) in [
            ("environment", environment.unwrap_or("")),
            ("ws_username", &f.ws_username),
            ("ws_password", &f.ws_password),
        ] {
            if !v.is_empty() {
                body[k] = json!(v);
            }
        }
    }
    let outcome = match parse_value::<DownstreamIn>(body) {
        Ok(input) => api::set(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(_) => Ok(go(&format!("{PATH}?done=saved"), &headers)),
        Err(e) if correctable(&e) => {
            let current = api::current(&st, m.org()).await?;
            let page = render(m.lang, &m.signed_in, &current, Some(&f), Some(&e), false);
            Ok((e.status(), Html(page)).into_response())
        }
        Err(e) => Err(e.into()),
    }
}
