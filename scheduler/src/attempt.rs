//! One attempt of one claimed submission: look it up first if an earlier attempt may have
//! reached the downstream, otherwise send it; off the async runtime, bounded per adapter, with
//! a timeout; then decide what to record.

use std::{sync::Arc, time::Instant};

use chrono::Utc;
use serde_json::{json, Value};
use tns_adapter::{Adapter, AdapterError, AmendRequest, CargoRequest, JourneyRequest, LookupRequest, Receipt};
use tokio::sync::Semaphore;

use crate::{
    metrics::Metrics,
    queue::{Claimed, Finished},
    settings::Settings,
};

/// How a call ended, before the retry policy is applied.
enum Outcome {
    /// Accepted now (`delivered` or `partial`) or found by lookup (`found`).
    Accepted(&'static str, Receipt),
    Failed(AdapterError),
    Timeout,
}

/// The request the contract expects for this submission: its frozen snapshot plus our reference
/// (credentials arrive with the U-ETDS adapter).
fn request(item: &Claimed) -> Value {
    let reference = item.reference();
    let snapshot = item.snapshot.0.clone();
    match item.operation.as_str() {
        "journey" => json!({ "reference": reference, "credentials": null, "journey": snapshot }),
        "cargo" => json!({ "reference": reference, "credentials": null, "cargo": snapshot }),
        _ => {
            let mut v = snapshot;
            if let Some(o) = v.as_object_mut() {
                o.insert("reference".into(), json!(reference));
                o.insert("credentials".into(), Value::Null);
            }
            v
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, AdapterError> {
    serde_json::from_value(v).map_err(|e| AdapterError::Permanent(format!("unreadable snapshot: {e}")))
}

/// The blocking part: lookup when needed, then the operation.
fn call(
    adapter: &dyn Adapter,
    item: &Claimed,
    metrics: &Metrics,
    name: &str,
) -> Result<(&'static str, Receipt), AdapterError> {
    let timed = |op: &'static str, f: &dyn Fn() -> Result<Option<Receipt>, AdapterError>| {
        let t0 = Instant::now();
        let r = f();
        let outcome = match &r {
            Ok(Some(_)) => "ok",
            Ok(None) => "not_found",
            Err(AdapterError::Transient(_)) => "transient",
            Err(AdapterError::Permanent(_)) => "permanent",
            Err(AdapterError::Configuration(_)) => "configuration",
        };
        metrics.adapter_calls.with_label_values(&[name, op, outcome]).inc();
        metrics.adapter_call_duration.with_label_values(&[name, op, outcome]).observe(t0.elapsed().as_secs_f64());
        r
    };
    if item.attempts > 1 {
        let req = LookupRequest { reference: item.reference(), credentials: None };
        if let Some(receipt) = timed("lookup", &|| adapter.lookup(&req))? {
            return Ok(("found", receipt));
        }
    }
    let req = request(item);
    let receipt = match item.operation.as_str() {
        "journey" => {
            let r: JourneyRequest = parse(req)?;
            timed("submit_journey", &|| adapter.submit_journey(&r).map(Some))?
        }
        "amendment" => {
            let r: AmendRequest = parse(req)?;
            timed("amend_journey", &|| adapter.amend_journey(&r).map(Some))?
        }
        "cargo" => {
            let r: CargoRequest = parse(req)?;
            timed("submit_cargo", &|| adapter.submit_cargo(&r).map(Some))?
        }
        other => return Err(AdapterError::Permanent(format!("unknown operation {other}"))),
    }
    .ok_or_else(|| AdapterError::Transient("no receipt".into()))?;
    Ok((if receipt.is_partial() { "partial" } else { "delivered" }, receipt))
}

/// Everything an attempt needs, shared by all of a scheduler's attempts.
pub struct Context {
    pub settings: Settings,
    pub adapters: crate::adapters::Registry,
    pub limits: std::collections::HashMap<String, Arc<Semaphore>>,
    pub metrics: Arc<Metrics>,
}

/// Make one attempt and decide what to record.
pub async fn run(ctx: Arc<Context>, item: Claimed) -> Finished {
    let started_at = Utc::now();
    let outcome = match (ctx.adapters.get(&item.adapter), ctx.limits.get(&item.adapter)) {
        // Our deployment's problem, not the customer's: keep retrying until it is fixed.
        (None, _) | (_, None) => Outcome::Failed(AdapterError::Transient(format!(
            "adapter `{}` is not loaded on this scheduler",
            item.adapter
        ))),
        (Some(adapter), Some(limit)) => {
            // The permit moves into the blocking call and is released only when the call
            // returns, so a hung plugin cannot pile up threads beyond the adapter's limit.
            let permit = limit.clone().acquire_owned().await.expect("semaphore never closed");
            let (c, it) = (ctx.clone(), item.clone());
            let task = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                call(adapter.as_ref(), &it, &c.metrics, &it.adapter)
            });
            match tokio::time::timeout(ctx.settings.call_timeout, task).await {
                Err(_) => Outcome::Timeout,
                Ok(Err(join)) => Outcome::Failed(AdapterError::Transient(format!("adapter call failed: {join}"))),
                Ok(Ok(Ok((kind, receipt)))) => Outcome::Accepted(kind, receipt),
                Ok(Ok(Err(e))) => Outcome::Failed(e),
            }
        }
    };
    decide(&ctx.settings, &item, outcome, started_at)
}

/// The retry policy: accepted → `delivered`; permanent or configuration → `failed`; transient or
/// timeout → `pending` with backoff, or `failed` once the retry window is spent.
fn decide(settings: &Settings, item: &Claimed, outcome: Outcome, started_at: chrono::DateTime<Utc>) -> Finished {
    let mut f = Finished {
        id: item.id,
        lease_token: item.lease_token,
        state: "failed",
        retry_at: None,
        downstream_reference: None,
        error_message: None,
        passenger_results: None,
        outcome: "permanent",
        error: None,
        started_at,
    };
    let retry = |f: &mut Finished, error: String| {
        let delay = settings.retry.delay(item.attempts.max(1) as u32, rand::random::<f64>());
        let at = Utc::now() + chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::MAX);
        let give_up =
            item.created_at + chrono::Duration::from_std(settings.retry.window).unwrap_or(chrono::Duration::MAX);
        if at > give_up {
            f.error_message = Some(format!("gave up after {} attempts: {error}", item.attempts));
        } else {
            f.state = "pending";
            f.retry_at = Some(at);
            f.error_message = Some(format!("attempt {} failed, retrying: {error}", item.attempts));
        }
        f.error = Some(error);
    };
    match outcome {
        Outcome::Accepted(kind, receipt) => {
            f.state = "delivered";
            f.outcome = kind;
            f.downstream_reference = Some(receipt.downstream_reference.clone());
            let refused: Vec<String> = receipt
                .passengers
                .iter()
                .filter_map(|p| p.error.as_ref().map(|e| format!("passenger {}: {e}", p.key)))
                .collect();
            if !refused.is_empty() {
                let mut msg = format!("{} of {} passengers refused; ", refused.len(), receipt.passengers.len());
                msg.push_str(&refused.join("; "));
                f.error_message = Some(truncate(msg, 2000));
                f.error.clone_from(&f.error_message);
            }
            f.passenger_results = serde_json::to_value(&receipt.passengers).ok();
        }
        Outcome::Failed(AdapterError::Permanent(e)) => {
            f.error_message = Some(e.clone());
            f.error = Some(e);
        }
        Outcome::Failed(AdapterError::Configuration(e)) => {
            f.outcome = "configuration";
            f.error_message = Some(format!("downstream configuration: {e}"));
            f.error = Some(e);
        }
        Outcome::Failed(AdapterError::Transient(e)) => {
            f.outcome = "transient";
            retry(&mut f, e);
        }
        Outcome::Timeout => {
            f.outcome = "timeout";
            retry(&mut f, format!("no answer within {} s; outcome unknown", settings.call_timeout.as_secs()));
        }
    }
    f
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}
