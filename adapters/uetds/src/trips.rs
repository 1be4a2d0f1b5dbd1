//! Passenger trips, notified step by step, the same way on U-ETDS's non-scheduled service
//! ([`crate::arizi`]) and its scheduled one ([`crate::tarifeli`]): each implements
//! [`TripService`], the calls a step makes; the steps, their order, the progress kept between
//! them and how an interrupted step is reconciled are here, once.
//!
//! A journey: the trip (our reference as the sender's trip number), trip fields updated when
//! U-ETDS holds others, the passenger group where the service has groups, the crew, the
//! passengers in batches (each passenger's outcome kept; refused ones are sent again only by a
//! later amendment). An amendment: trip fields, crew removed, crew added, passenger entries
//! cancelled (removed ones, and the old entries of changed ones: U-ETDS has no passenger
//! update), passengers added. A cancellation: one call.
//!
//! The progress of a submission that failed is where the next submission of the same record
//! and operation starts (the host carries it over), so what U-ETDS already holds from it (a
//! trip, a group, cancelled entries) is used, never declared or cancelled a second time.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tns_adapter::{
    AdapterError, AdapterResult, Amendment, Cancellation, Journey, Passenger, Person, Receipt, Step, Trip,
};

use crate::{
    continue_with, number,
    progress::{load, message, results, Pax},
};

/// What U-ETDS holds of a trip, as its summary (`bildirimOzeti`) shows it.
#[derive(Debug, Default)]
pub struct Summary {
    pub firma_sefer_no: Option<String>,
    pub cancelled: bool,
    /// Crew not cancelled, by identity number.
    pub crew: BTreeSet<String>,
    /// Passengers not cancelled: identity number and U-ETDS's reference.
    pub passengers: Vec<(String, Option<i64>)>,
}

/// The calls of one passenger-trip service, for one submission (our reference is the
/// session's).
pub trait TripService {
    /// Declare the trip; U-ETDS's trip reference.
    fn add_trip(&self, j: &Journey) -> AdapterResult<i64>;
    /// Change the trip's own fields; `firma_sefer_no` is the one it was declared with.
    fn update_trip(&self, trip: i64, t: &Trip, firma_sefer_no: &str) -> AdapterResult<()>;
    /// Whether passengers need a group, declared with [`TripService::add_group`].
    fn has_groups(&self) -> bool;
    fn add_group(&self, trip: i64, t: &Trip) -> AdapterResult<i64>;
    /// The group this submission declared, if U-ETDS holds it.
    fn find_group(&self, trip: i64) -> AdapterResult<Option<i64>>;
    fn add_crew(&self, trip: i64, crew: &[&Person]) -> AdapterResult<()>;
    fn remove_crew(&self, trip: i64, p: &Person) -> AdapterResult<()>;
    /// Passengers sent per call.
    fn batch(&self) -> usize;
    /// Send passengers; each one's outcome, in order.
    fn add_passengers(&self, trip: i64, group: Option<i64>, batch: &[&Passenger]) -> AdapterResult<Vec<Pax>>;
    fn cancel_passenger(&self, trip: i64, reference: i64) -> AdapterResult<()>;
    fn cancel_trip(&self, trip: i64, reason: &str) -> AdapterResult<()>;
    /// U-ETDS's references of the firm's trips on `t`'s departure day with its plate.
    fn trips_of_day(&self, t: &Trip) -> AdapterResult<Vec<i64>>;
    fn summary(&self, trip: i64) -> AdapterResult<Summary>;
    /// Our reference of this submission.
    fn reference(&self) -> &str;
}

/// What U-ETDS keeps of a delivered trip that later changes need ([`Receipt::state`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TripState {
    /// The passenger group's id, where the service has groups.
    pub group: Option<i64>,
    /// The trip's sender number: an update of the trip sends it again.
    pub firma_sefer_no: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct JourneyProgress {
    /// U-ETDS's trip reference.
    trip: Option<i64>,
    /// The sender's trip number it was declared with: this submission's reference, or an
    /// earlier failed submission's whose progress this one continues.
    firma_sefer_no: Option<String>,
    /// The trip's fields as U-ETDS holds them.
    sent: Option<Trip>,
    group: Option<i64>,
    /// Crew U-ETDS holds, by identity number.
    #[serde(default)]
    crew: BTreeSet<String>,
    /// Passengers' outcomes, by our key.
    #[serde(default)]
    passengers: BTreeMap<String, Pax>,
}

impl JourneyProgress {
    fn complete(&self, svc: &impl TripService, j: &Journey) -> bool {
        self.trip.is_some()
            && self.sent.as_ref() == Some(&j.trip())
            && (self.group.is_some() || !svc.has_groups())
            && j.crew.iter().all(|c| self.crew.contains(&c.identity_number))
            && j.passengers.iter().all(|x| self.passengers.contains_key(&x.key))
    }

    fn receipt(&self, j: &Journey, reference: &str) -> Receipt {
        let passengers = results(&j.passengers, &self.passengers);
        let refused = passengers.iter().filter(|r| r.error.is_some()).count();
        let firma_sefer_no = self.firma_sefer_no.clone().unwrap_or_else(|| reference.to_string());
        let state = TripState { group: self.group, firma_sefer_no: Some(firma_sefer_no) };
        Receipt {
            downstream_reference: self.trip.map(|t| t.to_string()).unwrap_or_default(),
            message: message(refused, passengers.len()),
            passengers,
            state: serde_json::to_value(state).unwrap_or(Value::Null),
        }
    }

    fn step(self, svc: &impl TripService, j: &Journey) -> AdapterResult<Step> {
        if self.complete(svc, j) {
            Ok(Step::Done { receipt: self.receipt(j, svc.reference()) })
        } else {
            continue_with(&self)
        }
    }
}

pub fn advance_journey(svc: &impl TripService, j: &Journey, progress: &Value) -> AdapterResult<Step> {
    let mut p: JourneyProgress = load(progress)?;
    let trip = j.trip();
    let Some(id) = p.trip else {
        p.trip = Some(svc.add_trip(j)?);
        p.firma_sefer_no = Some(svc.reference().to_string());
        p.sent = Some(trip);
        return continue_with(&p);
    };
    if p.sent.as_ref() != Some(&trip) {
        svc.update_trip(id, &trip, p.firma_sefer_no.as_deref().unwrap_or(svc.reference()))?;
        p.sent = Some(trip);
        return continue_with(&p);
    }
    if svc.has_groups() && p.group.is_none() {
        p.group = Some(svc.add_group(id, &trip)?);
        return continue_with(&p);
    }
    let crew: Vec<&Person> = j.crew.iter().filter(|c| !p.crew.contains(&c.identity_number)).collect();
    if !crew.is_empty() {
        svc.add_crew(id, &crew)?;
        p.crew.extend(crew.iter().map(|c| c.identity_number.clone()));
        return continue_with(&p);
    }
    let batch: Vec<&Passenger> =
        j.passengers.iter().filter(|x| !p.passengers.contains_key(&x.key)).take(svc.batch()).collect();
    if !batch.is_empty() {
        let outcomes = svc.add_passengers(id, p.group, &batch)?;
        p.passengers.extend(batch.iter().map(|x| x.key.clone()).zip(outcomes));
    }
    p.step(svc, j)
}

/// The trip U-ETDS holds under this submission's reference (the trip list does not show the
/// sender's number, so each candidate's summary is read).
fn find_trip(svc: &impl TripService, t: &Trip) -> AdapterResult<Option<i64>> {
    for id in svc.trips_of_day(t)? {
        if svc.summary(id)?.firma_sefer_no.as_deref() == Some(svc.reference()) {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

pub fn reconcile_journey(svc: &impl TripService, j: &Journey, progress: &Value) -> AdapterResult<Step> {
    let mut p: JourneyProgress = load(progress)?;
    let trip = j.trip();
    let id = match p.trip {
        Some(id) => id,
        None => match find_trip(svc, &trip)? {
            Some(id) => {
                p.trip = Some(id);
                p.firma_sefer_no = Some(svc.reference().to_string());
                p.sent = Some(trip);
                id
            }
            None => return continue_with(&p),
        },
    };
    if svc.has_groups() && p.group.is_none() {
        p.group = svc.find_group(id)?;
        if p.group.is_none() {
            return continue_with(&p);
        }
    }
    let held = svc.summary(id)?;
    p.crew.extend(j.crew.iter().map(|c| &c.identity_number).filter(|c| held.crew.contains(*c)).cloned());
    for x in &j.passengers {
        if p.passengers.contains_key(&x.key) {
            continue;
        }
        if let Some((_, r)) = held.passengers.iter().find(|(id, _)| id == &x.person.identity_number) {
            p.passengers.insert(x.key.clone(), Pax::accepted(*r));
        }
    }
    p.step(svc, j)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AmendmentProgress {
    /// The trip's fields as the update sent them.
    #[serde(default)]
    trip_sent: Option<Trip>,
    #[serde(default)]
    crew_removed: BTreeSet<String>,
    #[serde(default)]
    crew_added: BTreeSet<String>,
    /// Passenger entries cancelled, by U-ETDS reference.
    #[serde(default)]
    cancelled: BTreeSet<String>,
    #[serde(default)]
    passengers: BTreeMap<String, Pax>,
}

/// The entries to cancel: removed passengers, and the old entries of changed ones.
fn to_cancel(a: &Amendment) -> Vec<String> {
    a.removed
        .iter()
        .filter_map(|r| r.downstream_reference.clone())
        .chain(a.changed.iter().filter_map(|c| c.previous_reference.clone()))
        .collect()
}

fn to_add(a: &Amendment) -> Vec<&Passenger> {
    a.added.iter().chain(a.changed.iter().map(|c| &c.passenger)).collect()
}

impl AmendmentProgress {
    fn complete(&self, a: &Amendment) -> bool {
        (a.trip.is_none() || self.trip_sent == a.trip)
            && a.crew_removed.iter().all(|c| self.crew_removed.contains(&c.identity_number))
            && a.crew_added.iter().all(|c| self.crew_added.contains(&c.identity_number))
            && to_cancel(a).iter().all(|r| self.cancelled.contains(r))
            && to_add(a).iter().all(|x| self.passengers.contains_key(&x.key))
    }

    fn step(self, a: &Amendment) -> AdapterResult<Step> {
        if !self.complete(a) {
            return continue_with(&self);
        }
        let passengers = results(to_add(a), &self.passengers);
        let refused = passengers.iter().filter(|r| r.error.is_some()).count();
        Ok(Step::Done {
            receipt: Receipt {
                downstream_reference: a.downstream_reference.clone(),
                message: message(refused, passengers.len()),
                passengers,
                state: a.downstream_state.clone(),
            },
        })
    }
}

fn trip_of(a: &Amendment) -> AdapterResult<i64> {
    number(&a.downstream_reference, "the trip reference")
}

pub fn advance_amendment(svc: &impl TripService, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let mut p: AmendmentProgress = load(progress)?;
    let id = trip_of(a)?;
    let state: TripState = serde_json::from_value(a.downstream_state.clone()).unwrap_or_default();
    if let Some(t) = a.trip.as_ref().filter(|t| p.trip_sent.as_ref() != Some(t)) {
        svc.update_trip(id, t, state.firma_sefer_no.as_deref().unwrap_or(svc.reference()))?;
        p.trip_sent = Some(t.clone());
        return continue_with(&p);
    }
    if let Some(c) = a.crew_removed.iter().find(|c| !p.crew_removed.contains(&c.identity_number)) {
        svc.remove_crew(id, c)?;
        p.crew_removed.insert(c.identity_number.clone());
        return continue_with(&p);
    }
    let crew: Vec<&Person> = a.crew_added.iter().filter(|c| !p.crew_added.contains(&c.identity_number)).collect();
    if !crew.is_empty() {
        svc.add_crew(id, &crew)?;
        p.crew_added.extend(crew.iter().map(|c| c.identity_number.clone()));
        return continue_with(&p);
    }
    if let Some(r) = to_cancel(a).into_iter().find(|r| !p.cancelled.contains(r)) {
        svc.cancel_passenger(id, number(&r, "a passenger reference")?)?;
        p.cancelled.insert(r);
        return continue_with(&p);
    }
    let batch: Vec<&Passenger> =
        to_add(a).into_iter().filter(|x| !p.passengers.contains_key(&x.key)).take(svc.batch()).collect();
    if !batch.is_empty() {
        if svc.has_groups() && state.group.is_none() {
            return Err(AdapterError::Permanent(
                "the delivered trip's passenger group is not known; cancel the journey and notify it again".into(),
            ));
        }
        let outcomes = svc.add_passengers(id, state.group, &batch)?;
        p.passengers.extend(batch.iter().map(|x| x.key.clone()).zip(outcomes));
    }
    p.step(a)
}

pub fn reconcile_amendment(svc: &impl TripService, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let mut p: AmendmentProgress = load(progress)?;
    let held = svc.summary(trip_of(a)?)?;
    for c in &a.crew_removed {
        if !held.crew.contains(&c.identity_number) {
            p.crew_removed.insert(c.identity_number.clone());
        }
    }
    for c in &a.crew_added {
        if held.crew.contains(&c.identity_number) {
            p.crew_added.insert(c.identity_number.clone());
        }
    }
    let live: BTreeSet<String> = held.passengers.iter().filter_map(|(_, r)| r.map(|r| r.to_string())).collect();
    let cancelling = to_cancel(a);
    for r in &cancelling {
        if !live.contains(r) {
            p.cancelled.insert(r.clone());
        }
    }
    // A passenger the interrupted call added is held under a reference that is not one of the
    // entries this amendment cancels.
    for x in to_add(a) {
        if p.passengers.contains_key(&x.key) {
            continue;
        }
        let found = held
            .passengers
            .iter()
            .find(|(id, r)| id == &x.person.identity_number && r.is_some_and(|r| !cancelling.contains(&r.to_string())));
        if let Some((_, r)) = found {
            p.passengers.insert(x.key.clone(), Pax::accepted(*r));
        }
    }
    p.step(a)
}

/// A cancellation U-ETDS took (or already holds).
pub fn cancelled(c: &Cancellation) -> Step {
    Step::Done {
        receipt: Receipt {
            downstream_reference: c.downstream_reference.clone(),
            passengers: vec![],
            message: Some("İŞLEM BAŞARILI".into()),
            state: c.downstream_state.clone(),
        },
    }
}

pub fn cancel(svc: &impl TripService, c: &Cancellation) -> AdapterResult<Step> {
    svc.cancel_trip(number(&c.downstream_reference, "the trip reference")?, &c.reason)?;
    Ok(cancelled(c))
}

pub fn reconcile_cancel(svc: &impl TripService, c: &Cancellation, progress: &Value) -> AdapterResult<Step> {
    if svc.summary(number(&c.downstream_reference, "the trip reference")?)?.cancelled {
        Ok(cancelled(c))
    } else {
        Ok(Step::Continue { progress: progress.clone() })
    }
}
