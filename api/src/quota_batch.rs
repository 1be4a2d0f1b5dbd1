//! The quota's calls to Redis, combined: the calls of one organization-month that arrive while
//! one of its script runs is in flight are counted together by the next run, in arrival order,
//! exactly as one run each would count them (the script walks them one by one: each call is
//! admitted or refused against the total the calls before it left, and gets its own total).
//! At low load a run is one call; under load Redis runs one script and the process makes one
//! round trip for many calls.
//!
//! The runs of a month happen one at a time, in a task of their own: a request that goes away
//! (its client disconnected) never strands the calls queued behind it. Such a call is counted
//! in Redis all the same (as a single call was, once sent), though its process never served it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use redis::Script;
use tns_core::ids::OrgId;
use tns_store::published::LEASE_GRACE_MS;
use tokio::sync::oneshot;

use crate::{
    quota::{Exempt, Month},
    redis_store::{RedisDown, RedisStore},
};

/// Calls one script run counts at most: under `auth_quota.sh`'s load a run counts about 11. A
/// run that times out after Redis ran it leaves its calls counted there and counted again by
/// the processes' fallback (the ledger counts each once), so the bound also bounds that.
const MAX_RUN: usize = 64;

/// Counts each call of ARGV[2..] (groups of three: the endpoint's field, whether the route is
/// spared the quota, whether it is spared suspension) in turn. Returns {-2} when the limit is
/// unknown and {-3} when the month is not seeded (nothing counted), else {quota, soft, c}
/// followed by two numbers per call: 1 admitted, 0 refused for quota, -4 refused for suspension
/// or -5 not decided while leases are out (nothing counted for either), and the call's number
/// (for a refused one, the last number handed out). `c` is the copy's id (-1 for a copy made
/// before ids). The limit is `<quota>:<soft 0|1>:<suspended 0|1>`.
///
/// Every admitted call has its own number, so `X-RateLimit-Remaining` (the quota less the
/// number) is never handed out twice. Numbers go up from `f` (the last handed out, `total` in a
/// copy that has no `f` yet); a process may lease a block of them ([`crate::quota_lease`]) and
/// give back what it did not use as a hole (`h`, `<first>-<last>` pairs). Past the last number
/// a call takes the lowest hole while the calls counted are below the quota; with none left it
/// is refused (or served as overage on a soft quota), unless the calls counted are below the
/// quota and leases are out (KEYS[3], live until expiry + ARGV[1] ms): they may give numbers
/// back, so the call waits for a recall (-5) instead. A call numbered beyond a soft quota also counts in `overage` (never one of a
/// route spared the quota).
const ADMIT_LUA: &str = concat!(
    tns_store::quota_lua!(),
    r#"
local lim = redis.call('GET', KEYS[2])
if not lim then return {-2} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-3} end
local quota, soft, suspended = limit(lim)
local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
-- Never below the total: a process of the version before numbers counts only the total.
local last = math.max(tonumber(redis.call('HGET', KEYS[1], 'f') or total), total)
local out = {quota, soft, tonumber(redis.call('HGET', KEYS[1], 'c') or '-1')}
local holes, leased = nil, nil
local function hole()
  if not holes then holes = read_holes(KEYS[1]) end
  local h = holes[1]
  if not h or (quota >= 0 and h[1] > quota) then return nil end
  local n = h[1]
  if h[1] == h[2] then table.remove(holes, 1) else h[1] = h[1] + 1 end
  return n
end
local function leases_out()
  if leased == nil then
    leased = false
    local now = now_ms()
    local recs = redis.call('HVALS', KEYS[3])
    for i = 1, #recs do
      if expiry(recs[i]) + tonumber(ARGV[1]) > now then leased = true end
    end
  end
  return leased
end
local fields, added, overage = {}, 0, 0
for i = 2, #ARGV, 3 do
  local spared_quota = ARGV[i + 1] == '1'
  local n = nil
  if suspended == 1 and ARGV[i + 2] == '0' then
    out[#out + 1] = -4
  elseif quota < 0 or last < quota then
    last = last + 1
    n = last
  else
    -- A hole only while the calls counted are below the quota (a plan lowered since the hole
    -- was left must not admit past the new quota).
    if quota < 0 or total < quota then n = hole() end
    if not n then
      if spared_quota then
        last = last + 1
        n = last
      elseif total < quota and leases_out() then
        out[#out + 1] = -5
      elseif soft == 1 then
        last = last + 1
        n = last
      else
        out[#out + 1] = 0
      end
    end
  end
  if n then
    total = total + 1
    added = added + 1
    fields[ARGV[i]] = (fields[ARGV[i]] or 0) + 1
    if soft == 1 and quota >= 0 and n > quota and not spared_quota then overage = overage + 1 end
    out[#out + 1] = 1
    out[#out + 1] = n
  else
    out[#out + 1] = last
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'total', added)
  redis.call('HSET', KEYS[1], 'f', last)
  for field, n in pairs(fields) do redis.call('HINCRBY', KEYS[1], field, n) end
  if overage > 0 then redis.call('HINCRBY', KEYS[1], 'overage', overage) end
  if holes then write_holes(KEYS[1], holes) end
end
return out
"#
);

/// What the script answered for one call.
#[derive(Debug, Clone, Copy)]
pub enum Counted {
    /// Admitted (`admitted`, with its number) or refused for quota (with the last number
    /// handed out), the quota (-1 unlimited) and the id of the copy that counted it.
    /// `crowded`: other calls of the organization-month were counted in the same run (they
    /// arrived while the run before was in flight).
    Done { admitted: bool, number: i64, quota: i64, copy: i64, crowded: bool },
    /// Refused unless leases are given back: recall them and ask again.
    Recall,
    /// The organization is suspended and the route is not spared: nothing counted.
    Suspended,
    /// The limit is not in Redis: seed it and ask again.
    NoLimit,
    /// The month is not in Redis: seed it and ask again.
    NoMonth,
}

/// Why a call was not answered by a run.
#[derive(Debug, Clone)]
pub enum NotCounted {
    Redis(String),
    Unexpected(String),
}

type Reply = Result<Counted, NotCounted>;

/// A month's usage key, its organization's limit key and the month's lease key.
pub type Keys = (String, String, String);

struct Waiting {
    field: String,
    exempt: Exempt,
    reply: oneshot::Sender<Reply>,
}

/// The calls of one organization-month waiting for a run, and whether a task is running them.
#[derive(Default)]
struct Queue {
    waiting: Vec<Waiting>,
    running: bool,
}

pub struct Batches {
    store: Arc<RedisStore>,
    script: Script,
    queues: Mutex<HashMap<(OrgId, Month), Queue>>,
}

/// Should a month's task end any other way than by running out of calls (a panic), its queue
/// goes with it: the calls waiting are answered with an error instead of waiting for ever, and
/// the next call starts a task again.
struct Ending<'a> {
    batches: &'a Batches,
    key: (OrgId, Month),
    done: bool,
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.batches.queues.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.key);
        }
    }
}

impl Batches {
    pub fn new(store: Arc<RedisStore>) -> Arc<Batches> {
        Arc::new(Batches { store, script: Script::new(ADMIT_LUA), queues: Mutex::new(HashMap::new()) })
    }

    /// Count one call of `field` in the month at `usage_key` (limit at `limit_key`).
    pub async fn count(
        self: &Arc<Self>,
        org: OrgId,
        month: Month,
        keys: &Keys,
        field: String,
        exempt: Exempt,
    ) -> Reply {
        let (reply, answer) = oneshot::channel();
        let start = {
            let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
            let q = queues.entry((org, month)).or_default();
            q.waiting.push(Waiting { field, exempt, reply });
            !std::mem::replace(&mut q.running, true)
        };
        if start {
            let (me, keys) = (Arc::clone(self), keys.clone());
            tokio::spawn(async move { me.run_all(org, month, keys).await });
        }
        answer.await.unwrap_or_else(|_| Err(NotCounted::Unexpected("the quota's run ended without an answer".into())))
    }

    /// Run the month's waiting calls until none is left (then the next call starts a task).
    async fn run_all(&self, org: OrgId, month: Month, keys: Keys) {
        let mut ending = Ending { batches: self, key: (org, month), done: false };
        loop {
            let calls = {
                let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
                let Some(q) = queues.get_mut(&(org, month)) else { break };
                if q.waiting.is_empty() {
                    queues.remove(&(org, month));
                    break;
                }
                let n = q.waiting.len().min(MAX_RUN);
                q.waiting.drain(..n).collect::<Vec<_>>()
            };
            self.run(&keys, calls).await;
        }
        ending.done = true;
    }

    async fn run(&self, (usage_key, limit_key, lease_key): &Keys, calls: Vec<Waiting>) {
        let mut inv = self.script.key(usage_key);
        inv.key(limit_key).key(lease_key).arg(LEASE_GRACE_MS);
        for c in &calls {
            inv.arg(&c.field).arg(c.exempt.quota as u8).arg(c.exempt.suspension as u8);
        }
        let answer: Result<Vec<i64>, RedisDown> =
            self.store.call(|mut conn| async move { inv.invoke_async(&mut conn).await }).await;
        let replies: Vec<Reply> = match answer {
            Err(e) => vec![Err(NotCounted::Redis(e.0)); calls.len()],
            Ok(r) => match r.as_slice() {
                [-2] => vec![Ok(Counted::NoLimit); calls.len()],
                [-3] => vec![Ok(Counted::NoMonth); calls.len()],
                [quota, _soft, copy, each @ ..] if each.len() == 2 * calls.len() => {
                    let crowded = calls.len() > 1;
                    each.chunks(2)
                        .map(|c| {
                            Ok(match c[0] {
                                -4 => Counted::Suspended,
                                -5 => Counted::Recall,
                                admitted => Counted::Done {
                                    admitted: admitted == 1,
                                    number: c[1],
                                    quota: *quota,
                                    copy: *copy,
                                    crowded,
                                },
                            })
                        })
                        .collect()
                }
                other => {
                    vec![Err(NotCounted::Unexpected(format!("unexpected quota script reply {other:?}"))); calls.len()]
                }
            },
        };
        for (call, reply) in calls.into_iter().zip(replies) {
            // A caller that went away needs no answer.
            let _ = call.reply.send(reply);
        }
    }
}
