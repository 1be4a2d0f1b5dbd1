//! Per-client limit for unauthenticated requests (sign-up spam, login guessing, invented API
//! keys): a fixed window counted in Redis, so all API processes share it; counted locally when
//! Redis is unreachable. A client is its IPv4 address, or its IPv6 /64
//! ([`tns_core::client::client_key`]). A sign-in account has a back-off of its
//! own ([`AccountBackoff`]).

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::Mutex,
};

use axum::{extract::ConnectInfo, http::Request};
use redis::Script;
use tns_core::client::client_key;

use crate::{
    error::{ApiError, Code},
    quota::Decision,
    redis_store::RedisStore,
};

const HIT_LUA: &str = r#"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"#;

/// A budget of events per fixed window, per party (a client, an organization): counted in Redis,
/// shared by every API process, and counted locally while Redis is unreachable.
pub struct Budget {
    /// What is counted (the Redis key's prefix): each counter is a budget of its own.
    what: &'static str,
    limit: u64,
    window_secs: u64,
    hit: Script,
    local: Mutex<HashMap<(String, u64), u64>>,
}

impl Budget {
    pub fn new(what: &'static str, limit: u64, window_secs: u64) -> Budget {
        Budget { what, limit, window_secs, hit: Script::new(HIT_LUA), local: Mutex::new(HashMap::new()) }
    }

    fn window(&self) -> u64 {
        chrono::Utc::now().timestamp() as u64 / self.window_secs
    }

    fn redis_key(&self, store: &RedisStore, who: &str, window: u64) -> String {
        store.key(&format!("{}:{who}:{window}", self.what))
    }

    /// Whether `who`'s budget for the window is already spent, without spending any.
    pub async fn exhausted(&self, store: &RedisStore, who: &str) -> Option<Decision> {
        let window = self.window();
        let key = self.redis_key(store, who, window);
        let read =
            store.call(|mut c| async move { redis::cmd("GET").arg(key).query_async::<Option<u64>>(&mut c).await });
        let count = match read.await {
            Ok(n) => n.unwrap_or(0),
            Err(_) => {
                let local = self.local.lock().unwrap_or_else(|p| p.into_inner());
                local.get(&(who.to_string(), window)).copied().unwrap_or(0)
            }
        };
        (count >= self.limit).then(|| self.decision(count, window))
    }

    fn decision(&self, count: u64, window: u64) -> Decision {
        Decision {
            admitted: count <= self.limit,
            limit: self.limit as i64,
            remaining: self.limit.saturating_sub(count) as i64,
            reset: ((window + 1) * self.window_secs) as i64,
            over: count > self.limit,
        }
    }

    /// Count one event for `who`.
    pub async fn hit(&self, store: &RedisStore, who: &str) -> Decision {
        let window = self.window();
        let mut inv = self.hit.key(self.redis_key(store, who, window));
        inv.arg(self.window_secs + 1);
        let count = match store.call(|mut c| async move { inv.invoke_async::<u64>(&mut c).await }).await {
            Ok(n) => n,
            Err(_) => {
                let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
                local.retain(|(_, w), _| *w == window);
                let n = local.entry((who.to_string(), window)).or_default();
                *n += 1;
                *n
            }
        };
        self.decision(count, window)
    }
}

/// A [`Budget`] per client address (an IPv4 address, or an IPv6 /64).
pub struct IpThrottle {
    budget: Budget,
    trust_forwarded_for: bool,
}

impl IpThrottle {
    pub fn new(what: &'static str, limit: u64, window_secs: u64, trust_forwarded_for: bool) -> IpThrottle {
        IpThrottle { budget: Budget::new(what, limit, window_secs), trust_forwarded_for }
    }

    /// Whether this client's budget for the window is already spent, without spending any:
    /// asked before work that would cost the database (an API key this process does not know),
    /// so a flood of invented keys from a client over its limit stops at Redis.
    pub async fn exhausted(&self, store: &RedisStore, ip: IpAddr) -> Option<Decision> {
        self.budget.exhausted(store, &client_key(ip)).await
    }

    pub async fn hit(&self, store: &RedisStore, ip: IpAddr) -> Decision {
        self.budget.hit(store, &client_key(ip)).await
    }

    /// The client address: the socket peer, or the right-most `X-Forwarded-For` entry (the
    /// one our own load balancer appended) when configured to trust it.
    pub fn client_ip<B>(&self, req: &Request<B>) -> IpAddr {
        if self.trust_forwarded_for {
            let forwarded = req
                .headers()
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter_map(|s| s.trim().parse::<IpAddr>().ok())
                .next_back();
            if let Some(ip) = forwarded {
                return ip;
            }
        }
        req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }
}

/// Failed sign-ins an account may have before it must wait.
const FREE_FAILURES: u32 = 5;
/// The longest wait.
const MAX_BACKOFF_SECS: u64 = 900;
/// How long a streak of failures is remembered.
const STREAK_SECS: u64 = 3600;

/// After [`FREE_FAILURES`] failed sign-ins, an account waits 1 s, then 2, 4, … up to 15 min
/// before the next attempt is even checked, whichever addresses the attempts come from; a
/// success ends the streak. Kept in Redis (shared by every API process; a local count when it is
/// unreachable), under the user's id or a hash of an unknown address, never the address itself.
pub struct AccountBackoff {
    reserve: Script,
    local: Mutex<HashMap<String, (u32, u64)>>,
}

/// Reserve one sign-in attempt for an account: refused (the wait, in milliseconds, so that a
/// wait of 1 s is never cut short by a clock tick) while the account must wait; otherwise
/// counted at once, before the password is checked, so guesses sent together are counted
/// together. A success clears the count.
const RESERVE_LUA: &str = r#"
local now = tonumber(ARGV[1])
local wait_until = tonumber(redis.call('HGET', KEYS[1], 'until_ms') or '0')
if wait_until > now then return wait_until - now end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
local wait = 0
if n > tonumber(ARGV[2]) then
  wait = math.min(2 ^ (n - tonumber(ARGV[2]) - 1), tonumber(ARGV[3])) * 1000
end
redis.call('HSET', KEYS[1], 'until_ms', now + wait)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 0
"#;

impl Default for AccountBackoff {
    fn default() -> Self {
        AccountBackoff { reserve: Script::new(RESERVE_LUA), local: Mutex::new(HashMap::new()) }
    }
}

/// Whose sign-ins are counted: the user an e-mail address found (so every spelling the
/// database matches to one user shares one count), or the address as given when it found none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Account<'a> {
    User(i64),
    Unknown(&'a str),
}

impl Account<'_> {
    fn id(&self) -> String {
        use sha2::Digest;
        match self {
            Account::User(id) => format!("u{id}"),
            Account::Unknown(email) => format!("e{}", hex::encode(sha2::Sha256::digest(email.as_bytes()))),
        }
    }
}

impl AccountBackoff {
    /// One attempt for `account`, or 429 while it must still wait.
    pub async fn reserve(&self, store: &RedisStore, account: &Account<'_>) -> Result<(), ApiError> {
        let now = chrono::Utc::now().timestamp_millis() as u64;
        let id = account.id();
        let mut inv = self.reserve.key(store.key(&format!("signin:{id}")));
        inv.arg(now).arg(FREE_FAILURES).arg(MAX_BACKOFF_SECS).arg(STREAK_SECS);
        let wait = match store.call(|mut c| async move { inv.invoke_async::<u64>(&mut c).await }).await {
            Ok(w) => w,
            Err(_) => {
                let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
                if local.len() > 100_000 {
                    local.retain(|_, (_, until)| *until > now);
                }
                let entry = local.entry(id).or_insert((0, 0));
                if entry.1 > now {
                    entry.1 - now
                } else {
                    entry.0 += 1;
                    if entry.0 > FREE_FAILURES {
                        let secs = (1u64 << (entry.0 - FREE_FAILURES - 1).min(20)).min(MAX_BACKOFF_SECS);
                        entry.1 = now + secs * 1000;
                    }
                    0
                }
            }
        };
        if wait > 0 {
            return Err(ApiError::TooManyRequests {
                code: Code::RateLimited,
                detail: "too many failed sign-ins for this account; wait before trying again".into(),
                retry_after_secs: wait.div_ceil(1000),
            });
        }
        Ok(())
    }

    /// A successful sign-in: the account starts afresh.
    pub async fn succeeded(&self, store: &RedisStore, account: &Account<'_>) {
        let id = account.id();
        let key = store.key(&format!("signin:{id}"));
        let _ = store.call(|mut c| async move { redis::cmd("DEL").arg(key).query_async::<()>(&mut c).await }).await;
        self.local.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
}
