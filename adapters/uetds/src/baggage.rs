//! A trip's baggage: what U-ETDS holds per passenger entry, and the next call that brings it to
//! what the passengers have now (`yolcuBagajEkle`, `yolcuBagajIptal`).
//!
//! U-ETDS knows baggage by the passenger's identity number and seat and gives it no reference;
//! what can be read back is two counts in the trip's summary (`bagajAdedi`, `iptalBagajAdedi`).
//! So the progress keeps what was sent, per entry, and a call whose outcome is unknown is judged
//! by the count it would leave: the live count equal to what the progress holds means it did
//! not go through, equal to that plus (or minus) what the call carried means it did, anything
//! else is not guessed at (the submission waits for a look-up that answers, or an operator).
//! The document does not say whether the count is of barcodes or of passengers' entries, so a
//! call is judged only when both readings agree on its outcome.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tns_adapter::{AdapterError, AdapterResult, Bags};

/// Passengers' baggage sent per `yolcuBagajEkle` call, as passengers are per batch.
pub(crate) const BATCH: usize = crate::progress::PASSENGER_BATCH;

/// The baggage of one passenger entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub identity_number: String,
    pub seat_no: Option<String>,
    pub barcodes: BTreeSet<String>,
}

impl Entry {
    fn same_passenger(&self, other: &Entry) -> bool {
        (&self.identity_number, &self.seat_no) == (&other.identity_number, &other.seat_no)
    }

    fn bags(&self, key: &str, barcodes: impl IntoIterator<Item = String>) -> Bags {
        Bags {
            key: key.to_string(),
            identity_number: self.identity_number.clone(),
            seat_no: self.seat_no.clone(),
            barcodes: barcodes.into_iter().collect(),
        }
    }
}

/// Baggage by our passenger key.
pub(crate) type Held = BTreeMap<String, Entry>;

/// The baggage of a list of passengers, by key (entries without barcodes left out).
pub(crate) fn index<'a>(bags: impl IntoIterator<Item = &'a Bags>) -> Held {
    bags.into_iter()
        .filter(|b| !b.barcodes.is_empty())
        .map(|b| {
            let entry = Entry {
                identity_number: b.identity_number.clone(),
                seat_no: b.seat_no.clone(),
                barcodes: b.barcodes.iter().cloned().collect(),
            };
            (b.key.clone(), entry)
        })
        .collect()
}

/// Barcodes held.
pub(crate) fn count(held: &Held) -> i64 {
    held.values().map(|e| e.barcodes.len() as i64).sum()
}

/// One baggage call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// Withdraw some of one passenger's barcodes (`yolcuBagajIptal`).
    Withdraw(Bags),
    /// Add barcodes to passengers (`yolcuBagajEkle`).
    Add(Vec<Bags>),
}

impl Call {
    /// How the live count moves when the call goes through, counting barcodes.
    fn delta(&self) -> i64 {
        match self {
            Call::Withdraw(b) => -(b.barcodes.len() as i64),
            Call::Add(list) => list.iter().map(|b| b.barcodes.len() as i64).sum(),
        }
    }

    /// How the live count moves when the call goes through, counting passengers' entries.
    fn entry_delta(&self, held: &Held) -> i64 {
        let mut after = held.clone();
        self.apply(&mut after);
        after.len() as i64 - held.len() as i64
    }

    /// Record in `held` that the call went through.
    pub(crate) fn apply(&self, held: &mut Held) {
        match self {
            Call::Withdraw(b) => {
                if let Some(e) = held.get_mut(&b.key) {
                    for code in &b.barcodes {
                        e.barcodes.remove(code);
                    }
                    if e.barcodes.is_empty() {
                        held.remove(&b.key);
                    }
                }
            }
            Call::Add(list) => {
                for b in list {
                    let new = Entry {
                        identity_number: b.identity_number.clone(),
                        seat_no: b.seat_no.clone(),
                        barcodes: BTreeSet::new(),
                    };
                    let e = held.entry(b.key.clone()).or_insert_with(|| new.clone());
                    if !e.same_passenger(&new) {
                        *e = new;
                    }
                    e.barcodes.extend(b.barcodes.iter().cloned());
                }
            }
        }
    }
}

/// Withdraw an entry's baggage before the entry itself is cancelled (no barcode outlives its
/// passenger's entry); `None` when it holds none.
pub(crate) fn before_cancel(held: &Held, key: &str) -> Option<Call> {
    held.get(key).map(|e| Call::Withdraw(e.bags(key, e.barcodes.iter().cloned())))
}

/// The next call that brings `held` to `wanted` (the baggage of the entries U-ETDS accepted):
/// barcodes an entry holds but no longer has are withdrawn first (all of them when the entry
/// is another passenger or seat now), then what is missing is added, [`BATCH`] passengers per
/// call. `None` when they agree.
pub(crate) fn next(held: &Held, wanted: &Held) -> Option<Call> {
    for (key, h) in held {
        let keep = wanted.get(key).filter(|w| w.same_passenger(h));
        let extra: Vec<String> =
            h.barcodes.iter().filter(|c| keep.is_none_or(|w| !w.barcodes.contains(*c))).cloned().collect();
        if !extra.is_empty() {
            return Some(Call::Withdraw(h.bags(key, extra)));
        }
    }
    let add: Vec<Bags> = wanted
        .iter()
        .filter_map(|(key, w)| {
            let have = held.get(key).filter(|h| h.same_passenger(w));
            let missing: Vec<String> =
                w.barcodes.iter().filter(|c| have.is_none_or(|h| !h.barcodes.contains(*c))).cloned().collect();
            (!missing.is_empty()).then(|| w.bags(key, missing))
        })
        .take(BATCH)
        .collect();
    (!add.is_empty()).then_some(Call::Add(add))
}

/// After a call whose outcome is unknown: `pending` is the baggage call the progress had next
/// (the one that may have been made), `live` the barcodes U-ETDS holds now (added less
/// withdrawn; `None` when its summary does not say). Records the call when the count shows
/// it went through; an error when the count matches neither outcome.
pub(crate) fn settle(held: &mut Held, pending: Option<Call>, live: Option<i64>) -> AdapterResult<()> {
    let Some(call) = pending else { return Ok(()) };
    let expected = count(held);
    // Before and after, counting barcodes and counting entries.
    let before = [expected, held.len() as i64];
    let after = [expected + call.delta(), held.len() as i64 + call.entry_delta(held)];
    match live {
        Some(n) if before.contains(&n) && !after.contains(&n) => Ok(()),
        Some(n) if after.contains(&n) && !before.contains(&n) => {
            call.apply(held);
            Ok(())
        }
        live => Err(AdapterError::Transient(format!(
            "U-ETDS's summary shows {} baggage barcodes where {expected} were sent (or {} had the last baggage call gone \
             through), so whether it did cannot be told; the submission waits until it can, or for an operator",
            live.map_or_else(|| "no count of".to_string(), |n| n.to_string()),
            expected + call.delta()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bags(key: &str, seat: &str, codes: &[&str]) -> Bags {
        Bags {
            key: key.into(),
            identity_number: format!("ID{key}"),
            seat_no: Some(seat.into()),
            barcodes: codes.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn withdraws_first_then_adds_what_is_missing() {
        let mut held = index(&[bags("1", "1", &["A", "B"]), bags("2", "2", &["C"])]);
        let wanted = index(&[bags("1", "1", &["B", "D"]), bags("2", "9", &["C"]), bags("3", "3", &["E"])]);
        assert_eq!(next(&held, &wanted), Some(Call::Withdraw(bags("1", "1", &["A"]))));
        next(&held, &wanted).unwrap().apply(&mut held);
        // Passenger 2 moved seat: all of their baggage goes, to be added under the new seat.
        assert_eq!(next(&held, &wanted), Some(Call::Withdraw(bags("2", "2", &["C"]))));
        next(&held, &wanted).unwrap().apply(&mut held);
        let add = next(&held, &wanted).unwrap();
        assert_eq!(add, Call::Add(vec![bags("1", "1", &["D"]), bags("2", "9", &["C"]), bags("3", "3", &["E"])]));
        add.apply(&mut held);
        assert_eq!(held, wanted);
        assert_eq!(next(&held, &wanted), None);
        assert_eq!(before_cancel(&held, "3"), Some(Call::Withdraw(bags("3", "3", &["E"]))));
    }

    #[test]
    fn an_uncertain_call_is_judged_only_when_barcodes_and_entries_agree() {
        // One entry holding two barcodes; adding one barcode for another passenger leaves 3
        // barcodes or 2 entries: a live 2 could be "barcodes, not gone through" or "entries,
        // gone through", so it is not judged.
        let held = index(&[bags("1", "1", &["A", "B"])]);
        let add = Some(Call::Add(vec![bags("2", "2", &["C"])]));
        assert!(matches!(settle(&mut held.clone(), add.clone(), Some(2)), Err(AdapterError::Transient(_))));
        let mut h = held.clone();
        settle(&mut h, add.clone(), Some(3)).unwrap();
        assert_eq!(count(&h), 3);
        let mut h = held.clone();
        settle(&mut h, add, Some(1)).unwrap();
        assert_eq!(h, held, "one entry: not gone through, either way");
    }

    #[test]
    fn an_uncertain_call_is_judged_by_the_count_it_leaves() {
        let held = index(&[bags("1", "1", &["A"])]);
        let add = Some(Call::Add(vec![bags("2", "2", &["B", "C"])]));
        let mut h = held.clone();
        settle(&mut h, add.clone(), Some(1)).unwrap();
        assert_eq!(h, held, "the count unchanged: it did not go through");
        settle(&mut h, add.clone(), Some(3)).unwrap();
        assert_eq!(count(&h), 3, "the count moved by the call: it did");
        let mut h = held.clone();
        assert!(matches!(settle(&mut h, add.clone(), Some(5)), Err(AdapterError::Transient(_))));
        assert!(matches!(settle(&mut h, add.clone(), None), Err(AdapterError::Transient(_))));
        settle(&mut h, None, None).unwrap();
        // Two entries now, counted as entries: it went through.
        settle(&mut h, add, Some(2)).unwrap();
        assert_eq!(h.len(), 2);
    }
}
