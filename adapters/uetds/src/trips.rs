//! Passenger trips, notified step by step, the same way on U-ETDS's non-scheduled service
//! ([`crate::arizi`]) and its scheduled one ([`crate::tarifeli`]): each implements
//! [`TripService`], the calls a step makes; the steps, their order, the progress kept between
//! them and how an interrupted step is reconciled are here, once.
//!
//! A journey's progress is what U-ETDS holds of it: the trip (and the fields sent), the group,
//! the crew and the passengers, each with a fingerprint of what was sent. Each call brings that
//! closer to the journey: the trip declared (our reference as the sender's trip number) or its
//! fields updated, the group declared where the service has groups, crew removed that the
//! journey no longer has (or has changed), crew added, passenger entries cancelled that the
//! journey no longer has (or has changed: U-ETDS has no passenger update), passengers added in
//! batches (each one's outcome kept; a refused one goes again only by a later submission).
//! The progress of a submission that failed is where the next submission of the same record
//! starts (the host carries it over and reconciles first, matching the earlier references), so
//! what U-ETDS already holds from it is used or withdrawn, never declared a second time.
//!
//! An amendment (the difference since a delivery): trip fields, crew removed, crew added,
//! passenger entries cancelled, passengers added. A cancellation: one call. A refusal of a
//! cancellation or removal is checked against U-ETDS's summary: what is already gone is done.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tns_adapter::{
    AdapterError, AdapterResult, Amendment, Bags, Cancellation, Environment, Journey, NoShow, Observed, Passenger,
    Person, Reactivation, Receipt, Step, Trip,
};

use crate::{
    baggage::{self, Held as HeldBags},
    config::Service,
    continue_with, fingerprint,
    lookup::{self, TripKey},
    number,
    progress::{load, message, results, Pax},
    Session,
};
use chrono::NaiveDate;

/// What U-ETDS holds of a trip, as its summary (`bildirimOzeti`) shows it.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    pub firma_sefer_no: Option<String>,
    pub cancelled: bool,
    pub plate: Option<String>,
    /// `YYYY-MM-DD`
    pub departure_date: Option<String>,
    /// `HH:MM`
    pub departure_time: Option<String>,
    /// Crew not cancelled, by identity number.
    pub crew: BTreeSet<String>,
    /// Passengers not cancelled: identity number and U-ETDS's reference.
    pub passengers: Vec<(String, Option<i64>)>,
    /// Baggage barcodes held: added less withdrawn (`None` when the summary does not say).
    pub baggage: Option<i64>,
}

impl Summary {
    fn holds_passenger(&self, reference: i64) -> bool {
        self.passengers.iter().any(|(_, r)| *r == Some(reference))
    }

    /// A live entry of this identity number whose reference is not in `excluded`.
    fn passenger(&self, identity: &str, excluded: &BTreeSet<String>) -> Option<Option<i64>> {
        self.passengers
            .iter()
            .find(|(id, r)| id == identity && !r.is_some_and(|r| excluded.contains(&r.to_string())))
            .map(|(_, r)| *r)
    }
}

/// The calls of one passenger-trip service, for one submission.
pub(crate) trait TripService {
    /// Declare the trip; U-ETDS's trip reference.
    fn add_trip(&self, j: &Journey) -> AdapterResult<i64>;
    /// Change the trip's own fields; `firma_sefer_no` is the one it was declared with. The
    /// trip's reference as the answer gives it, when it gives one.
    fn update_trip(&self, trip: i64, t: &Trip, firma_sefer_no: &str) -> AdapterResult<Option<i64>>;
    /// Move the trip to the vehicle `plate` (a swap on the road), where the service has an
    /// operation for it (`None`: it has not; the trip is updated instead).
    fn change_plate(&self, _trip: i64, _plate: &str) -> Option<AdapterResult<()>> {
        None
    }
    /// Whether passengers need a group, declared with [`TripService::add_group`].
    fn has_groups(&self) -> bool;
    fn add_group(&self, trip: i64, t: &Trip) -> AdapterResult<i64>;
    /// Move a group's places to `t`'s (a route change); `name` is the one it was declared with.
    fn update_group(&self, _trip: i64, _group: i64, _t: &Trip, _name: &str) -> AdapterResult<()> {
        Ok(())
    }
    /// The group this notification declared (under any of its references), if U-ETDS holds it.
    fn find_group(&self, trip: i64) -> AdapterResult<Option<i64>>;
    fn add_crew(&self, trip: i64, crew: &[&Person]) -> AdapterResult<()>;
    fn remove_crew(&self, trip: i64, p: &Person) -> AdapterResult<()>;
    /// Passengers sent per call.
    fn batch(&self) -> usize;
    /// Send passengers; each one's outcome, in order.
    fn add_passengers(&self, trip: i64, group: Option<i64>, batch: &[&Passenger]) -> AdapterResult<Vec<Pax>>;
    fn cancel_passenger(&self, trip: i64, reference: i64) -> AdapterResult<()>;
    /// Whether the service takes passengers' baggage ([`TripService::add_baggage`]).
    fn has_baggage(&self) -> bool {
        false
    }
    /// Declare passengers' baggage barcodes.
    fn add_baggage(&self, _trip: i64, _bags: &[Bags]) -> AdapterResult<()> {
        Err(no_baggage())
    }
    /// Withdraw some of a passenger's baggage barcodes.
    fn remove_baggage(&self, _trip: i64, _bags: &Bags) -> AdapterResult<()> {
        Err(no_baggage())
    }
    fn cancel_trip(&self, trip: i64, reason: &str) -> AdapterResult<()>;
    /// Re-activate a cancelled trip.
    fn reactivate_trip(&self, trip: i64, reason: &str) -> AdapterResult<()>;
    /// Report that a passenger of the trip did not come.
    fn report_no_show(&self, trip: i64, x: &NoShow) -> AdapterResult<()>;
    /// U-ETDS's references of the firm's trips with `plate` listed for the days `from`..=`to`.
    fn listed(&self, plate: &str, from: NaiveDate, to: NaiveDate) -> AdapterResult<Vec<i64>>;
    fn summary(&self, trip: i64) -> AdapterResult<Summary>;
    /// The submission's session (credentials, references, what look-ups learnt).
    fn session(&self) -> &Session<'_>;
    /// Which of U-ETDS's services this is.
    fn service(&self) -> Service;

    /// Our reference of this submission.
    fn reference(&self) -> &str {
        self.session().reference
    }
    /// True when `reference` is this submission's or an earlier one's it continues.
    fn is_ours(&self, reference: &str) -> bool {
        self.session().is_ours(reference)
    }
    /// The environment the calls go to.
    fn environment(&self) -> Environment {
        self.session().env
    }
    /// The sender's trip number `trip` was declared with, read from its summary once per
    /// process (it never changes; see [`crate::lookup`]).
    fn tag(&self, trip: i64) -> AdapterResult<Option<String>> {
        let s = self.session();
        let key = TripKey { user: s.user.kullanici_adi.clone(), env: s.env, service: self.service().key(), trip };
        s.lookups.tag(key, || self.summary(trip).map(|x| x.firma_sefer_no))
    }
}

fn no_baggage() -> AdapterError {
    AdapterError::Permanent(
        "this U-ETDS service takes no baggage; remove the passengers' baggage or notify the trip as non-scheduled"
            .into(),
    )
}

/// Make one baggage call.
fn send_bags(svc: &impl TripService, trip: i64, call: &baggage::Call) -> AdapterResult<()> {
    match call {
        baggage::Call::Withdraw(b) => svc.remove_baggage(trip, b),
        baggage::Call::Add(list) => svc.add_baggage(trip, list),
    }
}

/// What U-ETDS keeps of a delivered trip that later changes need ([`Receipt::state`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TripState {
    /// The passenger group's id, where the service has groups.
    pub group: Option<i64>,
    /// The trip's sender number: an update of the trip sends it again.
    pub firma_sefer_no: Option<String>,
    /// The environment that holds the trip.
    pub environment: Option<Environment>,
}

/// One held item: the fingerprint of what was sent.
type Held = BTreeMap<String, String>;

#[derive(Debug, Default, Serialize, Deserialize)]
struct JourneyProgress {
    /// U-ETDS's trip reference.
    trip: Option<i64>,
    /// The sender's trip number it was declared with.
    firma_sefer_no: Option<String>,
    /// The trip's fields as U-ETDS holds them.
    sent: Option<Trip>,
    group: Option<i64>,
    /// Crew U-ETDS holds: identity number → fingerprint.
    #[serde(default)]
    crew: Held,
    /// Passengers' outcomes, by our key.
    #[serde(default)]
    passengers: BTreeMap<String, Pax>,
    /// Baggage U-ETDS holds, by our passenger key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    bags: HeldBags,
}

impl JourneyProgress {
    /// The baggage of the passengers U-ETDS accepted.
    fn wanted_bags(&self, j: &Journey) -> HeldBags {
        let accepted = |p: &&Passenger| self.passengers.get(&p.key).is_some_and(|x| x.error.is_none());
        let bags: Vec<Bags> = j.passengers.iter().filter(accepted).filter_map(Passenger::bags).collect();
        baggage::index(&bags)
    }

    /// The baggage call due now: an entry's baggage before the entry is cancelled; once every
    /// passenger is sent, what brings the baggage to the journey's.
    fn bag_call(&self, j: &Journey, reference: &str) -> Option<baggage::Call> {
        if let Some((key, _)) = self.stale_passenger(j) {
            return baggage::before_cancel(&self.bags, &key);
        }
        if !self.unsent(j, reference).is_empty() {
            return None;
        }
        baggage::next(&self.bags, &self.wanted_bags(j))
    }

    fn step(&self) -> AdapterResult<Step> {
        continue_with(self, self.trip)
    }

    /// Crew held that the journey no longer has as sent.
    fn stale_crew<'a>(&'a self, j: &Journey) -> Option<&'a String> {
        self.crew
            .iter()
            .find(|(id, fp)| !j.crew.iter().any(|c| &&c.identity_number == id && &&fingerprint(c) == fp))
            .map(|(id, _)| id)
    }

    fn missing_crew<'a>(&self, j: &'a Journey) -> Vec<&'a Person> {
        j.crew.iter().filter(|c| self.crew.get(&c.identity_number) != Some(&fingerprint(c))).collect()
    }

    /// An accepted passenger entry the journey no longer has as sent: (key, U-ETDS reference).
    fn stale_passenger(&self, j: &Journey) -> Option<(String, Option<String>)> {
        self.passengers
            .iter()
            .filter(|(_, pax)| pax.error.is_none())
            .find(|(key, pax)| {
                !j.passengers
                    .iter()
                    .any(|p| &&p.key == key && pax.sent.as_deref().is_none_or(|fp| fp == fingerprint(&p.entry())))
            })
            .map(|(key, pax)| (key.clone(), pax.reference.clone()))
    }

    /// Passengers to send: not held, or refused by an earlier submission (this one's refusals
    /// are final for it).
    fn unsent<'a>(&self, j: &'a Journey, reference: &str) -> Vec<&'a Passenger> {
        j.passengers
            .iter()
            .filter(|p| match self.passengers.get(&p.key) {
                None => true,
                Some(pax) => pax.error.is_some() && pax.by.as_deref() != Some(reference),
            })
            .collect()
    }

    /// The trip, its group and its crew are as the journey wants (what comes before any
    /// baggage or passenger call).
    fn trip_and_crew_done(&self, svc: &impl TripService, j: &Journey) -> bool {
        self.trip.is_some()
            && self.sent.as_ref() == Some(&j.trip())
            && (self.group.is_some() || !svc.has_groups())
            && self.stale_crew(j).is_none()
            && self.missing_crew(j).is_empty()
    }

    fn complete(&self, svc: &impl TripService, j: &Journey) -> bool {
        self.trip_and_crew_done(svc, j)
            && self.stale_passenger(j).is_none()
            && self.unsent(j, svc.reference()).is_empty()
            && self.bag_call(j, svc.reference()).is_none()
    }

    fn receipt(&self, svc: &impl TripService, j: &Journey) -> Receipt {
        let passengers = results(&j.passengers, &self.passengers);
        let refused = passengers.iter().filter(|r| r.error.is_some()).count();
        let state = TripState {
            group: self.group,
            firma_sefer_no: Some(self.firma_sefer_no.clone().unwrap_or_else(|| svc.reference().to_string())),
            environment: Some(svc.environment()),
        };
        Receipt {
            downstream_reference: self.trip.map(|t| t.to_string()).unwrap_or_default(),
            message: message(refused, passengers.len()),
            passengers,
            state: serde_json::to_value(state).unwrap_or(Value::Null),
        }
    }

    fn next(self, svc: &impl TripService, j: &Journey) -> AdapterResult<Step> {
        if self.complete(svc, j) {
            Ok(Step::Done { receipt: self.receipt(svc, j) })
        } else {
            self.step()
        }
    }
}

pub(crate) fn advance_journey(svc: &impl TripService, j: &Journey, progress: &Value) -> AdapterResult<Step> {
    let mut p: JourneyProgress = load(progress)?;
    let trip = j.trip();
    if !svc.has_baggage() && j.passengers.iter().any(|x| !x.baggage.is_empty()) {
        return Err(no_baggage());
    }
    let Some(id) = p.trip else {
        p.trip = Some(svc.add_trip(j)?);
        p.firma_sefer_no = Some(svc.reference().to_string());
        p.sent = Some(trip);
        return p.step();
    };
    if p.sent.as_ref() != Some(&trip) {
        // The Ministry's answer names the trip: a reference that differs replaces ours.
        if let Some(r) = svc.update_trip(id, &trip, p.firma_sefer_no.as_deref().unwrap_or(svc.reference()))? {
            p.trip = Some(r);
        }
        p.sent = Some(trip);
        return p.step();
    }
    if svc.has_groups() && p.group.is_none() {
        p.group = Some(svc.add_group(id, &trip)?);
        return p.step();
    }
    if let Some(identity) = p.stale_crew(j).cloned() {
        remove_crew(svc, id, &blank(&identity))?;
        p.crew.remove(&identity);
        return p.step();
    }
    let crew = p.missing_crew(j);
    if !crew.is_empty() {
        svc.add_crew(id, &crew)?;
        p.crew.extend(crew.iter().map(|c| (c.identity_number.clone(), fingerprint(c))));
        return p.step();
    }
    if let Some(call) = p.bag_call(j, svc.reference()) {
        send_bags(svc, id, &call)?;
        call.apply(&mut p.bags);
        return p.step();
    }
    if let Some((key, reference)) = p.stale_passenger(j) {
        match reference {
            Some(r) => cancel_passenger(svc, id, &number(&r, "a passenger reference")?)?,
            None => {
                return Err(AdapterError::Permanent(format!(
                "passenger {key} is held by U-ETDS without a reference, so it cannot be withdrawn; cancel the journey"
            )))
            }
        }
        p.passengers.remove(&key);
        return p.step();
    }
    let batch: Vec<&Passenger> = p.unsent(j, svc.reference()).into_iter().take(svc.batch()).collect();
    if !batch.is_empty() {
        let outcomes = svc.add_passengers(id, p.group, &batch)?;
        for (x, mut pax) in batch.iter().zip(outcomes) {
            pax.sent = Some(fingerprint(&x.entry()));
            pax.by = Some(svc.reference().to_string());
            p.passengers.insert(x.key.clone(), pax);
        }
    }
    p.next(svc, j)
}

/// A crew member known only by identity number (all a withdrawal sends).
fn blank(identity: &str) -> Person {
    Person::new("other", identity, "", "", "")
}

/// Withdraw a crew member; a refusal because U-ETDS no longer holds them is done.
fn remove_crew(svc: &impl TripService, trip: i64, p: &Person) -> AdapterResult<()> {
    match svc.remove_crew(trip, p) {
        Err(AdapterError::Permanent(e)) if svc.summary(trip)?.crew.contains(&p.identity_number) => {
            Err(AdapterError::Permanent(e))
        }
        Err(AdapterError::Permanent(_)) => Ok(()),
        other => other,
    }
}

/// Cancel a passenger entry; a refusal because U-ETDS no longer holds it is done.
fn cancel_passenger(svc: &impl TripService, trip: i64, reference: &i64) -> AdapterResult<()> {
    match svc.cancel_passenger(trip, *reference) {
        Err(AdapterError::Permanent(e)) if svc.summary(trip)?.holds_passenger(*reference) => {
            Err(AdapterError::Permanent(e))
        }
        Err(AdapterError::Permanent(_)) => Ok(()),
        other => other,
    }
}

/// The trip U-ETDS holds under this notification's references: the reference the submission
/// already has first, then the vehicle's listed trips by departure day and by the days since
/// the first attempt, each matched by its tag (see [`crate::lookup`]). `None` only when every
/// list was read and none holds it; a list that cannot be read is an error.
fn find_trip(svc: &impl TripService, t: &Trip) -> AdapterResult<Option<(i64, String)>> {
    let s = svc.session();
    let ours = |tag: Option<String>| tag.filter(|no| svc.is_ours(no));
    if let Some(id) = s.known.and_then(|r| r.trim().parse::<i64>().ok()) {
        if let Some(no) = ours(svc.tag(id)?) {
            return Ok(Some((id, no)));
        }
    }
    let departure = NaiveDate::parse_from_str(&t.departure.date, "%Y-%m-%d")
        .map_err(|e| AdapterError::Permanent(format!("departure date {:?}: {e}", t.departure.date)))?;
    // The days since the first attempt are searched at most so far back: an older one cannot
    // be said to be absent, so it is not (the submission waits for an operator instead).
    let today = lookup::today();
    if s.since.is_some_and(|d| d < today - chrono::Days::new(lookup::MAX_DAYS_BACK)) {
        return Err(AdapterError::Permanent(format!(
            "the first attempt was more than {} days ago, further back than a look-up searches; \
             an operator must check U-ETDS and resolve it",
            lookup::MAX_DAYS_BACK
        )));
    }
    // Look-ups of one vehicle take turns: the tags one reads serve the next.
    let _turn = s.lookups.turn(&s.user.kullanici_adi, s.env, &t.plate, s.cfg.call_timeout)?;
    let mut seen = BTreeSet::new();
    for (from, to) in lookup::windows(departure, s.since, today) {
        for id in svc.listed(&t.plate, from, to)? {
            if seen.insert(id) {
                if let Some(no) = ours(svc.tag(id)?) {
                    return Ok(Some((id, no)));
                }
            }
        }
    }
    Ok(None)
}

pub(crate) fn reconcile_journey(svc: &impl TripService, j: &Journey, progress: &Value) -> AdapterResult<Step> {
    let mut p: JourneyProgress = load(progress)?;
    // The baggage call that may have been made: the one due when the progress was recorded
    // (none when a trip, crew or passenger call was).
    let pending = p.bag_call(j, svc.reference()).filter(|_| p.trip_and_crew_done(svc, j));
    let trip = j.trip();
    let id = match p.trip {
        Some(id) => id,
        None => match find_trip(svc, &trip)? {
            Some((id, firma_sefer_no)) => {
                p.trip = Some(id);
                p.firma_sefer_no = Some(firma_sefer_no);
                p.sent = Some(trip);
                id
            }
            None => return p.step(),
        },
    };
    if svc.has_groups() && p.group.is_none() {
        p.group = svc.find_group(id)?;
        if p.group.is_none() {
            return p.step();
        }
    }
    let held = svc.summary(id)?;
    // What the last call may have done: crew added or withdrawn, entries cancelled, passengers
    // added. U-ETDS's summary is the truth for each.
    p.crew.retain(|identity, _| held.crew.contains(identity));
    for c in &j.crew {
        if held.crew.contains(&c.identity_number) && !p.crew.contains_key(&c.identity_number) {
            p.crew.insert(c.identity_number.clone(), fingerprint(c));
        }
    }
    p.passengers.retain(|_, pax| {
        pax.error.is_some()
            || pax.reference.as_deref().and_then(|r| r.parse().ok()).is_none_or(|r| held.holds_passenger(r))
    });
    let known: BTreeSet<String> = p.passengers.values().filter_map(|pax| pax.reference.clone()).collect();
    for x in p.unsent(j, svc.reference()) {
        if let Some(r) = held.passenger(&x.person.identity_number, &known) {
            let mut pax = Pax::accepted(r);
            pax.sent = Some(fingerprint(&x.entry()));
            pax.by = Some(svc.reference().to_string());
            p.passengers.insert(x.key.clone(), pax);
        }
    }
    baggage::settle(&mut p.bags, pending, held.baggage)?;
    p.next(svc, j)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AmendmentProgress {
    /// The trip's fields as the update sent them.
    #[serde(default)]
    trip_sent: Option<Trip>,
    /// The trip's reference as the Ministry gave it back in the update, when it differs from
    /// the delivered one's (it then replaces it).
    #[serde(default)]
    reference: Option<i64>,
    /// The passenger group's places as the update sent them (a route change).
    #[serde(default)]
    group_sent: Option<Trip>,
    #[serde(default)]
    crew_removed: BTreeSet<String>,
    #[serde(default)]
    crew_added: BTreeSet<String>,
    /// Passenger entries cancelled, by our key of the passenger they were.
    #[serde(default)]
    cancelled: BTreeSet<String>,
    #[serde(default)]
    passengers: BTreeMap<String, Pax>,
    /// Baggage U-ETDS holds, by our passenger key, once a baggage call was made (before that:
    /// the amendment's `baggage_held`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bags: Option<HeldBags>,
}

/// An entry to cancel: a removed passenger, or the old entry of a changed one.
struct Entry<'a> {
    key: &'a str,
    identity: &'a str,
    reference: Option<&'a str>,
}

fn to_cancel(a: &Amendment) -> Vec<Entry<'_>> {
    a.removed
        .iter()
        .map(|r| Entry { key: &r.key, identity: &r.identity_number, reference: r.downstream_reference.as_deref() })
        .chain(a.changed.iter().map(|c| Entry {
            key: &c.passenger.key,
            identity: &c.passenger.person.identity_number,
            reference: c.previous_reference.as_deref(),
        }))
        .collect()
}

fn to_add(a: &Amendment) -> Vec<&Passenger> {
    a.added.iter().chain(a.changed.iter().map(|c| &c.passenger)).collect()
}

impl AmendmentProgress {
    fn held_bags(&self, a: &Amendment) -> HeldBags {
        self.bags.clone().unwrap_or_else(|| baggage::index(&a.baggage_held))
    }

    /// The baggage of the entries U-ETDS holds after the amendment: the passengers it keeps,
    /// and those it added that U-ETDS accepted.
    fn wanted_bags(&self, a: &Amendment) -> HeldBags {
        let adding: BTreeSet<&str> = to_add(a).iter().map(|x| x.key.as_str()).collect();
        let accepted = |b: &&Bags| {
            !adding.contains(b.key.as_str()) || self.passengers.get(&b.key).is_some_and(|x| x.error.is_none())
        };
        baggage::index(a.baggage.iter().filter(accepted))
    }

    /// The baggage call due now (see [`JourneyProgress::bag_call`]).
    fn bag_call(&self, a: &Amendment) -> Option<baggage::Call> {
        let held = self.held_bags(a);
        if let Some(e) = to_cancel(a).into_iter().find(|e| !self.cancelled.contains(e.key)) {
            return baggage::before_cancel(&held, e.key);
        }
        if to_add(a).iter().any(|x| !self.passengers.contains_key(&x.key)) {
            return None;
        }
        baggage::next(&held, &self.wanted_bags(a))
    }

    /// The trip, its group and its crew are as the amendment wants (what comes before any
    /// baggage or passenger call).
    fn trip_and_crew_done(&self, a: &Amendment) -> bool {
        (a.trip.is_none() || self.trip_sent == a.trip)
            && (!group_moves(a) || self.group_sent == a.trip)
            && a.crew_removed.iter().all(|c| self.crew_removed.contains(&c.identity_number))
            && a.crew_added.iter().all(|c| self.crew_added.contains(&c.identity_number))
    }

    fn complete(&self, a: &Amendment) -> bool {
        self.trip_and_crew_done(a)
            && to_cancel(a).iter().all(|e| self.cancelled.contains(e.key))
            && to_add(a).iter().all(|x| self.passengers.contains_key(&x.key))
            && self.bag_call(a).is_none()
    }

    fn next(self, a: &Amendment, trip: i64) -> AdapterResult<Step> {
        let trip = self.reference.unwrap_or(trip);
        if !self.complete(a) {
            return continue_with(&self, Some(trip));
        }
        let passengers = results(to_add(a), &self.passengers);
        let refused = passengers.iter().filter(|r| r.error.is_some()).count();
        Ok(Step::Done {
            receipt: Receipt {
                downstream_reference: trip.to_string(),
                message: message(refused, passengers.len()),
                passengers,
                state: a.downstream_state.clone(),
            },
        })
    }
}

/// True when the amendment moves the trip's places and the delivery has a passenger group
/// (declared with them).
fn group_moves(a: &Amendment) -> bool {
    let has_group = serde_json::from_value::<TripState>(a.downstream_state.clone()).is_ok_and(|s| s.group.is_some());
    let moved = a.trip.as_ref().is_some_and(|t| a.previous_trip.as_ref().is_none_or(|held| !same_places(held, t)));
    has_group && moved
}

/// True when the two trips start and end at the same places (a district, or a place abroad by
/// its country and name).
fn same_places(a: &Trip, b: &Trip) -> bool {
    let at = |s: &tns_adapter::Stop| {
        let abroad = s.country.is_some().then(|| (s.country.clone(), s.place.clone()));
        (s.city_id, s.district_id, abroad)
    };
    at(&a.departure) == at(&b.departure) && at(&a.arrival) == at(&b.arrival)
}

/// True when `now` is `held` on another vehicle.
fn only_the_plate_differs(held: &Trip, now: &Trip) -> bool {
    held.plate != now.plate && held.departure == now.departure && held.arrival == now.arrival
}

fn trip_of(a: &Amendment) -> AdapterResult<i64> {
    number(&a.downstream_reference, "the trip reference")
}

pub(crate) fn advance_amendment(svc: &impl TripService, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let mut p: AmendmentProgress = load(progress)?;
    // Before any call: a service without baggage takes none of the amendment.
    if !svc.has_baggage() && (!a.baggage_held.is_empty() || !a.baggage.is_empty()) {
        return Err(no_baggage());
    }
    let delivered = trip_of(a)?;
    // After an update that named the trip anew, every later step goes to the new reference.
    let id = p.reference.unwrap_or(delivered);
    let state: TripState = serde_json::from_value(a.downstream_state.clone()).unwrap_or_default();
    if let Some(t) = a.trip.as_ref().filter(|t| p.trip_sent.as_ref() != Some(t)) {
        // A vehicle swap (the plate alone changed) is the service's own operation, as the
        // peers do it; any other change updates the trip.
        let swap = a.previous_trip.as_ref().filter(|held| only_the_plate_differs(held, t));
        match swap.and_then(|_| svc.change_plate(id, &t.plate)) {
            Some(done) => done?,
            None => {
                let given = svc.update_trip(id, t, state.firma_sefer_no.as_deref().unwrap_or(svc.reference()))?;
                p.reference = given.filter(|r| *r != delivered);
            }
        }
        p.trip_sent = Some(t.clone());
        return continue_with(&p, Some(p.reference.unwrap_or(id)));
    }
    // A route change moves the passenger group's places too (it was declared with the trip's).
    if let (true, Some(t), Some(group)) = (group_moves(a), a.trip.as_ref(), state.group) {
        if svc.has_groups() && p.group_sent.as_ref() != Some(t) {
            svc.update_group(id, group, t, state.firma_sefer_no.as_deref().unwrap_or(svc.reference()))?;
            p.group_sent = Some(t.clone());
            return continue_with(&p, Some(id));
        }
    }
    if let Some(c) = a.crew_removed.iter().find(|c| !p.crew_removed.contains(&c.identity_number)) {
        remove_crew(svc, id, c)?;
        p.crew_removed.insert(c.identity_number.clone());
        return continue_with(&p, Some(id));
    }
    let crew: Vec<&Person> = a.crew_added.iter().filter(|c| !p.crew_added.contains(&c.identity_number)).collect();
    if !crew.is_empty() {
        svc.add_crew(id, &crew)?;
        p.crew_added.extend(crew.iter().map(|c| c.identity_number.clone()));
        return continue_with(&p, Some(id));
    }
    if let Some(call) = p.bag_call(a) {
        send_bags(svc, id, &call)?;
        let mut held = p.held_bags(a);
        call.apply(&mut held);
        p.bags = Some(held);
        return continue_with(&p, Some(id));
    }
    if let Some(e) = to_cancel(a).into_iter().find(|e| !p.cancelled.contains(e.key)) {
        let reference = match e.reference {
            Some(r) => Some(number(r, "a passenger reference")?),
            // Accepted without a reference (an answer U-ETDS gave without one): its live entry.
            None => svc.summary(id)?.passenger(e.identity, &BTreeSet::new()).flatten(),
        };
        if let Some(r) = reference {
            cancel_passenger(svc, id, &r)?;
        }
        p.cancelled.insert(e.key.to_string());
        return continue_with(&p, Some(id));
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
    p.next(a, id)
}

pub(crate) fn reconcile_amendment(svc: &impl TripService, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let mut p: AmendmentProgress = load(progress)?;
    // The baggage call that may have been made: the one due when the progress was recorded.
    let pending = p.bag_call(a).filter(|_| p.trip_and_crew_done(a));
    let id = p.reference.unwrap_or(trip_of(a)?);
    let held = svc.summary(id)?;
    for c in &a.crew_removed {
        if !held.crew.contains(&c.identity_number) {
            p.crew_removed.insert(c.identity_number.clone());
        }
    }
    for c in &a.crew_added {
        // A member whose details changed is both removed and added: held under the old entry
        // until the removal is done, so only then does holding them mean the add went through.
        let removing = a.crew_removed.iter().any(|r| r.identity_number == c.identity_number);
        if held.crew.contains(&c.identity_number) && (!removing || p.crew_removed.contains(&c.identity_number)) {
            p.crew_added.insert(c.identity_number.clone());
        }
    }
    let cancelling: BTreeSet<String> = to_cancel(a).iter().filter_map(|e| e.reference.map(str::to_string)).collect();
    for e in to_cancel(a) {
        if let Some(r) = e.reference.and_then(|r| r.parse().ok()) {
            if !held.holds_passenger(r) {
                p.cancelled.insert(e.key.to_string());
            }
        }
    }
    // A passenger the interrupted call added is held under a reference that is not one of the
    // entries this amendment cancels.
    for x in to_add(a) {
        if !p.passengers.contains_key(&x.key) {
            if let Some(r) = held.passenger(&x.person.identity_number, &cancelling) {
                p.passengers.insert(x.key.clone(), Pax::accepted(r));
            }
        }
    }
    let mut bags = p.held_bags(a);
    baggage::settle(&mut bags, pending, held.baggage)?;
    p.bags = Some(bags);
    p.next(a, id)
}

/// Done, the notification `reference` as it was (its kept `state`): what a change of its
/// state (cancelled, re-activated) or a notice about it (a no-show) answers.
fn state_kept(reference: &str, state: &Value) -> Step {
    Step::Done {
        receipt: Receipt {
            downstream_reference: reference.to_string(),
            passengers: vec![],
            message: Some("İŞLEM BAŞARILI".into()),
            state: state.clone(),
        },
    }
}

/// A cancellation (or re-activation) U-ETDS took, or already holds.
pub(crate) fn cancelled(c: &Cancellation) -> Step {
    state_kept(&c.downstream_reference, &c.downstream_state)
}

pub(crate) fn cancel(svc: &impl TripService, c: &Cancellation) -> AdapterResult<Step> {
    let id = number(&c.downstream_reference, "the trip reference")?;
    match svc.cancel_trip(id, &c.reason) {
        // Refused because it is cancelled already (say, by hand on U-ETDS's portal): done.
        Err(AdapterError::Permanent(_)) if svc.summary(id)?.cancelled => Ok(cancelled(c)),
        Err(e) => Err(e),
        Ok(()) => Ok(cancelled(c)),
    }
}

/// Report a passenger's no-show. Told again after an uncertain attempt, a refusal saying it
/// was reported already is done.
pub(crate) fn no_show(svc: &impl TripService, x: &NoShow) -> AdapterResult<Step> {
    let id = number(&x.downstream_reference, "the trip reference")?;
    let done = || state_kept(&x.downstream_reference, &x.downstream_state);
    match svc.report_no_show(id, x) {
        Ok(()) => Ok(done()),
        Err(AdapterError::Permanent(e)) if already_reported(&e) => Ok(done()),
        Err(e) => Err(e),
    }
}

/// True when a refusal says the no-show was reported already (the words U-ETDS uses for a
/// repeated notice: "daha önce … bildiri…").
fn already_reported(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("daha önce") && m.contains("bildiri")
}

/// Re-activate a cancelled trip; a refusal because it is valid already (re-activated by hand
/// on U-ETDS's portal, say) is done.
pub(crate) fn reactivate(svc: &impl TripService, r: &Reactivation) -> AdapterResult<Step> {
    let id = number(&r.downstream_reference, "the trip reference")?;
    match svc.reactivate_trip(id, &r.reason) {
        Err(AdapterError::Permanent(_)) if !svc.summary(id)?.cancelled => Ok(cancelled(r)),
        Err(e) => Err(e),
        Ok(()) => Ok(cancelled(r)),
    }
}

pub(crate) fn reconcile_reactivate(svc: &impl TripService, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
    let id = number(&r.downstream_reference, "the trip reference")?;
    if svc.summary(id)?.cancelled {
        continue_with(progress, Some(id))
    } else {
        Ok(cancelled(r))
    }
}

pub(crate) fn reconcile_cancel(svc: &impl TripService, c: &Cancellation, progress: &Value) -> AdapterResult<Step> {
    let id = number(&c.downstream_reference, "the trip reference")?;
    if svc.summary(id)?.cancelled {
        Ok(cancelled(c))
    } else {
        continue_with(progress, Some(id))
    }
}

/// What U-ETDS holds now of a delivered trip (drift checks), with the sender's reference it
/// was declared under: one summary call.
pub(crate) fn inspect<S: TripService>(svc: &S, reference: &str) -> AdapterResult<(Observed, Option<String>)> {
    let s = svc.summary(number(reference, "the trip reference")?)?;
    let observed = Observed {
        cancelled: s.cancelled,
        plate: s.plate,
        departure_date: s.departure_date,
        departure_time: s.departure_time,
        passengers: Some(s.passengers.len() as u32),
        crew: Some(s.crew.len() as u32),
    };
    Ok((observed, s.firma_sefer_no))
}
