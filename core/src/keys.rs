//! Credential material: API keys (`sk_live_`) and operator tokens (`tnsop_`), each a prefix
//! and 32 random bytes (base64url), stored only as SHA-256.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use sha2::{Digest, Sha256};

pub const KEY_PREFIX: &str = "sk_live_";
/// Characters of the key shown in lists and on registration (`sk_live_` + 8).
pub const DISPLAY_PREFIX_LEN: usize = 16;

pub struct NewKey {
    /// The full key: shown to the caller once, never stored.
    pub secret: String,
    pub display_prefix: String,
    pub hash: [u8; 32],
}

pub fn generate() -> NewKey {
    let secret = format!("{KEY_PREFIX}{}", random_token());
    NewKey { display_prefix: secret[..DISPLAY_PREFIX_LEN].to_string(), hash: hash(&secret), secret }
}

/// Operator tokens (the admin API's credentials) start with this, so a leaked one is
/// recognisable as such (and never mistaken for a tenant's key).
pub const OPERATOR_TOKEN_PREFIX: &str = "tnsop_";

/// A new operator token and its hash (the only part stored).
pub fn operator_token() -> (String, [u8; 32]) {
    let secret = format!("{OPERATOR_TOKEN_PREFIX}{}", random_token());
    let hashed = hash(&secret);
    (secret, hashed)
}

pub fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Random URL-safe token (sessions, CSRF).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A random token for a link (an invitation, a password reset) and its hash (the only part
/// stored).
pub fn random_token_and_hash() -> (String, [u8; 32]) {
    let token = random_token();
    let hashed = hash(&token);
    (token, hashed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_long_random_and_prefixed() {
        let a = generate();
        let b = generate();
        assert!(a.secret.starts_with(KEY_PREFIX));
        assert_eq!(a.secret.len(), KEY_PREFIX.len() + 43);
        assert_ne!(a.secret, b.secret);
        assert!(a.secret.starts_with(&a.display_prefix));
        assert_eq!(a.hash, hash(&a.secret));
        let (token, hashed) = operator_token();
        assert!(token.starts_with(OPERATOR_TOKEN_PREFIX) && token.len() == OPERATOR_TOKEN_PREFIX.len() + 43);
        assert_eq!(hashed, hash(&token));
    }
}
