//! The cargo pages: shipments listed by the API's status filter, a shipment's form built from
//! its request schema (`CargoIn`, its provinces and districts picked by name), its page with
//! the submit action and the live status of its latest submission, and the downstream's PDF
//! once delivered. Each action runs the cargo endpoints' own service functions and is admitted
//! as the API call it mirrors.

use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, Method, StatusCode},
    response::{Html, IntoResponse, Response},
    Form,
};
use maud::{html, Markup};
use tns_core::{
    domain::kinds::RecordStatus,
    ids::{CargoId, Target},
    scopes::{
        need::{JourneysRead, JourneysWrite},
        Scope,
    },
};
use tns_store::cargo::Cargo;

use super::{
    forms::{self, Typed},
    i18n::{field_label, Msg},
    member::{admit, Member},
    page::{flash, go, page, table, urlencode, PortalError, Shell},
    records::{delete_form, form_values, shown, status_label, FormPage},
    submissions::{status, FINAL_EVENT},
    submitting::Record,
};
use crate::{
    error::ApiError,
    extract::{parse_query, parse_value},
    state::AppState,
    v1::{
        endpoints::{
            cargo::{self as api, CargoIn, CargoQuery},
            submissions::{self as subs, SubmissionsQuery},
        },
        resource::delete_draft,
    },
};

const SCHEMA: &str = "CargoIn";

/// A loading or unloading place as a person reads it: district and province, or the country
/// abroad.
fn place(st: &AppState, city: Option<i32>, district: Option<i32>, country: Option<&str>) -> String {
    match (city, district) {
        (Some(city), Some(district)) => {
            let c = st.refdata.city(city).map(|c| c.name.as_str()).unwrap_or("?");
            let d = st.refdata.district(district).map(|d| d.name.as_str()).unwrap_or("?");
            format!("{d} / {c}")
        }
        _ => country.unwrap_or("?").to_string(),
    }
}

/// `GET /cargo`: shipments, newest first, by the API's status filter (`GET /api/v1/portal/cargo`).
pub(super) async fn list(
    State(st): State<AppState>,
    m: Member<JourneysRead>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PortalError> {
    let lang = m.lang;
    let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .filter(|(k, v)| !v.trim().is_empty() && (k == "status" || k == "cursor"))
        .map(|(k, v)| (k.into_owned(), v.trim().to_string()))
        .collect();
    let chosen = pairs.iter().find(|(k, _)| k == "status").map(|(_, v)| v.clone());
    let mut asked = pairs.clone();
    asked.push(("limit".into(), "50".into()));
    let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(&asked).finish();
    let (paged, error) = match parse_query::<CargoQuery>(&query) {
        Ok(q) => (Some(api::list_page(&st, m.org(), &q).await?), None),
        Err(ApiError::Validation { field, reason }) if field == "status" => (None, Some(reason)),
        Err(e) => return Err(e.into()),
    };
    let may_write = m.principal().scopes.allows(Scope::JourneysWrite);
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/cargo" };
    let body = html! {
        div.toolbar {
            h1 { (lang.t(Msg::Cargo)) }
            @if may_write { a.button href="/cargo/new" { (lang.t(Msg::NewCargo)) } }
        }
        form.filters method="get" action="/cargo" {
            div.field {
                label for="q-status" { (field_label(lang, "status")) }
                select #q-status name="status" aria-invalid=[error.as_ref().map(|_| "true")]
                    aria-describedby=[error.as_ref().map(|_| "q-status-error")] {
                    option value="" { (lang.t(Msg::All)) }
                    @for s in RecordStatus::ALL {
                        option value=(s.as_str()) selected[chosen.as_deref() == Some(s.as_str())] { (status_label(lang, *s)) }
                    }
                }
                @if let Some(r) = &error { p.error-text #q-status-error { (r) } }
            }
            div.field { button type="submit" { (lang.t(Msg::Filter)) } }
        }
        @if let Some(paged) = &paged {
            @let (status, date, sender, amount) = (field_label(lang, "status"), field_label(lang, "loading_date"),
                field_label(lang, "sender_name"), field_label(lang, "cargo_amount"));
            @let headings = ["#", &status, &date, lang.t(Msg::From), lang.t(Msg::To), &sender, &amount];
            (table(&headings, &paged.data, lang.t(Msg::NothingYet), |c| html! {
                tr {
                    td { a href=(format!("/cargo/{}", c.id)) { (c.id) } }
                    td { span class=(format!("badge status-{}", c.status.as_str())) { (status_label(lang, c.status)) } }
                    @let f = &c.shipment;
                    td { (super::format::date(lang, f.loading_date.0)) }
                    td { (place(&st, f.loading_city_id, f.loading_district_id, f.loading_country.as_deref())) }
                    td { (place(&st, f.unloading_city_id, f.unloading_district_id, f.unloading_country.as_deref())) }
                    td { (f.sender_name) }
                    td.num { (f.cargo_amount) " " (f.cargo_unit.as_str()) }
                }
            }))
            @if let Some(next) = &paged.next_cursor {
                @let status_q = chosen.as_deref().map(|s| format!("status={}&", urlencode(s))).unwrap_or_default();
                p { a href=(format!("/cargo?{status_q}cursor={}", urlencode(next))) rel="next" { (lang.t(Msg::Next)) } }
            }
        }
    };
    let code = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    Ok((code, Html(page(&shell, lang.t(Msg::Cargo), body).into_string())).into_response())
}

/// The shipment's form page.
const FORM: FormPage = FormPage { path: "/cargo", new: Msg::NewCargo, edit: Msg::EditCargo };

/// A shipment's form: empty for a new one, else its values; an error of the API's beside the
/// field it names, or above the form.
fn form(m: &Member<JourneysWrite>, id: Option<i64>, typed: &Typed, error: Option<&ApiError>) -> Markup {
    let specs = forms::fields(SCHEMA);
    let named = error.and_then(|e| forms::field_error(specs, e));
    FORM.form(m, id, error, named.is_some(), forms::inputs(m.lang, specs, typed, named.as_ref()), &FORM.at(id))
}

fn form_page(m: &Member<JourneysWrite>, id: Option<i64>, typed: &Typed, error: Option<&ApiError>) -> String {
    FORM.page(m, id, form(m, id, typed, error))
}

/// `GET /cargo/new`.
pub(super) async fn new(m: Member<JourneysWrite>) -> Html<String> {
    Html(form_page(&m, None, &Typed::new(), None))
}

/// `GET /cargo/{id}/edit`: the form with the shipment's values.
pub(super) async fn edit(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    Path(id): Path<CargoId>,
) -> Result<Html<String>, PortalError> {
    let c = api::load(&st, m.org(), id).await?;
    Ok(Html(form_page(&m, Some(id.get()), &form_values(SCHEMA, &CargoIn::from(&c.shipment)), None)))
}

/// Whether an API error is the member's to put right in the form (a field, a rule across
/// fields, a vehicle or driver the organization does not have).
fn correctable(e: &ApiError) -> bool {
    matches!(e, ApiError::Validation { .. } | ApiError::Conflict(..) | ApiError::BadRequest(..) | ApiError::NotFound(_))
}

/// Saved: the shipment's page; or the form again with what was typed and why it was refused.
fn answer(
    m: &Member<JourneysWrite>,
    headers: &HeaderMap,
    id: Option<i64>,
    typed: &Typed,
    outcome: Result<Cargo, ApiError>,
) -> Result<Response, PortalError> {
    match outcome {
        Ok(c) => Ok(go(&format!("/cargo/{}?done=saved", c.id), headers)),
        Err(e) if correctable(&e) => Ok(FORM.refused(m, headers, id, e.status(), form(m, id, typed, Some(&e)))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /cargo`: create, as `POST /api/v1/portal/cargo`.
pub(super) async fn create(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/cargo").await?;
    let specs = forms::fields(SCHEMA);
    let typed = forms::typed(specs, pairs);
    let outcome = match parse_value::<CargoIn>(forms::json(specs, &typed, false)) {
        Ok(input) => api::create_shipment(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    answer(&m, &headers, None, &typed, outcome)
}

/// `POST /cargo/{id}`: change a draft, as `PUT /api/v1/portal/cargo/{id}` with the whole form
/// (optional fields left empty are removed).
pub(super) async fn update(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Path(id): Path<CargoId>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::PUT, "/portal/cargo/{id}").await?;
    let specs = forms::fields(SCHEMA);
    let typed = forms::typed(specs, pairs);
    let outcome = api::update_shipment(&st, m.principal(), id, &forms::json(specs, &typed, true)).await;
    answer(&m, &headers, Some(id.get()), &typed, outcome)
}

/// `POST /cargo/{id}/delete`: delete a draft, as `DELETE /api/v1/portal/cargo/{id}`.
pub(super) async fn delete(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Path(id): Path<CargoId>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::DELETE, "/portal/cargo/{id}").await?;
    delete_draft(&st.db, Target::Cargo(id), m.principal()).await?;
    Ok(go("/cargo?done=deleted", &headers))
}

/// `GET /cargo/{id}`: the shipment, its actions, and the live status of its latest submission.
pub(super) async fn show(
    State(st): State<AppState>,
    m: Member<JourneysRead>,
    Path(id): Path<CargoId>,
    RawQuery(raw): RawQuery,
) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let c = api::load(&st, m.org(), id).await?;
    let p = m.principal();
    let latest = if p.scopes.allows(Scope::SubmissionsRead) {
        let q: SubmissionsQuery = parse_query(&format!("target_type=cargo&target_id={id}&limit=1"))?;
        subs::list_page(&st, p, &q).await?.data.into_iter().next()
    } else {
        None
    };
    let done = raw.as_deref().and_then(|q| {
        form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "done").and_then(|(_, v)| match v.as_ref() {
            "saved" => Some(Msg::Saved),
            "submitted" => Some(Msg::SubmissionQueued),
            _ => None,
        })
    });
    let may_write = p.scopes.allows(Scope::JourneysWrite);
    let csrf = &m.signed_in.csrf;
    let title = format!("{} #{id}", lang.t(Msg::TargetCargo));
    let values = shown(&c.shipment);
    let f = &c.shipment;
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/cargo" };
    let body = html! {
        h1 { (title) }
        @if let Some(d) = done { (flash(lang.t(d), "ok")) }
        // Renewed in place when the latest submission becomes final (see journeys).
        div #cargo-record hx-get=(format!("/cargo/{id}")) hx-trigger=(format!("{FINAL_EVENT} from:body"))
            hx-select="#cargo-record" hx-swap="outerHTML" hx-disinherit="*" {
            p { span class=(format!("badge status-{}", c.status.as_str())) { (status_label(lang, c.status)) }
                @if let Some(r) = &c.downstream_reference { " " (lang.t(Msg::Reference)) ": " code { (r) } } }
            div #latest-submission {
                @if let Some(s) = &latest { (status(lang, s)) }
            }
            @if may_write {
                div.actions {
                    @if c.status != RecordStatus::Cancelled {
                        (Record::submit_form(Target::Cargo(id), lang, csrf, "#latest-submission"))
                    } @else {
                        (Record::reactivate_form(Target::Cargo(id), lang, csrf))
                    }
                    // A delivered shipment changes too: the change goes as an amendment.
                    @if c.status.is_editable() {
                        a.button.secondary href=(format!("/cargo/{id}/edit")) { (lang.t(Msg::Edit)) }
                    }
                    @if c.status == RecordStatus::Draft {
                        (delete_form(lang, csrf, &format!("/cargo/{id}/delete")))
                    }
                }
            }
            @if c.downstream_reference.is_some() {
                p { a href=(format!("/cargo/{id}/report")) download { (lang.t(Msg::ReportPdf)) } }
            }
        }
        dl.facts {
            @for spec in forms::fields(SCHEMA) {
                dt { (field_label(lang, &spec.name)) }
                dd {
                    @match (spec.name.as_str(), values.get(&spec.name)) {
                        ("loading_district_id", _) => (place(&st, f.loading_city_id, f.loading_district_id, f.loading_country.as_deref())),
                        ("unloading_district_id", _) => (place(&st, f.unloading_city_id, f.unloading_district_id, f.unloading_country.as_deref())),
                        (_, Some(v)) => (v),
                        (_, None) => "—",
                    }
                }
            }
        }
        @if !f.items.is_empty() {
            section aria-labelledby="loads-h" {
                h2 #loads-h { (lang.t(Msg::FurtherLoads)) }
                @let labels = ["cargo_type", "cargo_amount", "sender_name", "receiver_name", "un_number"].map(|f| field_label(lang, f));
                @let headings: Vec<&str> = std::iter::once("#").chain(labels.iter().map(String::as_str)).collect();
                (table(&headings, &f.items.iter().enumerate().collect::<Vec<_>>(), "", |(i, item)| html! {
                    tr {
                        td { (i + 2) }
                        td { (item.cargo_type) }
                        td { (item.cargo_amount) " " (item.cargo_unit.as_str()) }
                        td { (item.sender_name) }
                        td { (item.receiver_name) }
                        td { (item.un_number.as_deref().unwrap_or("—")) }
                    }
                }))
            }
        }
    };
    Ok(Html(page(&shell, &title, body).into_string()))
}
