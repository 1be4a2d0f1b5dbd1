//! Prepared delivery targets: a subscription's endpoint checked by the guard and parsed, and
//! its secret unsealed into a signing key, once per subscription rather than once per
//! delivery. An entry is used only while the subscription's endpoint URL and sealed secret are
//! the ones it was prepared from (every claimed delivery carries both), so an edited
//! subscription is prepared again. Names are still checked on every connection, by the
//! guarded resolver.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use hyper::Uri;

use super::{
    queue::Claimed,
    sealing::DataKey,
    send::{self, Response},
    signing,
};

/// Entries kept at most; the cache starts over when full (a scheduler serving more
/// subscriptions than this at once prepares some of them more often).
const MAX_ENTRIES: usize = 10_000;

pub struct Target {
    pub uri: Uri,
    pub key: signing::Key,
}

struct Entry {
    url: String,
    sealed: Vec<u8>,
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
            if e.url == d.endpoint_url && e.sealed == d.secret_sealed {
                return Ok(e.target.clone());
            }
        }
        let secret = data_key.open(d.org_id, &d.secret_sealed).map_err(|_| {
            // Our problem (TNS_DATA_KEY is not the key it was sealed with): retried on the
            // schedule, so a corrected key still delivers.
            tracing::error!(subscription = d.subscription_id, "webhook secret cannot be unsealed: check TNS_DATA_KEY");
            Response::failed("unreachable", "the platform could not sign this delivery; it is retried".into())
        })?;
        let target = Arc::new(Target { uri: send::target(client, &d.endpoint_url)?, key: signing::Key::new(&secret) });
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        let entry = Entry { url: d.endpoint_url.clone(), sealed: d.secret_sealed.clone(), target: target.clone() };
        entries.insert(d.subscription_id, entry);
        Ok(target)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}
