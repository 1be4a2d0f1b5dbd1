//! Signing deliveries, two ways side by side:
//!
//! - `X-Webhook-Signature`: the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with
//!   the subscription's secret as given (the whole `whsec_…` string, as UTF-8);
//! - `webhook-signature` (Standard Webhooks): `v1,` and the base64 HMAC-SHA256 of
//!   `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's base64-decoded part
//!   after `whsec_`, so the standard's libraries verify deliveries as they come. A secret that
//!   is not `whsec_` and base64 (one the subscriber chose, or one generated before secrets were
//!   standard base64) keys it with the whole string's UTF-8 bytes instead: still verifiable by
//!   hand, but not by those libraries.

use base64::{
    alphabet,
    engine::{general_purpose::STANDARD, DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
    Engine,
};
use ring::{
    hmac,
    rand::{SecureRandom, SystemRandom},
};

pub const SECRET_PREFIX: &str = "whsec_";

/// Standard base64, padded or not, trailing bits ignored: what the Standard Webhooks libraries
/// accept after `whsec_`.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// A subscription's signing keys, prepared once for the many bodies they sign.
#[derive(Clone)]
pub struct Key {
    /// Keyed with the whole secret: `X-Webhook-Signature`.
    whole: hmac::Key,
    /// Keyed with [`standard_key`]: `webhook-signature`.
    standard: hmac::Key,
}

impl Key {
    pub fn new(secret: &[u8]) -> Key {
        Key {
            whole: hmac::Key::new(hmac::HMAC_SHA256, secret),
            standard: hmac::Key::new(hmac::HMAC_SHA256, &standard_key(secret)),
        }
    }

    /// Lowercase hex HMAC-SHA256 of `body` (`X-Webhook-Signature`).
    pub fn sign(&self, body: &[u8]) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let tag = hmac::sign(&self.whole, body);
        let mut out = String::with_capacity(2 * tag.as_ref().len());
        for b in tag.as_ref() {
            out.push(DIGITS[usize::from(b >> 4)] as char);
            out.push(DIGITS[usize::from(b & 0xf)] as char);
        }
        out
    }

    /// One Standard Webhooks signature, `v1,<base64>`, of `{id}.{timestamp}.{body}`.
    pub fn sign_standard(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut ctx = hmac::Context::with_key(&self.standard);
        ctx.update(id.as_bytes());
        ctx.update(b".");
        ctx.update(timestamp.to_string().as_bytes());
        ctx.update(b".");
        ctx.update(body);
        format!("v1,{}", STANDARD.encode(ctx.sign()))
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

/// The key of the Standard Webhooks signature: the bytes a `whsec_<base64>` secret encodes;
/// for any other secret, the secret itself.
pub fn standard_key(secret: &[u8]) -> Vec<u8> {
    secret
        .strip_prefix(SECRET_PREFIX.as_bytes())
        .and_then(|b64| LENIENT.decode(b64).ok())
        .filter(|key| !key.is_empty())
        .unwrap_or_else(|| secret.to_vec())
}

/// A new secret in the Standard Webhooks form: `whsec_` and 32 random bytes, standard base64.
pub fn generate_secret() -> String {
    let mut b = [0u8; 32];
    SystemRandom::new().fill(&mut b).expect("system randomness");
    format!("{SECRET_PREFIX}{}", STANDARD.encode(b))
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

    /// The example of the Standard Webhooks specification (and of its reference libraries'
    /// tests): this secret, id, timestamp and body sign to this.
    #[test]
    fn standard_signature_matches_the_specifications_example() {
        let key = Key::new(b"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            key.sign_standard("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn standard_keys() {
        assert_eq!(standard_key(b"whsec_AAEC"), [0, 1, 2], "the decoded bytes");
        assert_eq!(standard_key(b"whsec_AAECAw"), [0, 1, 2, 3], "padding optional");
        assert_eq!(standard_key(b"whsec_AAECAw=="), [0, 1, 2, 3]);
        for whole in [&b"my-own-secret"[..], b"whsec_", b"whsec_not base64!", b"whsec_a-b_c"] {
            assert_eq!(standard_key(whole), whole, "{}", String::from_utf8_lossy(whole));
        }
    }

    #[test]
    fn generated_secrets_are_standard_and_distinct() {
        let (a, b) = (generate_secret(), generate_secret());
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 44, "{a}");
        assert_eq!(STANDARD.decode(&a[SECRET_PREFIX.len()..]).unwrap().len(), 32);
        assert_eq!(standard_key(a.as_bytes()).len(), 32);
        assert_ne!(a, b);
    }
}
