//! The organization's pre-flight checks: whether U-ETDS's own services are asked about a
//! journey or shipment before it is submitted, which checks, and what one that does not pass
//! does (a warning, or refusing the submit). Saved through the API's own function, audited.

use tns_core::domain::preflight::{CheckKind, PreflightIn, PreflightMode};

use super::prelude::*;
use crate::v1::endpoints::preflight::{self as api, Preflight};

pub(crate) const PATH: &str = "/settings/downstream/preflight";

fn mode_label(m: PreflightMode) -> Msg {
    match m {
        PreflightMode::Off => Msg::PreflightOff,
        PreflightMode::Warn => Msg::PreflightWarn,
        PreflightMode::Refuse => Msg::PreflightRefuse,
    }
}

fn check_label(k: CheckKind) -> Msg {
    match k {
        CheckKind::VehicleInspection => Msg::CheckInspection,
        CheckKind::Authorisation => Msg::CheckAuthorisation,
        CheckKind::Qualification => Msg::CheckQualification,
        CheckKind::Identity => Msg::CheckIdentity,
        CheckKind::TravelPermit => Msg::CheckTravelPermit,
    }
}

fn render(lang: Lang, signed_in: &SignedIn, current: &Preflight, error: Option<&ApiError>, saved: bool) -> String {
    let csrf = &signed_in.csrf;
    let may_change = signed_in.principal.scopes.allows(Scope::AccountWrite);
    let body = html! {
        @if saved { (flash(lang.t(Msg::Saved), "ok")) }
        @if let Some(e) = error { (alert(lang, e)) }
        p { (lang.t(Msg::PreflightIntro)) " " a href="/settings/downstream" { (lang.t(Msg::Downstream)) } }
        form.record #preflight method="post" action=(PATH) novalidate {
            input type="hidden" name="_csrf" value=(csrf);
            fieldset disabled[!may_change] {
                legend { (lang.t(Msg::PreflightMode)) }
                @for m in PreflightMode::ALL {
                    @let id = format!("mode-{}", m.as_str());
                    div.choice {
                        input #(id) type="radio" name="mode" value=(m.as_str()) checked[current.mode == *m];
                        label for=(id) { (lang.t(mode_label(*m))) }
                    }
                }
            }
            fieldset disabled[!may_change] {
                legend { (lang.t(Msg::PreflightChecks)) }
                @for k in CheckKind::ALL {
                    @let id = format!("check-{}", k.as_str());
                    div.choice {
                        input #(id) type="checkbox" name="checks" value=(k.as_str()) checked[current.checks.contains(k)];
                        label for=(id) { (lang.t(check_label(*k))) }
                    }
                }
            }
            @if may_change { div { button type="submit" { (lang.t(Msg::Save)) } } }
        }
    };
    settings_page(lang, signed_in, PATH, lang.t(Msg::Preflight), body)
}

/// `GET /settings/downstream/preflight`.
pub(crate) async fn show(Viewing { st, m, query: q }: Viewing<AccountRead>) -> Result<Html<String>, PortalError> {
    let current = api::current(&st, m.org()).await?;
    let saved = done_is(&q, "saved");
    Ok(Html(render(m.lang, &m.signed_in, &current, None, saved)))
}

/// `POST /settings/downstream/preflight`: as `PUT /api/v1/portal/downstream/preflight` (the
/// form's `checks` are its checkboxes, each sent once when ticked).
pub(crate) async fn save(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::PUT, "/portal/downstream/preflight").await?;
    let mode = pairs.iter().find(|(k, _)| k == "mode").map(|(_, v)| v.as_str()).unwrap_or_default();
    let checks: Vec<&str> = pairs.iter().filter(|(k, _)| k == "checks").map(|(_, v)| v.as_str()).collect();
    let outcome = match parse_value::<PreflightIn>(json!({ "mode": mode, "checks": checks })) {
        Ok(input) => api::set(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    changed(outcome, &format!("{PATH}?done=saved"), &headers, async |e| {
        let current = api::current(&st, m.org()).await?;
        Ok(render(m.lang, &m.signed_in, &current, Some(e), false))
    })
    .await
}
