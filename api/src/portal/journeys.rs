//! The journeys pages, a dispatcher's daily work: the list with its filters, a journey's form
//! (vehicle and crew chosen from the organization's own), a journey's page with its passengers
//! (a table edited in place, rows pasted from a spreadsheet, a CSV or `.xlsx` file), submitting
//! it and following the submission, its U-ETDS report, and deleting or cancelling it. Each
//! action runs the API's own service function, parses with the API's parsers and is admitted
//! as the API call it mirrors; a passenger list is saved only when every row is valid.

use std::{
    collections::{BTreeMap, HashMap},
    sync::OnceLock,
};
use tns_core::ids::{JourneyId, OrgId, PassengerId};

use axum::{
    extract::{Multipart, RawQuery},
    http::{HeaderMap, Method, StatusCode},
    response::{Html, IntoResponse, Response},
    Form,
};
use maud::{html, Markup};
use serde_json::{Map, Value};
use tns_core::{
    domain::{
        journey::Place,
        kinds::RecordStatus,
        passenger::{BulkIn, Manifest, NewPassenger, PassengerIn},
        personal::mask_personal,
    },
    scopes::{
        need::{JourneysRead, JourneysWrite},
        Scope,
    },
};
use tns_store::{
    journeys::Journey,
    pagination::Page,
    passengers::Passenger,
    submissions::{self as subs, Submission, Target},
};

use super::{
    drafts::Drafted,
    format,
    forms::{self, FieldSpec, Kind, Typed},
    i18n::{field_label, Lang, Msg},
    member::{admit, Acting, Member, Viewing},
    page::{flash, go, page, urlencode, PortalError, Shell},
    records::{confirmed, delete_form, shown, status_label, FormPage},
    submissions::{status, FINAL_EVENT},
    submitting::Record,
};
use crate::{
    auth::Principal,
    error::ApiError,
    extract::{parse_query, parse_value},
    limits::MAX_BODY_BYTES,
    state::AppState,
    submit::no_show,
    v1::{
        endpoints::{
            journeys::{self as api, JourneyIn, JourneyQuery},
            passengers::{self as pax},
            personnel::Personnel,
            submissions::{cancel_target, CancelIn},
            vehicles::Vehicles,
        },
        openapi_document, registry,
        resource::ListQuery,
    },
};

const PATH: &str = "/journeys";

// ---- the journey's form -------------------------------------------------------------------

/// The journey form's fields: `JourneyIn`'s, its objects (`departure`, `arrival`,
/// `tarifeli_context`) opened into their own fields named `departure.date` and so on.
fn journey_specs() -> &'static [FieldSpec] {
    static SPECS: OnceLock<Vec<FieldSpec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        let doc: Value = serde_json::from_str(openapi_document()).expect("the document is JSON");
        let schemas = &doc["components"]["schemas"];
        let props = &schemas["JourneyIn"]["properties"];
        let mut out = vec![];
        for spec in forms::fields("JourneyIn") {
            match object_ref(&props[&spec.name]).filter(|r| schemas[r]["properties"].is_object()) {
                Some(inner) => out.extend(forms::fields(&inner).iter().map(|s| FieldSpec {
                    name: format!("{}.{}", spec.name, s.name),
                    required: spec.required && s.required,
                    ..s.clone()
                })),
                None => out.push(spec.clone()),
            }
        }
        // The vehicle, the kind and the crew first, then the stops (when, then where: a district
        // at home, else a country and a place abroad), then a schedule's context.
        let rank = |n: &str| {
            let within = |field: &str| match field {
                "date" => 0,
                "time" => 1,
                "district_id" => 2,
                "country" => 3,
                _ => 4,
            };
            match n.split_once('.') {
                None if n == "vehicle_id" => (0, 0),
                None if n == "trip_kind" => (1, 0),
                None if n == "personnel_ids" => (2, 0),
                Some(("departure", f)) => (3, within(f)),
                Some(("arrival", f)) => (4, within(f)),
                _ => (5, 0),
            }
        };
        out.sort_by_key(|s| rank(&s.name));
        out
    })
}

/// The component a property refers to, directly or as a nullable alternative.
fn object_ref(p: &Value) -> Option<String> {
    let name = |r: &Value| r["$ref"].as_str().map(|r| r.rsplit('/').next().unwrap_or_default().to_string());
    name(p).or_else(|| ["oneOf", "anyOf"].iter().filter_map(|k| p[*k].as_array()).flatten().find_map(name))
}

/// Whether `schema`'s property `field` is a (fractional) number.
fn numeric(schema: &str, field: &str) -> bool {
    static DOC: OnceLock<Value> = OnceLock::new();
    let doc = DOC.get_or_init(|| serde_json::from_str(openapi_document()).expect("the document is JSON"));
    let p = &doc["components"]["schemas"][schema]["properties"][field];
    let ty = |v: &Value| v["type"] == "number";
    ty(p) || ["oneOf", "anyOf"].iter().filter_map(|k| p[*k].as_array()).flatten().any(ty)
}

/// A place (district or airport) id: typed, with the type-ahead's marker.
fn is_place(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    last == "district_id" || last.ends_with("_yer_id") || last.ends_with("_place_code")
}

/// The label of a journey or passenger field, in the language.
fn label(lang: Lang, name: &str) -> String {
    let msg = match name {
        "vehicle_id" => Msg::JVehicle,
        "trip_kind" => Msg::JTripKind,
        "personnel_ids" => Msg::JCrew,
        "departure.date" => Msg::JDepartureDate,
        "departure.time" => Msg::JDepartureTime,
        "departure.district_id" => Msg::JDeparturePlace,
        "arrival.date" => Msg::JArrivalDate,
        "arrival.time" => Msg::JArrivalTime,
        "arrival.district_id" => Msg::JArrivalPlace,
        "departure.country" => Msg::JDepartureCountry,
        "departure.place" => Msg::JDepartureAbroad,
        "arrival.country" => Msg::JArrivalCountry,
        "arrival.place" => Msg::JArrivalAbroad,
        "tarifeli_context.firma_id" => Msg::JFirmaId,
        "tarifeli_context.unet_guzergah_kodu" => Msg::JRouteCode,
        "tarifeli_context.kalkis_yer_id" => Msg::JFromPlace,
        "tarifeli_context.varis_yer_id" => Msg::JToPlace,
        "tarifeli_context.seyahat_suresi_saat" => Msg::JTravelHours,
        "boarding_place_code" => Msg::JBoarding,
        "destination_place_code" => Msg::JDestination,
        "ticket_serial_no" => Msg::JTicketSerial,
        "ticket_issue_date" => Msg::JTicketDate,
        "amount" => Msg::JAmount,
        "seat_no" => Msg::JSeat,
        "baggage" => Msg::JBaggage,
        _ => return field_label(lang, name),
    };
    lang.t(msg).to_string()
}

/// What the organization's vehicles and crew are, for the form's choices: (id, label).
struct Choices {
    vehicles: Vec<(String, String)>,
    crew: Vec<(String, String)>,
}

async fn choices(st: &AppState, p: &Principal) -> Result<Choices, PortalError> {
    let q: ListQuery = parse_value(serde_json::json!({"limit": 200}))?;
    let vehicles = registry::list::<Vehicles>(st, p, &q).await?.data.iter().map(shown).collect::<Vec<_>>();
    let crew = registry::list::<Personnel>(st, p, &q).await?.data.iter().map(shown).collect::<Vec<_>>();
    let get = |f: &HashMap<String, String>, k: &str| f.get(k).cloned().unwrap_or_default();
    Ok(Choices {
        vehicles: vehicles.iter().map(|f| (get(f, "id"), get(f, "plate"))).collect(),
        crew: crew
            .iter()
            .map(|f| {
                (get(f, "id"), format!("{} {} ({})", get(f, "first_name"), get(f, "last_name"), get(f, "role_type")))
            })
            .collect(),
    })
}

/// One input of a form: labelled, its value kept, its error beside it.
fn input(spec: &FieldSpec, id: &str, name: &str, value: Option<&str>, err: Option<&str>) -> Markup {
    let described = err.map(|_| format!("{id}-error"));
    let place = is_place(&spec.name);
    let last = spec.name.rsplit('.').next().unwrap_or(&spec.name);
    html! {
        @match &spec.kind {
            Kind::Choice(options) if !options.is_empty() => {
                select #(id) name=(name) required[spec.required] aria-invalid=[err.map(|_| "true")] aria-describedby=[described.as_deref()] {
                    @if !spec.required || value.is_none() { option value="" { "—" } }
                    @for o in options { option value=(o) selected[value == Some(o.as_str())] { (o) } }
                }
            }
            Kind::Integer { min, max } if !place => {
                input #(id) type="number" inputmode="numeric" name=(name) value=[value] min=[min] max=[max]
                    required[spec.required] aria-invalid=[err.map(|_| "true")] aria-describedby=[described.as_deref()];
            }
            _ => {
                @let ty = match last { "date" | "ticket_issue_date" => "date", "time" => "time", _ => "text" };
                // A place is typed by name and picked from the matching districts (portal.js).
                input #(id) type=(ty) name=(name) value=[value] required[spec.required] autocomplete="off"
                    list=[place.then(|| format!("{id}-options"))] data-picker=[place.then_some("district")]
                    aria-invalid=[err.map(|_| "true")] aria-describedby=[described.as_deref()];
                @if place { datalist #(format!("{id}-options")) {} }
            }
        }
        @if let Some(r) = err { p.error-text id=(format!("{id}-error")) { (r) } }
    }
}

/// The field an API error is about, among the journey form's: the API names a whole object
/// (`arrival`) or a list's entry (`personnel_ids[0]`) where the form has its first field.
fn journey_error(e: &ApiError) -> Option<(String, String)> {
    let (field, reason) = match e {
        ApiError::Validation { field, reason } => (field.clone(), reason.clone()),
        ApiError::Conflict(_, d) | ApiError::NotFound(d) => {
            let (f, r) = d.split_once(": ")?;
            (f.to_string(), r.to_string())
        }
        _ => return None,
    };
    let base = field.split('[').next().unwrap_or(&field).to_string();
    let specs = journey_specs();
    let found = specs
        .iter()
        .find(|s| s.name == base)
        .or_else(|| specs.iter().find(|s| s.name.starts_with(&format!("{base}."))))?;
    Some((found.name.clone(), reason))
}

/// What was typed into the journey form (the crew: every chosen id, comma-separated).
fn journey_typed(pairs: Vec<(String, String)>) -> Typed {
    let crew: Vec<String> = pairs
        .iter()
        .filter(|(k, v)| k == "personnel_ids" && !v.trim().is_empty())
        .map(|(_, v)| v.trim().into())
        .collect();
    let mut typed = forms::typed(journey_specs(), pairs.into_iter().filter(|(k, _)| k != "personnel_ids").collect());
    if !crew.is_empty() {
        typed.insert("personnel_ids".into(), crew.join(","));
    }
    typed
}

/// The JSON the API takes for the journey form: objects from the dotted names, the crew as a
/// list. With `clear` (an update), an optional part left empty is `null` (removed).
fn journey_json(typed: &Typed, clear: bool) -> Value {
    let specs = journey_specs();
    let mut out = Map::new();
    let flat = forms::json(specs, typed, false);
    for (name, v) in flat.as_object().into_iter().flatten() {
        match name.split_once('.') {
            Some((outer, inner)) => {
                let obj = out.entry(outer.to_string()).or_insert_with(|| Value::Object(Map::new()));
                if let Some(o) = obj.as_object_mut() {
                    o.insert(inner.to_string(), v.clone());
                }
            }
            None if name == "personnel_ids" => {
                let ids = v.as_str().unwrap_or_default().split(',');
                let ids = ids.map(|s| s.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(s))).collect();
                out.insert(name.clone(), Value::Array(ids));
            }
            None => {
                out.insert(name.clone(), v.clone());
            }
        }
    }
    if clear {
        for key in ["trip_kind", "tarifeli_context", "personnel_ids"] {
            out.entry(key).or_insert(Value::Null);
        }
    }
    Value::Object(out)
}

/// A stored journey as the form shows it.
fn journey_values(j: &Journey) -> Typed {
    let v = serde_json::to_value(JourneyIn::from(j)).unwrap_or_default();
    let mut typed = Typed::new();
    for (k, v) in v.as_object().into_iter().flatten() {
        match v {
            Value::Object(inner) => {
                for (ik, iv) in inner {
                    typed.insert(format!("{k}.{ik}"), text_of(iv));
                }
            }
            Value::Array(items) => {
                typed.insert(k.clone(), items.iter().map(text_of).collect::<Vec<_>>().join(","));
            }
            Value::Null => {}
            other => {
                typed.insert(k.clone(), text_of(other));
            }
        }
    }
    typed
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        // A list (baggage) is typed as words separated by spaces.
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

fn journey_form(
    m: &Member<JourneysWrite>,
    choices: &Choices,
    id: Option<i64>,
    typed: &Typed,
    error: Option<&ApiError>,
) -> Markup {
    let lang = m.lang;
    let named = error.and_then(journey_error);
    let err_of = |name: &str| named.as_ref().filter(|(f, _)| f == name).map(|(_, r)| r.as_str());
    let fields = html! {
        @for spec in journey_specs() {
            @let fid = format!("f-{}", spec.name.replace('.', "-"));
            @let value = typed.get(&spec.name).map(String::as_str);
            @let err = err_of(&spec.name);
            div.field {
                label for=(fid) {
                    (label(lang, &spec.name))
                    @if spec.required { " " span.muted { "(" (lang.t(Msg::Required)) ")" } }
                }
                @match spec.name.as_str() {
                    "vehicle_id" => {
                        select #(fid) name="vehicle_id" required aria-invalid=[err.map(|_| "true")]
                            aria-describedby=[err.map(|_| format!("{fid}-error"))] {
                            option value="" { "—" }
                            @for (v, plate) in &choices.vehicles { option value=(v) selected[value == Some(v.as_str())] { (plate) } }
                            // A journey named by a plate with no record keeps it.
                            @if let Some(v) = value.filter(|v| !choices.vehicles.iter().any(|(id, _)| id == v)) {
                                option value=(v) selected { (v) }
                            }
                        }
                        @if let Some(r) = err { p.error-text id=(format!("{fid}-error")) { (r) } }
                    }
                    "personnel_ids" => {
                        @let chosen: Vec<&str> = value.map(|v| v.split(',').collect()).unwrap_or_default();
                        select #(fid) name="personnel_ids" multiple size=(choices.crew.len().clamp(2, 6))
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[err.map(|_| format!("{fid}-error"))] {
                            @for (v, who) in &choices.crew { option value=(v) selected[chosen.contains(&v.as_str())] { (who) } }
                        }
                        @if let Some(r) = err { p.error-text id=(format!("{fid}-error")) { (r) } }
                    }
                    _ => { (input(spec, &fid, &spec.name, value, err)) }
                }
                @if let Some(h) = &spec.hint { p.hint { (h) } }
            }
        }
    };
    Journeys::FORM.form(m, id, error, named.is_some(), fields, &Journeys::FORM.at(id))
}

/// The journey's form: `JourneyIn`'s fields, the vehicle and crew chosen from the
/// organization's own.
pub(super) struct Journeys;

impl Drafted for Journeys {
    type Id = JourneyId;
    const FORM: FormPage = FormPage { path: PATH, new: Msg::JNew, edit: Msg::JEdit };
    const API: &'static str = "/portal/journeys";
    const API_ONE: &'static str = "/portal/journeys/{id}";

    /// A new journey is an unscheduled one until chosen otherwise.
    fn blank() -> Typed {
        Typed::from([("trip_kind".to_string(), "tarifesiz".to_string())])
    }

    async fn stored(st: &AppState, org: OrgId, id: JourneyId) -> Result<Typed, ApiError> {
        Ok(journey_values(&api::load(st, org, id).await?))
    }

    async fn form(
        st: &AppState,
        m: &Member<JourneysWrite>,
        id: Option<i64>,
        typed: &Typed,
        error: Option<&ApiError>,
    ) -> Result<Markup, PortalError> {
        let choices = choices(st, m.principal()).await?;
        Ok(journey_form(m, &choices, id, typed, error))
    }

    fn typed(pairs: Vec<(String, String)>) -> Typed {
        journey_typed(pairs)
    }

    fn body(typed: &Typed, clear: bool) -> Value {
        journey_json(typed, clear)
    }

    async fn create(st: &AppState, p: &Principal, body: Value) -> Result<i64, ApiError> {
        Ok(api::create_journey(st, p, parse_value::<JourneyIn>(body)?).await?.id.get())
    }

    async fn update(st: &AppState, p: &Principal, id: JourneyId, body: &Value) -> Result<(), ApiError> {
        api::update_journey(st, p, id, body).await.map(drop)
    }

    fn correctable(e: &ApiError) -> bool {
        match e {
            ApiError::Validation { .. } | ApiError::Conflict(..) | ApiError::BadRequest(..) => true,
            // A vehicle or crew member the organization does not have: named by its field.
            ApiError::NotFound(d) => d.contains(": "),
            _ => false,
        }
    }
}

/// `POST /journeys/{id}/cancel`: a delivered journey cancelled downstream, as
/// `POST /api/v1/portal/journeys/{id}/cancel`.
pub(super) async fn cancel_journey(
    Acting { st, m, headers, id }: Acting<JourneysWrite, JourneyId>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/journeys/{id}/cancel").await?;
    let reason = pairs.into_iter().find(|(k, v)| k == "reason" && !v.trim().is_empty()).map(|(_, v)| v);
    let body: CancelIn = parse_value(serde_json::json!({ "reason": reason }))?;
    cancel_target(&st, m.principal(), Target::Journey(id), Some(body)).await?;
    Ok(go(&format!("{PATH}/{id}?done=submitted"), &headers))
}

/// `POST /journeys/{id}/passengers/{passenger}/no-show`: as `POST
/// /api/v1/portal/journeys/{id}/passengers/{passenger_id}/no-show` (the table's other fields,
/// sent along by the button, are not read).
pub(super) async fn report_no_show(
    Acting { st, m, headers, id: (id, passenger) }: Acting<JourneysWrite, (JourneyId, PassengerId)>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/journeys/{id}/passengers/{passenger_id}/no-show").await?;
    no_show(&st, m.org(), id, passenger, None, &m.principal().credential_id()).await?;
    Ok(go(&format!("{PATH}/{id}?done=submitted"), &headers))
}

// ---- the list ----------------------------------------------------------------------------

/// A stop's place as a person reads it: the district's name with its id, or the place abroad
/// with its country.
fn place(s: &tns_store::journeys::Stop) -> String {
    match s.whereabouts() {
        Place::District(id) => match tns_core::refdata::installed().and_then(|d| d.district(id)) {
            Some(d) => format!("{} ({id})", d.name),
            None => id.to_string(),
        },
        Place::Abroad { country, name } => format!("{name} ({country})"),
    }
}

/// The filters the list takes, as the API's query names them.
const FILTERS: [&str; 4] = ["departure_from", "departure_to", "status", "vehicle_id"];

/// `GET /journeys`: the organization's journeys, newest first, filtered as the API filters
/// them (the same query parsed by the same parser), a page at a time.
pub(super) async fn list(Viewing { st, m, query: pairs }: Viewing<JourneysRead>) -> Result<Response, PortalError> {
    let lang = m.lang;
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let api_pairs: Vec<&(String, String)> =
        pairs.iter().filter(|(k, _)| FILTERS.contains(&k.as_str()) || k == "cursor").collect();
    let query =
        form_urlencoded::Serializer::new(String::new()).extend_pairs(api_pairs.iter().map(|(k, v)| (k, v))).finish();
    let parsed: Result<JourneyQuery, ApiError> = parse_query(&query);
    let (paged, error) = match parsed {
        Ok(q) => (Some(api::list_journeys(&st, m.org(), &q).await?), None),
        Err(e) => (None, Some(e)),
    };
    let vehicles = {
        let q: ListQuery = parse_value(serde_json::json!({"limit": 200}))?;
        registry::list::<Vehicles>(&st, m.principal(), &q).await?.data.iter().map(shown).collect::<Vec<_>>()
    };
    let filters_kept = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().filter(|(k, _)| FILTERS.contains(&k.as_str())))
        .finish();
    let done = get("done").and_then(|d| match d {
        "deleted" => Some(Msg::Deleted),
        _ => None,
    });
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: PATH };
    let field_err = error.as_ref().and_then(|e| match e {
        ApiError::Validation { field, reason } => Some((field.clone(), reason.clone())),
        _ => None,
    });
    let err_for = |f: &str| field_err.as_ref().filter(|(n, _)| n == f).map(|(_, r)| r.clone());
    let can_write = m.principal().scopes.allows(Scope::JourneysWrite);
    let body = html! {
        div.toolbar {
            h1 { (lang.t(Msg::Journeys)) }
            @if can_write { a.button href=(format!("{PATH}/new")) { (lang.t(Msg::JNew)) } }
        }
        @if let Some(d) = done { (flash(lang.t(d), "ok")) }
        form.filters method="get" action=(PATH) role="search" {
            @for (name, ty, msg) in [("departure_from", "date", Msg::JFrom), ("departure_to", "date", Msg::JTo)] {
                div.field {
                    label for=(format!("q-{name}")) { (lang.t(msg)) }
                    input #(format!("q-{name}")) type=(ty) name=(name) value=[get(name)]
                        aria-invalid=[err_for(name).map(|_| "true")];
                    @if let Some(r) = err_for(name) { p.error-text { (r) } }
                }
            }
            div.field {
                label for="q-status" { (field_label(lang, "status")) }
                select #q-status name="status" {
                    option value="" { (lang.t(Msg::JAny)) }
                    @for s in RecordStatus::ALL {
                        option value=(s.as_str()) selected[get("status") == Some(s.as_str())] { (status_label(lang, *s)) }
                    }
                }
                @if let Some(r) = err_for("status") { p.error-text { (r) } }
            }
            div.field {
                label for="q-vehicle" { (lang.t(Msg::JVehicle)) }
                select #q-vehicle name="vehicle_id" {
                    option value="" { (lang.t(Msg::JAny)) }
                    @for v in &vehicles {
                        @let id = v.get("id").cloned().unwrap_or_default();
                        option value=(id) selected[get("vehicle_id") == Some(id.as_str())] { (v.get("plate").map(String::as_str).unwrap_or("")) }
                    }
                }
            }
            div.toolbar { button type="submit" { (lang.t(Msg::JFilter)) } a.button.secondary href=(PATH) { (lang.t(Msg::JClear)) } }
        }
        @if let Some(e) = &error { @if field_err.is_none() { (flash(&e.to_string(), "error")) } }
        @if let Some(paged) = &paged {
            @if paged.data.is_empty() {
                p.muted { (lang.t(Msg::NothingYet)) }
            } @else {
                div.table-wrap {
                    table.journeys {
                        thead { tr {
                            th scope="col" { "#" }
                            th scope="col" { (lang.t(Msg::JDepartureDate)) }
                            th scope="col" { (lang.t(Msg::JRoute)) }
                            th scope="col" { (lang.t(Msg::JVehicle)) }
                            th scope="col" { (lang.t(Msg::JTripKind)) }
                            th scope="col" { (field_label(lang, "status")) }
                        } }
                        tbody {
                            @for j in &paged.data {
                                tr {
                                    td { a href=(format!("{PATH}/{}", j.id)) { (lang.t(Msg::JJourney)) " #" (j.id) } }
                                    @let f = &j.journey;
                                    td { (format::date(lang, f.departure.date.0)) " " (f.departure.time.0.format("%H:%M")) }
                                    td { (place(&f.departure)) " → " (place(&f.arrival)) }
                                    td { (f.plate) }
                                    td { (f.trip_kind.as_str()) }
                                    td { span class=(format!("badge status-{}", j.status.as_str())) { (status_label(lang, j.status)) } }
                                }
                            }
                        }
                    }
                }
                @if let Some(cursor) = &paged.next_cursor {
                    @let sep = if filters_kept.is_empty() { "" } else { "&" };
                    p { a href=(format!("{PATH}?{filters_kept}{sep}cursor={}", urlencode(cursor))) { (lang.t(Msg::Next)) } }
                }
            }
        }
    };
    let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    Ok((status, Html(page(&shell, lang.t(Msg::Journeys), body).into_string())).into_response())
}

// ---- passengers ----------------------------------------------------------------------------

/// One row of the passenger table: the stored passenger it shows (if any), what it holds, and
/// why the API refused it (field, reason).
#[derive(Debug, Default, Clone)]
struct Row {
    id: Option<PassengerId>,
    typed: Typed,
    error: Option<(String, String)>,
}

/// The passenger table as the page shows it: its rows, the stored passengers it was loaded
/// with (those no longer in it are removed on save), and a message above it.
#[derive(Debug, Default)]
struct Editor {
    rows: Vec<Row>,
    loaded: Vec<PassengerId>,
    message: Option<(String, &'static str)>,
}

fn passenger_specs() -> &'static [FieldSpec] {
    forms::fields("PassengerIn")
}

/// The columns in the order a pasted or uploaded list without a header row gives them.
fn column_order() -> Vec<&'static str> {
    const FIRST: [&str; 4] = ["first_name", "last_name", "identity_number", "gender"];
    let mut cols: Vec<&str> = FIRST.to_vec();
    cols.extend(passenger_specs().iter().map(|s| s.name.as_str()).filter(|n| !FIRST.contains(n)));
    cols
}

fn passenger_row(p: &Passenger, allowed: bool) -> Row {
    let mut v = serde_json::to_value(PassengerIn::from(p)).unwrap_or_default();
    if !allowed {
        mask_personal(&mut v);
    }
    let typed = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), text_of(v)))
        .collect();
    Row { id: Some(p.id), typed, error: None }
}

/// The JSON the API takes for a row: numbers where the document says number.
fn row_json(typed: &Typed) -> Value {
    let specs = passenger_specs();
    let mut v = forms::json(specs, typed, false);
    if let Some(o) = v.as_object_mut() {
        for (k, val) in o.iter_mut() {
            if numeric("PassengerIn", k) {
                if let Some(n) = val.as_str().and_then(|s| s.replace(',', ".").parse::<f64>().ok()) {
                    *val = serde_json::json!(n);
                }
            }
        }
    }
    v
}

/// A row parsed as the API parses a passenger: its field rules and its rule across fields.
fn check(typed: &Typed) -> Result<PassengerIn, (String, String)> {
    let input = parse_value::<PassengerIn>(row_json(typed)).map_err(|e| match e {
        ApiError::Validation { field, reason } => (field, reason),
        other => (String::new(), other.to_string()),
    })?;
    NewPassenger::try_from(input.clone()).map_err(|e| (e.field.to_string(), e.reason.to_string()))?;
    Ok(input)
}

fn blank(typed: &Typed) -> bool {
    typed.values().all(|v| v.trim().is_empty())
}

/// Rows of text (pasted or a CSV file): tab-, semicolon- or comma-separated, quotes allowed;
/// a first row naming columns says their order, else the default order.
fn parse_text(text: &str) -> Vec<Typed> {
    let text = text.trim_start_matches('\u{feff}');
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let Some(first) = lines.first() else { return vec![] };
    let sep = if first.contains('\t') {
        '\t'
    } else if first.matches(';').count() >= first.matches(',').count() && first.contains(';') {
        ';'
    } else {
        ','
    };
    let cells: Vec<Vec<String>> = lines.iter().map(|l| split_line(l, sep)).collect();
    rows_of(cells)
}

/// A line's cells, `"quoted, with ""quotes"""` allowed.
fn split_line(line: &str, sep: char) -> Vec<String> {
    let mut out = vec![];
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' if quoted => quoted = false,
            '"' if cell.trim().is_empty() => {
                cell.clear();
                quoted = true;
            }
            c if c == sep && !quoted => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Which column a header cell names: a field's API name or its label in either language.
fn column_named(cell: &str) -> Option<&'static str> {
    let norm = |s: &str| s.trim().to_lowercase().replace([' ', '-', '.'], "_");
    let cell = norm(cell);
    passenger_specs()
        .iter()
        .map(|s| s.name.as_str())
        .find(|n| norm(n) == cell || norm(&label(Lang::Tr, n)) == cell || norm(&label(Lang::En, n)) == cell)
}

fn rows_of(cells: Vec<Vec<String>>) -> Vec<Typed> {
    let Some(first) = cells.first() else { return vec![] };
    let named: Vec<Option<&str>> = first.iter().map(|c| column_named(c)).collect();
    let header = named.iter().filter(|n| n.is_some()).count() * 2 >= first.len().max(1);
    let (columns, body): (Vec<Option<&str>>, &[Vec<String>]) =
        if header { (named, &cells[1..]) } else { (column_order().into_iter().map(Some).collect(), &cells[..]) };
    body.iter()
        .map(|r| {
            r.iter()
                .zip(&columns)
                .filter_map(|(v, c)| c.map(|c| (c.to_string(), v.trim().to_string())))
                .filter(|(_, v)| !v.is_empty())
                .collect::<Typed>()
        })
        .filter(|t| !blank(t))
        .collect()
}

/// The first sheet of an `.xlsx` file, as rows of text.
fn parse_xlsx(bytes: &[u8]) -> Result<Vec<Typed>, String> {
    use calamine::{Data, Reader, Xlsx};
    let mut book = Xlsx::new(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let range = book.worksheet_range_at(0).ok_or("the workbook has no sheet")?.map_err(|e| e.to_string())?;
    let cells = range
        .rows()
        .map(|r| {
            r.iter()
                .map(|c| match c {
                    Data::Empty => String::new(),
                    Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
                    Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
                    Data::Float(f) => f.to_string(),
                    Data::Int(i) => i.to_string(),
                    Data::Bool(b) => b.to_string(),
                    // A date cell: days since 1899-12-30 (Excel's epoch, its 1900 leap-year bug included).
                    Data::DateTime(d) => chrono::NaiveDate::from_ymd_opt(1899, 12, 30)
                        .and_then(|e| e.checked_add_signed(chrono::Duration::days(d.as_f64() as i64)))
                        .map(|d| d.to_string())
                        .unwrap_or_default(),
                    Data::Error(e) => format!("{e:?}"),
                })
                .collect()
        })
        .collect();
    Ok(rows_of(cells))
}

/// The table's rows out of its form: `r{i}.{field}`, `r{i}.id`, `r{i}.remove`.
fn editor_of(pairs: &[(String, String)]) -> Editor {
    let mut rows: BTreeMap<usize, (Row, bool)> = BTreeMap::new();
    let mut loaded = vec![];
    for (k, v) in pairs {
        if k == "loaded" {
            loaded.extend(v.split(',').filter_map(|s| s.trim().parse::<i64>().ok()).map(PassengerId));
            continue;
        }
        let Some((i, field)) = k.strip_prefix('r').and_then(|r| r.split_once('.')) else { continue };
        let Ok(i) = i.parse::<usize>() else { continue };
        let (row, removed) = rows.entry(i).or_default();
        match field {
            "id" => row.id = v.parse().ok().map(PassengerId),
            "remove" => *removed = true,
            f if passenger_specs().iter().any(|s| s.name == f) && !v.trim().is_empty() => {
                row.typed.insert(f.to_string(), v.trim().to_string());
            }
            _ => {}
        }
    }
    let rows = rows.into_values().filter(|(r, removed)| !removed && !blank(&r.typed)).map(|(r, _)| r).collect();
    Editor { rows, loaded, message: None }
}

/// What saving a table came to.
enum Saved {
    Done(usize),
    Refused(Editor, StatusCode),
}

/// Every row checked by the API's parser; saved only when all are valid, in one transaction
/// by the bulk upsert's service function, the stored passengers the table no longer holds
/// removed with it.
async fn save(
    st: &AppState,
    m: &Member<JourneysWrite>,
    journey: JourneyId,
    mut ed: Editor,
) -> Result<Saved, PortalError> {
    let lang = m.lang;
    let mut inputs = vec![];
    let mut bad = 0;
    for row in &mut ed.rows {
        match check(&row.typed) {
            Ok(p) => inputs.push(p),
            Err(e) => {
                row.error = Some(e);
                bad += 1;
            }
        }
    }
    if bad > 0 {
        ed.message = Some((format!("{} ({bad})", lang.t(Msg::JRowErrors)), "error"));
        return Ok(Saved::Refused(ed, StatusCode::UNPROCESSABLE_ENTITY));
    }
    admit(st, m.principal(), Method::POST, "/portal/journeys/{id}/passengers:bulk-upsert").await?;
    // A stored passenger stays when a row still shows it with the same identity number (the
    // key the upsert writes by); otherwise it is removed and the row written afresh.
    let stored: HashMap<PassengerId, String> = {
        let mut conn = st.db.acquire().await?;
        tns_store::passengers::all_of(&mut conn, m.org(), journey)
            .await?
            .into_iter()
            .map(|p| (p.id, p.passenger.who.identity.number().to_owned()))
            .collect()
    };
    let kept: Vec<PassengerId> = ed
        .rows
        .iter()
        .filter_map(|r| {
            let id = r.id?;
            (stored.get(&id) == r.typed.get("identity_number")).then_some(id)
        })
        .collect();
    let remove: Vec<PassengerId> =
        ed.loaded.iter().copied().filter(|id| stored.contains_key(id) && !kept.contains(id)).collect();
    let manifest = if inputs.is_empty() {
        None
    } else {
        match Manifest::try_from(BulkIn { passengers: inputs }) {
            Ok(m) => Some(m),
            Err(e) => {
                ed.message = Some((ApiError::from(e).to_string(), "error"));
                return Ok(Saved::Refused(ed, StatusCode::UNPROCESSABLE_ENTITY));
            }
        }
    };
    match pax::upsert(st, m.principal(), journey, manifest.as_ref(), &remove).await {
        Ok(out) => Ok(Saved::Done(out.data.len())),
        Err(e @ (ApiError::Conflict(..) | ApiError::Validation { .. })) => {
            ed.message = Some((e.to_string(), "error"));
            Ok(Saved::Refused(ed, e.status()))
        }
        Err(e) => Err(e.into()),
    }
}

async fn saved_or_page(
    st: &AppState,
    m: &Member<JourneysWrite>,
    headers: &HeaderMap,
    journey: JourneyId,
    ed: Editor,
) -> Result<Response, PortalError> {
    // The journey is the member's organization's, or nothing is read or written.
    api::load(st, m.org(), journey).await?;
    match save(st, m, journey, ed).await? {
        Saved::Done(n) => Ok(go(&format!("{PATH}/{journey}?done=passengers&n={n}"), headers)),
        Saved::Refused(ed, status) => {
            let page = journey_page(st, &m.signed_in, m.lang, journey, Some(ed), None).await?;
            Ok((status, Html(page)).into_response())
        }
    }
}

/// `POST /journeys/{id}/passengers`: the passenger table saved (or a row added).
pub(super) async fn passengers(
    Acting { st, m, headers, id }: Acting<JourneysWrite, JourneyId>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    let mut ed = editor_of(&pairs);
    if pairs.iter().any(|(k, _)| k == "add_row") {
        // Without scripts, a row is added by the server: nothing is saved.
        api::load(&st, m.org(), id).await?;
        ed.rows.push(Row::default());
        let page = journey_page(&st, &m.signed_in, m.lang, id, Some(ed), None).await?;
        return Ok(Html(page).into_response());
    }
    saved_or_page(&st, &m, &headers, id, ed).await
}

/// `POST /journeys/{id}/passengers/paste`: rows pasted from a spreadsheet.
pub(super) async fn paste(
    Acting { st, m, headers, id }: Acting<JourneysWrite, JourneyId>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    let text = pairs.into_iter().find(|(k, _)| k == "rows").map(|(_, v)| v).unwrap_or_default();
    let rows: Vec<Row> = parse_text(&text).into_iter().map(|typed| Row { typed, ..Row::default() }).collect();
    if rows.is_empty() {
        return Err(ApiError::validation("rows", "holds no passenger rows").into());
    }
    saved_or_page(&st, &m, &headers, id, Editor { rows, ..Editor::default() }).await
}

/// `POST /journeys/{id}/passengers/upload`: a CSV or `.xlsx` file (at most the API's body
/// size).
pub(super) async fn upload(
    Acting { st, m, headers, id }: Acting<JourneysWrite, JourneyId>,
    mut form: Multipart,
) -> Result<Response, PortalError> {
    let unreadable = |e: String| PortalError::Api(ApiError::validation("file", e));
    let mut file = None;
    while let Some(field) = form.next_field().await.map_err(|e| unreadable(e.body_text()))? {
        if field.name() == Some("file") {
            let name = field.file_name().unwrap_or_default().to_lowercase();
            let bytes = field.bytes().await.map_err(|e| unreadable(e.body_text()))?;
            file = Some((name, bytes));
        }
    }
    let (name, bytes) = file.filter(|(_, b)| !b.is_empty()).ok_or_else(|| unreadable("no file was sent".into()))?;
    if bytes.len() > MAX_BODY_BYTES {
        return Err(PortalError::Api(ApiError::PayloadTooLarge(crate::limits::MAX_BODY_BYTES)));
    }
    let typed = if name.ends_with(".xlsx") || bytes.starts_with(b"PK\x03\x04") {
        parse_xlsx(&bytes).map_err(|e| unreadable(format!("is not a readable .xlsx file: {e}")))?
    } else {
        let text = std::str::from_utf8(&bytes).map_err(|_| unreadable("is not UTF-8 text (CSV) or .xlsx".into()))?;
        parse_text(text)
    };
    if typed.is_empty() {
        return Err(unreadable("holds no passenger rows".into()));
    }
    let rows = typed.into_iter().map(|typed| Row { typed, ..Row::default() }).collect();
    saved_or_page(&st, &m, &headers, id, Editor { rows, ..Editor::default() }).await
}

/// The passenger table. On a delivered journey (`no_shows`) each saved passenger's row also
/// reports that they did not come.
fn editor_markup(lang: Lang, csrf: &str, journey: JourneyId, ed: &Editor, writable: bool, no_shows: bool) -> Markup {
    let specs = passenger_specs();
    let cols = column_order();
    let action = format!("{PATH}/{journey}/passengers");
    let loaded = ed.loaded.iter().map(PassengerId::to_string).collect::<Vec<_>>().join(",");
    html! {
        form #passengers-table method="post" action=(action) novalidate {
            input type="hidden" name="_csrf" value=(csrf);
            input type="hidden" name="loaded" value=(loaded);
            @if let Some((text, kind)) = &ed.message { div role="alert" { (flash(text, kind)) } }
            div.table-wrap {
                table.passengers {
                    thead { tr {
                        th scope="col" { "#" }
                        @for c in &cols { th scope="col" { (label(lang, c)) } }
                        th scope="col" { span.sr-only { (lang.t(Msg::Actions)) } }
                    } }
                    tbody data-rows {
                        @for (i, row) in ed.rows.iter().enumerate() {
                            tr.error-row[row.error.is_some()] #(format!("row-{}", i + 1)) {
                                th scope="row" { (i + 1) }
                                @for c in &cols {
                                    @let spec = specs.iter().find(|s| s.name == *c).expect("a column is a field");
                                    @let fid = format!("r{i}-{c}");
                                    @let err = row.error.as_ref().filter(|(f, _)| f == c || (f.is_empty() && *c == cols[0])).map(|(_, r)| r.as_str());
                                    td {
                                        label.sr-only for=(fid) { (lang.t(Msg::JRow)) " " (i + 1) ": " (label(lang, c)) }
                                        (input(spec, &fid, &format!("r{i}.{c}"), row.typed.get(*c).map(String::as_str), err))
                                    }
                                }
                                td {
                                    @if let Some(id) = row.id { input type="hidden" name=(format!("r{i}.id")) value=(id); }
                                    label.remove { input type="checkbox" name=(format!("r{i}.remove")) value="1"; " " (lang.t(Msg::JRemoveRow)) }
                                    @if let (true, Some(pid)) = (no_shows && writable, row.id) {
                                        " "
                                        button.secondary type="submit" formaction=(format!("{PATH}/{journey}/passengers/{pid}/no-show"))
                                            formnovalidate {
                                            (lang.t(Msg::JNoShow)) span.sr-only { " " (lang.t(Msg::JRow)) " " (i + 1) }
                                        }
                                    }
                                }
                            }
                            @if let Some((f, r)) = &row.error {
                                tr.row-error { td colspan=(cols.len() + 2) {
                                    p.error-text role="alert" { (lang.t(Msg::JRow)) " " (i + 1) ", " (label(lang, f)) ": " (r) }
                                } }
                            }
                        }
                    }
                }
            }
            @if writable {
                div.toolbar {
                    // Saving first: Enter in a cell saves rather than adds a row.
                    button type="submit" { (lang.t(Msg::JSavePassengers)) }
                    button.secondary type="submit" name="add_row" value="1" data-add-row { (lang.t(Msg::JAddRow)) }
                }
            }
        }
    }
}

// ---- the journey's page -----------------------------------------------------------------

async fn latest_submission(
    st: &AppState,
    org: OrgId,
    journey: JourneyId,
    p: &Principal,
) -> Result<Option<Submission>, PortalError> {
    let filter = subs::Filter { of: Some(subs::Of::Record(Target::Journey(journey))), ..Default::default() };
    let mut s = subs::list(&st.db, org, &filter, &Page { limit: 1, before: None }).await?.into_iter().next();
    // As the API's submission reads: a downstream message may quote a person's number.
    if !p.scopes.allows(Scope::JourneysRead) {
        s.iter_mut().for_each(Submission::mask_messages);
    }
    Ok(s)
}

async fn journey_page(
    st: &AppState,
    signed_in: &super::member::SignedIn,
    lang: Lang,
    id: JourneyId,
    editor: Option<Editor>,
    done: Option<String>,
) -> Result<String, PortalError> {
    let p = &signed_in.principal;
    let org = p.org_id;
    let j = api::load(st, org, id).await?;
    let writable = p.scopes.allows(Scope::JourneysWrite);
    let latest = if p.scopes.allows(Scope::SubmissionsRead) { latest_submission(st, org, id, p).await? } else { None };
    let allowed = p.scopes.allows(Scope::JourneysRead);
    let editor = match editor {
        Some(e) => e,
        None => {
            let mut conn = st.db.acquire().await?;
            let stored = tns_store::passengers::all_of(&mut conn, org, id).await?;
            let mut rows: Vec<Row> = stored.iter().map(|p| passenger_row(p, allowed)).collect();
            let loaded = stored.iter().map(|p| p.id).collect();
            if rows.is_empty() {
                rows.push(Row::default());
            }
            Editor { rows, loaded, message: None }
        }
    };
    let crew: Vec<String> = if j.journey.personnel_ids.is_empty() {
        vec![]
    } else {
        let q: ListQuery = parse_value(serde_json::json!({"limit": 200}))?;
        let people = registry::list::<Personnel>(st, p, &q).await?.data.iter().map(shown).collect::<Vec<_>>();
        j.journey
            .personnel_ids
            .iter()
            .map(|pid| {
                people
                    .iter()
                    .find(|f| f.get("id") == Some(&pid.to_string()))
                    .map(|f| {
                        format!(
                            "{} {}",
                            f.get("first_name").cloned().unwrap_or_default(),
                            f.get("last_name").cloned().unwrap_or_default()
                        )
                    })
                    .unwrap_or_else(|| format!("#{pid}"))
            })
            .collect()
    };
    let title = format!("{} #{id}", lang.t(Msg::JJourney));
    let done_msg = match done.as_deref() {
        Some("saved") => Some(lang.t(Msg::Saved).to_string()),
        Some("submitted") => Some(lang.t(Msg::JSubmittedNow).to_string()),
        Some(n) if n.starts_with("passengers:") => Some(format!("{} ({})", lang.t(Msg::JPassengersSaved), &n[11..])),
        _ => None,
    };
    let csrf = &signed_in.csrf;
    let shell = Shell { lang, signed_in: Some(signed_in), path: PATH };
    let stop = |s: &tns_store::journeys::Stop| {
        format!("{} {} · {}", format::date(lang, s.date.0), s.time.0.format("%H:%M"), place(s))
    };
    let body = html! {
        div.toolbar {
            h1 { (title) " " span class=(format!("badge status-{}", j.status.as_str())) { (status_label(lang, j.status)) } }
            a.button.secondary href=(PATH) { (lang.t(Msg::Journeys)) }
        }
        @if let Some(d) = &done_msg { (flash(d, "ok")) }
        // Renewed in place when the latest submission becomes final (its state, reference,
        // actions and the PDF change then); what is inside keeps its own htmx settings.
        section.card #journey-card aria-labelledby="journey-h" hx-get=(format!("{PATH}/{id}"))
            hx-trigger=(format!("{FINAL_EVENT} from:body")) hx-select="#journey-card" hx-swap="outerHTML" hx-disinherit="*" {
            h2 #journey-h { (lang.t(Msg::JDetails)) }
            dl.details {
                dt { (lang.t(Msg::JVehicle)) } dd { (j.journey.plate) }
                dt { (lang.t(Msg::JTripKind)) } dd { (j.journey.trip_kind.as_str()) }
                dt { (lang.t(Msg::JDeparture)) } dd { (stop(&j.journey.departure)) }
                dt { (lang.t(Msg::JArrival)) } dd { (stop(&j.journey.arrival)) }
                dt { (lang.t(Msg::JCrew)) } dd { @if crew.is_empty() { "—" } @else { (crew.join(", ")) } }
                dt { (field_label(lang, "status")) } dd { (status_label(lang, j.status)) }
                dt { (lang.t(Msg::JReference)) } dd { (j.downstream_reference.as_deref().unwrap_or("—")) }
            }
            @if writable {
                div.toolbar {
                    @if j.status.is_editable() { a.button.secondary href=(format!("{PATH}/{id}/edit")) { (lang.t(Msg::Edit)) } }
                    @if j.status != RecordStatus::Cancelled {
                        (Record::submit_form(Target::Journey(id), lang, csrf, "#submission"))
                    }
                    @if j.status == RecordStatus::Draft {
                        (delete_form(lang, csrf, &format!("{PATH}/{id}/delete")))
                    }
                    @if j.status == RecordStatus::Delivered {
                        (confirmed(&format!("{PATH}/{id}/cancel"), lang.t(Msg::JConfirmCancel), csrf, html! {
                            label for="cancel-reason" { (lang.t(Msg::JCancelReason)) }
                            input #cancel-reason type="text" name="reason" maxlength="400";
                            button.danger type="submit" { (lang.t(Msg::JCancelJourney)) }
                        }))
                    }
                    @if j.status == RecordStatus::Cancelled {
                        (Record::reactivate_form(Target::Journey(id), lang, csrf))
                    }
                }
            }
            @if j.downstream_reference.is_some() {
                p { a.button href=(format!("{PATH}/{id}/report")) download { (lang.t(Msg::JDownloadPdf)) } }
            }
        }
        section.card aria-labelledby="submission-h" {
            h2 #submission-h { (lang.t(Msg::Submissions)) }
            div #submission {
                @match &latest {
                    Some(s) => (status(lang, s)),
                    None => p.muted { (lang.t(Msg::JNoSubmission)) },
                }
            }
        }
        section.card aria-labelledby="passengers-h" {
            h2 #passengers-h { (lang.t(Msg::JPassengers)) }
            (editor_markup(lang, csrf, id, &editor, writable, j.status == RecordStatus::Delivered))
            @if writable {
                details.bulk open[editor.rows.len() <= 1] {
                    summary { (lang.t(Msg::JPasteOrUpload)) }
                    p.hint { (lang.t(Msg::JColumns)) ": " (column_order().iter().map(|c| label(lang, c)).collect::<Vec<_>>().join(" · ")) }
                    form method="post" action=(format!("{PATH}/{id}/passengers/paste")) {
                        input type="hidden" name="_csrf" value=(csrf);
                        div.field {
                            label for="paste-rows" { (lang.t(Msg::JPasteRows)) }
                            textarea #paste-rows name="rows" rows="6" {}
                        }
                        button type="submit" { (lang.t(Msg::JReadRows)) }
                    }
                    form method="post" action=(format!("{PATH}/{id}/passengers/upload")) enctype="multipart/form-data" {
                        input type="hidden" name="_csrf" value=(csrf);
                        div.field {
                            label for="upload-file" { (lang.t(Msg::JUploadFile)) }
                            input #upload-file type="file" name="file" accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
                        }
                        button type="submit" { (lang.t(Msg::JUpload)) }
                    }
                }
            }
        }
    };
    Ok(page(&shell, &title, body).into_string())
}

/// `GET /journeys/{id}`.
pub(super) async fn show(
    Acting { st, m, id, .. }: Acting<JourneysRead, JourneyId>,
    RawQuery(raw): RawQuery,
) -> Result<Html<String>, PortalError> {
    let q: HashMap<String, String> = form_urlencoded::parse(raw.unwrap_or_default().as_bytes()).into_owned().collect();
    let done = q.get("done").map(|d| match (d.as_str(), q.get("n")) {
        ("passengers", Some(n)) => format!("passengers:{}", n.parse::<usize>().unwrap_or(0)),
        (d, _) => d.to_string(),
    });
    Ok(Html(journey_page(&st, &m.signed_in, m.lang, id, None, done).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_rows_in_any_separator_with_or_without_a_header() {
        let tab = parse_text("Ali\tKaya\t10000000146\tE\nVeli\tDemir\t10000000146\tE\n");
        assert_eq!(tab.len(), 2);
        assert_eq!(tab[0]["first_name"], "Ali");
        assert_eq!(tab[0]["identity_number"], "10000000146");
        let header = parse_text("identity_number;first_name;Soyad\n10000000146;Ali;Kaya\n");
        assert_eq!(header.len(), 1);
        assert_eq!(header[0]["last_name"], "Kaya");
        let quoted = parse_text("first_name,last_name\n\"Ali, Can\",\"Ka\"\"ya\"\n");
        assert_eq!((quoted[0]["first_name"].as_str(), quoted[0]["last_name"].as_str()), ("Ali, Can", "Ka\"ya"));
    }

    #[test]
    fn the_journey_form_opens_the_apis_objects() {
        let names: Vec<&str> = journey_specs().iter().map(|s| s.name.as_str()).collect();
        for n in ["vehicle_id", "departure.date", "arrival.district_id", "tarifeli_context.firma_id", "personnel_ids"] {
            assert!(names.contains(&n), "{n} in {names:?}");
        }
        let mut typed = Typed::new();
        typed.insert("departure.date".into(), "2026-12-01".into());
        typed.insert("personnel_ids".into(), "3,4".into());
        let v = journey_json(&typed, false);
        assert_eq!(v["departure"]["date"], "2026-12-01");
        assert_eq!(v["personnel_ids"], serde_json::json!([3, 4]));
    }
}
