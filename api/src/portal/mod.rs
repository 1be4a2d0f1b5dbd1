//! The web portal: pages for the people who do the work (dispatchers, operations staff), served
//! by the API role under `/` beside the JSON API (`/api/v1`), rendered on the server (maud)
//! with htmx for what changes in place. It holds no rule of its own: a page signs in with the
//! API's sessions, needs the scope the matching API route needs ([`member::Member`]), parses
//! with the API's parsers (its forms follow the API's document, [`forms`]), calls the same
//! service functions, and each action is admitted as the API call it mirrors ([`member::admit`]:
//! quota and suspension). Page views are not metered. Turkish first, English second
//! ([`i18n`]); times in Europe/Istanbul ([`format`]).

pub mod assets;
mod cargo;
mod dashboard;
mod drafts;
pub mod format;
mod forms;
pub mod i18n;
mod journeys;
mod member;
mod page;
mod password;
mod places;
mod records;
mod register;
mod settings;
mod signin;
mod submissions;
mod submitting;
mod team;

use axum::{
    http::{header, HeaderMap, StatusCode},
    middleware::from_fn_with_state,
    response::{Html, IntoResponse, Response},
    routing::{get, post},
    Router,
};

use crate::{
    state::AppState,
    v1::endpoints::{personnel::Personnel, vehicles::Vehicles},
};
use cargo::Shipments;
use journeys::Journeys;
use records::Pages;
use submitting::Record;

/// The portal's routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(signin::home))
        .route("/login", get(signin::form).post(signin::submit))
        .route("/logout", post(signin::logout))
        .route("/lang/{code}", get(signin::language))
        .route("/dashboard", get(dashboard::show))
        .route("/settings/team", get(team::show))
        .route("/settings/team/invite", post(team::invite))
        .route("/settings/team/{user}/role", post(team::set_role))
        .route("/settings/team/{user}/remove", post(team::remove))
        .route("/settings/team/invitations/{id}/revoke", post(team::revoke))
        .route("/invite/{token}", get(team::welcome).post(team::accept))
        .route("/account/password", get(password::change_form).post(password::change))
        .route("/password/forgot", get(password::forgot_form).post(password::forgot))
        .route("/password/reset/{token}", get(password::reset_form).post(password::reset))
        .route("/journeys", get(journeys::list).post(drafts::create::<Journeys>))
        .route("/journeys/new", get(drafts::new::<Journeys>))
        .route("/journeys/{id}", get(journeys::show).post(drafts::update::<Journeys>))
        .route("/journeys/{id}/edit", get(drafts::edit::<Journeys>))
        .route("/journeys/{id}/delete", post(drafts::delete::<Journeys>))
        .route("/journeys/{id}/cancel", post(journeys::cancel_journey))
        .route("/journeys/{id}/passengers/{passenger}/no-show", post(journeys::report_no_show))
        .route("/journeys/{id}/passengers", post(journeys::passengers))
        .route("/journeys/{id}/passengers/paste", post(journeys::paste))
        .route("/journeys/{id}/passengers/upload", post(journeys::upload))
        .merge(registry::<Vehicles>())
        .merge(registry::<Personnel>())
        .route("/settings/downstream", get(settings::downstream::show).post(settings::downstream::save))
        .route("/settings/downstream/addresses", get(settings::addresses::show).post(settings::addresses::add))
        .route("/settings/downstream/addresses/{id}/remove", post(settings::addresses::remove))
        .route("/settings/downstream/preflight", get(settings::preflight::show).post(settings::preflight::save))
        .route("/settings/keys", get(settings::keys::show).post(settings::keys::create))
        .route("/settings/keys/{id}/revoke", post(settings::keys::revoke))
        .route("/settings/webhooks", get(settings::webhooks::list).post(settings::webhooks::create))
        .route("/settings/webhooks/{id}", get(settings::webhooks::show))
        .route("/settings/webhooks/{id}/rotate", post(settings::webhooks::rotate))
        .route("/settings/webhooks/{id}/test", post(settings::webhooks::test_event))
        .route("/settings/webhooks/deliveries/{id}", get(settings::webhooks::delivery))
        .route("/settings/billing", get(settings::billing::show))
        .route("/settings/billing/change", get(settings::billing::preview).post(settings::billing::change))
        .route("/settings/billing/invoices/{id}/pdf", get(settings::billing::pdf))
        .route("/settings/support", get(settings::support::show).post(settings::support::open))
        .route("/settings/data", get(settings::data::show).post(settings::data::ask))
        .route("/settings/data/{id}/download", get(settings::data::download))
        .route("/settings/data/close", post(settings::data::close))
        .route("/settings/data/reopen", post(settings::data::reopen))
        // Submissions, reference pickers and cargo.
        .route("/submissions", get(submissions::list))
        .route("/submissions/{id}", get(submissions::show))
        .route("/submissions/{id}/status", get(submissions::live))
        .route("/submissions/{id}/retry", post(submissions::retry))
        .route("/submissions/{id}/cancel", post(submissions::cancel))
        .route("/reference/places", get(places::places))
        .route("/cargo", get(cargo::list).post(drafts::create::<Shipments>))
        .route("/cargo/new", get(drafts::new::<Shipments>))
        .route("/cargo/{id}", get(cargo::show).post(drafts::update::<Shipments>))
        .route("/cargo/{id}/edit", get(drafts::edit::<Shipments>))
        .route("/cargo/{id}/delete", post(drafts::delete::<Shipments>))
        .merge(Record::Journey.routes())
        .merge(Record::Cargo.routes())
        // Registration.
        .route("/register", get(register::form).post(register::submit))
        .route("/assets/{name}", get(assets::serve))
        .layer(from_fn_with_state(state.clone(), page::serve))
        .with_state(state)
}

/// A registry's five pages.
fn registry<R: Pages>() -> Router<AppState> {
    let p = R::PATH;
    Router::new()
        .route(p, get(records::list::<R>).post(records::create::<R>))
        .route(&format!("{p}/new"), get(records::new::<R>))
        .route(&format!("{p}/{{id}}"), post(records::update::<R>))
        .route(&format!("{p}/{{id}}/edit"), get(records::edit::<R>))
        .route(&format!("{p}/{{id}}/delete"), post(records::delete::<R>))
}

/// Whether a request is a person's browser (it asks for HTML): unknown paths then get a page.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"))
}

/// The page for a path that is nowhere.
pub fn not_found(headers: &HeaderMap) -> Response {
    let lang = i18n::Lang::of(headers);
    let shell = page::Shell { lang, signed_in: None, path: "/" };
    let body = page::page(
        &shell,
        lang.t(i18n::Msg::NotFound),
        maud::html! {
            h1 { (lang.t(i18n::Msg::NotFound)) }
            p { a href="/" { "TNS" } }
        },
    );
    (StatusCode::NOT_FOUND, Html(body.into_string())).into_response()
}
