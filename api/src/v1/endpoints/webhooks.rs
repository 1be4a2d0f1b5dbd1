//! `/portal/webhooks`: subscriptions (create with a secret shown once, list, get, change,
//! deactivate/reactivate, delete), delivery records with their attempts, and test events.
//! Delivery itself is the scheduler's (tns_scheduler::webhooks).

use axum::{body::Bytes, extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use tns_scheduler::webhooks::{guard, signing};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{scopes::Scope, Auth},
    db::{
        self,
        webhooks::{DeliveryAttempt, DeliveryFilter, DeliveryRecord, Subscription, EVENT_TYPES, MAX_SUBSCRIPTIONS},
    },
    error::{ApiError, ApiResult, ErrorBody},
    extract::{parse_json, ApiJson, ApiPath, ApiQuery},
    idempotency::NoReplay,
    pagination::{Page, Paged},
    state::AppState,
    v1::{
        resource::{not_found, one_of, ListQuery},
        Ok as OkBody,
    },
};

const SECRET_LEN: std::ops::RangeInclusive<usize> = 16..=128;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionIn {
    /// `journey.created`, `submission.delivered` or `submission.failed`.
    event_type: String,
    /// http(s) URL of a public address, at most 2048 characters.
    endpoint_url: String,
    /// Signing secret, 16–128 printable characters; generated (`whsec_…`) when left out.
    secret: Option<String>,
}

/// A new subscription with its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedSubscription {
    #[serde(flatten)]
    subscription: Subscription,
    /// Keys the HMAC-SHA256 of every delivery's body (`X-Webhook-Signature`). Not shown again.
    secret: String,
}

/// Who may be called: an http(s) URL whose host is not internal now (DNS is checked again
/// at every delivery).
async fn endpoint(st: &AppState, raw: &str) -> ApiResult<String> {
    let allow_private = st.cfg.scheduler.webhooks.allow_private;
    let url =
        guard::parse_endpoint(raw.trim(), allow_private).map_err(|e| ApiError::validation("endpoint_url", e.0))?;
    guard::check_resolves(&url, allow_private).await.map_err(|e| ApiError::validation("endpoint_url", e.0))?;
    Ok(url.to_string())
}

fn secret(given: Option<String>) -> ApiResult<String> {
    let Some(s) = given else { return Ok(signing::generate_secret()) };
    if !SECRET_LEN.contains(&s.chars().count()) || !s.chars().all(|c| c.is_ascii_graphic()) {
        return Err(ApiError::validation("secret", "must be 16–128 printable ASCII characters without spaces"));
    }
    Ok(s)
}

/// Subscribe an endpoint to an event type. The answer carries the signing secret once (an
/// `Idempotency-Key` repeat does not replay it). Scope `webhooks:write`.
#[utoipa::path(post, path = "/portal/webhooks", tag = "webhooks", request_body = SubscriptionIn,
    responses((status = 201, body = CreatedSubscription), (status = 409, body = ErrorBody, description = "too many subscriptions"),
              (status = 422, body = ErrorBody, description = "bad event type, URL (scheme, internal address) or secret")),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<SubscriptionIn>,
) -> ApiResult<(StatusCode, Extension<NoReplay>, Json<CreatedSubscription>)> {
    p.require(Scope::WebhooksWrite)?;
    let event_type = one_of("event_type", &input.event_type, EVENT_TYPES)?;
    let url = endpoint(&st, &input.endpoint_url).await?;
    let secret = secret(input.secret)?;
    let sealed = st.cfg.scheduler.webhooks.data_key.seal(p.org_id, secret.as_bytes());
    let subscription = db::webhooks::insert(&st.db, p.org_id, &event_type, &url, &sealed).await?.ok_or_else(|| {
        ApiError::Conflict(format!("an organization keeps at most {MAX_SUBSCRIPTIONS} subscriptions"))
    })?;
    Ok((StatusCode::CREATED, Extension(NoReplay), Json(CreatedSubscription { subscription, secret })))
}

/// The organization's subscriptions, newest first (secrets are never shown again).
/// Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks", tag = "webhooks", params(ListQuery),
    responses((status = 200, body = Paged<Subscription>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Subscription>>> {
    p.require(Scope::WebhooksRead)?;
    let page = q.page()?;
    Ok(Json(Paged::from_rows(db::webhooks::list(&st.db, p.org_id, &page).await?, &page)))
}

/// One subscription. Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/{id}", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = Subscription), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Subscription>> {
    p.require(Scope::WebhooksRead)?;
    db::webhooks::get(&st.db, p.org_id, id).await?.map(Json).ok_or_else(|| not_found("webhook subscription", id))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionPatch {
    /// `true`/`1` reactivates (its failure streak starts afresh), `false`/`0` deactivates:
    /// waiting deliveries then fail.
    #[schema(value_type = Option<bool>)]
    active: Option<serde_json::Value>,
    event_type: Option<String>,
    endpoint_url: Option<String>,
}

fn flag(v: &serde_json::Value) -> ApiResult<bool> {
    match v {
        serde_json::Value::Bool(b) => Ok(*b),
        serde_json::Value::Number(n) if n.as_i64() == Some(1) => Ok(true),
        serde_json::Value::Number(n) if n.as_i64() == Some(0) => Ok(false),
        _ => Err(ApiError::validation("active", "must be true, false, 1 or 0")),
    }
}

/// Change a subscription: any of `active`, `event_type`, `endpoint_url`. Answers the whole
/// record. Scope `webhooks:write`.
#[utoipa::path(put, path = "/portal/webhooks/{id}", tag = "webhooks", params(("id" = i64, Path)), request_body = SubscriptionPatch,
    responses((status = 200, body = Subscription), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn update(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(patch): ApiJson<SubscriptionPatch>,
) -> ApiResult<Json<Subscription>> {
    p.require(Scope::WebhooksWrite)?;
    let active = patch.active.as_ref().map(flag).transpose()?;
    let event_type = patch.event_type.as_deref().map(|t| one_of("event_type", t, EVENT_TYPES)).transpose()?;
    let url = match &patch.endpoint_url {
        Some(u) => Some(endpoint(&st, u).await?),
        None => None,
    };
    let mut tx = st.db.begin().await?;
    let updated = db::webhooks::update(&mut tx, p.org_id, id, event_type.as_deref(), url.as_deref(), active)
        .await?
        .ok_or_else(|| not_found("webhook subscription", id))?;
    tx.commit().await?;
    Ok(Json(updated))
}

/// Delete a subscription: deliveries stop at once (waiting ones fail); its delivery records
/// stay listed. Scope `webhooks:write`.
#[utoipa::path(delete, path = "/portal/webhooks/{id}", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delete(State(st): State<AppState>, Auth(p): Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<OkBody>> {
    p.require(Scope::WebhooksWrite)?;
    let mut tx = st.db.begin().await?;
    if !db::webhooks::delete(&mut tx, p.org_id, id).await? {
        return Err(not_found("webhook subscription", id));
    }
    tx.commit().await?;
    Ok(Json(OkBody::default()))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct DeliveriesQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<i64>,
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
    /// `pending`, `delivered` or `failed`.
    delivery_status: Option<String>,
    /// `journey.created`, `submission.delivered`, `submission.failed` or `test`.
    event_type: Option<String>,
    subscription_id: Option<i64>,
}

/// Delivery records (one per event and subscription), newest first, with filters.
/// Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/events", tag = "webhooks", params(DeliveriesQuery),
    responses((status = 200, body = Paged<DeliveryRecord>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn deliveries(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<Paged<DeliveryRecord>>> {
    p.require(Scope::WebhooksRead)?;
    let page = Page::parse(q.limit, q.cursor.as_deref())?;
    let mut all_types = EVENT_TYPES.to_vec();
    all_types.push("test");
    let filter = DeliveryFilter {
        delivery_status: q
            .delivery_status
            .as_deref()
            .map(|s| one_of("delivery_status", s, &["pending", "delivered", "failed"]))
            .transpose()?,
        event_type: q.event_type.as_deref().map(|s| one_of("event_type", s, &all_types)).transpose()?,
        subscription_id: q.subscription_id,
    };
    Ok(Json(Paged::from_rows(db::webhooks::deliveries(&st.db, p.org_id, &filter, &page).await?, &page)))
}

/// A delivery record with the exact payload sent and every attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryDetail {
    #[serde(flatten)]
    record: DeliveryRecord,
    /// The body POSTed, byte for byte as signed: `{"id", "type", "created_at", "data"}`.
    payload: String,
    /// Attempts, oldest first.
    history: Vec<DeliveryAttempt>,
}

/// One delivery record with its payload and attempts. Scope `webhooks:read`.
#[utoipa::path(get, path = "/portal/webhooks/events/{id}", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, body = DeliveryDetail), (status = 404, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn delivery(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<DeliveryDetail>> {
    p.require(Scope::WebhooksRead)?;
    // The record first, then its attempts: an attempt is recorded in the same statement as the
    // record's change, so read in this order the history holds every attempt the record counts
    // (read concurrently, a final record could come with its last attempt missing).
    let d = db::webhooks::delivery(&st.db, p.org_id, id).await?.ok_or_else(|| not_found("webhook delivery", id))?;
    let history = db::webhooks::delivery_attempts(&st.db, p.org_id, id).await?;
    Ok(Json(DeliveryDetail { record: d.record, payload: d.body, history }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestEventIn {
    /// Send to this subscription only; without it, to every active subscription.
    subscription_id: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestEventOut {
    ok: bool,
    /// Deliveries created (0 when there is no active subscription).
    deliveries: i32,
}

/// Send a `test` event (optional body `{"subscription_id"}`), delivered like any other.
/// Scope `webhooks:write`.
#[utoipa::path(post, path = "/portal/webhooks/test-event", tag = "webhooks", request_body(content = Option<TestEventIn>),
    responses((status = 200, body = TestEventOut), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody, description = "the subscription is inactive")),
    security(("bearer" = []), ("session" = [])))]
pub async fn test_event(State(st): State<AppState>, Auth(p): Auth, body: Bytes) -> ApiResult<Json<TestEventOut>> {
    p.require(Scope::WebhooksWrite)?;
    // The body is optional: empty means "every active subscription".
    let input: TestEventIn =
        if body.iter().all(|b| b.is_ascii_whitespace()) { TestEventIn::default() } else { parse_json(&body)? };
    if let Some(id) = input.subscription_id {
        let sub =
            db::webhooks::get(&st.db, p.org_id, id).await?.ok_or_else(|| not_found("webhook subscription", id))?;
        if sub.active == 0 {
            return Err(ApiError::Conflict(format!("webhook subscription {id} is inactive; reactivate it first")));
        }
    }
    let deliveries = db::webhooks::emit_test(&st.db, p.org_id, input.subscription_id).await?;
    Ok(Json(TestEventOut { ok: true, deliveries }))
}
