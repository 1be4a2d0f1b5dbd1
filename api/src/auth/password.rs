//! Password hashing with argon2id (the crate's defaults: 19 MiB, 2 passes), off the async
//! runtime because each hash takes tens of milliseconds of CPU.

use std::sync::OnceLock;

use anyhow::Context;
use argon2::{
    password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};

use crate::domain::Password;

pub async fn hash(password: Password) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.expose().as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| anyhow::anyhow!("argon2: {e}"))
    })
    .await
    .context("password hashing task")?
}

/// Verify against a stored hash; `None` (unknown user) verifies against a dummy hash so
/// that "no such user" and "wrong password" take the same time.
pub async fn verify(stored: Option<String>, candidate: String) -> anyhow::Result<bool> {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let phc = stored.unwrap_or_else(|| dummy_hash().to_string());
        let parsed = PasswordHash::new(&phc).map_err(|e| anyhow::anyhow!("stored hash: {e}"))?;
        let ok = Argon2::default().verify_password(candidate.as_bytes(), &parsed).is_ok();
        Ok(known && ok)
    })
    .await
    .context("password verification task")?
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(b"not-a-real-password", &salt).expect("argon2 defaults").to_string()
    })
}
