//! Monthly quota and usage metering.
//!
//! Redis holds the live counters of each organization-month in one hash
//! (`usage:{org}:{YYYY-MM}`: `total`, `t|<endpoint>` calls, `e|<endpoint>` errors) and the
//! organization's limit (`limit:{org}` = `"<quota>:<soft>"`, quota -1 = unlimited). One Lua
//! script checks and counts atomically, so all API processes share one exact count; the calls
//! of an organization-month that arrive together are counted by one run of it
//! ([`crate::quota_batch`]). Each admitted call gets its own number (`X-RateLimit-Remaining` is
//! the quota less it). A busy organization-month's calls are admitted from blocks of numbers
//! this process leased ([`crate::quota_lease`]), counted in Redis's copy when the lease is given
//! back; a usage read, a plan change and a suspension recall the leases first.
//!
//! PostgreSQL is the ledger (`tns_store::usage`): each process adds the calls *it* admitted
//! every `TNS_USAGE_FLUSH_SECS`, however they were counted, so what Redis loses the ledger
//! still has. Redis's copy of a month is seeded from one read of the ledger, keeping that
//! read's version (field `v`) and an id of its own (field `c`, random); each call this process
//! counts is remembered with the id of the copy it was counted in (or as counted here only).
//! After adding its calls to the ledger the process gives Redis's current copy the ones it
//! lacks — those counted in another copy or only here — unless the copy was seeded after the
//! addition (its `v` is not lower). While no copy exists the process keeps them: a copy being
//! seeded that moment may have read the ledger before the addition.
//!
//! Redis unreachable: fail-open (default) keeps serving against a local count started from
//! the ledger's total; fail-closed answers 503. Each process counts alone then, so fail-open is
//! bounded: a process admits at most `fail_open_allowance` calls per organization and month
//! beyond the ledger's total (never beyond the quota), so N processes admit at most N × that
//! during an outage.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        atomic::{AtomicI64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};
use tns_core::ids::OrgId;

use chrono::Utc;
use redis::{AsyncCommands, Script};
use sqlx::PgPool;
pub use tns_core::domain::month::Month;
use tns_core::{
    domain::kinds::OrgStatus,
    env::{lease_key_suffix, limit_key_suffix, usage_key_suffix},
};
use tns_store::usage::{self, EndpointUsage, MonthCounts, OVERAGE_FIELD};

use crate::{
    cache::TtlMap,
    error::{ApiError, Code},
    metrics::Metrics,
    quota_batch::{self, Batches, NotCounted},
    quota_lease::Leases,
    redis_store::{RedisDown, RedisStore},
    settings::{FailMode, QuotaSettings},
};

/// Usage hashes outlive their month long enough for the last flush and a look back.
const USAGE_TTL_SECS: i64 = 40 * 86_400;
/// The cached limit is refreshed from PostgreSQL at least this often (a plan change also
/// overwrites it at once).
const LIMIT_TTL_SECS: u64 = 3600;

/// Seeds a month's hash from the persisted rows unless another process already did.
const SEED_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
"#;

/// Adds to fields of a month that exists (never creates a hash without its total): {1, c}
/// with the copy's id, {0} when the month is missing.
const ADD_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
for i = 1, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
return {1, tonumber(redis.call('HGET', KEYS[1], 'c') or '-1')}
"#;

/// Gives the month's copy the counts of ledger addition ARGV[1] it lacks. ARGV[2] groups
/// follow, each: the id of the copy it was counted in ('' = counted by the process alone), its
/// number of fields, then field and count pairs. A copy seeded at or after the addition has
/// them all; a group counted in the current copy is there already. Done at most once per
/// addition (`p|<version>`), so a retry after a lost answer adds nothing twice. Returns 1 when
/// something was added, 0 when nothing was needed, -1 when there is no copy (asked again
/// later: one may be being seeded from a read made before the addition).
const PUSH_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if tonumber(ARGV[1]) <= tonumber(redis.call('HGET', KEYS[1], 'v') or '-1') then return 0 end
local cur = tonumber(redis.call('HGET', KEYS[1], 'c') or '-1')
local adds, i = {}, 3
for g = 1, tonumber(ARGV[2]) do
  local counted, n = ARGV[i], tonumber(ARGV[i + 1])
  local lacks = counted == '' or tonumber(counted) ~= cur
  i = i + 2
  for _ = 1, n do
    if lacks then adds[#adds + 1] = ARGV[i]; adds[#adds + 1] = ARGV[i + 1] end
    i = i + 2
  end
end
if #adds == 0 or redis.call('HSETNX', KEYS[1], 'p|' .. ARGV[1], 1) == 0 then return 0 end
for j = 1, #adds, 2 do
  redis.call('HINCRBY', KEYS[1], adds[j], adds[j + 1])
  -- Calls counted elsewhere take numbers too, so the quota still holds them.
  if adds[j] == 'total' and redis.call('HEXISTS', KEYS[1], 'f') == 1 then
    redis.call('HINCRBY', KEYS[1], 'f', adds[j + 1])
  end
end
return 1
"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// `None` = unlimited.
    pub quota: Option<i64>,
    /// Calls beyond the quota are served and billed as overage.
    pub soft: bool,
    /// The organization is suspended: only the routes a suspended organization keeps answer.
    pub suspended: bool,
}

/// The outcome for one request, rendered as `X-RateLimit-*` headers.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    pub admitted: bool,
    /// -1 = unlimited.
    pub limit: i64,
    /// -1 = unlimited.
    pub remaining: i64,
    /// Unix time the window resets.
    pub reset: i64,
    /// The call's number is beyond the limit (served only on a soft quota, or on a route
    /// spared it).
    pub over: bool,
}

/// Calls counted locally while Redis was unreachable, for admission (the counts themselves
/// are in [`Quota::unflushed`] like any).
#[derive(Default)]
struct LocalMonth {
    /// The ledger's total when local counting began.
    base_total: i64,
    added_total: i64,
}

/// Which copy of a month counts were counted in: Redis's copy with id `c` (`Some(c)`), or none
/// (`None`: this process alone, Redis unreachable or the month missing).
type Counted = Option<i64>;

/// Counts of one organization-month: the hash's fields (`total`, `t|…`, `e|…`, `overage`).
#[derive(Debug, Default, Clone)]
struct Counts(HashMap<String, i64>);

impl Counts {
    fn bump(&mut self, field: &str, n: i64) {
        match self.0.get_mut(field) {
            Some(v) => *v += n,
            None => {
                self.0.insert(field.to_string(), n);
            }
        }
    }

    fn merge(&mut self, other: &Counts) {
        for (f, n) in &other.0 {
            self.bump(f, *n);
        }
    }
}

type RecallGate = Arc<tokio::sync::Mutex<Option<tokio::time::Instant>>>;

/// This process's counts of one organization-month by the copy they were counted in.
type Groups = HashMap<Counted, Counts>;

/// Additions waiting for Redis kept at most (an outage of hours with thousands of active
/// organizations); beyond, the oldest are dropped from Redis's view (never from the ledger).
const MAX_UNPUSHED: usize = 200_000;

/// How giving a copy its counts went.
enum Pushed {
    /// Given, or nothing was needed.
    Done,
    /// No copy of the month exists.
    NoCopy,
}

/// Counts taken out of [`Quota::unflushed`] for the ledger: put back unless taken further.
struct Taken<'a> {
    quota: &'a Quota,
    org: OrgId,
    month: Month,
    groups: Groups,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if self.groups.is_empty() {
            return;
        }
        let mut back = self.quota.unflushed.lock().unwrap_or_else(|p| p.into_inner());
        let into = back.entry((self.org, self.month)).or_default();
        for (counted, counts) in self.groups.drain() {
            into.entry(counted).or_default().merge(&counts);
        }
    }
}

/// Counts in the ledger (addition `version`) that Redis's current copy may lack.
struct Unpushed {
    org: OrgId,
    month: Month,
    version: i64,
    groups: Groups,
}

pub struct Quota {
    store: Arc<RedisStore>,
    db: PgPool,
    metrics: Arc<Metrics>,
    settings: QuotaSettings,
    batches: Arc<Batches>,
    leases: Arc<Leases>,
    /// Per organization at its quota: when its last recall ended, behind the lock its next
    /// recall is made under.
    recalled: Mutex<HashMap<OrgId, RecallGate>>,
    seed: Script,
    add: Script,
    push: Script,
    /// What this process counted since its last addition to the ledger.
    unflushed: Mutex<HashMap<(OrgId, Month), Groups>>,
    /// Added to the ledger; Redis's copy may still lack them.
    unpushed: Mutex<std::collections::VecDeque<Unpushed>>,
    local: Mutex<HashMap<(OrgId, Month), LocalMonth>>,
    /// Whether `local` has entries (so a call Redis counted checks it without the lock).
    counting_locally: std::sync::atomic::AtomicBool,
    limits: TtlMap<OrgId, Limit>,
    /// Why suspended (or closed) organizations are restricted, so their calls cost no query each.
    suspension_reasons: TtlMap<OrgId, (OrgStatus, Option<String>)>,
    last_fallback_log: AtomicI64,
}

enum Failure {
    Redis(RedisDown),
    Api(ApiError),
    Suspended,
}

/// Which refusals a route is spared.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exempt {
    /// Counted but never refused for quota (usage and billing stay reachable beyond it).
    pub quota: bool,
    /// Answered for a suspended organization (its reads, billing, support, revoking a key).
    pub suspension: bool,
}

impl From<RedisDown> for Failure {
    fn from(e: RedisDown) -> Self {
        Failure::Redis(e)
    }
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Api(e.into())
    }
}

impl Quota {
    pub fn new(store: Arc<RedisStore>, db: PgPool, metrics: Arc<Metrics>, settings: QuotaSettings) -> Quota {
        Quota {
            batches: Batches::new(Arc::clone(&store)),
            leases: Leases::new(Arc::clone(&store), Arc::clone(&metrics), settings.lease),
            recalled: Mutex::new(HashMap::new()),
            store,
            db,
            metrics,
            settings,
            seed: Script::new(SEED_LUA),
            add: Script::new(ADD_LUA),
            push: Script::new(PUSH_LUA),
            unflushed: Mutex::new(HashMap::new()),
            unpushed: Mutex::new(std::collections::VecDeque::new()),
            local: Mutex::new(HashMap::new()),
            counting_locally: std::sync::atomic::AtomicBool::new(false),
            limits: TtlMap::new(Duration::from_secs(5), 100_000),
            suspension_reasons: TtlMap::new(Duration::from_secs(5), 100_000),
            last_fallback_log: AtomicI64::new(0),
        }
    }

    fn usage_key(&self, org: OrgId, month: Month) -> String {
        self.store.key(&usage_key_suffix(org, month))
    }

    fn limit_key(&self, org: OrgId) -> String {
        self.store.key(&limit_key_suffix(org))
    }

    /// Count one call of `endpoint` and decide whether it is served: 429 beyond a hard quota,
    /// 403 for a suspended organization (nothing counted), each unless `exempt`.
    pub async fn admit(&self, org: OrgId, endpoint: &str, exempt: Exempt) -> Result<Decision, ApiError> {
        let month = Month::now();
        if !self.settings.enabled {
            if !exempt.suspension && self.cached_limit(org).await?.suspended {
                return Err(self.suspended(org).await);
            }
            return Ok(Decision { admitted: true, limit: -1, remaining: -1, reset: month.reset_at(), over: false });
        }
        let field = format!("t|{endpoint}");
        if let Some((decision, copy)) = self.leases.take(org, month, &field) {
            self.metrics.quota_leased_calls.inc();
            self.count(org, month, Some(copy), &[("total", 1), (&field, 1)]);
            return Ok(decision);
        }
        let (decision, counted) = match self.admit_redis(org, month, &field, exempt).await {
            Ok((d, v, crowded)) => {
                if self.counting_locally.load(Ordering::Relaxed) {
                    self.stop_counting_locally();
                }
                if d.admitted && crowded {
                    self.leases.ask(org, month);
                }
                (d, Some(v))
            }
            Err(Failure::Api(e)) => return Err(e),
            Err(Failure::Suspended) => return Err(self.suspended(org).await),
            Err(Failure::Redis(e)) => {
                self.metrics.redis_fallback.inc();
                self.log_fallback(&e);
                if self.settings.fail_mode == FailMode::Closed {
                    return Err(ApiError::Unavailable("usage metering is unavailable; retry shortly".into()));
                }
                (self.admit_local(org, month, exempt).await?, None)
            }
        };
        if decision.admitted {
            // Beyond a soft quota (`remaining` is 0 once the total passed it) the call is overage.
            let overage = decision.limit >= 0 && decision.over && !exempt.quota;
            self.count(org, month, counted, &[("total", 1), (&field, 1), (OVERAGE_FIELD, overage as i64)]);
        } else {
            self.metrics.quota_rejections.with_label_values(&["monthly_quota"]).inc();
        }
        Ok(decision)
    }

    /// Remember counts this process made, for its next addition to the ledger.
    fn count(&self, org: OrgId, month: Month, counted: Counted, fields: &[(&str, i64)]) {
        let mut unflushed = self.unflushed.lock().unwrap_or_else(|p| p.into_inner());
        let counts = unflushed.entry((org, month)).or_default().entry(counted).or_default();
        for (f, n) in fields.iter().filter(|(_, n)| *n != 0) {
            counts.bump(f, *n);
        }
    }

    /// Redis answers again: the outage is over for every organization (each one's next call
    /// goes to Redis), and the next outage starts from the ledger. Clearing them all, not only
    /// this one's, keeps no month of an organization that never calls again, nor the flag that
    /// sends every call through the lock.
    fn stop_counting_locally(&self) {
        self.local.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.counting_locally.store(false, Ordering::Relaxed);
    }

    /// The decision, the id of the copy that counted the call, and whether other calls of the
    /// month were counted with it.
    async fn admit_redis(
        &self,
        org: OrgId,
        month: Month,
        field: &str,
        exempt: Exempt,
    ) -> Result<(Decision, i64, bool), Failure> {
        let keys = (self.usage_key(org, month), self.limit_key(org), self.store.key(&lease_key_suffix(org, month)));
        for attempt in 0..4 {
            let counted = self.batches.count(org, month, &keys, field.to_string(), exempt).await;
            match counted {
                Ok(quota_batch::Counted::NoLimit) => self.seed_limit(org).await?,
                Ok(quota_batch::Counted::NoMonth) => self.seed_month(org, month).await?,
                Ok(quota_batch::Counted::Suspended) => return Err(Failure::Suspended),
                // At the quota with leases out: have them given back, then ask again. Should
                // that fail, or leases still be out after three recalls, a hard quota refuses
                // the call (never one past the quota), and a soft one is counted as when Redis
                // is unreachable (served, or 503 when failing closed).
                Ok(quota_batch::Counted::Recall) if attempt < 3 && self.recall_at_quota(org).await => {}
                Ok(quota_batch::Counted::Recall) => {
                    let limit = self.cached_limit(org).await?;
                    if limit.soft {
                        return Err(Failure::Redis(RedisDown("quota leases could not be recalled".into())));
                    }
                    let quota = limit.quota.unwrap_or(-1);
                    let decision =
                        Decision { admitted: false, limit: quota, remaining: 0, reset: month.reset_at(), over: true };
                    return Ok((decision, -1, false));
                }
                Ok(quota_batch::Counted::Done { admitted, number, quota, copy, crowded }) => {
                    let remaining = if quota < 0 { -1 } else { (quota - number).max(0) };
                    let decision = Decision {
                        admitted,
                        limit: quota,
                        remaining,
                        reset: month.reset_at(),
                        over: quota >= 0 && number > quota,
                    };
                    return Ok((decision, copy, crowded));
                }
                Err(NotCounted::Redis(e)) => return Err(Failure::Redis(RedisDown(e))),
                Err(NotCounted::Unexpected(e)) => return Err(Failure::Api(anyhow::anyhow!(e).into())),
            }
        }
        Err(Failure::Api(anyhow::anyhow!("quota counters could not be seeded").into()))
    }

    /// The organization's current limit from its plan, and its standing.
    pub async fn load_limit(&self, org: OrgId) -> sqlx::Result<Limit> {
        // No subscription row: an erased organization (its API keys stay valid in a process's
        // cache for moments). Refused as a restricted one is.
        Ok(tns_store::billing::plans::limit(&self.db, org)
            .await?
            .map(|(q, soft, status)| Limit { quota: q.map(i64::from), soft, suspended: status.is_restricted() })
            .unwrap_or(Limit { quota: Some(0), soft: false, suspended: true }))
    }

    /// The limit as this process last loaded it (at most 5 s old).
    async fn cached_limit(&self, org: OrgId) -> sqlx::Result<Limit> {
        if let Some(l) = self.limits.get(&org) {
            return Ok(l);
        }
        let l = self.load_limit(org).await?;
        self.limits.insert(org, l);
        Ok(l)
    }

    /// A change that mirrors no API call (the portal's team members) is refused for a suspended
    /// organization as an API change would be.
    pub async fn refuse_if_suspended(&self, org: OrgId) -> Result<(), ApiError> {
        if self.cached_limit(org).await?.suspended {
            return Err(self.suspended(org).await);
        }
        Ok(())
    }

    /// The refusal of a suspended organization's call, with the reason it was given.
    async fn suspended(&self, org: OrgId) -> ApiError {
        let (status, reason) = match self.suspension_reasons.get(&org) {
            Some(r) => r,
            None => {
                let r = match tns_store::accounts::standing(&self.db, org).await {
                    Ok(Some(s)) => (s.status, s.status_reason),
                    _ => (OrgStatus::Suspended, None),
                };
                self.suspension_reasons.insert(org, r.clone());
                r
            }
        };
        if status == OrgStatus::Closed {
            return ApiError::Forbidden(
                Code::OrganizationClosed,
                format!(
                    "this organization is {}; it may read and export its data, and billing and support tickets \
                     still answer, but nothing is created, changed or submitted",
                    reason.as_deref().unwrap_or("closed")
                ),
            );
        }
        ApiError::Forbidden(
            Code::OrganizationSuspended,
            format!(
                "this organization is suspended{}; it may read and export its data and revoke API keys, and \
                 billing (pay an open invoice or choose a plan) and support tickets still answer, but nothing is \
                 created, changed or submitted until it is reactivated",
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            ),
        )
    }

    fn encode_limit(l: Limit) -> String {
        format!("{}:{}:{}", l.quota.unwrap_or(-1), l.soft as u8, l.suspended as u8)
    }

    async fn seed_limit(&self, org: OrgId) -> Result<(), Failure> {
        let value = Self::encode_limit(self.load_limit(org).await?);
        let key = self.limit_key(org);
        // NX: a plan change that wrote the key meanwhile must win over this older read.
        self.store
            .call(|mut c| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("NX")
                    .arg("EX")
                    .arg(LIMIT_TTL_SECS)
                    .query_async::<()>(&mut c)
                    .await
            })
            .await?;
        Ok(())
    }

    /// Publish a changed limit to every process at once (after a plan change, a closure).
    pub async fn publish_limit(&self, org: OrgId) -> Result<(), ApiError> {
        let limit = self.load_limit(org).await?;
        self.limits.insert(org, limit);
        self.suspension_reasons.remove_where(|k, _| *k == org);
        let (key, value) = (self.limit_key(org), Self::encode_limit(limit));
        if let Err(e) =
            self.store.call(|mut c| async move { c.set_ex::<_, _, ()>(key, value, LIMIT_TTL_SECS).await }).await
        {
            // Other processes pick the plan up when their Redis-less limit cache expires (5 s)
            // or when the key's TTL runs out; log so operators know.
            tracing::warn!(org = org.get(), error = %e, "could not publish the new limit to redis");
        } else if let Err(e) = self.recall(org).await {
            // Leases against the old limit are used until they expire (TNS_QUOTA_LEASE_MS).
            tracing::warn!(org = org.get(), error = %e.0, "could not recall the organization's quota leases");
        }
        Ok(())
    }

    /// A recall for calls at the quota; the calls that arrive while one is made wait for it
    /// rather than each making their own. Whether the leases were given back.
    async fn recall_at_quota(&self, org: OrgId) -> bool {
        let asked = tokio::time::Instant::now();
        let gate = Arc::clone(self.recalled.lock().unwrap_or_else(|p| p.into_inner()).entry(org).or_default());
        let recalled = {
            let mut done = gate.lock().await;
            if done.is_some_and(|at| at > asked) {
                return true;
            }
            let recalled = self.recall(org).await;
            if recalled.is_ok() {
                *done = Some(tokio::time::Instant::now());
            }
            recalled
        };
        drop(gate);
        // Gates nobody waits at are forgotten.
        self.recalled.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, g| Arc::strong_count(g) > 1);
        if let Err(e) = &recalled {
            tracing::warn!(org = org.get(), error = %e.0, "quota leases not recalled for a call at the quota; refused");
        }
        recalled.is_ok()
    }

    /// Have every process give back its leases on `org`'s numbers, and wait until they have.
    async fn recall(&self, org: OrgId) -> Result<(), RedisDown> {
        let mut conn = self.store.call(|c| async move { Ok(c) }).await?;
        tns_store::published::recall_leases(&mut conn, self.store.prefix(), org)
            .await
            .map_err(|e| RedisDown(format!("{e:#}")))
    }

    /// This process's leases, for the role's background tasks.
    pub fn leases(&self) -> &Arc<Leases> {
        &self.leases
    }

    async fn persisted(&self, org: OrgId, month: Month) -> sqlx::Result<MonthCounts> {
        usage::persisted(&self.db, org, month).await
    }

    /// Copy the month from the ledger into Redis (unless another process just did), with
    /// the version of the read and a new copy id (never -1, the id of copies made before ids).
    async fn seed_month(&self, org: OrgId, month: Month) -> Result<(), Failure> {
        let (counts, version) = usage::ledger(&self.db, org, month).await?;
        let mut inv = self.seed.key(self.usage_key(org, month));
        // Lua's numbers are doubles: an id stays below 2^52 so it comes back from a script exact.
        let id = rand::random::<i64>() & ((1 << 52) - 1);
        inv.arg(USAGE_TTL_SECS).arg("v").arg(version).arg("c").arg(id);
        for (field, n) in counts.fields() {
            inv.arg(field).arg(n);
        }
        self.store.call(|mut c| async move { inv.invoke_async::<i64>(&mut c).await }).await?;
        Ok(())
    }

    async fn admit_local(&self, org: OrgId, month: Month, exempt: Exempt) -> Result<Decision, ApiError> {
        let limit = self.cached_limit(org).await?;
        if limit.suspended && !exempt.suspension {
            return Err(self.suspended(org).await);
        }
        let exempt = exempt.quota;
        let needs_base = !self.local.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&(org, month));
        let base = if needs_base { Some(self.persisted(org, month).await?.total()) } else { None };
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        let entry =
            local.entry((org, month)).or_insert_with(|| LocalMonth { base_total: base.unwrap_or(0), added_total: 0 });
        self.counting_locally.store(true, Ordering::Relaxed);
        let used = entry.base_total + entry.added_total;
        let quota = limit.quota.unwrap_or(-1);
        // Unlimited and soft-limited plans are billed by the counts, which reach the ledger
        // anyway; a hard quota is also held to this process's share of an outage.
        let admitted = quota < 0
            || limit.soft
            || exempt
            || (used < quota && entry.added_total < self.settings.fail_open_allowance);
        if admitted {
            entry.added_total += 1;
        }
        let total = entry.base_total + entry.added_total;
        Ok(Decision {
            admitted,
            limit: quota,
            remaining: if quota < 0 { -1 } else { (quota - total).max(0) },
            reset: month.reset_at(),
            over: quota >= 0 && total > quota,
        })
    }

    fn log_fallback(&self, e: &RedisDown) {
        let now = Utc::now().timestamp();
        let last = self.last_fallback_log.load(Ordering::Relaxed);
        if now - last >= 10
            && self.last_fallback_log.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            let mode = match self.settings.fail_mode {
                FailMode::Open => "counting locally (fail-open)",
                FailMode::Closed => "refusing calls (fail-closed)",
            };
            tracing::warn!(error = %e, "quota store unreachable: {mode}");
        }
    }

    /// Count an error answer (status >= 400) of an admitted call.
    pub async fn record_error(&self, org: OrgId, endpoint: &str) {
        if !self.settings.enabled {
            return;
        }
        let month = Month::now();
        let field = format!("e|{endpoint}");
        let mut inv = self.add.key(self.usage_key(org, month));
        inv.arg(&field).arg(1);
        let reply = self.store.call(|mut c| async move { inv.invoke_async::<Vec<i64>>(&mut c).await }).await;
        let counted = match reply.as_deref() {
            Ok([1, c]) => Some(*c),
            // Unreachable, or the month missing: counted here, given to Redis's copy later.
            _ => None,
        };
        self.count(org, month, counted, &[(&field, 1)]);
    }

    /// The month's usage: Redis's copy and what this process counted that the copy lacks, else
    /// the ledger and what this process has not added to it yet.
    pub async fn usage(&self, org: OrgId, month: Month) -> Result<Vec<EndpointUsage>, ApiError> {
        // What leases admitted reaches Redis's copy when they are given back.
        if let Err(e) = self.recall(org).await {
            tracing::debug!(org = org.get(), error = %e.0, "quota leases not recalled before a usage read");
        }
        let key = self.usage_key(org, month);
        // Numeric fields only: the hash also holds the holes between numbers (`h`).
        let live: Result<HashMap<String, i64>, _> = self
            .store
            .call(|mut c| async move { c.hgetall::<_, HashMap<String, String>>(key).await })
            .await
            .map(|h| h.into_iter().filter_map(|(f, v)| Some((f, v.parse().ok()?))).collect());
        let mut fields = Counts::default();
        let lacks: Box<dyn Fn(Counted, Option<i64>) -> bool> = match live {
            Ok(h) if !h.is_empty() => {
                let (seeded_at, copy) = (h.get("v").copied().unwrap_or(-1), h.get("c").copied().unwrap_or(-1));
                let pushed: HashSet<i64> =
                    h.keys().filter_map(|k| k.strip_prefix("p|").and_then(|v| v.parse().ok())).collect();
                fields.0 = h;
                Box::new(move |counted, version| {
                    counted != Some(copy) && version.is_none_or(|v| v > seeded_at && !pushed.contains(&v))
                })
            }
            _ => {
                fields.0 = self.persisted(org, month).await?.fields().into_iter().collect();
                Box::new(|_, version| version.is_none())
            }
        };
        if let Some(groups) = self.unflushed.lock().unwrap_or_else(|p| p.into_inner()).get(&(org, month)) {
            for (counted, counts) in groups {
                if lacks(*counted, None) {
                    fields.merge(counts);
                }
            }
        }
        for u in self.unpushed.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            if (u.org, u.month) == (org, month) {
                for (counted, counts) in &u.groups {
                    if lacks(*counted, Some(u.version)) {
                        fields.merge(counts);
                    }
                }
            }
        }
        let mut rows = MonthCounts::from_fields(&fields.0).rows;
        rows.sort_by(|a, b| b.total_calls.cmp(&a.total_calls).then_with(|| a.endpoint.cmp(&b.endpoint)));
        Ok(rows)
    }

    /// Add what this process counted to the ledger, then give Redis's copies what they lack.
    /// One organization-month at a time, each put back if not done (an error, or the flush
    /// stopped with the process), so stopping midway loses nothing.
    pub async fn flush(&self) {
        let months: Vec<(OrgId, Month)> =
            self.unflushed.lock().unwrap_or_else(|p| p.into_inner()).keys().copied().collect();
        for (org, month) in months {
            let Some(groups) = self.unflushed.lock().unwrap_or_else(|p| p.into_inner()).remove(&(org, month)) else {
                continue;
            };
            let mut taken = Taken { quota: self, org, month, groups };
            let mut sum = Counts::default();
            for counts in taken.groups.values() {
                sum.merge(counts);
            }
            match usage::add(&self.db, org, month, &MonthCounts::from_fields(&sum.0)).await {
                Ok(Some(version)) => {
                    let groups = std::mem::take(&mut taken.groups);
                    let u = Unpushed { org, month, version, groups };
                    self.unpushed.lock().unwrap_or_else(|p| p.into_inner()).push_back(u);
                }
                // The organization was erased (or deleted) since: its counts have nowhere to go.
                Ok(None) => taken.groups.clear(),
                Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => taken.groups.clear(),
                Err(e) => {
                    tracing::warn!(org = org.get(), %month, error = %tns_store::redacted(&e), "usage not added to the ledger; will retry");
                }
            }
        }
        // Leases first: one given back after a push that raised the last number would leave
        // its unused numbers as a hole below it (still counted exactly, but `Remaining` would
        // read lower than it is until the hole is taken near the quota).
        self.leases.tick().await;
        let pending = self.unpushed.lock().unwrap_or_else(|p| p.into_inner()).len();
        for _ in 0..pending {
            let Some(u) = self.unpushed.lock().unwrap_or_else(|p| p.into_inner()).pop_front() else { break };
            let kept = match self.push(&u).await {
                Ok(Pushed::Done) => false,
                // Only this month's copy is seeded again; a past month's is read from the ledger.
                Ok(Pushed::NoCopy) => u.month == Month::now(),
                Err(e) => {
                    tracing::debug!(org = u.org.get(), month = %u.month, error = %e, "usage not given to redis yet; will retry");
                    true
                }
            };
            if kept {
                let mut unpushed = self.unpushed.lock().unwrap_or_else(|p| p.into_inner());
                if unpushed.len() < MAX_UNPUSHED {
                    unpushed.push_back(u);
                } else {
                    // The ledger has them; only Redis's copy (quota, live report) is short.
                    tracing::warn!(org = u.org.get(), month = %u.month, "too many usage additions waiting for redis; one dropped");
                }
            }
        }
    }

    async fn push(&self, u: &Unpushed) -> Result<Pushed, RedisDown> {
        let mut inv = self.push.key(self.usage_key(u.org, u.month));
        inv.arg(u.version).arg(u.groups.len());
        for (counted, counts) in &u.groups {
            inv.arg(counted.map(|v| v.to_string()).unwrap_or_default()).arg(counts.0.len());
            for (f, n) in &counts.0 {
                inv.arg(f).arg(*n);
            }
        }
        let answer = self.store.call(|mut c| async move { inv.invoke_async::<i64>(&mut c).await }).await?;
        Ok(if answer < 0 { Pushed::NoCopy } else { Pushed::Done })
    }

    /// The last flush at shutdown (what cannot reach the ledger now is logged as lost).
    pub async fn flush_on_shutdown(&self) {
        self.leases.give_back_on_shutdown().await;
        self.flush().await;
        let lost = self.unflushed.lock().unwrap_or_else(|p| p.into_inner()).len();
        if lost > 0 {
            tracing::error!(
                months = lost,
                "usage of some organization-months could not be added to the ledger at shutdown"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_fold_into_rows() {
        let f: HashMap<String, i64> =
            [("total", 3), ("t|GET /a", 2), ("e|GET /a", 1), ("t|POST /b", 1), ("overage", 2)]
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect();
        let mut rows = MonthCounts::from_fields(&f).rows;
        rows.sort_by(|a, b| a.endpoint.cmp(&b.endpoint));
        assert_eq!(rows[0], EndpointUsage { endpoint: "GET /a".into(), total_calls: 2, error_calls: 1 });
        assert_eq!(rows[1], EndpointUsage { endpoint: "POST /b".into(), total_calls: 1, error_calls: 0 });
        assert_eq!(MonthCounts::from_fields(&f).overage, 2);
    }
}
