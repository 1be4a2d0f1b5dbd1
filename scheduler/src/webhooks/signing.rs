//! Signing deliveries: `X-Webhook-Signature` is the lowercase hex HMAC-SHA256 of the exact
//! body bytes, keyed with the subscription's secret as given (the whole `whsec_…` string).

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use ring::{
    hmac,
    rand::{SecureRandom, SystemRandom},
};

pub const SECRET_PREFIX: &str = "whsec_";

/// A subscription's signing key, prepared once for the many bodies it signs.
#[derive(Clone)]
pub struct Key(hmac::Key);

impl Key {
    pub fn new(secret: &[u8]) -> Key {
        Key(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// Lowercase hex HMAC-SHA256 of `body`.
    pub fn sign(&self, body: &[u8]) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let tag = hmac::sign(&self.0, body);
        let mut out = String::with_capacity(2 * tag.as_ref().len());
        for b in tag.as_ref() {
            out.push(DIGITS[usize::from(b >> 4)] as char);
            out.push(DIGITS[usize::from(b & 0xf)] as char);
        }
        out
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

/// A new secret: `whsec_` and 32 random bytes, base64url.
pub fn generate_secret() -> String {
    let mut b = [0u8; 32];
    SystemRandom::new().fill(&mut b).expect("system randomness");
    format!("{SECRET_PREFIX}{}", URL_SAFE_NO_PAD.encode(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4231_test_case_2() {
        let key = Key::new(b"Jefe");
        assert_eq!(
            key.sign(b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(key.sign(b""), hex::encode(hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, b"Jefe"), b"")));
        assert_eq!(format!("{key:?}"), "Key(<redacted>)");
    }

    #[test]
    fn generated_secrets_are_prefixed_and_distinct() {
        let (a, b) = (generate_secret(), generate_secret());
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 43, "{a}");
        assert_ne!(a, b);
    }
}
