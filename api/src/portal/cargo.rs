//! The cargo pages: shipments listed by the API's status filter, a shipment's form built from
//! its request schema (`CargoIn`, its provinces and districts picked by name), its page with
//! the submit action and the live status of its latest submission, and the downstream's PDF
//! once delivered. Each action runs the cargo endpoints' own service functions and is admitted
//! as the API call it mirrors.

use axum::{
    extract::RawQuery,
    http::StatusCode,
    response::{Html, IntoResponse, Response},
};
use maud::{html, Markup};
use serde_json::Value;
use tns_core::{
    domain::kinds::RecordStatus,
    ids::{CargoId, OrgId, Target},
    scopes::{
        need::{JourneysRead, JourneysWrite},
        Scope,
    },
};

use super::{
    drafts::Drafted,
    forms::{self, Typed},
    i18n::{field_label, Msg},
    member::{Acting, Member, Viewing},
    page::{flash, page, table, urlencode, PortalError, Shell},
    records::{delete_form, form_values, shown, status_label, FormPage},
    submissions::{status, FINAL_EVENT},
    submitting::Record,
};
use crate::{
    auth::Principal,
    error::ApiError,
    extract::{parse_query, parse_value},
    state::AppState,
    v1::endpoints::{
        cargo::{self as api, CargoIn, CargoQuery},
        submissions::{self as subs, SubmissionsQuery},
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
pub(super) async fn list(Viewing { st, m, query: pairs }: Viewing<JourneysRead>) -> Result<Response, PortalError> {
    let lang = m.lang;
    let pairs: Vec<_> = pairs.into_iter().filter(|(k, _)| k == "status" || k == "cursor").collect();
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

/// The shipment's form: its request schema's fields.
pub(super) struct Shipments;

impl Drafted for Shipments {
    type Id = CargoId;
    const FORM: FormPage = FormPage { path: "/cargo", new: Msg::NewCargo, edit: Msg::EditCargo };
    const API: &'static str = "/portal/cargo";
    const API_ONE: &'static str = "/portal/cargo/{id}";

    async fn stored(st: &AppState, org: OrgId, id: CargoId) -> Result<Typed, ApiError> {
        let c = api::load(st, org, id).await?;
        Ok(form_values(SCHEMA, &CargoIn::from(&c.shipment)))
    }

    async fn form(
        _: &AppState,
        m: &Member<JourneysWrite>,
        id: Option<i64>,
        typed: &Typed,
        error: Option<&ApiError>,
    ) -> Result<Markup, PortalError> {
        let specs = forms::fields(SCHEMA);
        let named = error.and_then(|e| forms::field_error(specs, e));
        let fields = forms::inputs(m.lang, specs, typed, named.as_ref());
        Ok(Self::FORM.form(m, id, error, named.is_some(), fields, &Self::FORM.at(id)))
    }

    fn typed(pairs: Vec<(String, String)>) -> Typed {
        forms::typed(forms::fields(SCHEMA), pairs)
    }

    /// Optional fields left empty are removed by an update.
    fn body(typed: &Typed, clear: bool) -> Value {
        forms::json(forms::fields(SCHEMA), typed, clear)
    }

    async fn create(st: &AppState, p: &Principal, body: Value) -> Result<i64, ApiError> {
        Ok(api::create_shipment(st, p, parse_value::<CargoIn>(body)?).await?.id.get())
    }

    async fn update(st: &AppState, p: &Principal, id: CargoId, body: &Value) -> Result<(), ApiError> {
        api::update_shipment(st, p, id, body).await.map(drop)
    }

    /// A field, a rule across fields, a vehicle or driver the organization does not have.
    fn correctable(e: &ApiError) -> bool {
        matches!(
            e,
            ApiError::Validation { .. } | ApiError::Conflict(..) | ApiError::BadRequest(..) | ApiError::NotFound(_)
        )
    }
}

/// `GET /cargo/{id}`: the shipment, its actions, and the live status of its latest submission.
pub(super) async fn show(
    Acting { st, m, id, .. }: Acting<JourneysRead, CargoId>,
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
