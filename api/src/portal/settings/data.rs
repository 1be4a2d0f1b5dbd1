//! Your data (KVKK): the owner asks for an archive of everything TNS holds about the
//! organization and downloads it once the jobs role has built it (kept 7 days), and closes the
//! organization (erased after the grace period) or reopens it. Other members see why they
//! cannot.

use tns_core::{
    domain::kinds::{ExportState, OrgStatus},
    ids::ExportId,
};
use tns_store as db;

use super::prelude::*;
use crate::v1::endpoints::{closure, exports as api};

pub(crate) const PATH: &str = "/settings/data";

/// Which form an error answers.
enum Failed<'a> {
    Export(&'a ApiError),
    Closure(&'a ApiError),
}

async fn render(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    error: Option<Failed<'_>>,
    done: Option<&str>,
) -> Result<String, PortalError> {
    let p = &signed_in.principal;
    let is_owner = api::owner(st, p).await.is_ok();
    let exports = if is_owner { db::exports::list(&st.db, p.org_id).await? } else { vec![] };
    let closure_error = match error {
        Some(Failed::Closure(e)) => Some(e),
        _ => None,
    };
    let closing = closing_section(st, lang, signed_in, is_owner, closure_error, done == Some("reopened")).await?;
    let body = html! {
        p { (lang.t(Msg::ExportAbout)) }
        @if !is_owner {
            p.muted { (lang.t(Msg::ExportOwnerOnly)) }
        } @else {
            @if done == Some("asked") { (flash(lang.t(Msg::ExportAsked), "ok")) }
            @if let Some(Failed::Export(e)) = error { (alert(lang, e)) }
            form method="post" action=(PATH) {
                input type="hidden" name="_csrf" value=(signed_in.csrf);
                button type="submit" { (lang.t(Msg::ExportAsk)) }
            }
            h2 { (lang.t(Msg::Exports)) }
            @let headings = ["#", lang.t(Msg::Created), lang.t(Msg::Status), lang.t(Msg::ExportExpires), ""];
            (table(&headings, &exports, lang.t(Msg::NothingYet), |e| html! {
                tr {
                    td { (e.id) }
                    td { (format::datetime(lang, e.created_at)) }
                    td { (e.state.as_str()) }
                    td { @if let Some(t) = e.expires_at { (format::datetime(lang, t)) } }
                    td {
                        @if e.state == ExportState::Ready {
                            a href=(format!("{PATH}/{}/download", e.id)) download { (lang.t(Msg::ExportDownload)) }
                        }
                    }
                }
            }))
        }
        (closing)
    };
    Ok(settings_page(lang, signed_in, PATH, lang.t(Msg::YourData), body))
}

/// The closing section: the form to close (the tax number typed again), or, once closed, when
/// the data goes and the button that reopens.
async fn closing_section(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    is_owner: bool,
    error: Option<&ApiError>,
    reopened: bool,
) -> Result<Markup, PortalError> {
    let closure = closure::current(st, signed_in.principal.org_id).await?;
    let named = match error {
        Some(ApiError::Validation { field, reason }) if field == "confirm" => Some(reason.as_str()),
        _ => None,
    };
    Ok(html! {
        h2 #closure-h { (lang.t(Msg::Closure)) }
        @if reopened { (flash(lang.t(Msg::ClosureReopened), "ok")) }
        @if let Some(e) = error.filter(|_| named.is_none()) { (alert(lang, e)) }
        @if let (OrgStatus::Closed, Some(after)) = (closure.status, closure.erase_after) {
            p role="status" { (lang.t(Msg::ClosureClosed)) " " strong { (format::datetime(lang, after)) } }
            @if is_owner {
                form method="post" action=(format!("{PATH}/reopen")) {
                    input type="hidden" name="_csrf" value=(signed_in.csrf);
                    button type="submit" { (lang.t(Msg::ClosureReopen)) }
                }
            }
        } @else {
            p { (lang.t(Msg::ClosureAbout)) }
            p { (lang.t(Msg::ClosureGrace)) ": " (st.cfg.organization_grace_days) }
            @if !is_owner {
                p.muted { (lang.t(Msg::ClosureOwnerOnly)) }
            } @else {
                form.record method="post" action=(format!("{PATH}/close")) aria-labelledby="closure-h" novalidate {
                    input type="hidden" name="_csrf" value=(signed_in.csrf);
                    div.field {
                        label for="c-confirm" { (lang.t(Msg::ClosureConfirm)) }
                        input #c-confirm type="text" name="confirm" inputmode="numeric" autocomplete="off" maxlength="50"
                            required aria-invalid=[named.map(|_| "true")]
                            aria-describedby=[named.map(|_| "c-confirm-error")];
                        (field_error("c-confirm", named))
                    }
                    div { button.danger type="submit" { (lang.t(Msg::Closure)) } }
                }
            }
        }
    })
}

/// `GET /settings/data`.
pub(crate) async fn show(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    Ok(Html(render(&st, m.lang, &m.signed_in, None, q.get("done").map(String::as_str)).await?))
}

/// `POST /settings/data`: as `POST /api/v1/portal/exports`.
pub(crate) async fn ask(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/exports").await?;
    changed(api::request(&st, m.principal()).await, &format!("{PATH}?done=asked"), &headers, async |e| {
        render(&st, m.lang, &m.signed_in, Some(Failed::Export(e)), None).await
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct CloseForm {
    #[serde(default)]
    confirm: String,
}

/// `POST /settings/data/close`: as `POST /api/v1/portal/closure`.
pub(crate) async fn close(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<CloseForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/closure").await?;
    let outcome = closure::close_for(&st, m.principal(), &f.confirm).await.map(|_| ());
    closure_answer(&st, &m, &headers, outcome, "closed").await
}

/// `POST /settings/data/reopen`: as `DELETE /api/v1/portal/closure`.
pub(crate) async fn reopen(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::DELETE, "/portal/closure").await?;
    let outcome = closure::reopen_for(&st, m.principal()).await.map(|_| ());
    closure_answer(&st, &m, &headers, outcome, "reopened").await
}

/// Back to the page once done; the page with the error when it can be put right.
async fn closure_answer(
    st: &AppState,
    m: &Member<AccountWrite>,
    headers: &HeaderMap,
    outcome: Result<(), ApiError>,
    done: &str,
) -> Result<Response, PortalError> {
    changed(outcome, &format!("{PATH}?done={done}#closure-h"), headers, async |e| {
        render(st, m.lang, &m.signed_in, Some(Failed::Closure(e)), None).await
    })
    .await
}

/// `GET /settings/data/{id}/download`: as `GET /api/v1/portal/exports/{id}/download`.
pub(crate) async fn download(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Path(id): Path<ExportId>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::GET, "/portal/exports/{id}/download").await?;
    Ok(api::archive(&st, m.principal(), id).await?)
}
