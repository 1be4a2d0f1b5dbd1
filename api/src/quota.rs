//! Monthly quota and usage metering.
//!
//! Redis holds the live counters of each organization-month in one hash
//! (`usage:{org}:{YYYY-MM}`: `total`, `t|<endpoint>` calls, `e|<endpoint>` errors) and the
//! organization's limit (`limit:{org}` = `"<quota>:<soft>"`, quota -1 = unlimited). One Lua
//! script per request checks and counts atomically, so all API processes share one exact
//! count. PostgreSQL (`usage_monthly`) is the durable copy: a flusher persists touched months
//! periodically and the script asks for a re-seed from it when Redis lost a month.
//!
//! Redis unreachable: fail-open (default) keeps serving against a local count started from
//! the persisted total, and pushes the local counts to Redis once it is back; fail-closed
//! answers 503. Each process counts alone then, so fail-open is bounded: a process admits at
//! most `fail_open_allowance` calls per organization and month beyond the persisted total
//! (never beyond the quota), so N processes admit at most N × that during an outage.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        atomic::{AtomicI64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use chrono::Utc;
use redis::{AsyncCommands, Script};
use sqlx::PgPool;
pub use tns_core::domain::month::Month;
use tns_core::{
    domain::kinds::OrgStatus,
    env::{limit_key_suffix, usage_key_suffix},
};
use tns_store::usage::{self, EndpointUsage, MonthCounts, Upsert, OVERAGE_FIELD};

use crate::{
    cache::TtlMap,
    error::ApiError,
    metrics::Metrics,
    redis_store::{RedisDown, RedisStore},
    settings::FailMode,
};

/// Usage hashes outlive their month long enough for the last flush and a look back.
const USAGE_TTL_SECS: i64 = 40 * 86_400;
/// The cached limit is refreshed from PostgreSQL at least this often (a plan change also
/// overwrites it at once).
const LIMIT_TTL_SECS: u64 = 3600;

/// A call served beyond a soft quota also counts in `overage` (what overage bills; calls on
/// quota-exempt routes, billing and usage, are never billed).
/// Returns {admitted, total, quota, soft}; {-2} = limit unknown, {-3} = month not seeded,
/// {-4} = the organization is suspended (nothing counted). The limit is
/// `<quota>:<soft 0|1>:<suspended 0|1>`.
const ADMIT_LUA: &str = r#"
local lim = redis.call('GET', KEYS[2])
if not lim then return {-2} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-3} end
local f = {}
for part in string.gmatch(lim, '[^:]+') do f[#f + 1] = part end
local quota, soft, suspended = tonumber(f[1]), tonumber(f[2]), tonumber(f[3] or '0')
if suspended == 1 and ARGV[3] == '0' then return {-4} end
local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
if quota >= 0 and total >= quota and soft == 0 and ARGV[2] == '0' then
  return {0, total, quota, soft}
end
total = redis.call('HINCRBY', KEYS[1], 'total', 1)
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if soft == 1 and quota >= 0 and total > quota and ARGV[2] == '0' then
  redis.call('HINCRBY', KEYS[1], 'overage', 1)
end
return {1, total, quota, soft}
"#;

/// Seeds a month's hash from the persisted rows unless another process already did.
const SEED_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
"#;

/// Adds to fields of a month that exists (never creates a hash without its total).
const ADD_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
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
}

/// Calls counted locally while Redis was unreachable.
#[derive(Default)]
struct LocalMonth {
    /// The persisted total when local counting began.
    base_total: i64,
    added_total: i64,
    fields: HashMap<String, i64>,
}

pub struct Quota {
    store: Arc<RedisStore>,
    db: PgPool,
    metrics: Arc<Metrics>,
    enabled: bool,
    fail_mode: FailMode,
    fail_open_allowance: i64,
    admit: Script,
    seed: Script,
    add: Script,
    /// Org-months counted by this process since the last flush.
    touched: Mutex<HashSet<(i64, Month)>>,
    local: Mutex<HashMap<(i64, Month), LocalMonth>>,
    limits: TtlMap<i64, Limit>,
    /// Why suspended organizations are, so a suspended tenant's calls cost no query each.
    suspension_reasons: TtlMap<i64, Option<String>>,
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
    pub fn new(
        store: Arc<RedisStore>,
        db: PgPool,
        metrics: Arc<Metrics>,
        enabled: bool,
        fail_mode: FailMode,
        fail_open_allowance: i64,
    ) -> Quota {
        Quota {
            store,
            db,
            metrics,
            enabled,
            fail_mode,
            fail_open_allowance,
            admit: Script::new(ADMIT_LUA),
            seed: Script::new(SEED_LUA),
            add: Script::new(ADD_LUA),
            touched: Mutex::new(HashSet::new()),
            local: Mutex::new(HashMap::new()),
            limits: TtlMap::new(Duration::from_secs(5), 100_000),
            suspension_reasons: TtlMap::new(Duration::from_secs(5), 100_000),
            last_fallback_log: AtomicI64::new(0),
        }
    }

    fn usage_key(&self, org: i64, month: Month) -> String {
        self.store.key(&usage_key_suffix(org, month))
    }

    fn limit_key(&self, org: i64) -> String {
        self.store.key(&limit_key_suffix(org))
    }

    /// Count one call of `endpoint` and decide whether it is served: 429 beyond a hard quota,
    /// 403 for a suspended organization (nothing counted), each unless `exempt`.
    pub async fn admit(&self, org: i64, endpoint: &str, exempt: Exempt) -> Result<Decision, ApiError> {
        let month = Month::now();
        if !self.enabled {
            if !exempt.suspension && self.cached_limit(org).await?.suspended {
                return Err(self.suspended(org).await);
            }
            return Ok(Decision { admitted: true, limit: -1, remaining: -1, reset: month.reset_at() });
        }
        let field = format!("t|{endpoint}");
        let decision = match self.admit_redis(org, month, &field, exempt).await {
            Ok(d) => d,
            Err(Failure::Api(e)) => return Err(e),
            Err(Failure::Suspended) => return Err(self.suspended(org).await),
            Err(Failure::Redis(e)) => {
                self.metrics.redis_fallback.inc();
                self.log_fallback(&e);
                if self.fail_mode == FailMode::Closed {
                    return Err(ApiError::Unavailable("usage metering is unavailable; retry shortly".into()));
                }
                self.admit_local(org, month, field, exempt).await?
            }
        };
        if decision.admitted {
            self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert((org, month));
        } else {
            self.metrics.quota_rejections.with_label_values(&["monthly_quota"]).inc();
        }
        Ok(decision)
    }

    async fn admit_redis(&self, org: i64, month: Month, field: &str, exempt: Exempt) -> Result<Decision, Failure> {
        let (usage_key, limit_key) = (self.usage_key(org, month), self.limit_key(org));
        for _ in 0..3 {
            let mut inv = self.admit.key(&usage_key);
            inv.key(&limit_key).arg(field).arg(exempt.quota as u8).arg(exempt.suspension as u8);
            let r: Vec<i64> = self.store.call(|mut c| async move { inv.invoke_async(&mut c).await }).await?;
            match r.as_slice() {
                [-2] => self.seed_limit(org).await?,
                [-3] => self.seed_month(org, month).await?,
                [-4] => return Err(Failure::Suspended),
                [admitted, total, quota, _soft] => {
                    let remaining = if *quota < 0 { -1 } else { (quota - total).max(0) };
                    return Ok(Decision {
                        admitted: *admitted == 1,
                        limit: *quota,
                        remaining,
                        reset: month.reset_at(),
                    });
                }
                other => return Err(Failure::Api(anyhow::anyhow!("unexpected quota script reply {other:?}").into())),
            }
        }
        Err(Failure::Api(anyhow::anyhow!("quota counters could not be seeded").into()))
    }

    /// The organization's current limit from its plan, and its standing.
    pub async fn load_limit(&self, org: i64) -> sqlx::Result<Limit> {
        // No subscription row cannot happen after registration; refuse everything if it does.
        Ok(tns_store::plans::limit(&self.db, org)
            .await?
            .map(|(q, soft, status)| Limit { quota: q.map(i64::from), soft, suspended: status == OrgStatus::Suspended })
            .unwrap_or(Limit { quota: Some(0), soft: false, suspended: false }))
    }

    /// The limit as this process last loaded it (at most 5 s old).
    async fn cached_limit(&self, org: i64) -> sqlx::Result<Limit> {
        if let Some(l) = self.limits.get(&org) {
            return Ok(l);
        }
        let l = self.load_limit(org).await?;
        self.limits.insert(org, l);
        Ok(l)
    }

    /// A change that mirrors no API call (the portal's team members) is refused for a suspended
    /// organization as an API change would be.
    pub async fn refuse_if_suspended(&self, org: i64) -> Result<(), ApiError> {
        if self.cached_limit(org).await?.suspended {
            return Err(self.suspended(org).await);
        }
        Ok(())
    }

    /// The refusal of a suspended organization's call, with the reason it was given.
    async fn suspended(&self, org: i64) -> ApiError {
        let reason = match self.suspension_reasons.get(&org) {
            Some(r) => r,
            None => {
                let r = match tns_store::accounts::standing(&self.db, org).await {
                    Ok(Some(s)) => s.status_reason,
                    _ => None,
                };
                self.suspension_reasons.insert(org, r.clone());
                r
            }
        };
        ApiError::Forbidden(format!(
            "this organization is suspended{}; it may read its data and revoke API keys, and billing (pay an \
             open invoice or choose a plan) and support tickets still answer, but nothing is created, changed or \
             submitted until it is reactivated",
            reason.map(|r| format!(": {r}")).unwrap_or_default()
        ))
    }

    fn encode_limit(l: Limit) -> String {
        format!("{}:{}:{}", l.quota.unwrap_or(-1), l.soft as u8, l.suspended as u8)
    }

    async fn seed_limit(&self, org: i64) -> Result<(), Failure> {
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

    /// Publish a changed limit to every process at once (after a plan change).
    pub async fn publish_limit(&self, org: i64) -> Result<(), ApiError> {
        let limit = self.load_limit(org).await?;
        self.limits.insert(org, limit);
        let (key, value) = (self.limit_key(org), Self::encode_limit(limit));
        if let Err(e) =
            self.store.call(|mut c| async move { c.set_ex::<_, _, ()>(key, value, LIMIT_TTL_SECS).await }).await
        {
            // Other processes pick the plan up when their Redis-less limit cache expires (5 s)
            // or when the key's TTL runs out; log so operators know.
            tracing::warn!(org, error = %e, "could not publish the new limit to redis");
        }
        Ok(())
    }

    async fn persisted(&self, org: i64, month: Month) -> sqlx::Result<MonthCounts> {
        usage::persisted(&self.db, org, month).await
    }

    async fn seed_month(&self, org: i64, month: Month) -> Result<(), Failure> {
        let counts = self.persisted(org, month).await?;
        let mut inv = self.seed.key(self.usage_key(org, month));
        inv.arg(USAGE_TTL_SECS);
        for (field, n) in counts.fields() {
            inv.arg(field).arg(n);
        }
        self.store.call(|mut c| async move { inv.invoke_async::<i64>(&mut c).await }).await?;
        Ok(())
    }

    async fn admit_local(&self, org: i64, month: Month, field: String, exempt: Exempt) -> Result<Decision, ApiError> {
        let limit = self.cached_limit(org).await?;
        if limit.suspended && !exempt.suspension {
            return Err(self.suspended(org).await);
        }
        let exempt = exempt.quota;
        let needs_base = !self.local.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&(org, month));
        let base = if needs_base { Some(self.persisted(org, month).await?.total()) } else { None };
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        let entry = local
            .entry((org, month))
            .or_insert_with(|| LocalMonth { base_total: base.unwrap_or(0), ..Default::default() });
        let used = entry.base_total + entry.added_total;
        let quota = limit.quota.unwrap_or(-1);
        // Unlimited and soft-limited plans are billed by the counts, which reach Redis later;
        // a hard quota is also held to this process's share of an outage.
        let admitted =
            quota < 0 || limit.soft || exempt || (used < quota && entry.added_total < self.fail_open_allowance);
        if admitted {
            entry.added_total += 1;
            *entry.fields.entry(field).or_default() += 1;
            if limit.soft && quota >= 0 && used >= quota && !exempt {
                *entry.fields.entry(OVERAGE_FIELD.to_string()).or_default() += 1;
            }
        }
        let total = entry.base_total + entry.added_total;
        Ok(Decision {
            admitted,
            limit: quota,
            remaining: if quota < 0 { -1 } else { (quota - total).max(0) },
            reset: month.reset_at(),
        })
    }

    fn log_fallback(&self, e: &RedisDown) {
        let now = Utc::now().timestamp();
        let last = self.last_fallback_log.load(Ordering::Relaxed);
        if now - last >= 10
            && self.last_fallback_log.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            let mode = match self.fail_mode {
                FailMode::Open => "counting locally (fail-open)",
                FailMode::Closed => "refusing calls (fail-closed)",
            };
            tracing::warn!(error = %e, "quota store unreachable: {mode}");
        }
    }

    /// Count an error answer (status >= 400) of an admitted call.
    pub async fn record_error(&self, org: i64, endpoint: &str) {
        if !self.enabled {
            return;
        }
        let month = Month::now();
        let field = format!("e|{endpoint}");
        let mut inv = self.add.key(self.usage_key(org, month));
        inv.arg(&field).arg(1);
        if self.store.call(|mut c| async move { inv.invoke_async::<i64>(&mut c).await }).await.is_err() {
            let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
            // Only months already counted locally; an error on a Redis-counted call whose
            // follow-up failed is dropped rather than given a wrong base.
            if let Some(entry) = local.get_mut(&(org, month)) {
                *entry.fields.entry(field).or_default() += 1;
            }
        }
    }

    /// The month's usage: live from Redis (plus any local counts), else from PostgreSQL.
    pub async fn usage(&self, org: i64, month: Month) -> Result<Vec<EndpointUsage>, ApiError> {
        let key = self.usage_key(org, month);
        let live: Result<HashMap<String, i64>, _> = self.store.call(|mut c| async move { c.hgetall(key).await }).await;
        let mut fields = match live {
            Ok(h) if !h.is_empty() => h,
            _ => self.persisted(org, month).await?.fields().into_iter().collect(),
        };
        if let Some(l) = self.local.lock().unwrap_or_else(|p| p.into_inner()).get(&(org, month)) {
            for (f, n) in &l.fields {
                *fields.entry(f.clone()).or_default() += n;
            }
        }
        let mut rows = MonthCounts::from_fields(&fields).rows;
        rows.sort_by(|a, b| b.total_calls.cmp(&a.total_calls).then_with(|| a.endpoint.cmp(&b.endpoint)));
        Ok(rows)
    }

    /// Persist touched months to PostgreSQL and push local counts back to Redis.
    pub async fn flush(&self) {
        self.push_local().await;
        let touched: Vec<_> =
            std::mem::take(&mut *self.touched.lock().unwrap_or_else(|p| p.into_inner())).into_iter().collect();
        for (org, month) in touched {
            if let Err(e) = self.persist_month(org, month).await {
                tracing::warn!(org, %month, error = %e, "usage flush failed; will retry");
                self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert((org, month));
            }
        }
    }

    async fn persist_month(&self, org: i64, month: Month) -> anyhow::Result<()> {
        let key = self.usage_key(org, month);
        let fields: HashMap<String, i64> = self.store.call(|mut c| async move { c.hgetall(key).await }).await?;
        usage::upsert(&self.db, org, month, &MonthCounts::from_fields(&fields), Upsert::Greatest).await?;
        Ok(())
    }

    async fn push_local(&self) {
        // Snapshot, push, then subtract what was pushed: requests keep counting locally on
        // the same entry meanwhile, so no call is lost or counted twice.
        let pending: Vec<PendingPush> = self
            .local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, m)| m.added_total > 0 || !m.fields.is_empty())
            .map(|(k, m)| (*k, m.added_total, m.fields.clone()))
            .collect();
        for ((org, month), added_total, fields) in pending {
            let pushed = async {
                self.seed_month(org, month).await.map_err(|f| match f {
                    Failure::Redis(e) => anyhow::anyhow!(e),
                    Failure::Api(e) => anyhow::anyhow!(e.to_string()),
                    Failure::Suspended => anyhow::anyhow!("seeding a month does not judge standing"),
                })?;
                let mut inv = self.add.key(self.usage_key(org, month));
                inv.arg("total").arg(added_total);
                for (f, n) in &fields {
                    inv.arg(f).arg(*n);
                }
                self.store.call(|mut c| async move { inv.invoke_async::<i64>(&mut c).await }).await?;
                anyhow::Ok(())
            }
            .await;
            if pushed.is_err() {
                continue; // still unreachable: keep counting locally
            }
            let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(entry) = local.get_mut(&(org, month)) {
                entry.base_total += added_total;
                entry.added_total -= added_total;
                for (f, n) in fields {
                    if let Some(v) = entry.fields.get_mut(&f) {
                        *v -= n;
                        if *v == 0 {
                            entry.fields.remove(&f);
                        }
                    }
                }
                if entry.added_total == 0 && entry.fields.is_empty() {
                    local.remove(&(org, month));
                }
            }
            drop(local);
            self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert((org, month));
        }
    }

    /// Last flush at shutdown: local counts that cannot reach Redis are added to PostgreSQL
    /// so they are not lost with the process.
    pub async fn flush_on_shutdown(&self) {
        self.flush().await;
        let pending: Vec<_> =
            std::mem::take(&mut *self.local.lock().unwrap_or_else(|p| p.into_inner())).into_iter().collect();
        for ((org, month), counts) in pending {
            let counts = MonthCounts::from_fields(&counts.fields);
            if let Err(e) = usage::upsert(&self.db, org, month, &counts, Upsert::Add).await {
                tracing::error!(org, %month, error = %tns_store::redacted(&e), "could not persist local usage counts at shutdown");
            }
        }
    }
}

/// A local count waiting to be pushed to Redis: (organization, month), calls, per-route fields.
type PendingPush = ((i64, Month), i64, HashMap<String, i64>);

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
