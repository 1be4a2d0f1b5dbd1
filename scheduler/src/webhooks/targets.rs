//! Prepared delivery targets: a subscription's endpoint checked by the guard and parsed, and
//! its secrets (the current one and, during a rotation, the previous one) unsealed into
//! signing keys, once per subscription rather than once per delivery. An entry is used only
//! while the subscription's endpoint URL and sealed secrets are the ones it was prepared from
//! (every claim reads them again), so an edited or rotated subscription is prepared again.
//! Names are still checked on every connection, by the guarded resolver.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use chrono::{DateTime, Utc};
use hyper::Uri;

use super::send::{self, Response};
use tns_core::ids::OrgId;
use tns_core::{sealing::DataKey, signing};
use tns_store::webhooks::queue::Endpoint;

/// Entries kept at most; the cache starts over when full (a scheduler serving more
/// subscriptions than this at once prepares some of them more often).
const MAX_ENTRIES: usize = 10_000;

pub struct Target {
    pub uri: Uri,
    pub key: signing::Key,
    /// The secret a rotation replaced, and until when it still signs.
    pub previous: Option<(signing::Key, DateTime<Utc>)>,
}

impl Target {
    /// The previous secret's key, if it still signs at `at`.
    pub fn previous_at(&self, at: DateTime<Utc>) -> Option<&signing::Key> {
        self.previous.as_ref().filter(|(_, until)| at < *until).map(|(k, _)| k)
    }
}

struct Entry {
    /// What the target was prepared from (all of it: a target is prepared only for an active
    /// subscription).
    from: Arc<Endpoint>,
    target: Arc<Target>,
}

#[derive(Default)]
pub struct Targets {
    entries: Mutex<HashMap<i64, Entry>>,
}

impl Targets {
    /// The target of subscription `id` (of `org`) as a claim read it (`e`), or the failed
    /// attempt its deliveries make.
    pub fn get(
        &self,
        id: i64,
        org: OrgId,
        e: &Arc<Endpoint>,
        data_key: &DataKey,
        client: &send::Client,
    ) -> Result<Arc<Target>, Response> {
        if let Some(entry) = self.lock().get(&id) {
            if *entry.from == **e {
                return Ok(entry.target.clone());
            }
        }
        let open = |sealed: &[u8]| {
            data_key.open(org, sealed).map(|secret| signing::Key::new(&secret)).map_err(|_| {
                // Our problem (TNS_DATA_KEY is not the key it was sealed with): retried on the
                // schedule, so a corrected key still delivers.
                tracing::error!(subscription = id, "webhook secret cannot be unsealed: check TNS_DATA_KEY");
                Response::failed(
                    tns_core::domain::kinds::DeliveryOutcome::Unreachable,
                    "platform: this delivery could not be signed; it is retried".into(),
                )
            })
        };
        let previous = match (&e.previous_secret_sealed, e.previous_secret_until) {
            (Some(sealed), Some(until)) => Some((open(sealed)?, until)),
            _ => None,
        };
        let uri = send::target(client, &e.endpoint_url)?;
        let target = Arc::new(Target { uri, key: open(&e.secret_sealed)?, previous });
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(id, Entry { from: e.clone(), target: target.clone() });
        Ok(target)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}
