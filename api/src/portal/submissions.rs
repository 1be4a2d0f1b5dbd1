//! The submissions pages: the list with the API's filters, one submission with its attempts
//! (retry a failed one, cancel a delivered record downstream), and the live status fragment
//! other pages embed, which polls itself until the submission is final.

use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, HeaderValue, Method},
    response::{Html, IntoResponse, Redirect, Response},
    Form,
};
use maud::{html, Markup};
use tns_core::{
    domain::{
        code_lists::CodeListName,
        kinds::{Operation, SubmissionState, TargetType},
    },
    ids::SubmissionId,
    scopes::{
        need::{JourneysWrite, SubmissionsRead},
        Scope,
    },
};
use tns_store::submissions::Submission;

use super::{
    dashboard::state_label,
    format,
    i18n::{Lang, Msg},
    member::{admit, Member},
    page::{flash, page, table, PortalError, Shell},
};
use crate::{
    error::ApiError,
    extract::{parse_query, parse_value},
    state::AppState,
    submit::submit,
    v1::endpoints::submissions::{self as api, CancelIn, SubmissionsQuery},
};

/// The list's filters: the API's query parameters, by name.
const FILTERS: [&str; 5] = ["state", "target_type", "created_from", "created_to", "drifted"];

/// The query's non-empty pairs (a form sends its empty fields too).
fn filled(raw: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(k, v)| (k.into_owned(), v.trim().to_string()))
        .collect()
}

fn query_string(pairs: &[(String, String)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

pub(super) fn target_label(lang: Lang, t: TargetType) -> &'static str {
    lang.t(match t {
        TargetType::Journey => Msg::TargetJourney,
        TargetType::Cargo => Msg::TargetCargo,
    })
}

/// Where a submission's record is shown, when the portal has a page for it.
fn record_link(s: &Submission) -> Option<String> {
    (s.target_type == TargetType::Cargo).then(|| format!("/cargo/{}", s.target_id))
}

/// `GET /submissions`: newest first, by the API's filters (`GET /api/v1/portal/submissions`),
/// a page at a time.
pub(super) async fn list(
    State(st): State<AppState>,
    m: Member<SubmissionsRead>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PortalError> {
    let lang = m.lang;
    let pairs = filled(raw.as_deref());
    let mut asked: Vec<(String, String)> =
        pairs.iter().filter(|(k, _)| FILTERS.contains(&k.as_str()) || k == "cursor").cloned().collect();
    asked.push(("limit".into(), "50".into()));
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/submissions" };
    let value = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let (paged, error) = match parse_query::<SubmissionsQuery>(&query_string(&asked)) {
        Ok(q) => (Some(api::list_page(&st, m.principal(), &q).await?), None),
        Err(ApiError::Validation { field, reason }) if FILTERS.contains(&field.as_str()) => {
            (None, Some((field, reason)))
        }
        Err(e) => return Err(e.into()),
    };
    let filters: Vec<(String, String)> = pairs.iter().filter(|(k, _)| FILTERS.contains(&k.as_str())).cloned().collect();
    let body = html! {
        h1 { (lang.t(Msg::Submissions)) }
        form.filters method="get" action="/submissions" {
            (choice(lang, "state", Msg::State, SubmissionState::ALL.iter().map(|s| (s.as_str(), state_label(lang, *s))), value("state"), &error))
            (choice(lang, "target_type", Msg::TargetType, TargetType::ALL.iter().map(|t| (t.as_str(), target_label(lang, *t))), value("target_type"), &error))
            (day(lang, "created_from", Msg::CreatedFrom, value("created_from"), &error))
            (day(lang, "created_to", Msg::CreatedTo, value("created_to"), &error))
            (choice(lang, "drifted", Msg::Drifted, [("true", lang.t(Msg::Yes)), ("false", lang.t(Msg::No))].into_iter(), value("drifted"), &error))
            div.field { button type="submit" { (lang.t(Msg::Filter)) } }
        }
        @if let Some(paged) = &paged {
            @let headings = ["#", lang.t(Msg::When), lang.t(Msg::Record), lang.t(Msg::Operation), lang.t(Msg::State),
                lang.t(Msg::Reference), lang.t(Msg::Message)];
            (table(&headings, &paged.data, lang.t(Msg::NothingYet), |s| html! {
                tr {
                    td { a href=(format!("/submissions/{}", s.id)) { (s.id) } }
                    td { (format::datetime(lang, s.created_at)) }
                    td { (target_label(lang, s.target_type)) " #" (s.target_id) }
                    td { (s.operation.as_str()) }
                    td { span class=(format!("badge state-{}", s.state.as_str())) { (state_label(lang, s.state)) } }
                    td { (s.downstream_reference.as_deref().unwrap_or("—")) }
                    td { (s.error_message.as_deref().unwrap_or("—")) }
                }
            }))
            @if let Some(next) = &paged.next_cursor {
                @let more: Vec<(String, String)> = filters.iter().cloned().chain([("cursor".to_string(), next.clone())]).collect();
                p { a href=(format!("/submissions?{}", query_string(&more))) rel="next" { (lang.t(Msg::Next)) } }
            }
        }
    };
    let status =
        if error.is_some() { axum::http::StatusCode::UNPROCESSABLE_ENTITY } else { axum::http::StatusCode::OK };
    Ok((status, Html(page(&shell, lang.t(Msg::Submissions), body).into_string())).into_response())
}

/// A filter's error, when it is this one's.
fn error_of<'a>(name: &str, error: &'a Option<(String, String)>) -> Option<&'a str> {
    error.as_ref().filter(|(f, _)| f == name).map(|(_, r)| r.as_str())
}

fn choice<'a>(
    lang: Lang,
    name: &str,
    label: Msg,
    options: impl Iterator<Item = (&'a str, &'a str)>,
    value: Option<&str>,
    error: &Option<(String, String)>,
) -> Markup {
    let id = format!("q-{name}");
    let err = error_of(name, error);
    html! {
        div.field {
            label for=(id) { (lang.t(label)) }
            select #(id) name=(name) aria-invalid=[err.map(|_| "true")] aria-describedby=[err.map(|_| format!("{id}-error"))] {
                option value="" { (lang.t(Msg::All)) }
                @for (v, text) in options { option value=(v) selected[value == Some(v)] { (text) } }
            }
            @if let Some(r) = err { p.error-text id=(format!("{id}-error")) { (r) } }
        }
    }
}

fn day(lang: Lang, name: &str, label: Msg, value: Option<&str>, error: &Option<(String, String)>) -> Markup {
    let id = format!("q-{name}");
    let err = error_of(name, error);
    html! {
        div.field {
            label for=(id) { (lang.t(label)) }
            input #(id) type="date" name=(name) value=[value]
                aria-invalid=[err.map(|_| "true")] aria-describedby=[err.map(|_| format!("{id}-error"))];
            @if let Some(r) = err { p.error-text id=(format!("{id}-error")) { (r) } }
        }
    }
}

/// A submission's live status: its state, the downstream's reference and message. While it is
/// pending it asks for itself again every 2 s (and replaces itself), while unknown (looked up
/// again with back-off) every 30 s; once final it stops.
pub(super) fn status(lang: Lang, s: &Submission) -> Markup {
    let open = s.state.is_open();
    let every = if s.state == SubmissionState::Pending { "every 2s" } else { "every 30s" };
    let url = format!("/submissions/{}/status", s.id);
    html! {
        div id=(format!("submission-{}", s.id)) aria-live="polite" class="live-status"
            hx-get=[open.then_some(&url)] hx-trigger=[open.then_some(every)] hx-swap=[open.then_some("outerHTML")] {
            span class=(format!("badge state-{}", s.state.as_str())) { (state_label(lang, s.state)) }
            @if let Some(r) = &s.downstream_reference {
                " " span.reference { (lang.t(Msg::Reference)) ": " code { (r) } }
            }
            @if let Some(msg) = &s.error_message { p.message { (msg) } }
            @if !s.warnings.is_empty() {
                ul.warnings { @for w in &s.warnings { li { (w.detail) } } }
            }
            // What changed downstream outside TNS, where the record's page shows its status.
            @if let Some(d) = &s.drift {
                @let fields: Vec<&str> = d.differences.iter().map(|x| x.field.as_str()).collect();
                p.message.drift role="note" { strong { (lang.t(Msg::Drifted)) } ": " (fields.join(", ")) }
            }
            " " a href=(format!("/submissions/{}", s.id)) { (lang.t(Msg::Details)) " #" (s.id) }
        }
    }
}

/// `GET /submissions/{id}/status`: the live status fragment (as `GET
/// /api/v1/portal/submissions/{id}` reads it).
pub(super) async fn live(
    State(st): State<AppState>,
    m: Member<SubmissionsRead>,
    Path(id): Path<SubmissionId>,
) -> Result<Response, PortalError> {
    let s = api::one(&st, m.principal(), id).await?;
    let mut res = Html(status(m.lang, &s).into_string()).into_response();
    // Only a pending status asks again, so this is the moment it became final: the record's
    // page listens for the event and renews what the outcome changed (its state, its actions).
    if !s.state.is_open() {
        res.headers_mut().insert("hx-trigger", HeaderValue::from_static(FINAL_EVENT));
    }
    Ok(res)
}

/// The event a live status raises (on htmx's side) once its submission is final.
pub(super) const FINAL_EVENT: &str = "tns-submission-final";

/// `GET /submissions/{id}`: the submission, its attempts and each passenger's outcome, as the
/// API's `GET /api/v1/portal/submissions/{id}` answers them for the member.
pub(super) async fn show(
    State(st): State<AppState>,
    m: Member<SubmissionsRead>,
    Path(id): Path<SubmissionId>,
    RawQuery(raw): RawQuery,
) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let done = filled(raw.as_deref()).into_iter().find(|(k, _)| k == "done").and_then(|(_, v)| match v.as_str() {
        "retried" => Some(Msg::Retried),
        "cancelling" => Some(Msg::CancelQueued),
        _ => None,
    });
    let d = api::detail(&st, m.principal(), id).await?;
    let s = &d.submission;
    let may_act = m.principal().scopes.allows(Scope::JourneysWrite);
    // A shipment's cancellation names why with a code of the downstream's list (when it has
    // codes); a journey's takes none.
    let cancel_kinds = match s.target_type {
        TargetType::Cargo if may_act => tns_store::code_lists::one(&st.db, CodeListName::TripCancelKinds)
            .await?
            .map(|l| l.codes.0)
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let title = format!("{} #{}", lang.t(Msg::SubmissionNo), s.id);
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/submissions" };
    let csrf = &m.signed_in.csrf;
    let body = html! {
        h1 { (title) }
        @if let Some(done) = done { (flash(lang.t(done), "ok")) }
        (status(lang, s))
        dl.facts {
            dt { (lang.t(Msg::Record)) }
            dd {
                @match record_link(s) {
                    Some(href) => a href=(href) { (target_label(lang, s.target_type)) " #" (s.target_id) },
                    None => { (target_label(lang, s.target_type)) " #" (s.target_id) }
                }
            }
            dt { (lang.t(Msg::Operation)) } dd { (s.operation.as_str()) }
            dt { (lang.t(Msg::Adapter)) } dd { (s.adapter) }
            dt { (lang.t(Msg::When)) } dd { (format::datetime(lang, s.created_at)) }
            @if let Some(f) = s.finished_at { dt { (lang.t(Msg::Finished)) } dd { (format::datetime(lang, f)) } }
            dt { (lang.t(Msg::Attempts)) } dd { (s.attempts) }
            @if let Some(by) = &s.submitted_by { dt { (lang.t(Msg::SubmittedBy)) } dd { code { (by) } } }
        }
        @if let Some(drift) = &s.drift {
            section.drift aria-labelledby="drift-h" {
                h2 #drift-h { (lang.t(Msg::Drifted)) }
                p { (lang.t(Msg::DriftedHelp)) " (" (format::datetime(lang, drift.checked_at)) ")" }
                @let headings = [lang.t(Msg::Field), lang.t(Msg::Expected), lang.t(Msg::Found)];
                (table(&headings, &drift.differences, "", |d| html! {
                    tr { td { code { (d.field.as_str()) } } td { (d.expected) } td { (d.found) } }
                }))
            }
        }
        @if !s.warnings.is_empty() {
            h2 { (lang.t(Msg::Warnings)) }
            ul { @for w in &s.warnings { li { (serde_json::to_value(w).ok().and_then(|v| v["detail"].as_str().map(String::from)).unwrap_or_default()) } } }
        }
        @if may_act {
            div.actions {
                @if s.state == SubmissionState::Failed {
                    form method="post" action=(format!("/submissions/{}/retry", s.id)) {
                        input type="hidden" name="_csrf" value=(csrf);
                        button type="submit" { (lang.t(Msg::Retry)) }
                    }
                }
                @if s.state == SubmissionState::Delivered && s.operation != Operation::Cancel {
                    form method="post" action=(format!("/submissions/{}/cancel", s.id)) {
                        input type="hidden" name="_csrf" value=(csrf);
                        div.field {
                            label for="cancel-reason" { (lang.t(Msg::CancelReason)) }
                            input #cancel-reason type="text" name="reason" maxlength="400" autocomplete="off";
                        }
                        @if !cancel_kinds.is_empty() {
                            div.field {
                                label for="cancel-kind" { (lang.t(Msg::CancelKind)) }
                                select #cancel-kind name="cancel_kind" {
                                    option value="" { (lang.t(Msg::CancelKindDefault)) }
                                    @for k in &cancel_kinds { option value=(k.code) { (k.code) " — " (k.name) } }
                                }
                            }
                        }
                        button.danger type="submit" { (lang.t(Msg::CancelDownstream)) }
                    }
                }
            }
        }
        section aria-labelledby="attempts-h" {
            h2 #attempts-h { (lang.t(Msg::Attempts)) }
            @let headings = [lang.t(Msg::Started), lang.t(Msg::Finished), lang.t(Msg::Outcome), lang.t(Msg::Reference),
                lang.t(Msg::Message)];
            (table(&headings, &d.history, lang.t(Msg::NoAttempts), |a| html! {
                tr.attempt {
                    td { (format::datetime(lang, a.started_at)) }
                    td { (format::datetime(lang, a.finished_at)) }
                    td { (a.outcome) }
                    td { (a.downstream_reference.as_deref().unwrap_or("—")) }
                    td { (a.error.as_deref().unwrap_or("—")) }
                }
            }))
        }
        @if !d.passengers.is_empty() {
            section aria-labelledby="pax-h" {
                h2 #pax-h { (lang.t(Msg::Passengers)) }
                (table(&["#", lang.t(Msg::Reference), lang.t(Msg::Message)], &d.passengers, "", |p| html! {
                    tr {
                        td { (p.key) }
                        td { (p.downstream_reference.as_deref().unwrap_or("—")) }
                        td { (p.error.as_deref().unwrap_or("—")) }
                    }
                }))
            }
        }
        details {
            summary { (lang.t(Msg::Sent)) }
            pre { (serde_json::to_string_pretty(&d.snapshot).unwrap_or_default()) }
        }
    };
    Ok(Html(page(&shell, &title, body).into_string()))
}

/// The API route that submits (or cancels) a target, which an action on it mirrors.
fn route_of(t: TargetType, action: &str) -> String {
    match t {
        TargetType::Journey => format!("/portal/journeys/{{id}}/{action}"),
        TargetType::Cargo => format!("/portal/cargo/{{id}}/{action}"),
    }
}

/// `POST /submissions/{id}/retry`: submit the failed submission's journey or shipment again,
/// as `POST /api/v1/portal/{journeys|cargo}/{id}/submit` would. From the dashboard's table
/// (htmx aiming at its row) the row is answered; otherwise the new submission's page.
pub(super) async fn retry(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Path(id): Path<SubmissionId>,
) -> Result<Response, PortalError> {
    let lang = m.lang;
    let failed = api::one(&st, m.principal(), id).await?;
    admit(&st, m.principal(), Method::POST, &route_of(failed.target_type, "submit")).await?;
    let again = submit(&st, m.org(), failed.target(), &m.principal().credential_id()).await?;
    let row = format!("failed-{id}");
    if headers.get("hx-target").is_some_and(|t| t.as_bytes() == row.as_bytes()) {
        return Ok(Html(
            html! {
                tr #(row) {
                    td colspan="4" {
                        (flash(lang.t(Msg::Retried), "ok"))
                        " " (status(lang, &again))
                    }
                }
            }
            .into_string(),
        )
        .into_response());
    }
    Ok(Redirect::to(&format!("/submissions/{}?done=retried", again.id)).into_response())
}

/// `POST /submissions/{id}/cancel`: cancel the submission's journey or shipment downstream, as
/// `POST /api/v1/portal/{journeys|cargo}/{id}/cancel` with the reason typed (the API's default
/// when none); then the cancellation's page.
pub(super) async fn cancel(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    Path(id): Path<SubmissionId>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    let of = api::one(&st, m.principal(), id).await?;
    admit(&st, m.principal(), Method::POST, &route_of(of.target_type, "cancel")).await?;
    // The fields filled in, as the API's body (a blank one is absent).
    let filled: serde_json::Map<String, serde_json::Value> = pairs
        .into_iter()
        .filter(|(k, v)| (k == "reason" || k == "cancel_kind") && !v.trim().is_empty())
        .map(|(k, v)| (k, v.into()))
        .collect();
    let body: Option<CancelIn> = match filled.is_empty() {
        true => None,
        false => Some(parse_value(filled.into())?),
    };
    let queued = api::cancel_target(&st, m.principal(), of.target(), body).await?;
    Ok(Redirect::to(&format!("/submissions/{}?done=cancelling", queued.id)).into_response())
}
