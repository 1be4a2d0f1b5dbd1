//! Who calls the admin API, and what they may do: `Authorization: Bearer tnsop_…`, an operator
//! token looked up by its SHA-256 on every request (no cache, so a revocation holds from the
//! next request), its scope checked by the route's type, its rate limited per process. A client
//! (its address, as the tenant API counts it) that has sent its fill of refused tokens in a
//! window gets no more lookups until the window ends ([`Limits`]).

use std::{
    collections::HashMap,
    hash::Hash,
    marker::PhantomData,
    net::{IpAddr, SocketAddr},
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    extract::{ConnectInfo, FromRequestParts},
    http::{header, request::Parts},
};
use tns_core::{
    client::client_key,
    env::AuthRate,
    ids::OperatorTokenId,
    keys,
    scopes::operator::{Needed, OperatorScope},
};
use tns_store::{audit::Actor, operator_tokens};

use super::{
    error::{AdminError, Code},
    AdminState,
};

/// The operator behind a request's token.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The token's id.
    pub token_id: OperatorTokenId,
    /// The operator's name, as the audit log shows it (`operator:<name>`).
    pub name: String,
    pub scopes: Vec<OperatorScope>,
}

impl Identity {
    /// Who acts, for the audit log.
    pub fn actor(&self) -> Actor {
        Actor::OperatorToken { id: self.token_id, name: self.name.clone() }
    }
}

/// Extractor for a route that needs an operator token holding scope `S` (a type of
/// [`tns_core::scopes::operator::need`]): a handler cannot be written without saying which,
/// and the scope is checked before the body is read.
pub struct Operator<S: Needed>(Identity, PhantomData<S>);

impl<S: Needed> std::ops::Deref for Operator<S> {
    type Target = Identity;
    fn deref(&self) -> &Identity {
        &self.0
    }
}

impl<S: Needed> FromRequestParts<AdminState> for Operator<S> {
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, st: &AdminState) -> Result<Self, AdminError> {
        let who = authenticate(parts, st).await?;
        st.limits.per_token.admit(who.token_id).map_err(|retry_after_secs| AdminError::TooManyRequests {
            code: Code::RateLimited,
            detail: format!("too many requests with this operator token; retry in {retry_after_secs} s"),
            retry_after_secs,
        })?;
        if !who.scopes.contains(&S::SCOPE) {
            return Err(AdminError::Forbidden(
                Code::MissingScope,
                format!("this operator token lacks the `{}` scope", S::SCOPE),
            ));
        }
        Ok(Operator(who, PhantomData))
    }
}

async fn authenticate(parts: &Parts, st: &AdminState) -> Result<Identity, AdminError> {
    let unauthorized = |why: &str| AdminError::Unauthorized(why.into());
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized("missing credentials: send `Authorization: Bearer <operator token>`"));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .ok_or_else(|| unauthorized("Authorization must be `Bearer <operator token>`"))?;
    // Anything else (a tenant's API key above all) is not looked up.
    if !token.starts_with(keys::OPERATOR_TOKEN_PREFIX) {
        return Err(unauthorized("not an operator token (they start with `tnsop_`)"));
    }
    let (hash, client) = (keys::hash(token), client_key(peer(parts)));
    let limits = &st.limits;
    if let Some(retry_after_secs) = limits.refused.full(&client).filter(|_| !limits.is_vouched(&hash)) {
        return Err(AdminError::TooManyRequests {
            code: Code::RateLimited,
            detail: format!("too many refused operator tokens from this address; retry in {retry_after_secs} s"),
            retry_after_secs,
        });
    }
    limits.lookups.inc();
    let found = operator_tokens::authenticate(&st.db, &hash).await?;
    let refused = match found {
        Some(t) if !t.revoked => {
            limits.vouch(hash);
            return Ok(Identity { token_id: t.id, name: t.name, scopes: t.scopes });
        }
        Some(_) => unauthorized("this operator token has been revoked"),
        None => unauthorized("invalid operator token"),
    };
    limits.unvouch(&hash);
    // Counted even when the budget is spent already (a vouched token revoked since).
    let _ = limits.refused.admit(client);
    Err(refused)
}

/// The peer's address (the admin listener trusts no forwarding header: it is reached inside
/// the cluster or through a port-forward, never through the tenants' load balancer).
fn peer(parts: &Parts) -> IpAddr {
    parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

/// Requests one token may make per window, on each process.
pub const RATE_LIMIT: u64 = 600;
pub const RATE_WINDOW: Duration = Duration::from_secs(60);

/// What keeps runaway tools and guessing off the admin API's small pool, in this process (like
/// the pool itself): each process's budgets protect its own connections, and the admin API
/// needs no Redis to defend itself.
pub struct Limits {
    /// Requests per operator token.
    per_token: Throttle<OperatorTokenId>,
    /// Refused tokens per client (`TNS_AUTH_RATE_LIMIT` per `TNS_AUTH_RATE_WINDOW_SECS`):
    /// beyond it, a token is answered 429 without being looked up.
    refused: Throttle<String>,
    /// Tokens (by hash) that authenticated here within the refused budget's window: still
    /// looked up for a client whose budget is spent, so one operator's stale token does not
    /// lock out colleagues behind the same address (a port-forward makes everyone one client).
    vouched: Mutex<HashMap<[u8; 32], Instant>>,
    /// Counts the lookups that reach the database.
    lookups: prometheus::IntCounter,
}

impl Limits {
    pub fn new(refused: AuthRate, lookups: prometheus::IntCounter) -> Limits {
        Limits {
            per_token: Throttle::new(RATE_LIMIT, RATE_WINDOW),
            refused: Throttle::new(refused.limit, refused.window),
            vouched: Mutex::new(HashMap::new()),
            lookups,
        }
    }

    fn is_vouched(&self, hash: &[u8; 32]) -> bool {
        let vouched = self.vouched.lock().unwrap_or_else(|e| e.into_inner());
        vouched.get(hash).is_some_and(|at| at.elapsed() < self.refused.window)
    }

    /// Only valid tokens are vouched for, so the map stays as small as the tokens.
    fn vouch(&self, hash: [u8; 32]) {
        self.vouched.lock().unwrap_or_else(|e| e.into_inner()).insert(hash, Instant::now());
    }

    fn unvouch(&self, hash: &[u8; 32]) {
        self.vouched.lock().unwrap_or_else(|e| e.into_inner()).remove(hash);
    }
}

/// Keys whose windows are kept before the ones that have ended are dropped.
const MAX_WINDOWS: usize = 10_000;

/// A fixed-window count per key (a token, a client), in this process.
pub struct Throttle<K> {
    limit: u64,
    window: Duration,
    windows: Mutex<HashMap<K, (Instant, u64)>>,
}

impl<K: Eq + Hash> Throttle<K> {
    pub fn new(limit: u64, window: Duration) -> Throttle<K> {
        Throttle { limit, window, windows: Mutex::new(HashMap::new()) }
    }

    /// Seconds until `key`'s window ends, when it is full; counts nothing.
    pub fn full(&self, key: &K) -> Option<u64> {
        let windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let &(started, count) = windows.get(key)?;
        let left = self.window.saturating_sub(started.elapsed());
        (!left.is_zero() && count >= self.limit).then(|| left.as_secs().max(1))
    }

    /// Count one for `key`; once its window is full, the seconds until it ends instead.
    pub fn admit(&self, key: K) -> Result<(), u64> {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= MAX_WINDOWS {
            windows.retain(|_, (started, _)| now.duration_since(*started) < self.window);
        }
        let (started, count) = windows.entry(key).or_insert((now, 0));
        if now.duration_since(*started) >= self.window {
            (*started, *count) = (now, 0);
        }
        if *count >= self.limit {
            let left = self.window.saturating_sub(now.duration_since(*started));
            return Err(left.as_secs().max(1));
        }
        *count += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_held_to_its_window_and_others_are_not() {
        let t = Throttle::new(2, Duration::from_secs(60));
        assert_eq!(t.full(&1), None);
        assert!(t.admit(1).is_ok() && t.admit(1).is_ok());
        assert!(matches!(t.full(&1), Some(secs) if secs <= 60), "full, and asking counts nothing");
        assert!(matches!(t.admit(1), Err(retry_after_secs) if retry_after_secs <= 60));
        assert!(t.admit(2).is_ok(), "another token has its own window");
        let t = Throttle::new(1, Duration::ZERO);
        assert!(t.admit(1).is_ok() && t.admit(1).is_ok(), "a window that has passed starts afresh");
        assert_eq!(t.full(&1), None);
    }
}
