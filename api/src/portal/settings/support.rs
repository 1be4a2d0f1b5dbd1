//! Support: the organization's tickets, and a new one opened with a subject, a message and a
//! priority. The API keeps no replies and shows no single ticket, so neither does the portal.

use tns_core::domain::kinds::Priority;
use tns_store::{self as db, pagination::Page};

use super::prelude::*;
use crate::v1::endpoints::support::{self as api, TicketIn};

const PATH: &str = "/settings/support";

#[derive(Debug, Default, Deserialize)]
pub(crate) struct TicketForm {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    priority: String,
}

async fn render(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    typed: &TicketForm,
    error: Option<&ApiError>,
    opened: bool,
) -> Result<String, PortalError> {
    let tickets = db::tickets::list(&st.db, signed_in.principal.org_id, &Page { limit: 50, before: None }).await?;
    let may_open = signed_in.principal.scopes.allows(Scope::AccountWrite);
    let named = match error {
        Some(ApiError::Validation { field, reason }) if ["subject", "body", "priority"].contains(&field.as_str()) => {
            Some((field.as_str(), reason.as_str()))
        }
        _ => None,
    };
    let err = |f: &str| named.filter(|(n, _)| *n == f).map(|(_, r)| r);
    let described = |f: &str| err(f).map(|_| format!("t-{f}-error"));
    let chosen = if typed.priority.is_empty() { Priority::Normal.as_str() } else { typed.priority.as_str() };
    let body = html! {
        @if opened { (flash(lang.t(Msg::TicketOpened), "ok")) }
        h2 { (lang.t(Msg::Tickets)) }
        @let headings = ["#", lang.t(Msg::Subject), lang.t(Msg::Priority), lang.t(Msg::Status), lang.t(Msg::Created)];
        (table(&headings, &tickets, lang.t(Msg::NothingYet), |t| html! {
            tr {
                td { (t.id) }
                td { (t.subject) }
                td { (t.priority.as_str()) }
                td { (t.status.as_str()) }
                td { (format::datetime(lang, t.created_at)) }
            }
        }))
        @if may_open {
            (new_entry_form(signed_in, PATH, ("new-ticket-h", lang.t(Msg::NewTicket)), lang.t(Msg::NewTicket), form_alert(lang, error, named.is_some()), html! {
                div.field {
                    label for="t-subject" { (lang.t(Msg::Subject)) }
                    input #t-subject type="text" name="subject" value=(typed.subject) maxlength="200" required
                        aria-invalid=[err("subject").map(|_| "true")] aria-describedby=[described("subject")];
                    (field_error("t-subject", err("subject")))
                }
                div.field {
                    label for="t-body" { (lang.t(Msg::Message)) }
                    textarea #t-body name="body" rows="6" maxlength="10000" required
                        aria-invalid=[err("body").map(|_| "true")] aria-describedby=[described("body")] { (typed.body) }
                    (field_error("t-body", err("body")))
                }
                div.field {
                    label for="t-priority" { (lang.t(Msg::Priority)) }
                    select #t-priority name="priority"
                        aria-invalid=[err("priority").map(|_| "true")] aria-describedby=[described("priority")] {
                        @for p in Priority::ALL { option value=(p.as_str()) selected[p.as_str() == chosen] { (p.as_str()) } }
                    }
                    (field_error("t-priority", err("priority")))
                }
            }))
        }
    };
    Ok(settings_page(lang, signed_in, PATH, lang.t(Msg::Support), body))
}

/// `GET /settings/support`.
pub(crate) async fn show(Viewing { st, m, query: q }: Viewing<AccountRead>) -> Result<Html<String>, PortalError> {
    let opened = done_is(&q, "opened");
    Ok(Html(render(&st, m.lang, &m.signed_in, &TicketForm::default(), None, opened).await?))
}

/// `POST /settings/support`: as `POST /api/v1/portal/support/tickets`.
pub(crate) async fn open(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<TicketForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/support/tickets").await?;
    let outcome = match parse_value::<TicketIn>(json!({"subject": f.subject, "body": f.body, "priority": f.priority})) {
        Ok(input) => api::open_ticket(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    changed(outcome, &format!("{PATH}?done=opened"), &headers, async |e| {
        render(&st, m.lang, &m.signed_in, &f, Some(e), false).await
    })
    .await
}
