//! Who calls the admin API, and what they may do: `Authorization: Bearer tnsop_…`, an operator
//! token looked up by its SHA-256 on every request (no cache, so a revocation holds from the
//! next request), its scope checked by the route's type, its rate limited per process.

use std::{
    collections::HashMap,
    marker::PhantomData,
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    extract::FromRequestParts,
    http::{header, request::Parts},
};
use tns_core::{
    keys,
    scopes::operator::{Needed, OperatorScope},
};
use tns_store::{audit::Actor, operator_tokens};

use super::{error::AdminError, AdminState};

/// The operator behind a request's token.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The token's id.
    pub token_id: i64,
    /// The operator's name, as the audit log shows it (`operator:<name>`).
    pub name: String,
    pub scopes: Vec<OperatorScope>,
}

impl Identity {
    /// Who acts, for the audit log.
    pub fn actor(&self) -> Actor {
        Actor::Operator(self.name.clone())
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
        st.throttle.admit(who.token_id)?;
        if !who.scopes.contains(&S::SCOPE) {
            return Err(AdminError::Forbidden(format!("this operator token lacks the `{}` scope", S::SCOPE)));
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
    let found = operator_tokens::authenticate(&st.db, &keys::hash(token)).await?;
    match found {
        None => Err(unauthorized("invalid operator token")),
        Some(t) if t.revoked => Err(unauthorized("this operator token has been revoked")),
        Some(t) => Ok(Identity { token_id: t.id, name: t.name, scopes: t.scopes }),
    }
}

/// Requests one token may make per window, on each process.
pub const RATE_LIMIT: u32 = 600;
pub const RATE_WINDOW: Duration = Duration::from_secs(60);

/// A fixed-window count of requests per token, in this process: operators' tools that run
/// away are slowed down, not the database behind them. Held in memory (the tokens are few).
pub struct Throttle {
    limit: u32,
    window: Duration,
    windows: Mutex<HashMap<i64, (Instant, u32)>>,
}

impl Throttle {
    pub fn new(limit: u32, window: Duration) -> Throttle {
        Throttle { limit, window, windows: Mutex::new(HashMap::new()) }
    }

    /// Count a request of token `id`; 429 once its window is full.
    pub fn admit(&self, id: i64) -> Result<(), AdminError> {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let (started, count) = windows.entry(id).or_insert((now, 0));
        if now.duration_since(*started) >= self.window {
            (*started, *count) = (now, 0);
        }
        if *count >= self.limit {
            let left = self.window.saturating_sub(now.duration_since(*started));
            return Err(AdminError::TooManyRequests { retry_after_secs: left.as_secs().max(1) });
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
        assert!(t.admit(1).is_ok() && t.admit(1).is_ok());
        assert!(matches!(t.admit(1), Err(AdminError::TooManyRequests { retry_after_secs }) if retry_after_secs <= 60));
        assert!(t.admit(2).is_ok(), "another token has its own window");
        let t = Throttle::new(1, Duration::ZERO);
        assert!(t.admit(1).is_ok() && t.admit(1).is_ok(), "a window that has passed starts afresh");
    }
}
