//! The portal's page shell and its failures: every page is the same document (a skip link, the
//! navigation, the language switch, the signed-in member and when the session ends, a live
//! region for messages, the page's own content), served with headers that keep it out of
//! caches and frames and allow only its own scripts and styles.

use axum::{
    extract::{Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    middleware::Next,
    response::{Html, IntoResponse, Redirect, Response},
};
use maud::{html, Markup, DOCTYPE};
use tns_core::scopes::{Scope, Scopes};

use super::{
    assets, format,
    i18n::{Lang, Msg},
    member::{self, SignedIn},
};
use crate::{error::ApiError, state::AppState};

/// What a page shows around its content.
pub(super) struct Shell<'a> {
    pub lang: Lang,
    pub signed_in: Option<&'a SignedIn>,
    /// The path of the page, to mark the navigation and come back to after switching language.
    pub path: &'a str,
}

/// The sections the navigation offers, with their paths and the scope each one's page reads
/// with (a member is offered only what they may open). Settings is apart: its entry leads to
/// the first settings page the member may open.
const SECTIONS: &[(Msg, &str, Scope)] = &[
    (Msg::Dashboard, "/dashboard", Scope::SubmissionsRead),
    (Msg::Journeys, "/journeys", Scope::JourneysRead),
    (Msg::Vehicles, "/vehicles", Scope::JourneysRead),
    (Msg::Personnel, "/personnel", Scope::JourneysRead),
    (Msg::Submissions, "/submissions", Scope::SubmissionsRead),
    (Msg::Cargo, "/cargo", Scope::JourneysRead),
];

/// The navigation's entries for a member holding `scopes`.
fn sections(scopes: Scopes) -> Vec<(Msg, &'static str)> {
    let mut out: Vec<(Msg, &str)> =
        SECTIONS.iter().filter(|(_, _, scope)| scopes.allows(*scope)).map(|(m, p, _)| (*m, *p)).collect();
    if let Some(first) = super::settings::first_page(scopes) {
        out.push((Msg::Settings, first));
    }
    out
}

/// Whether the section at `section` holds the page at `path` (every settings page is in
/// Settings, whose entry leads to its first page).
fn current(path: &str, section: &str) -> bool {
    path.starts_with(section) || (section.starts_with("/settings/") && path.starts_with("/settings/"))
}

/// A whole page: `title` (already in the page's language) and its `content`.
pub(super) fn page(shell: &Shell<'_>, title: &str, content: Markup) -> Markup {
    let lang = shell.lang;
    html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                // Every answer is swapped in, errors too (they carry the message to show).
                meta name="htmx-config" content=r#"{"includeIndicatorStyles":false,"allowScriptTags":false,"allowEval":false,"responseHandling":[{"code":"204","swap":false},{"code":"...","swap":true}]}"#;
                title { (title) " · TNS" }
                // No icon: said here, so browsers do not ask for /favicon.ico (a 404 in their console).
                link rel="icon" href="data:,";
                link rel="stylesheet" href=(assets::STYLE.path());
                script src=(assets::HTMX.path()) defer {}
                script src=(assets::SCRIPT.path()) defer {}
            }
            // htmx sends the session's CSRF token on every request it makes.
            body hx-headers=[shell.signed_in.map(|s| format!(r#"{{"X-CSRF-Token":"{}"}}"#, s.csrf))] {
                a.skip href="#main" { (lang.t(Msg::SkipToContent)) }
                header.top {
                    a.brand href="/" { "TNS" }
                    @if let Some(s) = shell.signed_in {
                        nav aria-label=(lang.t(Msg::MainMenu)) {
                            ul {
                                @for (name, path) in sections(s.principal.scopes) {
                                    li {
                                        a href=(path) aria-current=[current(shell.path, path).then_some("page")] {
                                            (lang.t(name))
                                        }
                                    }
                                }
                            }
                        }
                    }
                    div.account {
                        a.lang href=(format!("/lang/{}?back={}", lang.other().code(), shell.path)) lang=(lang.other().code()) {
                            (lang.t(Msg::Language))
                        }
                        @if let Some(s) = shell.signed_in {
                            @if let Some(ends) = s.session_ends {
                                span.session { (lang.t(Msg::SessionEnds)) ": " time datetime=(ends.to_rfc3339()) { (format::datetime(lang, ends)) } }
                            }
                            a href="/account/password" { (lang.t(Msg::ChangePassword)) }
                            form method="post" action="/logout" hx-post="/logout" hx-target="body" {
                                input type="hidden" name="_csrf" value=(s.csrf);
                                button type="submit" { (lang.t(Msg::SignOut)) }
                            }
                        }
                    }
                }
                main #main tabindex="-1" {
                    div #flash role="status" aria-live="polite" {}
                    (content)
                }
            }
        }
    }
}

/// A page for a visitor who is not signed in (signing in, registering, a forgotten password):
/// `title` heading a card of `content`.
pub(super) fn card_page(lang: Lang, path: &str, title: &str, content: Markup) -> Markup {
    let shell = Shell { lang, signed_in: None, path };
    page(&shell, title, html! { div.signin.card { h1 { (title) } (content) } })
}

/// `items` as a table, one `row` (a `tr`) each, under column `headings` (already in the page's
/// language), in a box that scrolls sideways on a narrow screen; `empty` instead when there are
/// none.
pub(super) fn table<T>(headings: &[&str], items: &[T], empty: &str, row: impl Fn(&T) -> Markup) -> Markup {
    html! {
        @if items.is_empty() {
            p.muted { (empty) }
        } @else {
            div.table-wrap {
                table {
                    thead { tr { @for h in headings { th scope="col" { (h) } } } }
                    tbody { @for i in items { (row(i)) } }
                }
            }
        }
    }
}

/// Done: on to `to` (htmx is told to go there, so the whole page changes; a plain form is
/// redirected).
pub(super) fn go(to: &str, headers: &HeaderMap) -> Response {
    if headers.contains_key("hx-request") {
        let mut res = StatusCode::NO_CONTENT.into_response();
        res.headers_mut().insert("hx-redirect", HeaderValue::from_str(to).expect("a path"));
        res
    } else {
        Redirect::to(to).into_response()
    }
}

/// A short message in the live region (htmx swaps it in).
pub(super) fn flash(text: &str, kind: &str) -> Markup {
    html! { p class=(format!("flash {kind}")) { (text) } }
}

/// Why a page failed. Rendered by [`render_failures`], which knows the language and member.
#[derive(Debug)]
pub(super) enum PortalError {
    /// Not signed in (or the session ended): sign in first.
    SignIn,
    /// An unsafe request without the session's CSRF token: the page is out of date.
    Stale,
    /// Over a hard monthly quota.
    QuotaUsedUp,
    /// What the API would have answered.
    Api(ApiError),
}

impl From<ApiError> for PortalError {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Unauthorized(_) => PortalError::SignIn,
            other => PortalError::Api(other),
        }
    }
}

impl From<sqlx::Error> for PortalError {
    fn from(e: sqlx::Error) -> Self {
        PortalError::Api(e.into())
    }
}

/// The failure a response carries to [`render_failures`].
#[derive(Debug, Clone)]
struct Failed {
    status: StatusCode,
    /// What to tell the member (a 4xx's own detail; never a 5xx's).
    detail: Option<String>,
    msg: Msg,
}

impl PortalError {
    /// The bare response; [`render_failures`] turns it into a page or a message.
    pub(super) fn into_response_now(self) -> Response {
        let failed = match self {
            PortalError::SignIn => Failed { status: StatusCode::UNAUTHORIZED, detail: None, msg: Msg::SignInAgain },
            PortalError::Stale => Failed { status: StatusCode::FORBIDDEN, detail: None, msg: Msg::ReloadPage },
            PortalError::QuotaUsedUp => Failed {
                status: StatusCode::TOO_MANY_REQUESTS,
                detail: Some(
                    "monthly quota is used up; it resets at the start of next month (UTC) or with a larger plan".into(),
                ),
                msg: Msg::NotAllowed,
            },
            PortalError::Api(e) => {
                let status = e.status();
                let msg = match status {
                    StatusCode::NOT_FOUND => Msg::NotFound,
                    StatusCode::FORBIDDEN => Msg::NotAllowed,
                    StatusCode::SERVICE_UNAVAILABLE => Msg::TryAgainLater,
                    s if s.is_server_error() => Msg::SomethingWrong,
                    _ => Msg::FixErrors,
                };
                if status.is_server_error() {
                    // Logged (and hidden) as the API logs it.
                    let _ = e.into_response();
                    Failed { status, detail: None, msg }
                } else {
                    Failed { status, detail: Some(e.to_string()), msg }
                }
            }
        };
        let mut res = failed.status.into_response();
        res.extensions_mut().insert(failed);
        res
    }
}

impl IntoResponse for PortalError {
    fn into_response(self) -> Response {
        self.into_response_now()
    }
}

/// Pages are personal: kept out of caches, frames and other origins' scripts.
fn secure(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, k: header::HeaderName, v: &'static str| {
        h.entry(k).or_insert(HeaderValue::from_static(v));
    };
    set(headers, header::CACHE_CONTROL, "no-store");
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "same-origin");
}

/// Every portal request: who is signing in ([`member::resolve`]), then the page, then a failed
/// page turned into what the member sees: for a request htmx made, the message in the page's
/// live region (or, not signed in, a move to the sign-in page); otherwise a whole page with the
/// message (or a redirect to sign in). Every portal answer gets the page headers.
pub(super) async fn serve(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let lang = Lang::of(req.headers());
    let htmx = req.headers().contains_key("hx-request");
    let path = req.uri().path().to_string();
    let (signed_in, mut res) = match member::resolve(&st, req).await {
        Ok((mut req, signed_in)) => {
            if let Some(s) = &signed_in {
                req.extensions_mut().insert(s.clone());
            }
            (signed_in, next.run(req).await)
        }
        Err(e) => (None, e.into_response_now()),
    };
    if let Some(failed) = res.extensions_mut().remove::<Failed>() {
        res = match (failed.status, htmx) {
            (StatusCode::UNAUTHORIZED, true) => {
                let mut r = StatusCode::OK.into_response();
                r.headers_mut().insert("hx-redirect", HeaderValue::from_static("/login"));
                r
            }
            (StatusCode::UNAUTHORIZED, false) => {
                Redirect::to(&format!("/login?next={}", urlencode(&path))).into_response()
            }
            (status, true) => {
                let body = flash(&message(lang, &failed), "error");
                let mut r = (status, Html(body.into_string())).into_response();
                r.headers_mut().insert("hx-retarget", HeaderValue::from_static("#flash"));
                r.headers_mut().insert("hx-reswap", HeaderValue::from_static("innerHTML"));
                r
            }
            (status, false) => {
                let shell = Shell { lang, signed_in: signed_in.as_ref(), path: &path };
                let body = page(
                    &shell,
                    lang.t(failed.msg),
                    html! { h1 { (lang.t(failed.msg)) } (flash(&message(lang, &failed), "error")) },
                );
                (status, Html(body.into_string())).into_response()
            }
        };
    }
    secure(res.headers_mut());
    res
}

fn message(lang: Lang, failed: &Failed) -> String {
    match &failed.detail {
        Some(d) => format!("{} ({d})", lang.t(failed.msg)),
        None => lang.t(failed.msg).to_string(),
    }
}

/// `s` as a query parameter's value.
pub(super) fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
