//! What the downstream holds of a journey after its delivered submissions, replayed from them,
//! and the difference between the journey now and that (trip fields, crew, passengers): what
//! an amendment sends, and what a drift check expects the downstream to hold. Pure, no I/O.

use std::collections::{BTreeMap, HashMap};

use tns_adapter::{
    Amendment, Bags, ChangedPassenger, Journey, Kind, Passenger, PassengerResult, Person, RemovedPassenger, Trip,
};
use tns_core::domain::kinds::Operation;

use super::Delivered;

/// A passenger as the downstream holds it, with the reference it gave.
#[derive(Debug, Clone)]
struct Held {
    passenger: Passenger,
    downstream_reference: Option<String>,
}

/// What the downstream holds of a journey after its delivered submissions: the adapter it went
/// to, the trip's fields, the crew and the passengers it accepted, and what the adapter keeps
/// to change it. Refused passengers of a partial delivery (U-ETDS code 88) are not held, so
/// they count as added next time.
pub struct Delivery {
    pub adapter: String,
    pub kind: Kind,
    pub downstream_state: serde_json::Value,
    trip: Trip,
    /// By identity number.
    crew: BTreeMap<String, Person>,
    passengers: BTreeMap<String, Held>,
}

impl Delivery {
    /// Replay the delivered history; `None` when nothing was delivered yet. A snapshot this
    /// code cannot read is an internal error (the schema is ours).
    pub fn replay(history: &[Delivered]) -> anyhow::Result<Option<Delivery>> {
        let mut delivery: Option<Delivery> = None;
        for d in history {
            let results: HashMap<&str, &PassengerResult> = d
                .passenger_results
                .as_ref()
                .map(|r| r.0.iter().map(|p| (p.key.as_str(), p)).collect())
                .unwrap_or_default();
            let held = |p: &Passenger| match results.get(p.key.as_str()) {
                Some(r) if r.error.is_some() => None,
                r => Some(Held {
                    passenger: p.clone(),
                    downstream_reference: r.and_then(|r| r.downstream_reference.clone()),
                }),
            };
            match d.operation {
                Operation::Journey => {
                    let j: Journey = serde_json::from_value(d.snapshot.0.clone())?;
                    let passengers = j.passengers.iter().filter_map(|p| held(p).map(|h| (p.key.clone(), h))).collect();
                    delivery = Some(Delivery {
                        adapter: d.adapter.clone(),
                        kind: j.kind(),
                        downstream_state: d.downstream_state.0.clone(),
                        trip: j.trip(),
                        crew: j.crew.iter().map(|p| (p.identity_number.clone(), p.clone())).collect(),
                        passengers,
                    });
                }
                Operation::Amendment => {
                    let a: Amendment = serde_json::from_value(d.snapshot.0.clone())?;
                    let Some(del) = delivery.as_mut() else { continue };
                    if let Some(t) = a.trip {
                        del.trip = t;
                    }
                    for p in &a.crew_removed {
                        del.crew.remove(&p.identity_number);
                    }
                    for p in a.crew_added {
                        del.crew.insert(p.identity_number.clone(), p);
                    }
                    for r in &a.removed {
                        del.passengers.remove(&r.key);
                    }
                    for c in &a.changed {
                        // The old entry was cancelled downstream whatever became of the new one.
                        del.passengers.remove(&c.passenger.key);
                    }
                    // The baggage of every entry the amendment kept is as it says now.
                    let wanted: HashMap<&str, &Bags> = a.baggage.iter().map(|b| (b.key.as_str(), b)).collect();
                    for (key, h) in del.passengers.iter_mut() {
                        h.passenger.baggage = wanted.get(key.as_str()).map(|b| b.barcodes.clone()).unwrap_or_default();
                    }
                    for p in a.added.iter().chain(a.changed.iter().map(|c| &c.passenger)) {
                        if let Some(h) = held(p) {
                            del.passengers.insert(p.key.clone(), h);
                        }
                    }
                    if !d.downstream_state.0.is_null() {
                        del.downstream_state = d.downstream_state.0.clone();
                    }
                }
                Operation::Cargo | Operation::Cancel | Operation::Reactivate | Operation::NoShow => {
                    anyhow::bail!("a journey's delivered history holds a {} submission", d.operation.as_str())
                }
            }
        }
        Ok(delivery)
    }

    /// The trip's fields as the downstream holds them.
    pub fn trip(&self) -> &Trip {
        &self.trip
    }

    /// Crew members held.
    pub fn crew_count(&self) -> usize {
        self.crew.len()
    }

    /// Passengers held (accepted and not removed since).
    pub fn passenger_count(&self) -> usize {
        self.passengers.len()
    }

    /// Baggage barcodes held.
    pub fn baggage_count(&self) -> usize {
        self.passengers.values().map(|h| h.passenger.baggage.len()).sum()
    }

    /// The difference between the journey now (`trip`, `crew`, `passengers`) and what the
    /// downstream holds.
    pub fn diff(&self, downstream_reference: &str, trip: Trip, crew: Vec<Person>, now: Vec<Passenger>) -> Amendment {
        let mut a = Amendment {
            downstream_reference: downstream_reference.to_string(),
            downstream_state: self.downstream_state.clone(),
            kind: self.kind,
            previous_trip: (trip != self.trip).then(|| self.trip.clone()),
            trip: (trip != self.trip).then_some(trip),
            crew_added: vec![],
            crew_removed: vec![],
            added: vec![],
            changed: vec![],
            removed: vec![],
            baggage_held: self.passengers.values().filter_map(|h| h.passenger.bags()).collect(),
            baggage: now.iter().filter_map(Passenger::bags).collect(),
            goods: None,
        };
        let current: BTreeMap<&str, &Person> = crew.iter().map(|p| (p.identity_number.as_str(), p)).collect();
        for (id, held) in &self.crew {
            if current.get(id.as_str()) != Some(&held) {
                a.crew_removed.push(held.clone());
            }
        }
        for p in &crew {
            if self.crew.get(&p.identity_number) != Some(p) {
                a.crew_added.push(p.clone());
            }
        }
        let mut seen = std::collections::HashSet::new();
        for p in now {
            seen.insert(p.key.clone());
            match self.passengers.get(&p.key) {
                None => a.added.push(p),
                // A change of baggage alone changes no entry (it is `baggage`).
                Some(h) if h.passenger.entry() != p.entry() => a
                    .changed
                    .push(ChangedPassenger { passenger: p, previous_reference: h.downstream_reference.clone() }),
                Some(_) => {}
            }
        }
        for (key, h) in &self.passengers {
            if !seen.contains(key) {
                a.removed.push(RemovedPassenger {
                    key: key.clone(),
                    identity_number: h.passenger.person.identity_number.clone(),
                    downstream_reference: h.downstream_reference.clone(),
                });
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use sqlx::types::Json;
    use tns_adapter::Stop;

    use super::*;

    fn pax(key: &str, id: &str, seat: &str) -> Passenger {
        Passenger {
            key: key.into(),
            person: Person::new("passenger", id, "Ali", "Kaya", "E"),
            boarding_place_code: 1421,
            destination_place_code: 1219,
            seat_no: Some(seat.into()),
            ticket_serial_no: None,
            amount: None,
            baggage: vec![],
        }
    }

    fn with_bags(mut p: Passenger, barcodes: &[&str]) -> Passenger {
        p.baggage = barcodes.iter().map(|b| b.to_string()).collect();
        p
    }

    fn journey_with(passengers: Vec<Passenger>) -> serde_json::Value {
        let s = Stop {
            date: "2026-12-01".into(),
            time: "08:00".into(),
            city_id: 34,
            district_id: 1421,
            place: None,
            country: None,
        };
        serde_json::to_value(Journey {
            plate: "34ABC123".into(),
            departure: s.clone(),
            arrival: s,
            tarifeli: None,
            crew: vec![],
            passengers,
        })
        .unwrap()
    }

    fn result(key: &str, error: Option<&str>) -> PassengerResult {
        PassengerResult {
            key: key.into(),
            downstream_reference: error.is_none().then(|| format!("ref-{key}")),
            error: error.map(str::to_string),
        }
    }

    fn trip(time: &str) -> Trip {
        let s = Stop {
            date: "2026-12-01".into(),
            time: time.into(),
            city_id: 34,
            district_id: 1421,
            place: None,
            country: None,
        };
        Trip { plate: "34ABC123".into(), departure: s.clone(), arrival: s }
    }

    fn delivered(operation: Operation, snapshot: serde_json::Value, results: Vec<PassengerResult>) -> Delivered {
        Delivered {
            operation,
            adapter: "any".into(),
            snapshot: Json(snapshot),
            passenger_results: Some(Json(results)),
            downstream_state: Json(serde_json::json!({"group": 7})),
        }
    }

    #[test]
    fn replay_and_diff_send_only_the_difference() {
        let first = delivered(
            Operation::Journey,
            journey_with(vec![pax("1", "A", "1"), pax("2", "FAIL1", "2"), pax("3", "C", "3")]),
            vec![result("1", None), result("2", Some("88")), result("3", None)],
        );
        let d = Delivery::replay(std::slice::from_ref(&first)).unwrap().unwrap();
        assert_eq!(d.kind, Kind::NonScheduled);
        // Now: 1 unchanged, 2 (refused before) still listed, 3 removed, 4 new.
        let a =
            d.diff("T1", trip("08:00"), vec![], vec![pax("1", "A", "1"), pax("2", "FAIL1", "2"), pax("4", "D", "4")]);
        assert_eq!(a.added.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), ["2", "4"], "refused ones go again");
        assert!(a.changed.is_empty() && a.trip.is_none() && a.crew_added.is_empty());
        assert_eq!(a.removed.len(), 1);
        assert_eq!(a.removed[0].key, "3");
        assert_eq!(a.removed[0].downstream_reference.as_deref(), Some("ref-3"));
        assert_eq!(a.downstream_state, serde_json::json!({"group": 7}), "the adapter's state travels along");

        // After that amendment is delivered (4 accepted, 2 refused again), a seat change of 1 is
        // the only difference; the old entry's reference goes with it.
        let second = delivered(
            Operation::Amendment,
            serde_json::to_value(&a).unwrap(),
            vec![result("2", Some("88")), result("4", None)],
        );
        let d = Delivery::replay(&[first, second]).unwrap().unwrap();
        let a = d.diff("T1", trip("08:00"), vec![], vec![pax("1", "A", "9"), pax("4", "D", "4")]);
        assert!(a.added.is_empty(), "{a:?}");
        assert_eq!(a.changed.iter().map(|c| c.passenger.key.as_str()).collect::<Vec<_>>(), ["1"]);
        assert_eq!(a.changed[0].previous_reference.as_deref(), Some("ref-1"));
        assert!(a.removed.is_empty(), "2 was never held downstream, so it is not removed: {a:?}");
        assert!(d.diff("T1", trip("08:00"), vec![], vec![pax("1", "A", "1"), pax("4", "D", "4")]).is_empty());
    }

    #[test]
    fn trip_fields_and_crew_changes_are_part_of_the_difference() {
        let mut driver = pax("d", "10000000146", "").person;
        driver.role = "driver".into();
        let mut j: Journey = serde_json::from_value(journey_with(vec![])).unwrap();
        j.crew = vec![driver.clone()];
        let first = delivered(Operation::Journey, serde_json::to_value(&j).unwrap(), vec![]);
        let d = Delivery::replay(std::slice::from_ref(&first)).unwrap().unwrap();
        assert!(d.diff("T1", trip("08:00"), vec![driver.clone()], vec![]).is_empty());

        let mut other = driver.clone();
        other.identity_number = "17291716060".into();
        let a = d.diff("T1", trip("09:30"), vec![other.clone()], vec![]);
        assert_eq!(a.trip, Some(trip("09:30")));
        assert_eq!(a.crew_added, vec![other.clone()]);
        assert_eq!(a.crew_removed, vec![driver]);

        let second = delivered(Operation::Amendment, serde_json::to_value(&a).unwrap(), vec![]);
        let d = Delivery::replay(&[first, second]).unwrap().unwrap();
        assert!(d.diff("T1", trip("09:30"), vec![other], vec![]).is_empty(), "the amendment is what is held now");
    }

    #[test]
    fn baggage_alone_changes_no_entry_and_is_replayed() {
        let first = delivered(
            Operation::Journey,
            journey_with(vec![with_bags(pax("1", "A", "1"), &["B1"]), pax("2", "B", "2")]),
            vec![result("1", None), result("2", None)],
        );
        let d = Delivery::replay(std::slice::from_ref(&first)).unwrap().unwrap();
        assert_eq!(d.baggage_count(), 1);
        let same = vec![with_bags(pax("1", "A", "1"), &["B1"]), pax("2", "B", "2")];
        assert!(d.diff("T1", trip("08:00"), vec![], same).is_empty());

        let now = vec![with_bags(pax("1", "A", "1"), &["B2", "B3"]), with_bags(pax("2", "B", "2"), &["B4"])];
        let a = d.diff("T1", trip("08:00"), vec![], now.clone());
        assert!(!a.is_empty() && a.changed.is_empty() && a.added.is_empty(), "{a:?}");
        assert_eq!(a.baggage_held.iter().map(|b| b.barcodes.len()).sum::<usize>(), 1);
        assert_eq!(a.baggage.iter().map(|b| b.key.as_str()).collect::<Vec<_>>(), ["1", "2"]);

        let second = delivered(Operation::Amendment, serde_json::to_value(&a).unwrap(), vec![]);
        let d = Delivery::replay(&[first, second]).unwrap().unwrap();
        assert_eq!(d.baggage_count(), 3, "the amendment's baggage is what is held now");
        assert!(d.diff("T1", trip("08:00"), vec![], now).is_empty());
    }

    #[test]
    fn nothing_delivered_means_no_delivery() {
        assert!(Delivery::replay(&[]).unwrap().is_none());
    }
}
