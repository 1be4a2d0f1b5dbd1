//! Password hashing with argon2id (the crate's defaults: 19 MiB, 2 passes), off the async
//! runtime because each hash takes tens of milliseconds of CPU, and at most [`CONCURRENCY`] at a
//! time: a burst of sign-ins waits its turn instead of taking memory without bound.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        OnceLock,
    },
    time::Duration,
};

use anyhow::Context;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// Hashes computed at once per process (19 MiB each).
pub const CONCURRENCY: usize = 4;
/// How long a sign-in waits for a turn before it is told to retry.
const WAIT: Duration = Duration::from_secs(5);

static SLOTS: Semaphore = Semaphore::const_new(CONCURRENCY);

/// Hashes being computed now, and the most there ever were at once.
static BUSY: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The most hashes this process has computed at once.
pub fn peak_concurrency() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Run one hash, counted.
fn counted<T>(f: impl FnOnce() -> T) -> T {
    let now = BUSY.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(now, Ordering::SeqCst);
    let out = f();
    BUSY.fetch_sub(1, Ordering::SeqCst);
    out
}

/// A turn to hash, or 503 when sign-ins are queueing too long.
async fn turn() -> Result<tokio::sync::SemaphorePermit<'static>, ApiError> {
    match tokio::time::timeout(WAIT, SLOTS.acquire()).await {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(ApiError::Unavailable("too many sign-ins at once; retry in a few seconds".into())),
    }
}
use argon2::{
    password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};

use tns_core::domain::Password;

pub async fn hash(password: Password) -> Result<String, ApiError> {
    let _turn = turn().await?;
    let hashed = tokio::task::spawn_blocking(move || {
        counted(|| {
            let salt = SaltString::generate(&mut OsRng);
            Argon2::default()
                .hash_password(password.expose().as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| anyhow::anyhow!("argon2: {e}"))
        })
    })
    .await
    .context("password hashing task")??;
    Ok(hashed)
}

/// Verify against a stored hash; `None` (unknown user) verifies against a dummy hash so
/// that "no such user" and "wrong password" take the same time.
pub async fn verify(stored: Option<String>, candidate: String) -> Result<bool, ApiError> {
    let _turn = turn().await?;
    let ok = tokio::task::spawn_blocking(move || -> anyhow::Result<bool> {
        let known = stored.is_some();
        let phc = stored.unwrap_or_else(|| dummy_hash().to_string());
        let parsed = PasswordHash::new(&phc).map_err(|e| anyhow::anyhow!("stored hash: {e}"))?;
        let ok = counted(|| Argon2::default().verify_password(candidate.as_bytes(), &parsed).is_ok());
        Ok(known && ok)
    })
    .await
    .context("password verification task")??;
    Ok(ok)
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(b"not-a-real-password", &salt).expect("argon2 defaults").to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_burst_of_sign_ins_hashes_a_few_at_a_time() {
        let burst: Vec<_> = (0..16).map(|i| tokio::spawn(verify(None, format!("guess {i}")))).collect();
        for b in burst {
            assert!(!b.await.unwrap().unwrap(), "unknown users never verify");
        }
        assert!(peak_concurrency() >= 1);
        assert!(peak_concurrency() <= CONCURRENCY, "{} hashes at once", peak_concurrency());
    }
}
