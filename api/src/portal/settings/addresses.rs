//! The caller addresses U-ETDS accepts the organization's calls from: the platform's own (the
//! operator's `TNS_EGRESS_IPS`), which the firm must register, beside what U-ETDS holds; an
//! address or a range registered, an entry removed. Every change goes to U-ETDS with the
//! organization's credentials through the API's own function, which audits it.

use tns_adapter::AllowListChange;

use super::prelude::*;
use crate::v1::endpoints::allowed_addresses::{allowed, entry_id, AllowedAddressIn, AllowedAddresses};

pub(crate) const PATH: &str = "/settings/downstream/addresses";
const API: &str = "/portal/downstream/allowed-addresses";

/// What the add form sends.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AddressForm {
    #[serde(default)]
    first: String,
    #[serde(default)]
    last: String,
}

fn render(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    held: Result<&AllowedAddresses, &ApiError>,
    typed: Option<&AddressForm>,
    error: Option<&ApiError>,
    done: Option<Msg>,
) -> String {
    let csrf = &signed_in.csrf;
    let may_change = signed_in.principal.scopes.allows(Scope::AccountWrite);
    let named = match error {
        Some(ApiError::Validation { field, reason }) if field == "first" || field == "last" => {
            Some((field.as_str(), reason.as_str()))
        }
        _ => None,
    };
    let err = |f: &str| named.filter(|(n, _)| *n == f).map(|(_, r)| r);
    let platform = &st.cfg.egress_addresses;
    let body = html! {
        @if let Some(d) = done { (flash(lang.t(d), "ok")) }
        p { (lang.t(Msg::AddressesIntro)) " " a href="/settings/downstream" { (lang.t(Msg::Downstream)) } }
        section.card aria-labelledby="platform-h" {
            h2 #platform-h { (lang.t(Msg::PlatformAddresses)) }
            @if platform.is_empty() {
                p.muted { (lang.t(Msg::NoPlatformAddresses)) }
            } @else {
                ul #platform-addresses { @for a in platform { li { code { (a) } } } }
            }
        }
        section aria-labelledby="held-h" {
            h2 #held-h { (lang.t(Msg::RegisteredAddresses)) }
            @match held {
                Err(e) => { (alert(lang, e)) }
                Ok(list) => {
                    @let headings = [lang.t(Msg::FirstAddress), lang.t(Msg::LastAddress), lang.t(Msg::Actions)];
                    (table(&headings[..if may_change { 3 } else { 2 }], &list.data, lang.t(Msg::NothingYet), |a| html! {
                        tr {
                            td { code { (a.first) } }
                            td { @match &a.last { Some(l) => code { (l) }, None => "—" } }
                            @if may_change {
                                td {
                                    @let action = format!("{PATH}/{}/remove", a.id);
                                    form.inline method="post" action=(action) {
                                        input type="hidden" name="_csrf" value=(csrf);
                                        button.danger type="submit" { (lang.t(Msg::Remove)) span.sr-only { " " (a.first) } }
                                    }
                                }
                            }
                        }
                    }))
                }
            }
        }
        @if may_change {
            form.record #add-address method="post" action=(PATH) novalidate {
                input type="hidden" name="_csrf" value=(csrf);
                h2 { (lang.t(Msg::RegisterAddress)) }
                @if let Some(e) = error.filter(|_| named.is_none()) {
                    (alert(lang, e))
                }
                @for (name, label) in [("first", Msg::FirstAddress), ("last", Msg::LastAddressOptional)] {
                    @let value = typed.map(|t| if name == "first" { t.first.as_str() } else { t.last.as_str() }).unwrap_or("");
                    div.field {
                        label for=(name) { (lang.t(label)) }
                        input #(name) type="text" name=(name) value=(value) autocomplete="off" inputmode="decimal"
                            aria-invalid=[err(name).map(|_| "true")] aria-describedby=[err(name).map(|_| format!("{name}-error"))];
                        (field_error(name, err(name)))
                    }
                }
                div { button type="submit" { (lang.t(Msg::RegisterIt)) } }
            }
        }
    };
    settings_page(lang, signed_in, PATH, lang.t(Msg::AllowedAddresses), body)
}

/// `GET /settings/downstream/addresses`: what U-ETDS holds, asked now.
pub(crate) async fn show(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let done = match q.get("done").map(String::as_str) {
        Some("added") => Some(Msg::AddressRegistered),
        Some("removed") => Some(Msg::AddressRemoved),
        _ => None,
    };
    // Each view asks U-ETDS with the firm's credentials: admitted (and counted) as the API's
    // list call, not a mere page view.
    admit(&st, m.principal(), Method::GET, API).await?;
    let held = match allowed(&st, m.principal(), None).await {
        Err(e) if !correctable(&e) => return Err(e.into()),
        held => held,
    };
    Ok(Html(render(&st, m.lang, &m.signed_in, held.as_ref(), None, None, done)))
}

/// The page again after a change U-ETDS refused (or one that could not be made), with what
/// was typed; other errors are the portal's error page.
async fn refused(
    st: &AppState,
    m: &Member<AccountWrite>,
    typed: Option<&AddressForm>,
    e: ApiError,
) -> Result<Response, PortalError> {
    if !correctable(&e) {
        return Err(e.into());
    }
    // The list after a refusal is asked again only as an admitted call; past the limit the
    // page says why instead.
    let held = match admit(st, m.principal(), Method::GET, API).await {
        Ok(()) => allowed(st, m.principal(), None).await,
        Err(_) => Err(ApiError::Unavailable("the list is not asked again now".into())),
    };
    let page = render(st, m.lang, &m.signed_in, held.as_ref(), typed, Some(&e), None);
    Ok(shown_again(&e, page))
}

/// `POST /settings/downstream/addresses`: as `POST /api/v1/portal/downstream/allowed-addresses`.
pub(crate) async fn add(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<AddressForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, API).await?;
    let mut body = json!({ "first": f.first.trim() });
    if !f.last.trim().is_empty() {
        body["last"] = json!(f.last.trim());
    }
    let outcome = match parse_value::<AllowedAddressIn>(body) {
        Ok(input) => allowed(&st, m.principal(), Some(input.change())).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(_) => Ok(go(&format!("{PATH}?done=added"), &headers)),
        Err(e) => refused(&st, &m, Some(&f), e).await,
    }
}

/// `POST /settings/downstream/addresses/{id}/remove`: as `DELETE
/// /api/v1/portal/downstream/allowed-addresses/{id}`.
pub(crate) async fn remove(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::DELETE, "/portal/downstream/allowed-addresses/{id}").await?;
    let Some(id) = entry_id(id.clone()) else {
        return Err(ApiError::NotFound(format!("no allowed address {id:?}")).into());
    };
    match allowed(&st, m.principal(), Some(AllowListChange::Remove { id })).await {
        Ok(_) => Ok(go(&format!("{PATH}?done=removed"), &headers)),
        Err(e) => refused(&st, &m, None, e).await,
    }
}
