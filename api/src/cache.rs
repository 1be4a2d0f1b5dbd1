//! A small bounded map whose entries expire: the per-process cache of API keys and limits.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::Mutex,
    time::{Duration, Instant},
};

pub struct TtlMap<K, V> {
    ttl: Duration,
    cap: usize,
    inner: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash + Clone, V: Clone> TtlMap<K, V> {
    pub fn new(ttl: Duration, cap: usize) -> Self {
        TtlMap { ttl, cap, inner: Mutex::new(HashMap::new()) }
    }

    pub fn get(&self, k: &K) -> Option<V> {
        let map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.get(k).filter(|(at, _)| at.elapsed() < self.ttl).map(|(_, v)| v.clone())
    }

    pub fn insert(&self, k: K, v: V) {
        if self.ttl.is_zero() {
            return;
        }
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= self.cap {
            let ttl = self.ttl;
            map.retain(|_, (at, _)| at.elapsed() < ttl);
            if map.len() >= self.cap {
                map.clear();
            }
        }
        map.insert(k, (Instant::now(), v));
    }

    pub fn remove_where(&self, pred: impl Fn(&K, &V) -> bool) {
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|k, (_, v)| !pred(k, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_and_stays_bounded() {
        let m = TtlMap::new(Duration::from_millis(30), 2);
        m.insert(1, "a");
        assert_eq!(m.get(&1), Some("a"));
        m.insert(2, "b");
        m.insert(3, "c");
        assert!(m.inner.lock().unwrap().len() <= 2);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(m.get(&3), None);
        m.insert(4, "d");
        m.remove_where(|k, _| *k == 4);
        assert_eq!(m.get(&4), None);
    }
}
