//! Per-client-IP limit for unauthenticated requests (sign-up spam, login guessing): a fixed
//! window counted in Redis, so all API processes share it; counted locally when Redis is
//! unreachable.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::Mutex,
};

use axum::{extract::ConnectInfo, http::Request};
use redis::Script;

use crate::{quota::Decision, redis_store::RedisStore};

const HIT_LUA: &str = r#"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"#;

pub struct IpThrottle {
    limit: u64,
    window_secs: u64,
    trust_forwarded_for: bool,
    hit: Script,
    local: Mutex<HashMap<(IpAddr, u64), u64>>,
}

impl IpThrottle {
    pub fn new(limit: u64, window_secs: u64, trust_forwarded_for: bool) -> IpThrottle {
        IpThrottle {
            limit,
            window_secs,
            trust_forwarded_for,
            hit: Script::new(HIT_LUA),
            local: Mutex::new(HashMap::new()),
        }
    }

    pub async fn hit(&self, store: &RedisStore, ip: IpAddr) -> Decision {
        let now = chrono::Utc::now().timestamp() as u64;
        let window = now / self.window_secs;
        let mut inv = self.hit.key(store.key(&format!("ip:{ip}:{window}")));
        inv.arg(self.window_secs + 1);
        let count = match store.call(|mut c| async move { inv.invoke_async::<u64>(&mut c).await }).await {
            Ok(n) => n,
            Err(_) => {
                let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
                local.retain(|(_, w), _| *w == window);
                let n = local.entry((ip, window)).or_default();
                *n += 1;
                *n
            }
        };
        Decision {
            admitted: count <= self.limit,
            limit: self.limit as i64,
            remaining: self.limit.saturating_sub(count) as i64,
            reset: ((window + 1) * self.window_secs) as i64,
        }
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
