//! API keys: the organization's active keys, a new one made with a name and some of the
//! member's own scopes (its secret on the answering page only, never in a cookie or a URL),
//! and keys revoked.

use tns_core::ids::KeyId;
use tns_store::api_keys;

use super::prelude::*;
use crate::v1::endpoints::api_keys::{self as api, CreateKeyIn};

const PATH: &str = "/settings/keys";

/// What the form had: the name and the scopes ticked.
#[derive(Default)]
struct Typed {
    name: String,
    scopes: Vec<String>,
}

async fn render(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    notice: Option<Markup>,
    typed: &Typed,
    error: Option<&ApiError>,
) -> Result<String, PortalError> {
    let keys = api_keys::list(&st.db, signed_in.principal.org_id).await?;
    let csrf = &signed_in.csrf;
    let mine = signed_in.principal.scopes;
    let may_change = mine.allows(Scope::AccountWrite);
    let named = match error {
        Some(ApiError::Validation { field, reason }) if field == "name" || field.starts_with("scopes") => {
            Some((if field == "name" { "name" } else { "scopes" }, reason.as_str()))
        }
        _ => None,
    };
    let err = |f: &str| named.filter(|(n, _)| *n == f).map(|(_, r)| r);
    let body = html! {
        @if let Some(n) = notice { (n) }
        @let headings = [lang.t(Msg::Name), lang.t(Msg::Scopes), lang.t(Msg::Created), lang.t(Msg::Prefix), lang.t(Msg::Actions)];
        (table(&headings[..if may_change { 5 } else { 4 }], &keys, lang.t(Msg::NothingYet), |k| html! {
            tr {
                td { (k.name) }
                td { (k.scopes.join(", ")) }
                td { (format::datetime(lang, k.created_at)) }
                td { code { (k.api_key_prefix) "…" } }
                @if may_change {
                    td {
                        @let action = format!("{PATH}/{}/revoke", k.id);
                        form.inline method="post" action=(action) hx-post=(action) hx-confirm=(lang.t(Msg::ConfirmRevokeKey)) {
                            input type="hidden" name="_csrf" value=(csrf);
                            button.danger type="submit" { (lang.t(Msg::Revoke)) span.sr-only { " " (k.name) } }
                        }
                    }
                }
            }
        }))
        @if may_change {
            (new_entry_form(signed_in, PATH, ("new-key-h", lang.t(Msg::NewKey)), lang.t(Msg::Create), form_alert(lang, error, named.is_some()), html! {
                div.field {
                    label for="key-name" { (lang.t(Msg::Name)) }
                    input #key-name type="text" name="name" value=(typed.name) maxlength="100" required autocomplete="off"
                        aria-invalid=[err("name").map(|_| "true")] aria-describedby=[err("name").map(|_| "key-name-error")];
                    (field_error("key-name", err("name")))
                }
                fieldset.field aria-invalid=[err("scopes").map(|_| "true")] aria-describedby=[err("scopes").map(|_| "scopes-error")] {
                    legend { (lang.t(Msg::Scopes)) }
                    @for s in mine.iter() {
                        @let id = format!("scope-{}", s.as_str().replace(':', "-"));
                        div.choice {
                            input #(id) type="checkbox" name="scope" value=(s.as_str()) checked[typed.scopes.iter().any(|t| t == s.as_str())];
                            " " label for=(id) { code { (s.as_str()) } }
                        }
                    }
                    (field_error("scopes", err("scopes")))
                }
            }))
        }
    };
    Ok(settings_page(lang, signed_in, PATH, lang.t(Msg::ApiKeys), body))
}

/// `GET /settings/keys`.
pub(crate) async fn show(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let notice = q.get("done").filter(|d| *d == "revoked").map(|_| flash(m.lang.t(Msg::Revoked), "ok"));
    Ok(Html(render(&st, m.lang, &m.signed_in, notice, &Typed::default(), None).await?))
}

/// `POST /settings/keys`: as `POST /api/v1/portal/api-keys`; the answer is the one page that
/// shows the key.
pub(crate) async fn create(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/api-keys").await?;
    let lang = m.lang;
    let mut typed = Typed::default();
    for (k, v) in pairs {
        match k.as_str() {
            "name" => typed.name = v,
            "scope" => typed.scopes.push(v),
            _ => {}
        }
    }
    let outcome = match parse_value::<CreateKeyIn>(json!({"name": typed.name, "scopes": typed.scopes})) {
        Ok(input) => api::create_key(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(key) => {
            let notice = html! {
                div.flash.ok.secret role="status" {
                    p { (lang.t(Msg::KeyMade)) }
                    p { code #new-secret { (key.api_key) } }
                }
            };
            let page = render(&st, lang, &m.signed_in, Some(notice), &Typed::default(), None).await?;
            Ok(Html(page).into_response())
        }
        Err(e) if correctable(&e) => {
            let page = render(&st, lang, &m.signed_in, None, &typed, Some(&e)).await?;
            Ok(shown_again(&e, page))
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /settings/keys/{id}/revoke`: as `DELETE /api/v1/portal/api-keys/{id}`.
pub(crate) async fn revoke(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Path(id): Path<KeyId>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::DELETE, "/portal/api-keys/{id}").await?;
    api::revoke_key(&st, m.principal(), id).await?;
    Ok(go(&format!("{PATH}?done=revoked"), &headers))
}
