//! `/portal/webhooks`: subscriptions (create with a secret shown once, list, get, change,
//! deactivate/reactivate, rotate the secret, delete), delivery records with their attempts,
//! and test events. Delivery itself is the scheduler's (tns_scheduler::webhooks).

use axum::{body::Bytes, extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use tns_core::ids::{OrgId, WebhookSubscriptionId};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::{optional_json, ApiJson, ApiPath, ApiQuery},
    idempotency::NoReplay,
    state::AppState,
    v1::{
        answers::{DeliveryAttemptOut, DeliveryRecordOut, TestEventData, WebhookSubscriptionOut},
        resource::{missing_reference, not_found, ListQuery},
        Ok as OkBody,
    },
};
pub use tns_core::domain::webhooks::{RotateSecretIn, SubscriptionIn, SubscriptionPatch, TestEventIn};
use tns_core::{
    domain::{
        fields::{Cursor, Limit, RecordId},
        kinds::{AnyEventType, DeliveryStatus},
        personal::mask_personal,
        webhooks::WebhookSecret,
    },
    scopes::{
        need::{WebhooksRead, WebhooksWrite},
        Scope,
    },
};
use tns_http::wire::Paged;
use tns_store::{
    self as db,
    pagination::Page,
    webhooks::{DeliveryFilter, Subscription, MAX_SUBSCRIPTIONS},
};
use utoipa_axum::{router::OpenApiRouter, routes};

/// A subscription with its signing secret, shown this once.
#[derive(Serialize, ToSchema)]
pub struct CreatedSubscription {
    #[serde(flatten)]
    pub subscription: WebhookSubscriptionOut,
    /// Signs every delivery: `X-Webhook-Signature` (hex HMAC-SHA256 of the body keyed with the
    /// whole secret) and `webhook-signature` (Standard Webhooks). Not shown again.
    pub secret: String,
}

impl CreatedSubscription {
    /// The answer for a subscription made or given a new secret, with that secret.
    fn new((subscription, secret): (Subscription, String)) -> CreatedSubscription {
        CreatedSubscription { subscription: subscription.into(), secret }
    }
}

/// Subscribe an endpoint to an event type. The answer carries the signing secret once (an
/// `Idempotency-Key` repeat does not replay it). Scope `webhooks:write`.
#[utoipa::path(post, path = "/portal/webhooks", operation_id = "create_webhook", tag = "webhooks", request_body = SubscriptionIn,
    responses((status = 201, body = CreatedSubscription), (status = 409, body = ErrorBody, description = "too many subscriptions"),
              (status = 422, body = ErrorBody, description = "bad event type, URL (scheme, plain http, internal address) or secret")),
    security(("bearer" = ["webhooks:write"]), ("session" = ["webhooks:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<WebhooksWrite>,
    ApiJson(input): ApiJson<SubscriptionIn>,
) -> ApiResult<(StatusCode, Extension<NoReplay>, Json<CreatedSubscription>)> {
    let made = subscribe(&st, &p, input).await?;
    Ok((StatusCode::CREATED, Extension(NoReplay), Json(CreatedSubscription::new(made))))
}

/// Subscribe for `p`'s organization (what `POST /portal/webhooks` does; the portal's page
/// calls it too): the subscription and its secret.
pub async fn subscribe(st: &AppState, p: &Principal, input: SubscriptionIn) -> ApiResult<(Subscription, String)> {
    let url = input.endpoint_url.admit(st.cfg.webhook_policy).await?;
    let secret = WebhookSecret::or_generated(input.secret);
    let sealed = st.cfg.data_key.seal(p.org_id, secret.as_bytes());
    let subscription =
        db::webhooks::insert(&st.db, p.org_id, input.event_type, &url, &sealed).await?.ok_or_else(|| {
            ApiError::Conflict(
                Code::LimitReached,
                format!("an organization keeps at most {MAX_SUBSCRIPTIONS} subscriptions"),
            )
        })?;
    Ok((subscription, secret))
}

/// The organization's subscriptions, newest first (secrets are never shown again).
/// Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks", operation_id = "list_webhooks", tag = "webhooks", params(ListQuery),
    responses((status = 200, body = Paged<WebhookSubscriptionOut>)),
    security(("bearer" = ["webhooks:read"]), ("session" = ["webhooks:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<WebhooksRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<WebhookSubscriptionOut>>> {
    let page = q.page();
    let rows = db::webhooks::list(&st.db, p.org_id, &page).await?;
    Ok(Json(Paged::from_rows(rows, &page).map(WebhookSubscriptionOut::from)))
}

/// One subscription. Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/{id}", operation_id = "get_webhook", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = WebhookSubscriptionOut)),
    security(("bearer" = ["webhooks:read"]), ("session" = ["webhooks:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<WebhooksRead>,
    ApiPath(id): ApiPath<WebhookSubscriptionId>,
) -> ApiResult<Json<WebhookSubscriptionOut>> {
    Ok(Json(subscription(&st, p.org_id, id).await?.into()))
}

/// Subscription `id` of `org`, or a 404.
pub async fn subscription(st: &AppState, org: OrgId, id: WebhookSubscriptionId) -> ApiResult<Subscription> {
    db::webhooks::get(&st.db, org, id).await?.ok_or_else(|| not_found("webhook subscription", id))
}

/// Change a subscription: any of `active`, `event_type`, `endpoint_url`. Answers the whole
/// record. Scope `webhooks:write`.
#[utoipa::path(put, path = "/portal/webhooks/{id}", operation_id = "update_webhook", tag = "webhooks", params(("id" = i64, Path)), request_body = SubscriptionPatch,
    responses((status = 200, body = WebhookSubscriptionOut)),
    security(("bearer" = ["webhooks:write"]), ("session" = ["webhooks:write"])))]
pub async fn update(
    State(st): State<AppState>,
    p: Caller<WebhooksWrite>,
    ApiPath(id): ApiPath<WebhookSubscriptionId>,
    ApiJson(patch): ApiJson<SubscriptionPatch>,
) -> ApiResult<Json<WebhookSubscriptionOut>> {
    let active = patch.active.map(|f| f.0);
    let url = match &patch.endpoint_url {
        Some(u) => Some(u.admit(st.cfg.webhook_policy).await?),
        None => None,
    };
    let mut tx = st.db.begin().await?;
    let updated = db::webhooks::update(&mut tx, p.org_id, id, patch.event_type, url.as_deref(), active)
        .await?
        .ok_or_else(|| not_found("webhook subscription", id))?;
    tx.commit().await?;
    Ok(Json(updated.into()))
}

/// Replace a subscription's signing secret (optional body `{"secret"}`; generated when left
/// out). The answer carries the new secret once (an `Idempotency-Key` repeat does not replay
/// it). For 24 hours the previous secret keeps signing beside the new one: `webhook-signature`
/// carries both signatures, `X-Webhook-Signature` the new secret's only, and
/// `previous_secret_expires_at` says until when. Rotating again within the 24 hours drops the
/// older secret. Scope `webhooks:write`.
#[utoipa::path(post, path = "/portal/webhooks/{id}/rotate-secret", operation_id = "rotate_webhook_secret", tag = "webhooks", params(("id" = i64, Path)), request_body(content = Option<RotateSecretIn>),
    responses((status = 200, body = CreatedSubscription),
              (status = 422, body = ErrorBody, description = "bad secret")),
    security(("bearer" = ["webhooks:write"]), ("session" = ["webhooks:write"])))]
pub async fn rotate_secret(
    State(st): State<AppState>,
    p: Caller<WebhooksWrite>,
    ApiPath(id): ApiPath<WebhookSubscriptionId>,
    body: Bytes,
) -> ApiResult<(Extension<NoReplay>, Json<CreatedSubscription>)> {
    // The body is optional: empty (or `null`) means "generate one".
    let input: RotateSecretIn = optional_json(&body)?.unwrap_or_default();
    Ok((Extension(NoReplay), Json(CreatedSubscription::new(rotate(&st, &p, id, input).await?))))
}

/// Replace subscription `id`'s signing secret (what `POST /portal/webhooks/{id}/rotate-secret`
/// does; the portal's page calls it too): the subscription and its new secret.
pub async fn rotate(
    st: &AppState,
    p: &Principal,
    id: WebhookSubscriptionId,
    input: RotateSecretIn,
) -> ApiResult<(Subscription, String)> {
    let secret = WebhookSecret::or_generated(input.secret);
    let sealed = st.cfg.data_key.seal(p.org_id, secret.as_bytes());
    let subscription = db::webhooks::rotate_secret(&st.db, p.org_id, id, &sealed)
        .await?
        .ok_or_else(|| not_found("webhook subscription", id))?;
    Ok((subscription, secret))
}

/// Delete a subscription: deliveries stop at once (waiting ones fail); its delivery records
/// stay listed. Scope `webhooks:write`.
#[utoipa::path(delete, path = "/portal/webhooks/{id}", operation_id = "delete_webhook", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody)),
    security(("bearer" = ["webhooks:write"]), ("session" = ["webhooks:write"])))]
pub async fn delete(
    State(st): State<AppState>,
    p: Caller<WebhooksWrite>,
    ApiPath(id): ApiPath<WebhookSubscriptionId>,
) -> ApiResult<Json<OkBody>> {
    let mut tx = st.db.begin().await?;
    if !db::webhooks::delete(&mut tx, p.org_id, id).await? {
        return Err(not_found("webhook subscription", id));
    }
    tx.commit().await?;
    Ok(Json(OkBody::default()))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<Limit>,
    /// `next_cursor` of the previous page.
    cursor: Option<Cursor>,
    delivery_status: Option<DeliveryStatus>,
    event_type: Option<AnyEventType>,
    subscription_id: Option<RecordId>,
}

/// Delivery records (one per event and subscription), newest first, with filters.
/// Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/events", operation_id = "list_webhook_events", tag = "webhooks", params(DeliveriesQuery),
    responses((status = 200, body = Paged<DeliveryRecordOut>)),
    security(("bearer" = ["webhooks:read"]), ("session" = ["webhooks:read"])))]
pub async fn deliveries(
    State(st): State<AppState>,
    p: Caller<WebhooksRead>,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<Paged<DeliveryRecordOut>>> {
    let page = Page::new(q.limit, q.cursor);
    let filter = DeliveryFilter {
        delivery_status: q.delivery_status,
        event_type: q.event_type,
        subscription_id: q.subscription_id.map(|id| WebhookSubscriptionId(id.get())),
    };
    let rows = db::webhooks::deliveries(&st.db, p.org_id, &filter, &page).await?;
    Ok(Json(Paged::from_rows(rows, &page).map(DeliveryRecordOut::from)))
}

/// A delivery record with the exact payload sent and every attempt.
#[derive(Serialize, ToSchema)]
pub struct DeliveryDetail {
    #[serde(flatten)]
    pub record: DeliveryRecordOut,
    /// The body POSTed, byte for byte as signed: `{"id", "type", "created_at", "data"}`. To a
    /// credential without `journeys:read`, any personal field in it comes masked.
    pub payload: String,
    /// Attempts, oldest first.
    pub history: Vec<DeliveryAttemptOut>,
}

/// One delivery record with its payload and attempts. Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/events/{id}", operation_id = "get_webhook_event", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = DeliveryDetail)),
    security(("bearer" = ["webhooks:read"]), ("session" = ["webhooks:read"])))]
pub async fn delivery(
    State(st): State<AppState>,
    p: Caller<WebhooksRead>,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<DeliveryDetail>> {
    Ok(Json(delivery_detail(&st, &p, id).await?))
}

/// Delivery record `id` of `p`'s organization with its payload (masked as `p` may see it) and
/// attempts (what `GET /portal/webhooks/events/{id}` answers).
pub async fn delivery_detail(st: &AppState, p: &Principal, id: i64) -> ApiResult<DeliveryDetail> {
    // The record first, then its attempts: an attempt is recorded in the same statement as the
    // record's change, so read in this order the history holds every attempt the record counts
    // (read concurrently, a final record could come with its last attempt missing).
    let d = db::webhooks::delivery(&st.db, p.org_id, id).await?.ok_or_else(|| not_found("webhook delivery", id))?;
    let history = db::webhooks::delivery_attempts(&st.db, p.org_id, id).await?;
    let payload = if p.scopes.allows(Scope::JourneysRead) { d.body } else { masked(d.body) };
    let history = history.into_iter().map(DeliveryAttemptOut::from).collect();
    Ok(DeliveryDetail { record: d.record.into(), payload, history })
}

/// Today's events carry record ids, never people; masking what a credential without
/// `journeys:read` is shown keeps that true for any event that ever does.
fn masked(body: String) -> String {
    match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(mut v) => {
            mask_personal(&mut v);
            v.to_string()
        }
        Err(_) => body,
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestEventOut {
    pub ok: bool,
    /// Deliveries created (0 when there is no active subscription).
    pub deliveries: i32,
}

/// Send a `test` event (optional body `{"subscription_id"}`), delivered like any other.
/// Scope `webhooks:write`.
#[utoipa::path(post, path = "/portal/webhooks/test-event", operation_id = "send_test_event", tag = "webhooks", request_body(content = Option<TestEventIn>),
    responses((status = 200, body = TestEventOut), (status = 404, body = ErrorBody, description = "`subscription_id` names no subscription of the organization"),
              (status = 409, body = ErrorBody, description = "the subscription is inactive")),
    security(("bearer" = ["webhooks:write"]), ("session" = ["webhooks:write"])))]
pub async fn test_event(
    State(st): State<AppState>,
    p: Caller<WebhooksWrite>,
    body: Bytes,
) -> ApiResult<Json<TestEventOut>> {
    // The body is optional: empty (or `null`) means "every active subscription".
    let input: TestEventIn = optional_json(&body)?.unwrap_or_default();
    Ok(Json(send_test(&st, &p, input).await?))
}

/// What a `test` event says.
const TEST_MESSAGE: &str = "A test event from TNS: your endpoint receives and verifies deliveries.";

/// Send a `test` event for `p`'s organization (what `POST /portal/webhooks/test-event` does).
pub async fn send_test(st: &AppState, p: &Principal, input: TestEventIn) -> ApiResult<TestEventOut> {
    let target = input.subscription_id.map(|id| WebhookSubscriptionId(id.get()));
    if let Some(id) = target {
        let sub = db::webhooks::get(&st.db, p.org_id, id)
            .await?
            .ok_or_else(|| missing_reference("subscription_id", "webhook subscription", id))?;
        if sub.active == 0 {
            return Err(ApiError::Conflict(
                Code::SubscriptionInactive,
                format!("webhook subscription {id} is inactive; reactivate it first"),
            ));
        }
    }
    let data = TestEventData { message: TEST_MESSAGE, subscription_id: target };
    let deliveries = db::webhooks::emit_test(&st.db, p.org_id, target, &data).await?;
    Ok(TestEventOut { ok: true, deliveries })
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(rotate_secret))
        .routes(routes!(deliveries))
        .routes(routes!(delivery))
        .routes(routes!(test_event))
}
