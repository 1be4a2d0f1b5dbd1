//! Signing deliveries: `X-Webhook-Signature` is the lowercase hex HMAC-SHA256 of the exact
//! body bytes, keyed with the subscription's secret as given (the whole `whsec_…` string).

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use ring::{
    hmac,
    rand::{SecureRandom, SystemRandom},
};

pub const SECRET_PREFIX: &str = "whsec_";

pub fn sign(secret: &[u8], body: &[u8]) -> String {
    hex::encode(hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), body).as_ref())
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
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn generated_secrets_are_prefixed_and_distinct() {
        let (a, b) = (generate_secret(), generate_secret());
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 43, "{a}");
        assert_ne!(a, b);
    }
}
