//! What an organization's own systems take from TNS: webhook subscriptions, their deliveries
//! and the test event's payload, and data exports.

use serde::Serialize;
use utoipa::ToSchema;

use tns_core::{
    domain::kinds::{AnyEventType, DeliveryStatus, EventType, ExportState},
    ids::{ExportId, WebhookSubscriptionId},
};
use tns_http::answer;
use tns_store::{
    exports::Export,
    webhooks::{DeliveryAttempt, DeliveryRecord, Subscription},
};

answer! {
    /// An endpoint subscribed to an event type.
    WebhookSubscriptionOut as WebhookSubscription from Subscription {
        #[schema(value_type = i64)]
        id: WebhookSubscriptionId,
        event_type: EventType,
        endpoint_url: String,
        /// 1 while deliveries are made, 0 when deactivated.
        #[schema(minimum = 0, maximum = 1)]
        active: i32,
        /// Why it is inactive: `by request`, or `failing` (no successful delivery for 5 days).
        inactive_reason: Option<String>,
        /// The first failed attempt since the last success.
        failing_since: Option<chrono::DateTime<chrono::Utc>>,
        last_success_at: Option<chrono::DateTime<chrono::Utc>>,
        /// After a secret rotation: until when the previous secret still signs deliveries beside
        /// the new one (`webhook-signature` carries both).
        previous_secret_expires_at: Option<chrono::DateTime<chrono::Utc>>,
        created_at: chrono::DateTime<chrono::Utc>,
        updated_at: chrono::DateTime<chrono::Utc>,
    }
}

answer! {
    /// One event on its way to one subscription.
    DeliveryRecordOut as DeliveryRecord from DeliveryRecord {
        id: i64,
        /// The event's id: the `X-Webhook-Id` header and the payload's `id`, the same on every
        /// attempt (receivers dedupe on it).
        event_id: i64,
        event_type: AnyEventType,
        #[schema(value_type = i64)]
        subscription_id: WebhookSubscriptionId,
        /// `pending`, `delivered` or `failed`.
        delivery_status: DeliveryStatus,
        /// Attempts made so far (one in progress counts once its outcome is recorded).
        attempts: i32,
        /// The HTTP status of the last attempt's answer, if one came.
        last_response_status: Option<i32>,
        last_error: Option<String>,
        /// When a pending delivery is next tried.
        next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
        created_at: chrono::DateTime<chrono::Utc>,
        finished_at: Option<chrono::DateTime<chrono::Utc>>,
    }
}

answer! {
    /// One attempt of a delivery.
    DeliveryAttemptOut as DeliveryAttempt from DeliveryAttempt {
        started_at: chrono::DateTime<chrono::Utc>,
        duration_ms: Option<i32>,
        /// `delivered` (2xx), `rejected` (another status), `timeout`, `unreachable`, `refused`
        /// (the address is not allowed), `abandoned` (the scheduler sending it stopped) or
        /// `skipped` (the subscription was no longer active).
        outcome: String,
        response_status: Option<i32>,
        error: Option<String>,
    }
}

/// The `data` of a `test` event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TestEventData {
    pub message: &'static str,
    /// The subscription asked for, or null for all.
    #[schema(required = true, value_type = Option<i64>)]
    pub subscription_id: Option<WebhookSubscriptionId>,
}

answer! {
    /// An export request (the archive itself is downloaded apart).
    ExportOut as Export from Export {
        #[schema(value_type = i64)]
        id: ExportId,
        state: ExportState,
        created_at: chrono::DateTime<chrono::Utc>,
        /// When the archive was ready.
        ready_at: Option<chrono::DateTime<chrono::Utc>>,
        /// When the archive is dropped (7 days after it was ready).
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
        /// The archive's size in bytes, once ready.
        size_bytes: Option<i64>,
        /// Why it failed.
        error: Option<String>,
    }
}
