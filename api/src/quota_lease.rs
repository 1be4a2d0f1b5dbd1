//! Leases: blocks of an organization-month's call numbers this process admits calls from
//! without a round trip to Redis.
//!
//! A call counted by Redis ([`crate::quota_batch`]) waits for Redis. When an organization-month
//! is busy on this process (calls arrive while others are being counted), it asks Redis for a
//! block of the next numbers (one script run) and admits the following calls from it locally,
//! each with its own number, so `X-RateLimit-Remaining` stays distinct across every process.
//! What a lease admitted is added to Redis's copy when the lease is given back: when used up,
//! at its expiry (`TNS_QUOTA_LEASE_MS`), or when recalled. Its unused numbers become a hole,
//! which the next lease takes first, and the calls at the quota too.
//!
//! Three guarantees hold as without leases:
//! - **The quota is exact.** No lease is granted once fewer than [`margin`] numbers below the
//!   quota were never handed out, so the last ones are handed out by Redis call by call. A call
//!   that finds no number left while leases are out has them recalled and asks again, and is
//!   refused only when none is left (or the recall failed: never one past a hard quota; a soft
//!   one is then counted as while Redis is unreachable).
//! - **Usage is exact as soon as it is read.** A usage read recalls the month's leases first.
//! - **A plan change or suspension holds at once.** Whoever makes it recalls the organization's
//!   leases after publishing it (`tns_store::published`), and a lease is granted only against
//!   the published limit.
//!
//! A recall is a message on a Redis channel this process listens to, and the recaller waits
//! until the leases are given back. A process leases only while it listens (its subscription is
//! pinged twice a lease's life, and given up when it does not answer); should it stop hearing
//! before it notices, it still stops using each lease at the lease's expiry by its own clock,
//! and the recaller waits that long (and a grace) at most. What is lost: a process killed without its shutdown leaves its leases' unused numbers
//! unused (the month then admits up to that many calls fewer), and the calls it admitted
//! uncounted, as it does the calls it had not added to the ledger yet.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use futures::StreamExt;
use redis::Script;
use tns_core::{
    env::{lease_key_suffix, limit_key_suffix, usage_key_suffix, LEASE_RECALL_CHANNEL},
    ids::OrgId,
};
use tokio::time::Instant;

use crate::{
    metrics::Metrics,
    quota::{Decision, Month},
    redis_store::{RedisStore, CALL_TIMEOUT},
};

/// The smallest lease asked for; the size doubles while leases are used up in half their life
/// and halves when one expires more than half unused.
const MIN_LEASE: i64 = 8;
/// After a lease is refused (near the quota, suspended, Redis unreachable), none is asked for
/// that organization-month for this long.
const QUIET: Duration = Duration::from_millis(500);
/// An organization-month with no lease and no call for this long is forgotten.
const IDLE: Duration = Duration::from_secs(30);

/// Numbers kept free of leases below the quota: the calls near the quota are counted by Redis
/// one by one, so the last numbers are handed out where every process sees them.
fn margin(max: i64) -> i64 {
    2 * max
}

/// Grants a lease of at most ARGV[2] numbers with id ARGV[1], expiring ARGV[3] ms from now,
/// while more than ARGV[4] numbers below the quota were never handed out (holes do not count:
/// near the quota they are what the calls counted one by one take), and never past that
/// margin. KEYS: usage, limit, leases. Returns {-2} no limit, {-3} no month, {-4} suspended,
/// {0} refused near the quota, else {1, first, last, quota, copy id}. The lowest hole is used
/// first. Records an hour past their expiry (their holder died) are dropped.
const LEASE_LUA: &str = concat!(
    tns_store::quota_lua!(),
    r#"
local lim = redis.call('GET', KEYS[2])
if not lim then return {-2} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-3} end
local quota, _, suspended = limit(lim)
if suspended == 1 then return {-4} end
local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
local last = math.max(tonumber(redis.call('HGET', KEYS[1], 'f') or total), total)
local holes = read_holes(KEYS[1])
local k = tonumber(ARGV[2])
local top = last + k
if quota >= 0 then
  k = math.min(k, quota - last - tonumber(ARGV[4]))
  if k < 1 then return {0} end
  -- A hole beyond the quota (left by a lease before the plan was lowered) is not leased.
  top = quota
end
local first, final
if #holes > 0 and holes[1][1] <= top then
  first = holes[1][1]
  final = math.min(holes[1][2], first + k - 1, top)
  if final == holes[1][2] then table.remove(holes, 1) else holes[1][1] = final + 1 end
  write_holes(KEYS[1], holes)
else
  first, final = last + 1, last + k
  redis.call('HSET', KEYS[1], 'f', final)
end
local now = now_ms()
local recs = redis.call('HGETALL', KEYS[3])
for i = 1, #recs, 2 do
  if expiry(recs[i + 1]) + 3600000 < now then redis.call('HDEL', KEYS[3], recs[i]) end
end
redis.call('HSET', KEYS[3], ARGV[1], first .. ':' .. final .. ':' .. (now + tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[3]) + 3600000)
return {1, first, final, quota, tonumber(redis.call('HGET', KEYS[1], 'c') or '-1')}
"#
);

/// Gives lease ARGV[1] back: adds what it admitted (ARGV[5..], field and count pairs) to the
/// month's copy if that is still copy ARGV[2], and returns its unused numbers ARGV[3]..ARGV[4]
/// (none when the first is beyond the last; the whole lease as recorded when ARGV[3] is `*`:
/// one granted whose answer was lost) as a hole, or lowers `f` when they are the last handed
/// out. Done once: a lease no longer recorded was given back already (a retry after a lost
/// answer), or dropped an hour after its expiry. KEYS: usage, leases.
const GIVE_BACK_LUA: &str = concat!(
    tns_store::quota_lua!(),
    r#"
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if not rec then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '*' and tonumber(redis.call('HGET', KEYS[1], 'c') or '-1') ~= tonumber(ARGV[2]) then return 0 end
for i = 5, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
local from, to = tonumber(ARGV[3]), tonumber(ARGV[4])
if ARGV[3] == '*' then
  local a, b = string.match(rec, '^(%d+):(%d+):')
  from, to = tonumber(a), tonumber(b)
end
if from <= to then
  if tonumber(redis.call('HGET', KEYS[1], 'f') or '-1') == to then
    redis.call('HSET', KEYS[1], 'f', from - 1)
  else
    local holes = read_holes(KEYS[1])
    holes[#holes + 1] = {from, to}
    table.sort(holes, function(x, y) return x[1] < y[1] end)
    -- Neighbours become one hole, so a later lease takes them in one piece.
    local merged = {}
    for _, h in ipairs(holes) do
      local cur = merged[#merged]
      if cur and h[1] <= cur[2] + 1 then
        cur[2] = math.max(cur[2], h[2])
      else
        merged[#merged + 1] = {h[1], h[2]}
      end
    end
    write_holes(KEYS[1], merged)
  end
end
return 1
"#
);

/// `TNS_QUOTA_LEASE_MAX` and `TNS_QUOTA_LEASE_MS`.
#[derive(Debug, Clone, Copy)]
pub struct LeaseSettings {
    /// The most numbers one lease holds; 0 = no leases (every call counted by Redis).
    pub max: i64,
    /// How long a lease may be used.
    pub life: Duration,
}

/// A lease being used.
struct Held {
    id: String,
    first: i64,
    copy: i64,
    quota: i64,
    /// The next number to hand out; beyond `last` the lease is used up.
    next: i64,
    last: i64,
    granted: Instant,
    /// Not used after this (by this process's clock, never later than Redis's expiry).
    until: Instant,
    /// What it admitted, by the usage hash's field (`total`, `t|<endpoint>`).
    counts: HashMap<String, i64>,
}

/// A lease to give back.
struct Spent {
    org: OrgId,
    month: Month,
    lease: Giving,
}

/// What this process knows of a lease it gives back.
enum Giving {
    /// One it held: its unused numbers and what it admitted.
    Held(Held),
    /// Granted, but its answer was lost: Redis knows its numbers (by its id), this process does
    /// not, and it admitted nothing.
    Unanswered { id: String },
}

/// This process's leases on one organization-month.
struct Slot {
    held: VecDeque<Held>,
    /// A lease is being asked for.
    asking: bool,
    /// Bumped by a recall: a lease asked for before it arrives is given back at once.
    recalls: u64,
    size: i64,
    last_call: Instant,
    quiet_until: Option<Instant>,
}

impl Slot {
    /// Move the leases used up or expired (by `now`) into `spent`, sizing the next one by how
    /// they were used.
    fn retire_done(&mut self, org: OrgId, month: Month, now: Instant, settings: LeaseSettings, spent: &mut Vec<Spent>) {
        while self.held.front().is_some_and(|h| h.until <= now || h.next > h.last) {
            let held = self.held.pop_front().expect("a front lease");
            self.size = resized(self.size, &held, now, settings);
            spent.push(Spent { org, month, lease: Giving::Held(held) });
        }
    }
}

pub struct Leases {
    store: Arc<RedisStore>,
    metrics: Arc<Metrics>,
    settings: LeaseSettings,
    grant: Script,
    give_back: Script,
    /// This process's part of each lease id.
    process: u64,
    seq: AtomicU64,
    slots: Mutex<HashMap<(OrgId, Month), Slot>>,
    /// The recall subscription is live: leases may be asked for.
    listening: AtomicBool,
    /// Leases not given back yet (Redis unreachable), tried again each tick.
    unreturned: Mutex<Vec<Spent>>,
}

/// What taking a number from a lease gives: the decision and the copy the call is counted in.
pub type Taken = (Decision, i64);

impl Leases {
    pub fn new(store: Arc<RedisStore>, metrics: Arc<Metrics>, settings: LeaseSettings) -> Arc<Leases> {
        Arc::new(Leases {
            store,
            metrics,
            settings,
            grant: Script::new(LEASE_LUA),
            give_back: Script::new(GIVE_BACK_LUA),
            process: rand::random::<u64>() & 0xffff_ffff_ffff,
            seq: AtomicU64::new(0),
            slots: Mutex::new(HashMap::new()),
            listening: AtomicBool::new(false),
            unreturned: Mutex::new(Vec::new()),
        })
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<(OrgId, Month), Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admit one call of `field` from a lease of the organization-month, if one is held.
    pub fn take(self: &Arc<Self>, org: OrgId, month: Month, field: &str) -> Option<Taken> {
        if !self.listening.load(Ordering::Relaxed) {
            return None;
        }
        let now = Instant::now();
        let mut spent = Vec::new();
        let taken = {
            let mut slots = self.slots();
            let slot = slots.get_mut(&(org, month))?;
            slot.retire_done(org, month, now, self.settings, &mut spent);
            let taken = slot.held.front_mut().map(|h| {
                let number = h.next;
                h.next += 1;
                bump(&mut h.counts, "total");
                bump(&mut h.counts, field);
                let decision = Decision {
                    admitted: true,
                    limit: h.quota,
                    remaining: if h.quota < 0 { -1 } else { (h.quota - number).max(0) },
                    reset: month.reset_at(),
                    over: false,
                };
                (decision, h.copy)
            });
            if taken.is_some() {
                // In use, so busy: the next lease is asked for before this one runs out.
                slot.last_call = now;
                let left: i64 = slot.held.iter().map(|h| h.last - h.next + 1).sum();
                if left * 2 < slot.size {
                    self.ask_if_due(slot, org, month, now);
                }
            }
            taken
        };
        self.give_back_all(spent);
        taken
    }

    /// Calls of the organization-month were counted by Redis together (they came while others
    /// were): ask for a lease, unless one is being asked for or refused lately.
    pub fn ask(self: &Arc<Self>, org: OrgId, month: Month) {
        if self.settings.max == 0 || !self.listening.load(Ordering::Relaxed) {
            return;
        }
        let now = Instant::now();
        let mut slots = self.slots();
        let slot = slots.entry((org, month)).or_insert_with(|| Slot {
            held: VecDeque::new(),
            asking: false,
            recalls: 0,
            size: MIN_LEASE.min(self.settings.max),
            last_call: now,
            quiet_until: None,
        });
        slot.last_call = now;
        self.ask_if_due(slot, org, month, now);
    }

    fn ask_if_due(self: &Arc<Self>, slot: &mut Slot, org: OrgId, month: Month, now: Instant) {
        if slot.asking || slot.held.len() >= 2 || slot.quiet_until.is_some_and(|q| q > now) {
            return;
        }
        slot.asking = true;
        let (me, size, recalls) = (Arc::clone(self), slot.size, slot.recalls);
        tokio::spawn(async move { me.lease(org, month, size, recalls).await });
    }

    async fn lease(self: &Arc<Self>, org: OrgId, month: Month, size: i64, recalls: u64) {
        let id = format!("{:x}.{}", self.process, self.seq.fetch_add(1, Ordering::Relaxed));
        let life_ms = self.settings.life.as_millis() as i64;
        let mut inv = self.grant.key(self.store.key(&usage_key_suffix(org, month)));
        inv.key(self.store.key(&limit_key_suffix(org))).key(self.store.key(&lease_key_suffix(org, month)));
        inv.arg(&id).arg(size).arg(life_ms).arg(margin(self.settings.max));
        // Used until its life is over as counted from before Redis granted it, so never past
        // the expiry Redis recorded.
        let asked = Instant::now();
        let answer: Result<Vec<i64>, _> = self.store.call(|mut c| async move { inv.invoke_async(&mut c).await }).await;
        let mut spent = Vec::new();
        {
            let mut slots = self.slots();
            let slot = slots.get_mut(&(org, month));
            match (answer.as_deref(), slot) {
                (Ok([1, first, last, quota, copy]), slot) => {
                    self.metrics.quota_leases.inc();
                    let held = Held {
                        id,
                        copy: *copy,
                        quota: *quota,
                        first: *first,
                        next: *first,
                        last: *last,
                        granted: asked,
                        until: asked + self.settings.life,
                        counts: HashMap::new(),
                    };
                    match slot {
                        Some(s) if s.recalls == recalls && self.listening.load(Ordering::Relaxed) => {
                            s.held.push_back(held);
                            s.asking = false;
                        }
                        other => {
                            if let Some(s) = other {
                                s.asking = false;
                            }
                            spent.push(Spent { org, month, lease: Giving::Held(held) });
                        }
                    }
                }
                (answer, slot) => {
                    // Near the quota, suspended, not seeded yet or Redis unreachable: the calls
                    // go to Redis one by one for a while (they seed what is missing).
                    if let Some(s) = slot {
                        s.asking = false;
                        s.quiet_until = Some(Instant::now() + QUIET);
                    }
                    // Redis may have granted it all the same: give back whatever it recorded.
                    if answer.is_err() {
                        self.unreturned.lock().unwrap_or_else(|p| p.into_inner()).push(Spent {
                            org,
                            month,
                            lease: Giving::Unanswered { id },
                        });
                    }
                }
            }
        }
        self.give_back_all(spent);
    }

    /// Give leases back, each in a task of its own (the caller never waits for Redis).
    fn give_back_all(self: &Arc<Self>, spent: Vec<Spent>) {
        for s in spent {
            let me = Arc::clone(self);
            tokio::spawn(async move { me.give_back(s).await });
        }
    }

    async fn give_back(&self, s: Spent) {
        let mut inv = self.give_back.key(self.store.key(&usage_key_suffix(s.org, s.month)));
        inv.key(self.store.key(&lease_key_suffix(s.org, s.month)));
        match &s.lease {
            Giving::Unanswered { id } => {
                inv.arg(id).arg("*").arg("*").arg("*");
            }
            Giving::Held(h) => {
                inv.arg(&h.id).arg(h.copy).arg(h.next).arg(h.last);
                for (field, n) in &h.counts {
                    inv.arg(field).arg(*n);
                }
            }
        }
        let given: Result<i64, _> = self.store.call(|mut c| async move { inv.invoke_async(&mut c).await }).await;
        if let Err(e) = given {
            tracing::debug!(org = s.org.get(), error = %e, "a quota lease was not given back yet; will retry");
            self.unreturned.lock().unwrap_or_else(|p| p.into_inner()).push(s);
        }
    }

    /// Take every lease of the organizations `of` picks out of use (a recall, the subscription
    /// broken, the process stopping), to give back; a lease being asked for meanwhile is given
    /// back when it comes.
    fn recall(&self, of: impl Fn(OrgId) -> bool) -> Vec<Spent> {
        let mut slots = self.slots();
        let mut spent = Vec::new();
        for ((org, month), slot) in slots.iter_mut().filter(|((o, _), _)| of(*o)) {
            slot.recalls += 1;
            spent.extend(slot.held.drain(..).map(|held| Spent { org: *org, month: *month, lease: Giving::Held(held) }));
        }
        spent
    }

    /// Give back expired leases, try again the ones Redis did not take, forget idle months.
    pub async fn tick(self: &Arc<Self>) {
        let now = Instant::now();
        let spent = {
            let mut slots = self.slots();
            let mut spent = Vec::new();
            for ((org, month), slot) in slots.iter_mut() {
                slot.retire_done(*org, *month, now, self.settings, &mut spent);
            }
            slots.retain(|_, s| !s.held.is_empty() || s.asking || now.duration_since(s.last_call) < IDLE);
            spent
        };
        let retry = std::mem::take(&mut *self.unreturned.lock().unwrap_or_else(|p| p.into_inner()));
        for s in spent.into_iter().chain(retry) {
            self.give_back(s).await;
        }
    }

    /// Give back every lease before the process stops (its counts reach Redis's copy).
    pub async fn give_back_on_shutdown(self: &Arc<Self>) {
        self.listening.store(false, Ordering::Relaxed);
        let spent = self.recall(|_| true);
        let retry = std::mem::take(&mut *self.unreturned.lock().unwrap_or_else(|p| p.into_inner()));
        for s in spent.into_iter().chain(retry) {
            self.give_back(s).await;
        }
    }

    /// Listen for recalls for as long as the role runs, and tick; lease only while listening.
    pub async fn run(self: Arc<Self>) {
        if self.settings.max == 0 {
            return std::future::pending().await;
        }
        let channel = self.store.key(LEASE_RECALL_CHANNEL);
        let tick_every = (self.settings.life / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
        let ticker = {
            let me = Arc::clone(&self);
            async move {
                let mut tick = tokio::time::interval(tick_every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    me.tick().await;
                }
            }
        };
        let listener = async {
            let mut pause = Duration::from_millis(100);
            loop {
                match self.store.subscribe(&channel).await {
                    Ok((mut sink, mut messages)) => {
                        pause = Duration::from_millis(100);
                        self.listening.store(true, Ordering::Relaxed);
                        // A connection that died without closing would keep this process leasing
                        // while deaf (every recall then waiting out the leases' life): pinged
                        // twice a lease's life, it is given up when it does not answer.
                        let mut ping = tokio::time::interval((self.settings.life / 2).max(Duration::from_millis(100)));
                        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                        loop {
                            tokio::select! {
                                msg = messages.next() => match msg {
                                    Some(msg) => match msg.get_payload::<i64>() {
                                        Ok(org) => self.give_back_all(self.recall(|o| o.get() == org)),
                                        Err(_) => tracing::warn!("a quota lease recall named no organization"),
                                    },
                                    None => break,
                                },
                                _ = ping.tick() => {
                                    let pong = tokio::time::timeout(CALL_TIMEOUT, sink.ping::<redis::Value>()).await;
                                    if !matches!(pong, Ok(Ok(_))) {
                                        break;
                                    }
                                }
                            }
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "cannot listen for quota lease recalls"),
                }
                // Deaf: lease nothing, give back what is held (recalls may be missed now).
                self.listening.store(false, Ordering::Relaxed);
                self.give_back_all(self.recall(|_| true));
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        };
        tokio::join!(ticker, listener);
    }
}

fn bump(counts: &mut HashMap<String, i64>, field: &str) {
    match counts.get_mut(field) {
        Some(n) => *n += 1,
        None => {
            counts.insert(field.to_string(), 1);
        }
    }
}

/// The next lease's size after `held` is done with.
fn resized(size: i64, held: &Held, now: Instant, settings: LeaseSettings) -> i64 {
    let (len, unused) = (held.last - held.first + 1, held.last - held.next + 1);
    if unused <= 0 && now.duration_since(held.granted) < settings.life / 2 {
        (size * 2).min(settings.max)
    } else if unused * 2 > len {
        (size / 2).max(MIN_LEASE.min(settings.max))
    } else {
        size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(first: i64, last: i64, used: i64, age: Duration) -> Held {
        let now = Instant::now();
        Held {
            id: "x".into(),
            first,
            copy: 1,
            quota: -1,
            next: first + used,
            last,
            granted: now - age,
            until: now - age + Duration::from_secs(1),
            counts: [("total".to_string(), used)].into_iter().collect(),
        }
    }

    #[tokio::test]
    async fn a_lease_grows_when_used_up_quickly_and_shrinks_when_mostly_unused() {
        let s = LeaseSettings { max: 256, life: Duration::from_secs(1) };
        let now = Instant::now();
        assert_eq!(resized(16, &held(1, 16, 16, Duration::from_millis(100)), now, s), 32);
        assert_eq!(resized(256, &held(1, 256, 256, Duration::from_millis(100)), now, s), 256, "never past the max");
        assert_eq!(resized(16, &held(1, 16, 16, Duration::from_millis(900)), now, s), 16, "used up, but slowly");
        assert_eq!(resized(64, &held(1, 64, 10, Duration::from_secs(1)), now, s), 32);
        assert_eq!(resized(8, &held(1, 8, 1, Duration::from_secs(1)), now, s), 8, "never below the least");
    }
}
