//! Portal sessions: a random cookie token whose SHA-256 names a Redis entry, so a copy of
//! Redis holds no usable cookie. CSRF: a second random token, returned at login and sent as
//! a readable cookie; unsafe methods on cookie auth must echo it in `X-CSRF-Token`.

use std::time::Duration;
use tns_core::ids::{OrgId, UserId};

use axum::http::{header, HeaderMap, HeaderValue};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use crate::redis_store::{RedisDown, RedisStore};
use tns_core::keys::random_token;

pub const SESSION_COOKIE: &str = "tns_session";
pub const CSRF_COOKIE: &str = "tns_csrf";
pub const CSRF_HEADER: &str = "x-csrf-token";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub user_id: UserId,
    pub org_id: i64,
    pub csrf: String,
    /// When it ends (Unix time), for the portal to show; sessions made before it was kept
    /// have none.
    #[serde(default)]
    pub expires_at: Option<i64>,
    /// When it was opened (Unix time in milliseconds): a session opened before its member's
    /// password changed is refused.
    #[serde(default)]
    pub issued_at_ms: Option<i64>,
}

impl Session {
    /// Whether the session outlived a change that ended its member's sessions (`None`: none did).
    pub fn ended_by(&self, valid_after: Option<chrono::DateTime<chrono::Utc>>) -> bool {
        match valid_after {
            None => false,
            Some(t) => self.issued_at_ms.is_none_or(|issued| issued <= t.timestamp_millis()),
        }
    }
}

fn redis_key(store: &RedisStore, token: &str) -> String {
    store.key(&format!("session:{}", hex::encode(tns_core::keys::hash(token))))
}

/// Create a session; returns the cookie token and the session.
pub async fn create(
    store: &RedisStore,
    ttl: Duration,
    user_id: UserId,
    org_id: OrgId,
) -> Result<(String, Session), RedisDown> {
    let token = random_token();
    let now = chrono::Utc::now();
    let expires_at = Some(now.timestamp() + ttl.as_secs() as i64);
    let session = Session {
        user_id,
        org_id: org_id.get(),
        csrf: random_token(),
        expires_at,
        issued_at_ms: Some(now.timestamp_millis()),
    };
    let value = serde_json::to_string(&session).expect("session serializes");
    let key = redis_key(store, &token);
    store.call(|mut c| async move { c.set_ex::<_, _, ()>(key, value, ttl.as_secs()).await }).await?;
    Ok((token, session))
}

pub async fn lookup(store: &RedisStore, token: &str) -> Result<Option<Session>, RedisDown> {
    let key = redis_key(store, token);
    let raw: Option<String> = store.call(|mut c| async move { c.get(key).await }).await?;
    Ok(raw.and_then(|r| serde_json::from_str(&r).ok()))
}

/// End a session: its entry is gone at once, on every API process.
pub async fn destroy(store: &RedisStore, token: &str) -> Result<(), RedisDown> {
    let key = redis_key(store, token);
    store.call(|mut c| async move { c.del::<_, ()>(key).await }).await
}

/// The `Set-Cookie` values that clear both cookies in the browser.
pub fn cleared(secure: bool) -> [HeaderValue; 2] {
    let secure = if secure { "; Secure" } else { "" };
    [SESSION_COOKIE, CSRF_COOKIE].map(|name| {
        HeaderValue::from_str(&format!("{name}=; Path=/; Max-Age=0; SameSite=Lax{secure}")).expect("cookie is ASCII")
    })
}

/// The `Set-Cookie` values for a new session.
pub fn cookies(token: &str, session: &Session, ttl: Duration, secure: bool) -> [HeaderValue; 2] {
    let secure = if secure { "; Secure" } else { "" };
    let max_age = ttl.as_secs();
    let session_cookie = format!("{SESSION_COOKIE}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}");
    // Readable by the portal's script, which echoes it in X-CSRF-Token.
    let csrf_cookie = format!("{CSRF_COOKIE}={}; Path=/; Max-Age={max_age}; SameSite=Lax{secure}", session.csrf);
    [
        HeaderValue::from_str(&session_cookie).expect("cookie is ASCII"),
        HeaderValue::from_str(&csrf_cookie).expect("cookie is ASCII"),
    ]
}

pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}
