//! Claimed deliveries waiting for a POST slot, handed out fairly across organizations: one
//! organization's next delivery, then the next organization's, in turn, and never more than
//! `cap` POSTs of one organization at once. So a tenant whose endpoints hang holds at most its
//! share of the slots, and another tenant's delivery goes out as soon as any slot is free.
//!
//! The worker loop hands claimed items to its runners in claim order and a runner attempts
//! the item it took. Here the items the worker sees are [`Ticket`]s: a runner holding one asks
//! the lineup for the next delivery due a slot, whichever ticket it was claimed with, and waits
//! if every waiting delivery belongs to an organization at its cap. A ticket names (for the
//! worker's give-back on shutdown of what no runner started) a delivery that is still waiting;
//! when a runner takes another ticket's delivery, the two tickets swap names, so the names of
//! the tickets not yet served are always exactly the deliveries still waiting. (What the worker
//! holds, and releases, is what the claim returned with each ticket: the lease it was claimed
//! as, whichever delivery the ticket names by then.)

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use tns_store::leases::Lease;
use tokio::sync::Notify;

/// What the lineup needs to know of a delivery.
pub trait Lined {
    fn lease(&self) -> Lease;
    /// The moment its POST must have started by (else it is given back).
    fn send_by(&self) -> Instant;
}

/// A claimed delivery as the worker loop sees it: the lease it names (see the module's doc).
#[derive(Debug, Clone)]
pub struct Ticket(Arc<Mutex<Lease>>);

impl Ticket {
    fn new(lease: Lease) -> Ticket {
        Ticket(Arc::new(Mutex::new(lease)))
    }

    pub fn lease(&self) -> Lease {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, lease: Lease) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = lease;
    }
}

/// What a runner gets for its ticket.
pub enum Next<T: Lined> {
    /// POST it; the slot is the organization's until dropped.
    Post(T, Slot<T>),
    /// Waited past its `send_by`: give it back untried.
    Expired(T),
    /// Shutting down: what was waiting has been given back.
    Closed,
}

pub struct Lineup<T: Lined> {
    /// POSTs one organization may have in progress at once.
    cap: usize,
    state: Mutex<State<T>>,
    changed: Notify,
}

struct State<T> {
    orgs: HashMap<i64, Org<T>>,
    /// Organizations with deliveries waiting and fewer than `cap` POSTs, in turn order.
    turn: VecDeque<i64>,
    /// The ticket not yet served that names each waiting delivery, by delivery id.
    tickets: HashMap<i64, Ticket>,
    closed: bool,
}

struct Org<T> {
    waiting: VecDeque<T>,
    posting: usize,
}

/// The longest a runner waits without looking again (a backstop: every change notifies).
const RECHECK: Duration = Duration::from_secs(1);

impl<T: Lined> Lineup<T> {
    pub fn new(cap: usize) -> Lineup<T> {
        let state = State { orgs: HashMap::new(), turn: VecDeque::new(), tickets: HashMap::new(), closed: false };
        Lineup { cap: cap.max(1), state: Mutex::new(state), changed: Notify::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add claimed deliveries (in the claim's order) and get a ticket for each.
    pub fn park(&self, items: Vec<T>) -> Vec<Ticket> {
        let mut tickets = Vec::with_capacity(items.len());
        {
            let mut st = self.lock();
            for item in items {
                let lease = item.lease();
                let (org, ticket) = (lease.org, Ticket::new(lease));
                st.tickets.insert(lease.id, ticket.clone());
                tickets.push(ticket);
                let o = st.orgs.entry(org).or_insert_with(|| Org { waiting: VecDeque::new(), posting: 0 });
                o.waiting.push_back(item);
                if o.waiting.len() == 1 && o.posting < self.cap {
                    st.turn.push_back(org);
                }
            }
        }
        for _ in 0..tickets.len() {
            self.changed.notify_one();
        }
        tickets
    }

    /// Deliveries this process holds per organization (waiting or being POSTed).
    pub fn held(&self) -> HashMap<i64, usize> {
        self.lock().orgs.iter().map(|(org, o)| (*org, o.waiting.len() + o.posting)).collect()
    }

    /// The next delivery for the runner holding `ticket`: the next organization's in turn, or
    /// one that waited too long; waits while every waiting delivery's organization is at its
    /// cap.
    pub async fn next(self: &Arc<Self>, ticket: &Ticket) -> Next<T> {
        loop {
            // Most of the time there is one, and no waiting need be registered for it.
            if let Ok(next) = self.poll(ticket) {
                return next;
            }
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // Looked at again once registered: a change in between would go unnoticed.
            let wake_at = match self.poll(ticket) {
                Ok(next) => return next,
                Err(at) => at,
            };
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(wake_at.into()) => {}
            }
        }
    }

    /// What the runner holding `ticket` gets now, or when it should look again.
    fn poll(self: &Arc<Self>, ticket: &Ticket) -> Result<Next<T>, Instant> {
        let mut st = self.lock();
        let now = Instant::now();
        if let Some((item, expired)) = st.take(self.cap, now) {
            st.hand_over(ticket, item.lease());
            if expired {
                return Ok(Next::Expired(item));
            }
            let slot = Slot { lineup: self.clone(), org: item.lease().org };
            return Ok(Next::Post(item, slot));
        }
        if st.closed {
            return Ok(Next::Closed);
        }
        Err(st.earliest_send_by(self.cap).unwrap_or(now + RECHECK).min(now + RECHECK))
    }

    /// Stop handing out deliveries and take every waiting one (to give back); runners waiting
    /// get [`Next::Closed`].
    pub fn close(&self) -> Vec<T> {
        let mut st = self.lock();
        st.closed = true;
        st.turn.clear();
        st.tickets.clear();
        let mut out = vec![];
        for o in st.orgs.values_mut() {
            out.extend(o.waiting.drain(..));
        }
        st.orgs.retain(|_, o| o.posting > 0);
        drop(st);
        self.changed.notify_waiters();
        out
    }

    fn done(&self, org: i64) {
        {
            let mut st = self.lock();
            let State { orgs, turn, .. } = &mut *st;
            if let Some(o) = orgs.get_mut(&org) {
                o.posting -= 1;
                if o.posting + 1 == self.cap && !o.waiting.is_empty() {
                    turn.push_back(org);
                }
                if o.posting == 0 && o.waiting.is_empty() {
                    orgs.remove(&org);
                }
            }
        }
        self.changed.notify_one();
    }
}

impl<T: Lined> State<T> {
    /// The next delivery to hand out, and whether it waited past its `send_by`.
    fn take(&mut self, cap: usize, now: Instant) -> Option<(T, bool)> {
        if let Some(org) = self.turn.pop_front() {
            let o = self.orgs.get_mut(&org).expect("organizations in turn are known");
            let item = o.waiting.pop_front().expect("organizations in turn have deliveries waiting");
            let expired = item.send_by() < now;
            if !expired {
                o.posting += 1;
            }
            if !o.waiting.is_empty() && o.posting < cap {
                self.turn.push_back(org);
            }
            if o.waiting.is_empty() && o.posting == 0 {
                self.orgs.remove(&org);
            }
            return Some((item, expired));
        }
        // Every waiting delivery's organization is at its cap: only those that waited too long
        // can go (back).
        let (org, o) = self.orgs.iter_mut().find(|(_, o)| o.waiting.front().is_some_and(|d| d.send_by() < now))?;
        let org = *org;
        let item = o.waiting.pop_front()?;
        if o.waiting.is_empty() && o.posting == 0 {
            self.orgs.remove(&org);
        }
        Some((item, true))
    }

    /// The runner holding `ticket` takes the delivery `taken`: the ticket that named it names
    /// the runner's ticket's delivery instead (still waiting), and `ticket` names `taken`.
    fn hand_over(&mut self, ticket: &Ticket, taken: Lease) {
        let Some(named) = self.tickets.remove(&taken.id) else { return };
        if !Arc::ptr_eq(&named.0, &ticket.0) {
            let mine = ticket.lease();
            named.set(mine);
            self.tickets.insert(mine.id, named);
            ticket.set(taken);
        }
    }

    /// When the first delivery waiting behind a full organization runs out of time.
    fn earliest_send_by(&self, cap: usize) -> Option<Instant> {
        self.orgs.values().filter(|o| o.posting >= cap).filter_map(|o| o.waiting.front().map(T::send_by)).min()
    }
}

/// One organization's POST slot, given back when dropped (also if the POST panics).
pub struct Slot<T: Lined> {
    lineup: Arc<Lineup<T>>,
    org: i64,
}

impl<T: Lined> Drop for Slot<T> {
    fn drop(&mut self) {
        self.lineup.done(self.org);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct D {
        org: i64,
        id: i64,
        send_by: Instant,
    }

    impl Lined for D {
        fn lease(&self) -> Lease {
            Lease { org: self.org, id: self.id, token: 7 }
        }
        fn send_by(&self) -> Instant {
            self.send_by
        }
    }

    fn d(org: i64, id: i64) -> D {
        D { org, id, send_by: Instant::now() + Duration::from_secs(60) }
    }

    fn post(n: Next<D>) -> (D, Slot<D>) {
        match n {
            Next::Post(d, slot) => (d, slot),
            Next::Expired(d) => panic!("{d:?} expired"),
            Next::Closed => panic!("closed"),
        }
    }

    #[tokio::test]
    async fn organizations_take_turns_and_keep_to_their_cap() {
        let lineup = Arc::new(Lineup::new(2));
        // Organization 1's backlog was claimed first; organization 2's one delivery after it.
        let mut items: Vec<D> = (1..=5).map(|i| d(1, i)).collect();
        items.push(d(2, 6));
        let tickets = lineup.park(items);
        let mut taken = vec![];
        let mut slots = vec![];
        for t in &tickets[..3] {
            let (item, slot) = post(lineup.next(t).await);
            taken.push(item.id);
            slots.push(slot);
            assert_eq!(t.lease().id, item.id, "the ticket names what its runner took");
        }
        assert_eq!(taken, [1, 6, 2], "turns: 1, then 2, then 1 again");
        assert_eq!(lineup.held(), HashMap::from([(1, 5), (2, 1)]));
        // Organization 1 is at its cap of 2: the next runner waits until one of its POSTs ends.
        let waiting = tokio::spawn({
            let (lineup, t) = (lineup.clone(), tickets[3].clone());
            async move { post(lineup.next(&t).await).0.id }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "no third POST for organization 1");
        drop(slots.remove(0));
        assert_eq!(waiting.await.unwrap(), 3);
        // The tickets not yet served name exactly the deliveries still waiting.
        let mut named: Vec<i64> = tickets.iter().map(|t| t.lease().id).collect();
        named.sort();
        assert_eq!(named, [1, 2, 3, 4, 5, 6]);
        let mut unserved: Vec<i64> = tickets[4..].iter().map(|t| t.lease().id).collect();
        unserved.sort();
        assert_eq!(unserved, [4, 5]);
    }

    #[tokio::test]
    async fn what_waited_too_long_goes_back_and_closing_takes_the_rest() {
        let lineup = Arc::new(Lineup::new(1));
        let late = D { send_by: Instant::now() + Duration::from_millis(30), ..d(1, 2) };
        let tickets = lineup.park(vec![d(1, 1), late.clone(), d(1, 3)]);
        let (_, slot) = post(lineup.next(&tickets[0]).await);
        // Behind the one POST organization 1 may have: the second runs out of time and is
        // given back while the first still holds the slot.
        match lineup.next(&tickets[1]).await {
            Next::Expired(item) => assert_eq!(item, late),
            _ => panic!("expected the late delivery back"),
        }
        let waiting = tokio::spawn({
            let (lineup, t) = (lineup.clone(), tickets[2].clone());
            async move { matches!(lineup.next(&t).await, Next::Closed) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let back: Vec<i64> = lineup.close().iter().map(|d| d.id).collect();
        assert_eq!(back, [3]);
        assert!(waiting.await.unwrap(), "the waiting runner is told");
        drop(slot);
        assert!(lineup.held().is_empty());
    }
}
