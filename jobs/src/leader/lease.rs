//! Leadership in a Kubernetes cluster: a `coordination.k8s.io/v1` Lease, as client-go's leader
//! election uses it. The holder renews `renewTime` every `renew`; another replica may take the
//! Lease once `renewTime + leaseDurationSeconds` has passed. Every write carries the
//! `resourceVersion` it read, so two replicas racing for an expired Lease cannot both win (the
//! API server answers the loser 409). The holder stops its jobs at once when a renewal shows
//! another holder, or when it has not renewed for long enough that another could take over.

use std::time::Duration;

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::{SignedDuration, Timestamp},
};
use kube::{api::PostParams, Api};

use super::Leadership;

#[derive(Clone)]
pub struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
    /// `leaseDurationSeconds`: how long a Lease not renewed stays the holder's.
    duration: Duration,
    /// How often the holder renews (well within `duration`).
    renew: Duration,
}

impl LeaseLock {
    pub fn new(api: Api<Lease>, name: &str, identity: &str, duration: Duration) -> LeaseLock {
        LeaseLock { api, name: name.to_string(), identity: identity.to_string(), duration, renew: duration / 3 }
    }

    /// Lead now if the Lease is free, expired, or already ours.
    pub(super) async fn try_acquire(&self) -> Result<Option<Leadership>, kube::Error> {
        let now = Timestamp::now();
        let acquired = match self.api.get_opt(&self.name).await? {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta { name: Some(self.name.clone()), ..Default::default() },
                    spec: Some(self.spec(now, now, 0)),
                };
                conflict_is_false(self.api.create(&PostParams::default(), &lease).await)?
            }
            Some(mut lease) => {
                let spec = lease.spec.clone().unwrap_or_default();
                let ours = spec.holder_identity.as_deref() == Some(&self.identity);
                if !ours && !self.expired(&spec, now) {
                    return Ok(None);
                }
                let transitions = spec.lease_transitions.unwrap_or(0) + i32::from(!ours);
                let acquired_at = if ours { spec.acquire_time.map_or(now, |t| t.0) } else { now };
                lease.spec = Some(self.spec(acquired_at, now, transitions));
                conflict_is_false(self.api.replace(&self.name, &PostParams::default(), &lease).await)?
            }
        };
        if !acquired {
            return Ok(None);
        }
        tracing::info!(lease = %self.name, identity = %self.identity, "leading");
        let me = self.clone();
        Ok(Some(Leadership::new(|lost| tokio::spawn(me.keep(lost)))))
    }

    fn spec(&self, acquired: Timestamp, renewed: Timestamp, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.duration.as_secs().max(1) as i32),
            acquire_time: Some(MicroTime(acquired)),
            renew_time: Some(MicroTime(renewed)),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    fn expired(&self, spec: &LeaseSpec, now: Timestamp) -> bool {
        let Some(renewed) = spec.renew_time.as_ref().map(|t| t.0) else { return true };
        let duration = SignedDuration::from_secs(spec.lease_duration_seconds.unwrap_or(0).into());
        renewed + duration < now
    }

    /// Renew until a renewal shows another holder, or until renewals have failed for so long
    /// that another replica may take the Lease: then the term is over.
    async fn keep(self, lost: tokio::sync::watch::Sender<bool>) {
        let mut renewed = tokio::time::Instant::now();
        // Stop leading a renewal period before the Lease could be taken over.
        let deadline = self.duration.saturating_sub(self.renew);
        let mut tick = tokio::time::interval(self.renew);
        tick.tick().await;
        loop {
            tick.tick().await;
            match self.renew_once().await {
                Ok(true) => renewed = tokio::time::Instant::now(),
                Ok(false) => {
                    tracing::warn!(lease = %self.name, "another replica holds the lease; leadership is lost");
                    break;
                }
                Err(e) => {
                    tracing::warn!(lease = %self.name, error = %e, "renewing the lease failed");
                    if renewed.elapsed() >= deadline {
                        tracing::warn!(lease = %self.name, "the lease could not be renewed in time; leadership is lost");
                        break;
                    }
                }
            }
        }
        let _ = lost.send(true);
    }

    /// `false` when the Lease is no longer ours.
    async fn renew_once(&self) -> Result<bool, kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else { return Ok(false) };
        let mut spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(&self.identity) {
            return Ok(false);
        }
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        lease.spec = Some(spec);
        conflict_is_false(self.api.replace(&self.name, &PostParams::default(), &lease).await)
    }
}

/// A write refused because someone else wrote first (409) lost the race; anything else is an
/// error.
fn conflict_is_false(r: Result<Lease, kube::Error>) -> Result<bool, kube::Error> {
    match r {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    //! Against a fake API server holding one Lease as the real one does: `resourceVersion`
    //! checked on every replace (409 on a stale one), 404 for a Lease not created yet, and an
    //! outage switch.

    use std::{
        convert::Infallible,
        sync::{
            atomic::{AtomicBool, Ordering},
            Arc, Mutex,
        },
    };

    use bytes::Bytes;
    use http::{Method, Request, Response, StatusCode};
    use http_body_util::{BodyExt, Full};
    use serde_json::{json, Value};

    use super::*;

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/tns/leases";

    #[derive(Default)]
    struct Fake {
        lease: Mutex<Option<Value>>,
        version: Mutex<u64>,
        down: AtomicBool,
        /// When set, GETs wait here (two of them meet, so both read the same version).
        gate: Mutex<Option<Arc<tokio::sync::Barrier>>>,
    }

    fn status(code: StatusCode, reason: &str) -> Response<Full<Bytes>> {
        let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": reason, "reason": reason, "code": code.as_u16()});
        Response::builder().status(code).body(Full::new(Bytes::from(body.to_string()))).unwrap()
    }

    fn ok(lease: &Value, code: StatusCode) -> Response<Full<Bytes>> {
        Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(lease.to_string())))
            .unwrap()
    }

    impl Fake {
        async fn handle(
            self: Arc<Self>,
            req: Request<kube::client::Body>,
        ) -> Result<Response<Full<Bytes>>, Infallible> {
            if self.down.load(Ordering::SeqCst) {
                return Ok(status(StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"));
            }
            let (parts, body) = req.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            let named = parts.uri.path().strip_prefix(LEASES).map(|p| p.trim_start_matches('/').to_string());
            Ok(match (parts.method, named.as_deref()) {
                (Method::GET, Some("tns-jobs")) => {
                    let gate = self.gate.lock().unwrap().clone();
                    if let Some(g) = gate {
                        g.wait().await;
                    }
                    match self.lease.lock().unwrap().as_ref() {
                        Some(l) => ok(l, StatusCode::OK),
                        None => status(StatusCode::NOT_FOUND, "NotFound"),
                    }
                }
                (Method::POST, Some("")) => {
                    let mut lease = self.lease.lock().unwrap();
                    if lease.is_some() {
                        return Ok(status(StatusCode::CONFLICT, "AlreadyExists"));
                    }
                    let stored = self.stored(serde_json::from_slice(&body).unwrap());
                    *lease = Some(stored.clone());
                    ok(&stored, StatusCode::CREATED)
                }
                (Method::PUT, Some("tns-jobs")) => {
                    let mut lease = self.lease.lock().unwrap();
                    let sent: Value = serde_json::from_slice(&body).unwrap();
                    let current = lease.as_ref().map(|l| l["metadata"]["resourceVersion"].clone());
                    if current.is_none() || current.as_ref() != Some(&sent["metadata"]["resourceVersion"]) {
                        return Ok(status(StatusCode::CONFLICT, "Conflict"));
                    }
                    let stored = self.stored(sent);
                    *lease = Some(stored.clone());
                    ok(&stored, StatusCode::OK)
                }
                _ => status(StatusCode::NOT_FOUND, "NotFound"),
            })
        }

        fn stored(&self, mut lease: Value) -> Value {
            let mut v = self.version.lock().unwrap();
            *v += 1;
            lease["metadata"]["resourceVersion"] = json!(v.to_string());
            lease["metadata"]["namespace"] = json!("tns");
            lease
        }

        fn spec(&self) -> Value {
            self.lease.lock().unwrap().as_ref().unwrap()["spec"].clone()
        }

        /// As if the holder had stopped renewing a minute ago.
        fn age(&self) {
            let mut lease = self.lease.lock().unwrap();
            let past = Timestamp::now() - SignedDuration::from_secs(60);
            lease.as_mut().unwrap()["spec"]["renewTime"] = serde_json::to_value(MicroTime(past)).unwrap();
        }
    }

    fn replica(fake: &Arc<Fake>, identity: &str) -> LeaseLock {
        let fake = fake.clone();
        let service = tower::service_fn(move |req| fake.clone().handle(req));
        let client = kube::Client::new(service, "tns");
        LeaseLock::new(Api::namespaced(client, "tns"), "tns-jobs", identity, Duration::from_secs(15))
    }

    #[tokio::test]
    async fn a_free_lease_is_taken_and_a_held_one_is_not() {
        let fake = Arc::new(Fake::default());
        let (a, b) = (replica(&fake, "a"), replica(&fake, "b"));
        let _term = a.try_acquire().await.unwrap().expect("nobody held it");
        assert_eq!(fake.spec()["holderIdentity"], "a");
        assert_eq!(fake.spec()["leaseDurationSeconds"], 15);
        assert!(b.try_acquire().await.unwrap().is_none(), "a holds it and renews");
        assert_eq!(fake.spec()["holderIdentity"], "a");
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_lease_changes_hands_and_the_old_holder_stops_at_its_next_renewal() {
        let fake = Arc::new(Fake::default());
        let (a, b) = (replica(&fake, "a"), replica(&fake, "b"));
        let mut held = a.try_acquire().await.unwrap().unwrap();
        fake.age();
        let _taken = b.try_acquire().await.unwrap().expect("an expired lease may be taken");
        assert_eq!(fake.spec()["holderIdentity"], "b");
        assert_eq!(fake.spec()["leaseTransitions"], 1);
        // a's next renewal reads b's name: its term ends (virtual time runs to it).
        tokio::time::timeout(Duration::from_secs(60), held.lost()).await.expect("a stops leading");
        assert_eq!(fake.spec()["holderIdentity"], "b", "a's renewal did not overwrite b");
    }

    #[tokio::test]
    async fn two_replicas_racing_for_an_expired_lease_cannot_both_win() {
        let fake = Arc::new(Fake::default());
        let (a, b, c) = (replica(&fake, "a"), replica(&fake, "b"), replica(&fake, "c"));
        drop(a.try_acquire().await.unwrap().unwrap());
        fake.age();
        // Both read the same version before either writes.
        *fake.gate.lock().unwrap() = Some(Arc::new(tokio::sync::Barrier::new(2)));
        let (rb, rc) = tokio::join!(b.try_acquire(), c.try_acquire());
        let winners = [rb.unwrap().is_some(), rc.unwrap().is_some()];
        assert_eq!(winners.iter().filter(|w| **w).count(), 1, "exactly one wins: {winners:?}");
        let holder = fake.spec()["holderIdentity"].as_str().unwrap().to_string();
        assert_eq!(holder, if winners[0] { "b" } else { "c" });
    }

    #[tokio::test(start_paused = true)]
    async fn a_holder_that_cannot_renew_stops_before_another_may_take_over() {
        let fake = Arc::new(Fake::default());
        let a = replica(&fake, "a");
        let mut term = a.try_acquire().await.unwrap().unwrap();
        fake.down.store(true, Ordering::SeqCst);
        let started = tokio::time::Instant::now();
        tokio::time::timeout(Duration::from_secs(60), term.lost()).await.expect("a stops leading");
        // Renewals every 5 s; it gives up once 10 s passed without one, before the 15 s
        // after which another replica could take the Lease.
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(10) && waited < Duration::from_secs(15), "{waited:?}");
    }

    #[tokio::test]
    async fn an_outage_while_competing_is_an_error_not_a_term() {
        let fake = Arc::new(Fake::default());
        fake.down.store(true, Ordering::SeqCst);
        assert!(replica(&fake, "a").try_acquire().await.is_err());
    }
}
