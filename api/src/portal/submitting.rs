//! Submitting a record from its page, re-activating a cancelled one and fetching the
//! downstream's PDF of it: one set of handlers for journeys and cargo shipments, each action
//! admitted as the API call it mirrors and done by the API's own service function.

use axum::{
    http::Method,
    response::{Html, IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use maud::{html, Markup};
use tns_core::{
    ids::{CargoId, JourneyId},
    scopes::need::{JourneysRead, JourneysWrite},
};
use tns_store::submissions::Target;

use super::{
    i18n::{Lang, Msg},
    member::{admit, Acting},
    page::{go, PortalError},
    records::confirmed,
    submissions::status,
};
use crate::{
    state::AppState,
    submit::{reactivate as again, submit as queue},
    v1::endpoints::{reports, submissions::DEFAULT_REACTIVATION_REASON},
};

/// The kinds of record a member submits from its page.
#[derive(Debug, Clone, Copy)]
pub(super) enum Record {
    Journey,
    Cargo,
}

impl Record {
    /// Where its pages are.
    fn path(self) -> &'static str {
        match self {
            Record::Journey => "/journeys",
            Record::Cargo => "/cargo",
        }
    }

    /// The API routes the actions are admitted as: submit, report, re-activate.
    fn api_routes(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Record::Journey => {
                ("/portal/journeys/{id}/submit", "/portal/journeys/{id}/report", "/portal/journeys/{id}/reactivate")
            }
            Record::Cargo => {
                ("/portal/cargo/{id}/submit", "/portal/cargo/{id}/report", "/portal/cargo/{id}/reactivate")
            }
        }
    }

    /// The kind of `record`.
    fn of(record: Target) -> Record {
        match record {
            Target::Journey(_) => Record::Journey,
            Target::Cargo(_) => Record::Cargo,
        }
    }

    /// The button on a cancelled record's page that re-activates it downstream (confirmed).
    pub(super) fn reactivate_form(record: Target, lang: Lang, csrf: &str) -> Markup {
        let action = format!("{}/{}/reactivate", Record::of(record).path(), record.id());
        let button = html! { button.secondary type="submit" { (lang.t(Msg::JReactivate)) } };
        confirmed(&action, lang.t(Msg::JConfirmReactivate), csrf, button)
    }

    /// The record of this kind numbered `id` (from the page's path).
    fn target(self, id: i64) -> Target {
        match self {
            Record::Journey => Target::Journey(JourneyId(id)),
            Record::Cargo => Target::Cargo(CargoId(id)),
        }
    }

    /// The button on the record's page that submits it; the answer (the submission's live
    /// status) goes into the element `into`, or, without scripts, the page comes back.
    pub(super) fn submit_form(record: Target, lang: Lang, csrf: &str, into: &str) -> Markup {
        let action = format!("{}/{}/submit", Record::of(record).path(), record.id());
        html! {
            form method="post" action=(action) hx-post=(action) hx-target=(into) hx-swap="innerHTML" {
                input type="hidden" name="_csrf" value=(csrf);
                button type="submit" { (lang.t(Msg::JSubmit)) }
            }
        }
    }

    /// `POST …/{id}/submit`, `POST …/{id}/reactivate` and `GET …/{id}/report` under the
    /// record's path.
    pub(super) fn routes(self) -> Router<AppState> {
        let p = self.path();
        Router::new()
            .route(&format!("{p}/{{id}}/submit"), post(move |a| submit(self, a)))
            .route(&format!("{p}/{{id}}/reactivate"), post(move |a| reactivate(self, a)))
            .route(&format!("{p}/{{id}}/report"), get(move |a| report(self, a)))
    }
}

/// Submit, as the API's submit route: for htmx the submission's live status (which then
/// follows itself until it is final), else back to the record's page.
async fn submit(record: Record, a: Acting<JourneysWrite, i64>) -> Result<Response, PortalError> {
    admit(&a.st, a.m.principal(), Method::POST, record.api_routes().0).await?;
    let s = queue(&a.st, a.m.org(), record.target(a.id), &a.m.principal().credential_id()).await?;
    if a.headers.contains_key("hx-request") {
        return Ok(Html(status(a.m.lang, &s).into_string()).into_response());
    }
    Ok(Redirect::to(&format!("{}/{}?done=submitted", record.path(), a.id)).into_response())
}

/// Re-activate a cancelled record, as the API's re-activate route; back to the record's page.
async fn reactivate(record: Record, a: Acting<JourneysWrite, i64>) -> Result<Response, PortalError> {
    admit(&a.st, a.m.principal(), Method::POST, record.api_routes().2).await?;
    let by = a.m.principal().credential_id();
    again(&a.st, a.m.org(), record.target(a.id), DEFAULT_REACTIVATION_REASON, &by).await?;
    Ok(go(&format!("{}/{}?done=submitted", record.path(), a.id), &a.headers))
}

/// The downstream's PDF of a delivered record, as the API's report route serves it (admitted
/// as that call: it asks the downstream, it is no page view).
async fn report(record: Record, a: Acting<JourneysRead, i64>) -> Result<Response, PortalError> {
    admit(&a.st, a.m.principal(), Method::GET, record.api_routes().1).await?;
    let pdf = match record.target(a.id) {
        Target::Journey(id) => reports::journey_report(&a.st, a.m.org(), id).await,
        Target::Cargo(id) => reports::cargo_report(&a.st, a.m.org(), id).await,
    };
    Ok(pdf?)
}
