//! What the API processes read from Redis rather than PostgreSQL on every call: each
//! organization's limit and standing (`limit:{org}`), published by the API on a plan change.
//! A change made elsewhere (an operator's command, the jobs) forgets the published copy, and
//! the next call on any process publishes it afresh from PostgreSQL.
//!
//! An API process may also hold *leases*: blocks of an organization-month's call numbers it
//! admits calls from without asking Redis, each recorded in `lease:{org}:{month}` (field: the
//! lease's id, value `<first>:<last>:<expiry, Redis ms>`). A lease is given up by its holder
//! when used, when it expires, or when *recalled*: [`recall_leases`] publishes the organization
//! on the recall channel and waits until every lease that existed then is given back (or is past
//! its expiry and the grace its holder has to give it back, a holder that died or lost Redis
//! stops using a lease at its expiry by its own clock). A change that must hold at once (a plan,
//! a suspension) recalls after it is published, so when it returns no process still admits
//! against the old limit.

use std::{sync::LazyLock, time::Duration};

use redis::{aio::MultiplexedConnection, Script};
use tns_core::{
    domain::month::Month,
    env::{lease_key_suffix, RedisSettings, LEASE_RECALL_CHANNEL},
    ids::OrgId,
};

/// The Lua every quota script starts with (`concat!(tns_store::quota_lua!(), r#"…"#)`): the
/// formats the scripts share, read (and the holes written) by one set of functions. Redis
/// scripts cannot call each other, so each carries them.
/// - `now_ms()`: Redis's clock, in ms.
/// - `expiry(rec)`: a lease record's (`<first>:<last>:<expiry ms>`) expiry.
/// - `read_holes(key)` / `write_holes(key, holes)`: the month's numbers given back unused
///   (field `h`, `<first>-<last>` pairs in order) as a list of `{first, last}`.
/// - `limit(lim)`: the published limit (`<quota>:<soft>[:<suspended>]`) as three numbers.
#[macro_export]
macro_rules! quota_lua {
    () => {
        r#"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function expiry(rec)
  return tonumber(string.match(rec, ':(%d+)$'))
end
local function read_holes(key)
  local holes = {}
  for a, b in string.gmatch(redis.call('HGET', key, 'h') or '', '(%d+)-(%d+)') do
    holes[#holes + 1] = {tonumber(a), tonumber(b)}
  end
  return holes
end
local function write_holes(key, holes)
  local parts = {}
  for _, h in ipairs(holes) do parts[#parts + 1] = h[1] .. '-' .. h[2] end
  redis.call('HSET', key, 'h', table.concat(parts, ','))
end
local function limit(lim)
  local p = {}
  for part in string.gmatch(lim, '[^:]+') do p[#p + 1] = part end
  return tonumber(p[1]), tonumber(p[2]), tonumber(p[3] or '0')
end
"#
    };
}

/// How long after its expiry a lease is still waited for: its holder gives it back at the
/// latest at its next tick after the expiry, one round trip later.
pub const LEASE_GRACE_MS: i64 = 2000;
/// A recall never waits longer than this, whatever Redis holds: above the longest lease
/// (`TNS_QUOTA_LEASE_MS` is at most 5 s) and its grace.
const RECALL_LIMIT: Duration = Duration::from_secs(10);

/// The live leases of KEYS (key and id pairs), published on ARGV[1] with payload ARGV[2] when any. ARGV[3]:
/// the grace after expiry.
const RECALL_LUA: &str = concat!(
    quota_lua!(),
    r#"
local now = now_ms()
local live = {}
for _, key in ipairs(KEYS) do
  local recs = redis.call('HGETALL', key)
  for i = 1, #recs, 2 do
    if expiry(recs[i + 1]) + tonumber(ARGV[3]) > now then
      live[#live + 1] = key
      live[#live + 1] = recs[i]
    end
  end
end
if #live > 0 then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
return live
"#
);

/// How many of ARGV[2..] (key and id pairs) are still held: present and not past expiry + ARGV[1].
const PENDING_LUA: &str = concat!(
    quota_lua!(),
    r#"
local now = now_ms()
local n = 0
for i = 2, #ARGV, 2 do
  local rec = redis.call('HGET', ARGV[i], ARGV[i + 1])
  if rec and expiry(rec) + tonumber(ARGV[1]) > now then n = n + 1 end
end
return n
"#
);

/// One script run, given up after 2 s.
async fn step<T: redis::FromRedisValue>(
    inv: redis::ScriptInvocation<'_>,
    conn: &mut MultiplexedConnection,
) -> anyhow::Result<T> {
    tokio::time::timeout(Duration::from_secs(2), inv.invoke_async(conn))
        .await
        .map_err(|_| anyhow::anyhow!("recalling quota leases timed out"))?
        .map_err(anyhow::Error::from)
}

/// Forget the published limits of `orgs`, then recall their leases.
pub async fn forget_limits(redis: &RedisSettings, orgs: &[OrgId]) -> anyhow::Result<()> {
    if orgs.is_empty() {
        return Ok(());
    }
    let mut conn = connect(redis).await?;
    let keys: Vec<String> = orgs.iter().map(|o| redis.limit_key(*o)).collect();
    redis::cmd("DEL").arg(keys).query_async::<()>(&mut conn).await?;
    // Every organization's leases, even after one could not be recalled.
    let mut failed = None;
    for org in orgs {
        if let Err(e) = recall_leases(&mut conn, &redis.prefix, *org).await {
            failed.get_or_insert(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Recall the leases of `org` (this month's and, for clocks a little apart at a month's turn,
/// the months either side) and wait until each is given back or expired: afterwards every call
/// of the organization is counted by Redis again, until a process leases anew against what
/// Redis holds now.
pub async fn recall_leases(conn: &mut MultiplexedConnection, prefix: &str, org: OrgId) -> anyhow::Result<()> {
    let month = Month::now();
    let keys = [month.previous(), month, month.next()].map(|m| format!("{prefix}{}", lease_key_suffix(org, m)));
    // Made (and hashed) once per process, not per recall.
    static RECALL: LazyLock<Script> = LazyLock::new(|| Script::new(RECALL_LUA));
    static PENDING: LazyLock<Script> = LazyLock::new(|| Script::new(PENDING_LUA));
    let mut inv = RECALL.prepare_invoke();
    for k in &keys {
        inv.key(k);
    }
    inv.arg(format!("{prefix}{LEASE_RECALL_CHANNEL}")).arg(org.get()).arg(LEASE_GRACE_MS);
    let live: Vec<String> = step(inv, conn).await?;
    if live.is_empty() {
        return Ok(());
    }
    let started = tokio::time::Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        // Given back within a round trip or two when their holders listen; within the lease's
        // life and the grace when one does not.
        tokio::time::sleep(pause).await;
        let mut inv = PENDING.prepare_invoke();
        inv.arg(LEASE_GRACE_MS).arg(&live);
        let held: i64 = step(inv, conn).await?;
        if held == 0 {
            return Ok(());
        }
        if started.elapsed() > RECALL_LIMIT {
            anyhow::bail!("{held} quota leases were not given back in time");
        }
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// A connection for one command-line action or job run (not the API's pool), given up after
/// 5 s so an unreachable Redis never hangs the caller.
pub(crate) async fn connect(redis: &RedisSettings) -> anyhow::Result<redis::aio::MultiplexedConnection> {
    let client = redis::Client::open(redis.url.as_str())?;
    tokio::time::timeout(std::time::Duration::from_secs(5), client.get_multiplexed_async_connection())
        .await
        .map_err(|_| anyhow::anyhow!("connecting to Redis timed out"))?
        .map_err(Into::into)
}
