//! Webhooks: subscriptions listed and made (the signing secret shown on the answering page
//! only), a subscription's page with its deliveries, its secret rotated and a test event sent,
//! and a delivery's page with the payload and every attempt.

use tns_core::{
    domain::webhooks::{RotateSecretIn, SubscriptionIn, TestEventIn},
    ids::WebhookSubscriptionId,
    scopes::need::{WebhooksRead, WebhooksWrite},
};
use tns_store::{
    pagination::Page,
    webhooks::{self as store, DeliveryFilter, Subscription},
};

use super::prelude::*;
use crate::{
    portal::forms::{self, FieldSpec, Typed},
    v1::endpoints::webhooks as api,
};

const PATH: &str = "/settings/webhooks";

/// The fields of the form: the API's `SubscriptionIn` but the secret, which the API makes.
fn specs() -> Vec<FieldSpec> {
    forms::fields("SubscriptionIn").iter().filter(|s| s.name != "secret").cloned().collect()
}

fn state_of(lang: Lang, s: &Subscription) -> String {
    if s.active == 1 {
        lang.t(Msg::Active).to_string()
    } else {
        match &s.inactive_reason {
            Some(r) => format!("{} ({r})", lang.t(Msg::Inactive)),
            None => lang.t(Msg::Inactive).to_string(),
        }
    }
}

fn secret_notice(lang: Lang, secret: &str) -> Markup {
    html! {
        div.flash.ok.secret role="status" {
            p { (lang.t(Msg::SecretMade)) }
            p { code #new-secret { (secret) } }
        }
    }
}

async fn list_page(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    typed: &Typed,
    error: Option<&ApiError>,
) -> Result<String, PortalError> {
    let subs = store::list(&st.db, signed_in.principal.org_id, &Page { limit: 100, before: None }).await?;
    let may_change = signed_in.principal.scopes.allows(Scope::WebhooksWrite);
    let specs = specs();
    let named = error.and_then(|e| forms::field_error(&specs, e));
    let body = html! {
        @let headings = [lang.t(Msg::EndpointUrl), lang.t(Msg::EventType), lang.t(Msg::Status), lang.t(Msg::Created)];
        (table(&headings, &subs, lang.t(Msg::NothingYet), |s| html! {
            tr {
                td { a href=(format!("{PATH}/{}", s.id)) { (s.endpoint_url) } }
                td { code { (s.event_type.as_str()) } }
                td { (state_of(lang, s)) }
                td { (format::datetime(lang, s.created_at)) }
            }
        }))
        @if may_change {
            @let fields = forms::inputs(lang, &specs, typed, named.as_ref());
            (new_entry_form(signed_in, PATH, ("new-hook-h", lang.t(Msg::NewWebhook)), lang.t(Msg::Create), form_alert(lang, error, named.is_some()), fields))
        }
    };
    Ok(settings_page(lang, signed_in, PATH, lang.t(Msg::Webhooks), body))
}

/// `GET /settings/webhooks`.
pub(crate) async fn list(State(st): State<AppState>, m: Member<WebhooksRead>) -> Result<Html<String>, PortalError> {
    Ok(Html(list_page(&st, m.lang, &m.signed_in, &Typed::new(), None).await?))
}

/// `POST /settings/webhooks`: as `POST /api/v1/portal/webhooks`; the answer is the
/// subscription's page, the one that shows its secret.
pub(crate) async fn create(
    State(st): State<AppState>,
    m: Member<WebhooksWrite>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/webhooks").await?;
    let specs = specs();
    let typed = forms::typed(&specs, pairs);
    let outcome = match parse_value::<SubscriptionIn>(forms::json(&specs, &typed, false)) {
        Ok(input) => api::subscribe(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok((made, secret)) => {
            let notice = secret_notice(m.lang, &secret);
            Ok(Html(detail_page(&st, m.lang, &m.signed_in, &made, Some(notice)).await?).into_response())
        }
        Err(e) if correctable(&e) => {
            let page = list_page(&st, m.lang, &m.signed_in, &typed, Some(&e)).await?;
            Ok(shown_again(&e, page))
        }
        Err(e) => Err(e.into()),
    }
}

async fn detail_page(
    st: &AppState,
    lang: Lang,
    signed_in: &SignedIn,
    s: &Subscription,
    notice: Option<Markup>,
) -> Result<String, PortalError> {
    let org = signed_in.principal.org_id;
    let filter = DeliveryFilter { subscription_id: Some(s.id), ..Default::default() };
    let deliveries = store::deliveries(&st.db, org, &filter, &Page { limit: 50, before: None }).await?;
    let may_change = signed_in.principal.scopes.allows(Scope::WebhooksWrite);
    let csrf = &signed_in.csrf;
    let path = format!("{PATH}/{}", s.id);
    let body = html! {
        @if let Some(n) = notice { (n) }
        dl.facts {
            dt { (lang.t(Msg::EndpointUrl)) } dd { (s.endpoint_url) }
            dt { (lang.t(Msg::EventType)) } dd { code { (s.event_type.as_str()) } }
            dt { (lang.t(Msg::Status)) } dd { (state_of(lang, s)) }
            dt { (lang.t(Msg::Created)) } dd { (format::datetime(lang, s.created_at)) }
        }
        @if may_change {
            div.toolbar {
                form.inline method="post" action=(format!("{path}/test")) {
                    input type="hidden" name="_csrf" value=(csrf);
                    button.secondary type="submit" { (lang.t(Msg::SendTestEvent)) }
                }
                form.inline method="post" action=(format!("{path}/rotate")) hx-post=(format!("{path}/rotate"))
                    hx-target="body" hx-confirm=(lang.t(Msg::ConfirmRotate)) {
                    input type="hidden" name="_csrf" value=(csrf);
                    button.secondary type="submit" { (lang.t(Msg::RotateSecret)) }
                }
            }
        }
        h2 { (lang.t(Msg::Deliveries)) }
        @let headings = [lang.t(Msg::Created), lang.t(Msg::EventType), lang.t(Msg::Status), lang.t(Msg::Attempts), lang.t(Msg::ResponseStatus)];
        (table(&headings, &deliveries, lang.t(Msg::NothingYet), |d| html! {
            tr {
                td { a href=(format!("{PATH}/deliveries/{}", d.id)) { (format::datetime(lang, d.created_at)) } }
                td { code { (d.event_type.as_str()) } }
                td { (d.delivery_status.as_str()) }
                td { (d.attempts) }
                td { (d.last_response_status.map(|c| c.to_string()).unwrap_or("—".into())) }
            }
        }))
        p { a href=(PATH) { (lang.t(Msg::Webhooks)) } }
    };
    Ok(settings_page(lang, signed_in, &path, &s.endpoint_url, body))
}

/// `GET /settings/webhooks/{id}`: a subscription and its deliveries.
pub(crate) async fn show(
    State(st): State<AppState>,
    m: Member<WebhooksRead>,
    Path(id): Path<WebhookSubscriptionId>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Html<String>, PortalError> {
    let s = api::subscription(&st, m.org(), id).await?;
    let notice = q.get("done").filter(|d| *d == "test").map(|_| flash(m.lang.t(Msg::TestEventSent), "ok"));
    Ok(Html(detail_page(&st, m.lang, &m.signed_in, &s, notice).await?))
}

/// `POST /settings/webhooks/{id}/rotate`: as `POST /api/v1/portal/webhooks/{id}/rotate-secret`,
/// the new secret shown on the answering page only.
pub(crate) async fn rotate(
    State(st): State<AppState>,
    m: Member<WebhooksWrite>,
    Path(id): Path<WebhookSubscriptionId>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/webhooks/{id}/rotate-secret").await?;
    let (made, secret) = api::rotate(&st, m.principal(), id, RotateSecretIn::default()).await?;
    let notice = secret_notice(m.lang, &secret);
    Ok(Html(detail_page(&st, m.lang, &m.signed_in, &made, Some(notice)).await?).into_response())
}

/// `POST /settings/webhooks/{id}/test`: as `POST /api/v1/portal/webhooks/test-event` for this
/// subscription.
pub(crate) async fn test_event(
    State(st): State<AppState>,
    m: Member<WebhooksWrite>,
    headers: HeaderMap,
    Path(id): Path<WebhookSubscriptionId>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/webhooks/test-event").await?;
    let input: TestEventIn = parse_value(json!({ "subscription_id": id }))?;
    api::send_test(&st, m.principal(), input).await?;
    Ok(go(&format!("{PATH}/{id}?done=test"), &headers))
}

/// `GET /settings/webhooks/deliveries/{id}`: a delivery, its payload and its attempts.
pub(crate) async fn delivery(
    State(st): State<AppState>,
    m: Member<WebhooksRead>,
    Path(id): Path<i64>,
) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let d = api::delivery_detail(&st, m.principal(), id).await?;
    let r = &d.record;
    let body = html! {
        dl.facts {
            dt { (lang.t(Msg::EventType)) } dd { code { (r.event_type.as_str()) } }
            dt { (lang.t(Msg::Status)) } dd { (r.delivery_status.as_str()) }
            dt { (lang.t(Msg::Created)) } dd { (format::datetime(lang, r.created_at)) }
            @if let Some(e) = &r.last_error { dt { (lang.t(Msg::Message)) } dd { (e) } }
        }
        h2 { (lang.t(Msg::Attempts)) }
        @let headings = [lang.t(Msg::When), lang.t(Msg::Outcome), lang.t(Msg::ResponseStatus), lang.t(Msg::Duration), lang.t(Msg::Message)];
        (table(&headings, &d.history, lang.t(Msg::NothingYet), |a| html! {
            tr {
                td { (format::datetime(lang, a.started_at)) }
                td { (a.outcome) }
                td { (a.response_status.map(|c| c.to_string()).unwrap_or("—".into())) }
                td { (a.duration_ms.map(|ms| format::int(lang, ms.into())).unwrap_or("—".into())) }
                td { (a.error.as_deref().unwrap_or("")) }
            }
        }))
        h2 { (lang.t(Msg::Payload)) }
        pre.payload { code { (d.payload) } }
        p { a href=(format!("{PATH}/{}", r.subscription_id)) { (lang.t(Msg::Webhooks)) } }
    };
    let title = format!("{} {}", lang.t(Msg::Delivery), r.id);
    Ok(Html(settings_page(lang, &m.signed_in, PATH, &title, body)))
}
