//! Prepared delivery targets: a subscription's endpoint checked by the guard and parsed, and
//! its secrets (the current one and, during a rotation, the previous one) unsealed into
//! signing keys, once per subscription rather than once per delivery. An entry is used only
//! while the subscription's endpoint URL and sealed secrets are the ones it was prepared from
//! (every claimed delivery carries them), so an edited or rotated subscription is prepared
//! again. Names are still checked on every connection, by the guarded resolver.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use chrono::{DateTime, Utc};
use hyper::Uri;

use super::send::{self, Response};
use tns_core::{sealing::DataKey, signing};
use tns_store::webhooks::queue::Claimed;

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
    url: String,
    sealed: Vec<u8>,
    previous: Option<Vec<u8>>,
    target: Arc<Target>,
}

#[derive(Default)]
pub struct Targets {
    entries: Mutex<HashMap<i64, Entry>>,
}

impl Targets {
    /// The target of `d`'s subscription, or the failed attempt it makes.
    pub fn get(&self, d: &Claimed, data_key: &DataKey, client: &send::Client) -> Result<Arc<Target>, Response> {
        if let Some(e) = self.lock().get(&d.subscription_id) {
            if e.url == d.endpoint_url && e.sealed == d.secret_sealed && e.previous == d.previous_secret_sealed {
                return Ok(e.target.clone());
            }
        }
        let open = |sealed: &[u8]| {
            data_key.open(d.org_id, sealed).map(|secret| signing::Key::new(&secret)).map_err(|_| {
                // Our problem (TNS_DATA_KEY is not the key it was sealed with): retried on the
                // schedule, so a corrected key still delivers.
                tracing::error!(
                    subscription = d.subscription_id,
                    "webhook secret cannot be unsealed: check TNS_DATA_KEY"
                );
                Response::failed(
                    tns_core::domain::kinds::DeliveryOutcome::Unreachable,
                    "platform: this delivery could not be signed; it is retried".into(),
                )
            })
        };
        let previous = match (&d.previous_secret_sealed, d.previous_secret_until) {
            (Some(sealed), Some(until)) => Some((open(sealed)?, until)),
            _ => None,
        };
        let uri = send::target(client, &d.endpoint_url)?;
        let target = Arc::new(Target { uri, key: open(&d.secret_sealed)?, previous });
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        let entry = Entry {
            url: d.endpoint_url.clone(),
            sealed: d.secret_sealed.clone(),
            previous: d.previous_secret_sealed.clone(),
            target: target.clone(),
        };
        entries.insert(d.subscription_id, entry);
        Ok(target)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}
