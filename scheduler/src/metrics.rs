//! The scheduler's Prometheus metrics, registered in the process's registry (`/metrics` of
//! `tns scheduler` and `tns dev`).

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

pub struct Metrics {
    /// Pending submissions by `state`: `ready` (due now), `waiting` (retry later), `leased`
    /// (held by a scheduler).
    pub queue_depth: IntGaugeVec,
    /// Seconds the longest-due submission has waited to be taken.
    pub queue_oldest_due: IntGauge,
    /// Submissions this process holds.
    pub in_flight: IntGauge,
    /// Finished submissions by adapter and final state.
    pub finished: IntCounterVec,
    /// From claim to the outcome being recorded, by adapter and state after the attempt.
    pub claim_to_finish: HistogramVec,
    /// Plugin calls by adapter, operation and outcome.
    pub adapter_calls: IntCounterVec,
    pub adapter_call_duration: HistogramVec,
    /// Pending webhook deliveries by `state`: `ready`, `waiting`, `leased`.
    pub webhook_queue_depth: IntGaugeVec,
    pub webhook_queue_oldest_due: IntGauge,
    /// Webhook delivery attempts by outcome (`delivered`, `rejected`, `timeout`,
    /// `unreachable`, `refused`, `skipped`).
    pub webhook_attempts: IntCounterVec,
    pub webhook_attempt_duration: HistogramVec,
    /// Subscriptions deactivated for failing too long.
    pub webhook_deactivations: prometheus::IntCounter,
}

const BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

impl Metrics {
    pub fn new(registry: &Registry) -> prometheus::Result<Metrics> {
        let m = Metrics {
            queue_depth: IntGaugeVec::new(
                Opts::new(
                    "tns_submission_queue_depth",
                    "Queued submissions (pending or unknown): ready, waiting (retry or look-up later), leased",
                ),
                &["state"],
            )?,
            queue_oldest_due: IntGauge::new(
                "tns_submission_queue_oldest_ready_seconds",
                "Seconds the longest-due submission has waited to be taken (0 when none is due)",
            )?,
            webhook_queue_oldest_due: IntGauge::new(
                "tns_webhook_queue_oldest_ready_seconds",
                "Seconds the longest-due webhook delivery has waited to be taken (0 when none is due)",
            )?,
            in_flight: IntGauge::new("tns_scheduler_in_flight", "Submissions this scheduler holds")?,
            finished: IntCounterVec::new(
                Opts::new("tns_submissions_finished_total", "Submissions delivered or failed, by adapter"),
                &["adapter", "state"],
            )?,
            claim_to_finish: HistogramVec::new(
                HistogramOpts::new(
                    "tns_submission_claim_to_finish_seconds",
                    "From claim to recorded outcome, by adapter and resulting state",
                )
                .buckets(BUCKETS.to_vec()),
                &["adapter", "state"],
            )?,
            adapter_calls: IntCounterVec::new(
                Opts::new("tns_adapter_calls_total", "Adapter plugin calls by adapter, operation and outcome"),
                &["adapter", "op", "outcome"],
            )?,
            adapter_call_duration: HistogramVec::new(
                HistogramOpts::new("tns_adapter_call_duration_seconds", "Adapter plugin call latency")
                    .buckets(BUCKETS.to_vec()),
                &["adapter", "op", "outcome"],
            )?,
            webhook_queue_depth: IntGaugeVec::new(
                Opts::new(
                    "tns_webhook_queue_depth",
                    "Pending webhook deliveries: ready, waiting (retry later), leased",
                ),
                &["state"],
            )?,
            webhook_attempts: IntCounterVec::new(
                Opts::new("tns_webhook_attempts_total", "Webhook delivery attempts by outcome"),
                &["outcome"],
            )?,
            webhook_attempt_duration: HistogramVec::new(
                HistogramOpts::new("tns_webhook_attempt_duration_seconds", "Webhook delivery attempt latency")
                    .buckets(BUCKETS.to_vec()),
                &["outcome"],
            )?,
            webhook_deactivations: prometheus::IntCounter::new(
                "tns_webhook_subscriptions_deactivated_total",
                "Webhook subscriptions deactivated after failing without a success for too long",
            )?,
        };
        registry.register(Box::new(m.webhook_queue_depth.clone()))?;
        registry.register(Box::new(m.webhook_attempts.clone()))?;
        registry.register(Box::new(m.webhook_attempt_duration.clone()))?;
        registry.register(Box::new(m.webhook_deactivations.clone()))?;
        registry.register(Box::new(m.queue_depth.clone()))?;
        registry.register(Box::new(m.queue_oldest_due.clone()))?;
        registry.register(Box::new(m.webhook_queue_oldest_due.clone()))?;
        registry.register(Box::new(m.in_flight.clone()))?;
        registry.register(Box::new(m.finished.clone()))?;
        registry.register(Box::new(m.claim_to_finish.clone()))?;
        registry.register(Box::new(m.adapter_calls.clone()))?;
        registry.register(Box::new(m.adapter_call_duration.clone()))?;
        Ok(m)
    }
}
