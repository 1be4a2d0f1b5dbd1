//! Your data (KVKK): the owner asks for an archive of everything TNS holds about the
//! organization and downloads it once the jobs role has built it (kept 7 days). Other members
//! see why they cannot.

use std::collections::HashMap;

use axum::{
    extract::{Path, Query, State},
    http::{HeaderMap, Method},
    response::{Html, IntoResponse, Response},
};
use maud::html;
use tns_core::{
    domain::kinds::ExportState,
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store as db;

use super::{correctable, problem, settings_page};
use crate::{
    error::ApiError,
    portal::{
        format,
        i18n::{Lang, Msg},
        member::{admit, Member, SignedIn},
        page::{flash, go, table, PortalError},
    },
    state::AppState,
    v1::endpoints::exports as api,
};

pub const PATH: &str = "/settings/data";

async fn render(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    error: Option<&ApiError>,
    asked: bool,
) -> Result<String, PortalError> {
    let p = &signed_in.principal;
    let is_owner = api::owner(st, p).await.is_ok();
    let exports = if is_owner { db::exports::list(&st.db, p.org_id).await? } else { vec![] };
    let body = html! {
        p { (lang.t(Msg::ExportAbout)) }
        @if !is_owner {
            p.muted { (lang.t(Msg::ExportOwnerOnly)) }
        } @else {
            @if asked { (flash(lang.t(Msg::ExportAsked), "ok")) }
            @if let Some(e) = error { div role="alert" { (flash(&problem(lang, e), "error")) } }
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
    };
    Ok(settings_page(lang, signed_in, PATH, lang.t(Msg::YourData), body))
}

/// `GET /settings/data`.
pub async fn show(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let asked = q.get("done").is_some_and(|d| d == "asked");
    Ok(Html(render(&st, m.lang, &m.signed_in, None, asked).await?))
}

/// `POST /settings/data`: as `POST /api/v1/portal/exports`.
pub async fn ask(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/exports").await?;
    match api::request(&st, m.principal()).await {
        Ok(_) => Ok(go(&format!("{PATH}?done=asked"), &headers)),
        Err(e) if correctable(&e) => {
            let page = render(&st, m.lang, &m.signed_in, Some(&e), false).await?;
            Ok((e.status(), Html(page)).into_response())
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /settings/data/{id}/download`: as `GET /api/v1/portal/exports/{id}/download`.
pub async fn download(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Path(id): Path<i64>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::GET, "/portal/exports/{id}/download").await?;
    Ok(api::archive(&st, m.principal(), id).await?)
}
