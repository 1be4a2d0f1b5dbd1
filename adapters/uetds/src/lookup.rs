//! Finding a trip whose declaration's answer was lost, at a cost that does not grow with the
//! trips a vehicle has.
//!
//! U-ETDS's trip list (`seferBildirimListele`) does not show the sender's trip number, so each
//! listed trip's summary (`bildirimOzeti`) must be read to match our tag (`firmaSeferNo`, the
//! submission's reference). A trip's tag never changes once declared (an update sends it
//! again), so what one look-up reads serves every later one: [`Lookups`] keeps each trip's
//! tag for the life of the process, and look-ups of one vehicle take turns, so N journeys of
//! one bus waiting on the same list read each trip's summary once, not N times.
//!
//! No public source says whether the list's dates are the departure day or the day of
//! notification, nor settles the format beyond `dd/MM/yyyy`. A look-up therefore searches
//! both: the departure day, then every day since the notification's first attempt (in windows
//! of the 31 days the service allows, at most [`MAX_DAYS_BACK`] back). A list that cannot be
//! read is an error, never "not there": the host then keeps the submission `unknown` and never
//! declares the trip a second time.

use std::{
    collections::HashMap,
    hash::{Hash, Hasher},
    sync::{Mutex, MutexGuard, TryLockError},
    time::{Duration, Instant},
};

use chrono::{Days, NaiveDate};
use tns_adapter::{AdapterError, AdapterResult, Environment};

/// Tags kept at most; past this the oldest half is forgotten (read again when needed).
const MAX_TAGS: usize = 200_000;
/// How many locks vehicles' look-ups are spread over (two vehicles rarely share one).
const STRIPES: usize = 1024;
/// The days the service lists at once.
const WINDOW_DAYS: u64 = 31;
/// How far back the days since the first attempt are searched.
pub(crate) const MAX_DAYS_BACK: u64 = 92;

/// A trip, by who declared it where: the firm's user, the environment, the service, U-ETDS's
/// reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TripKey {
    pub user: String,
    pub env: Environment,
    pub service: &'static str,
    pub trip: i64,
}

/// What this process has learnt of trips' tags, shared by every call.
pub(crate) struct Lookups {
    tags: Mutex<Tags>,
    stripes: Vec<Mutex<()>>,
}

#[derive(Default)]
struct Tags {
    by_trip: HashMap<TripKey, (u64, Option<String>)>,
    /// Insertion counter, to forget the oldest first.
    next: u64,
}

impl Default for Lookups {
    fn default() -> Self {
        Lookups { tags: Mutex::default(), stripes: (0..STRIPES).map(|_| Mutex::new(())).collect() }
    }
}

impl Lookups {
    /// The trip's tag: known, or read with `read` (the trip's summary) and kept.
    pub(crate) fn tag(
        &self,
        key: TripKey,
        read: impl FnOnce() -> AdapterResult<Option<String>>,
    ) -> AdapterResult<Option<String>> {
        if let Some((_, tag)) = self.tags.lock().unwrap_or_else(|p| p.into_inner()).by_trip.get(&key) {
            return Ok(tag.clone());
        }
        let tag = read()?;
        let mut tags = self.tags.lock().unwrap_or_else(|p| p.into_inner());
        if tags.by_trip.len() >= MAX_TAGS {
            let cut = tags.next.saturating_sub(MAX_TAGS as u64 / 2);
            tags.by_trip.retain(|_, (n, _)| *n >= cut);
        }
        let n = tags.next;
        tags.next += 1;
        tags.by_trip.insert(key, (n, tag.clone()));
        Ok(tag)
    }

    /// Wait for this vehicle's turn (look-ups of one firm's plate run one at a time, so the
    /// second finds the tags the first read), at most `patience`: a look-up that cannot start
    /// by then is a transient error (tried again later), so a slow one never holds up others
    /// past their own deadline.
    pub(crate) fn turn(
        &self,
        user: &str,
        env: Environment,
        plate: &str,
        patience: Duration,
    ) -> AdapterResult<MutexGuard<'_, ()>> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (user, env, plate).hash(&mut h);
        let stripe = &self.stripes[(h.finish() as usize) % STRIPES];
        let until = Instant::now() + patience;
        loop {
            match stripe.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
                Err(TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(AdapterError::Transient(
                        "another look-up of this vehicle's trips is still running; looked up again later".into(),
                    ))
                }
            }
        }
    }
}

/// Today in Türkiye (UTC+3 all year since 2016).
pub(crate) fn today() -> NaiveDate {
    (chrono::Utc::now() + chrono::Duration::hours(3)).date_naive()
}

/// The date ranges to list, in order: the departure day, then the days from the first
/// attempt's (`since`) to `today` in windows the service accepts, at most [`MAX_DAYS_BACK`]
/// days back; a range already covered is not listed twice.
pub(crate) fn windows(departure: NaiveDate, since: Option<NaiveDate>, today: NaiveDate) -> Vec<(NaiveDate, NaiveDate)> {
    let mut out = vec![(departure, departure)];
    let Some(since) = since else { return out };
    let earliest = today.checked_sub_days(Days::new(MAX_DAYS_BACK)).unwrap_or(today);
    let mut from = since.max(earliest);
    while from <= today {
        let to = from.checked_add_days(Days::new(WINDOW_DAYS - 1)).unwrap_or(today).min(today);
        if (from, to) != (departure, departure) {
            out.push((from, to));
        }
        match to.succ_opt() {
            Some(next) => from = next,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn the_departure_day_then_the_days_since_the_first_attempt() {
        assert_eq!(windows(d("2026-12-01"), None, d("2026-11-25")), [(d("2026-12-01"), d("2026-12-01"))]);
        assert_eq!(
            windows(d("2026-12-01"), Some(d("2026-11-24")), d("2026-11-25")),
            [(d("2026-12-01"), d("2026-12-01")), (d("2026-11-24"), d("2026-11-25"))]
        );
        // Declared and departing today: one list.
        assert_eq!(windows(d("2026-11-25"), Some(d("2026-11-25")), d("2026-11-25")).len(), 1);
        // Long ago: 31-day windows, no further back than the bound.
        let w = windows(d("2026-12-01"), Some(d("2026-01-01")), d("2026-11-25"));
        assert_eq!(w[1].0, d("2026-11-25") - Days::new(MAX_DAYS_BACK));
        assert_eq!(w.last().unwrap().1, d("2026-11-25"));
        assert!(w.iter().all(|(a, b)| (*b - *a).num_days() < WINDOW_DAYS as i64));
    }

    #[test]
    fn a_tag_is_read_once() {
        let l = Lookups::default();
        let key = TripKey { user: "1".into(), env: Environment::Test, service: "arizi", trip: 7 };
        let reads = Cell::new(0);
        for _ in 0..3 {
            let tag = l.tag(key.clone(), || {
                reads.set(reads.get() + 1);
                Ok(Some("tns-1".into()))
            });
            assert_eq!(tag.unwrap().as_deref(), Some("tns-1"));
        }
        assert_eq!(reads.get(), 1);
        // A failed read is not kept.
        let other = TripKey { trip: 8, ..key };
        assert!(l.tag(other.clone(), || Err(AdapterError::Transient("x".into()))).is_err());
        assert_eq!(l.tag(other, || Ok(None)).unwrap(), None);
    }

    #[test]
    fn a_vehicles_turn_is_awaited_only_so_long() {
        let l = Lookups::default();
        let held = l.turn("1", Environment::Test, "34ABC1", Duration::ZERO).unwrap();
        let waited = l.turn("1", Environment::Test, "34ABC1", Duration::from_millis(60));
        assert!(matches!(waited, Err(AdapterError::Transient(_))));
        drop(held);
        assert!(l.turn("1", Environment::Test, "34ABC1", Duration::ZERO).is_ok());
    }
}
