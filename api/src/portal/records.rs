//! The pages of the two registries, vehicles and personnel: a list, a form to add one, a form
//! to change one, and deleting (retiring) one. Each runs the API's own registry flow
//! (`v1::registry`: the same parse, the same store calls, the same 404s and 409s) and is
//! admitted as the API call it mirrors. What every record's form shares (the registries',
//! journeys' and shipments') is here too: [`FormPage`], [`form_values`], [`delete_form`].

use std::collections::HashMap;

use axum::{
    extract::{Path, Query, State},
    http::{HeaderMap, Method, StatusCode},
    response::{Html, IntoResponse, Response},
    Form,
};
use maud::{html, Markup};
use serde::Serialize;
use serde_json::Value;
use tns_core::{
    domain::kinds::RecordStatus,
    scopes::need::{JourneysRead, JourneysWrite},
};

use super::{
    forms::{self, FieldSpec, Typed},
    i18n::{field_label, Lang, Msg},
    member::{admit, Member},
    page::{flash, go, page, table, PortalError, Shell},
};
use crate::{
    error::ApiError,
    extract::parse_value,
    state::AppState,
    v1::{
        endpoints::{personnel::Personnel, vehicles::Vehicles},
        registry::{self, Registry},
        resource::ListQuery,
    },
};

/// What a registry's pages say about it.
pub(super) trait Pages:
    Registry<Record: Send, Answer: Send, Input: Send, Value: Send> + Send + Sync + 'static
{
    /// The portal's path (`/vehicles`).
    const PATH: &'static str;
    /// The API's collection route (`/portal/vehicles`), whose calls the actions mirror.
    const API: &'static str;
    /// The request schema its forms follow.
    const SCHEMA: &'static str;
    const TITLE: Msg;
    const NEW: Msg;
    const EDIT: Msg;
    /// The record's fields the list shows, in order.
    const COLUMNS: &'static [&'static str];
    /// Its form's page.
    const FORM: FormPage = FormPage { path: Self::PATH, new: Self::NEW, edit: Self::EDIT };
}

/// A record's form page: where the record's pages are, and the page's title for a new record
/// and for a stored one.
pub(super) struct FormPage {
    pub path: &'static str,
    pub new: Msg,
    pub edit: Msg,
}

impl FormPage {
    /// Record `id`'s page, where its form is posted; the list for a new one.
    pub(super) fn at(&self, id: Option<i64>) -> String {
        match id {
            Some(id) => format!("{}/{id}", self.path),
            None => self.path.to_string(),
        }
    }

    /// The form of record `id` (none: a new one) around its `fields`, posted to the record
    /// (htmx puts the answer in the form's place); the API's `error` above it: the plea to fix
    /// the fields when a field shows it (`named`), else the error itself. Cancel goes `back`.
    pub(super) fn form(
        &self,
        m: &Member<JourneysWrite>,
        id: Option<i64>,
        error: Option<&ApiError>,
        named: bool,
        fields: Markup,
        back: &str,
    ) -> Markup {
        let lang = m.lang;
        let action = self.at(id);
        html! {
            form.record #record method="post" action=(action) hx-post=(action) hx-target="#record" hx-swap="outerHTML" novalidate {
                input type="hidden" name="_csrf" value=(m.signed_in.csrf);
                @if let Some(e) = error {
                    @let text = if named { lang.t(Msg::FixErrors).to_string() } else { e.to_string() };
                    div role="alert" { (flash(&text, "error")) }
                }
                (fields)
                div.toolbar {
                    button type="submit" { (lang.t(Msg::Save)) }
                    a.button.secondary href=(back) { (lang.t(Msg::Cancel)) }
                }
            }
        }
    }

    /// The whole page of record `id`'s `form`.
    pub(super) fn page(&self, m: &Member<JourneysWrite>, id: Option<i64>, form: Markup) -> String {
        let lang = m.lang;
        let title = lang.t(if id.is_some() { self.edit } else { self.new });
        let shell = Shell { lang, signed_in: Some(&m.signed_in), path: self.path };
        page(&shell, title, html! { h1 { (title) } (form) }).into_string()
    }

    /// The `form` again, with what was typed and why it was refused (`status`): alone for
    /// htmx, else its page.
    pub(super) fn refused(
        &self,
        m: &Member<JourneysWrite>,
        headers: &HeaderMap,
        id: Option<i64>,
        status: StatusCode,
        form: Markup,
    ) -> Response {
        let body = if headers.contains_key("hx-request") { form.into_string() } else { self.page(m, id, form) };
        (status, Html(body)).into_response()
    }
}

/// A stored record as its form shows it: its request schema's fields of `input` (the record
/// as the API takes it).
pub(super) fn form_values(schema: &str, input: &impl Serialize) -> Typed {
    let values = shown(input);
    forms::fields(schema).iter().filter_map(|s| values.get(&s.name).map(|v| (s.name.clone(), v.clone()))).collect()
}

/// A form posted to `action` once the member confirms `confirm`: `content` is its inputs and
/// its button.
pub(super) fn confirmed(action: &str, confirm: &str, csrf: &str, content: Markup) -> Markup {
    html! {
        form method="post" action=(action) hx-post=(action) hx-confirm=(confirm) {
            input type="hidden" name="_csrf" value=(csrf);
            (content)
        }
    }
}

/// The button that deletes the record whose deleting is posted to `action` (confirmed).
pub(super) fn delete_form(lang: Lang, csrf: &str, action: &str) -> Markup {
    confirmed(action, lang.t(Msg::ConfirmDelete), csrf, html! { button.danger type="submit" { (lang.t(Msg::Delete)) } })
}

/// Each registry's [`Pages`], one line each: its path (the API's route is the same under
/// `/portal`), its request schema, its titles (list, new, edit) and the columns its list shows.
macro_rules! registry_pages {
    ($($registry:ty: $path:literal, $schema:literal, [$title:ident, $new:ident, $edit:ident], [$($column:literal),*];)*) => {$(
        impl Pages for $registry {
            const PATH: &'static str = $path;
            const API: &'static str = concat!("/portal", $path);
            const SCHEMA: &'static str = $schema;
            const TITLE: Msg = Msg::$title;
            const NEW: Msg = Msg::$new;
            const EDIT: Msg = Msg::$edit;
            const COLUMNS: &'static [&'static str] = &[$($column),*];
        }
    )*};
}

registry_pages! {
    Vehicles: "/vehicles", "VehicleIn", [Vehicles, NewVehicle, EditVehicle],
        ["plate", "vehicle_type", "brand", "model", "capacity"];
    Personnel: "/personnel", "PersonIn", [Personnel, NewPerson, EditPerson],
        ["first_name", "last_name", "identity_number", "role_type", "phone"];
}

/// A record's fields as the list and the edit form show them.
pub(super) fn shown(record: &impl Serialize) -> HashMap<String, String> {
    let Ok(Value::Object(m)) = serde_json::to_value(record) else { return HashMap::new() };
    m.into_iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k, s)),
            Value::Number(n) => Some((k, n.to_string())),
            Value::Bool(b) => Some((k, b.to_string())),
            _ => None,
        })
        .collect()
}

/// `GET /vehicles` (and `/personnel`): the active records, newest first, a page at a time.
pub(super) async fn list<R: Pages>(
    State(st): State<AppState>,
    m: Member<JourneysRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let query: ListQuery = parse_value(serde_json::json!({"cursor": q.get("cursor"), "limit": 50}))?;
    let paged = registry::list::<R>(&st, m.principal(), &query).await?;
    let done = q.get("done").and_then(|d| match d.as_str() {
        "saved" => Some(Msg::Saved),
        "deleted" => Some(Msg::Deleted),
        _ => None,
    });
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: R::PATH };
    let body = html! {
        div.toolbar {
            h1 { (lang.t(R::TITLE)) }
            a.button href=(format!("{}/new", R::PATH)) { (lang.t(R::NEW)) }
        }
        @if let Some(d) = done { (flash(lang.t(d), "ok")) }
        @let labels: Vec<String> = R::COLUMNS.iter().map(|c| field_label(lang, c)).collect();
        @let headings: Vec<&str> = labels.iter().map(String::as_str).chain([lang.t(Msg::Actions)]).collect();
        (table(&headings, &paged.data, lang.t(Msg::NothingYet), |r| {
            let f = shown(r);
            let id = f.get("id").cloned().unwrap_or_default();
            html! {
                tr {
                    @for c in R::COLUMNS { td { (f.get(*c).map(String::as_str).unwrap_or("—")) } }
                    td { a href=(format!("{}/{id}/edit", R::PATH)) { (lang.t(Msg::Edit)) } }
                }
            }
        }))
        @if let Some(cursor) = &paged.next_cursor {
            p { a href=(format!("{}?cursor={}", R::PATH, super::page::urlencode(cursor))) { (lang.t(Msg::Next)) } }
        }
    };
    Ok(Html(page(&shell, lang.t(R::TITLE), body).into_string()))
}

/// The form of a record: empty for a new one (`id` none), else its values; an error of the
/// API's beside the field it names, or above the form.
fn form<R: Pages>(m: &Member<JourneysWrite>, id: Option<i64>, typed: &Typed, error: Option<&ApiError>) -> Markup {
    let lang = m.lang;
    let specs = forms::fields(R::SCHEMA);
    let named = error.and_then(|e| forms::field_error(specs, e));
    let fields = forms::inputs(lang, specs, typed, named.as_ref());
    html! {
        (R::FORM.form(m, id, error, named.is_some(), fields, R::PATH))
        @if let Some(id) = id {
            (delete_form(lang, &m.signed_in.csrf, &format!("{}/{id}/delete", R::PATH)))
        }
    }
}

fn form_page<R: Pages>(m: &Member<JourneysWrite>, id: Option<i64>, typed: &Typed, error: Option<&ApiError>) -> String {
    R::FORM.page(m, id, form::<R>(m, id, typed, error))
}

/// `GET /vehicles/new`.
pub(super) async fn new<R: Pages>(m: Member<JourneysWrite>) -> Html<String> {
    Html(form_page::<R>(&m, None, &Typed::new(), None))
}

/// `GET /vehicles/{id}/edit`: the form with the record's values.
pub(super) async fn edit<R: Pages>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    Path(id): Path<R::Id>,
) -> Result<Html<String>, PortalError> {
    let record = registry::get::<R>(&st, m.principal(), id).await?;
    if !R::is_active(&record) {
        return Err(ApiError::not_found(R::KIND, id).into());
    }
    Ok(Html(form_page::<R>(&m, Some(id.into()), &form_values(R::SCHEMA, &R::Input::from(&record)), None)))
}

/// Saved: back to the list.
fn saved(path: &str, headers: &HeaderMap, done: &str) -> Response {
    go(&format!("{path}?done={done}"), headers)
}

/// Whether an API error is the member's to put right in the form (a field, a duplicate).
fn correctable(e: &ApiError) -> bool {
    matches!(e, ApiError::Validation { .. } | ApiError::Conflict(..) | ApiError::BadRequest(..))
}

/// `POST /vehicles`: create, as `POST /api/v1/portal/vehicles`.
pub(super) async fn create<R: Pages>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, R::API).await?;
    let specs: &[FieldSpec] = forms::fields(R::SCHEMA);
    let typed = forms::typed(specs, pairs);
    let outcome = match parse_value::<R::Input>(forms::json(specs, &typed, false)) {
        Ok(input) => registry::create::<R>(&st, m.principal(), input).await.map(|_| ()),
        Err(e) => Err(e),
    };
    answer::<R, _>(&m, &headers, None, &typed, outcome)
}

/// Saved, or the form again when the member can put it right, or the failure.
fn answer<R: Pages, T>(
    m: &Member<JourneysWrite>,
    headers: &HeaderMap,
    id: Option<i64>,
    typed: &Typed,
    outcome: Result<T, ApiError>,
) -> Result<Response, PortalError> {
    match outcome {
        Ok(_) => Ok(saved(R::PATH, headers, "saved")),
        Err(e) if correctable(&e) => Ok(R::FORM.refused(m, headers, id, e.status(), form::<R>(m, id, typed, Some(&e)))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /vehicles/{id}`: change, as `PUT /api/v1/portal/vehicles/{id}` with the whole form
/// (fields left empty are removed).
pub(super) async fn update<R: Pages>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Path(id): Path<R::Id>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::PUT, &format!("{}/{{id}}", R::API)).await?;
    let specs = forms::fields(R::SCHEMA);
    let typed = forms::typed(specs, pairs);
    let outcome = registry::update::<R>(&st, m.principal(), id, &forms::json(specs, &typed, true)).await;
    answer::<R, _>(&m, &headers, Some(id.into()), &typed, outcome)
}

/// `POST /vehicles/{id}/delete`: delete (or retire), as `DELETE /api/v1/portal/vehicles/{id}`.
pub(super) async fn delete<R: Pages>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Path(id): Path<R::Id>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::DELETE, &format!("{}/{{id}}", R::API)).await?;
    registry::delete::<R>(&st, m.principal(), id).await?;
    Ok(saved(R::PATH, &headers, "deleted"))
}

/// A journey's or shipment's status as its badge says it.
pub(super) fn status_label(lang: Lang, s: RecordStatus) -> &'static str {
    lang.t(match s {
        RecordStatus::Draft => Msg::RecordDraft,
        RecordStatus::Submitted => Msg::RecordSubmitted,
        RecordStatus::Delivered => Msg::StateDelivered,
        RecordStatus::Failed => Msg::StateFailed,
        RecordStatus::Cancelled => Msg::RecordCancelled,
    })
}
