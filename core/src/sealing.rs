//! Secrets TNS must use again (webhook signing secrets, downstream passwords) at rest: sealed
//! with ChaCha20-Poly1305 under the operator's data key (`TNS_DATA_KEY`), bound to the owning
//! organization and to what the value is for, so a sealed value copied onto another tenant's
//! row, or into another column, does not open. They are needed back in the clear (to sign, to
//! log in downstream), so they are encrypted rather than hashed.

use crate::ids::OrgId;
use std::fmt;

use crate::env::{ConfigError, Vars};
use ring::{
    aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN},
    hmac,
    rand::{SecureRandom, SystemRandom},
};

/// Format version of a sealed value (its first byte): room for key rotation later.
const VERSION: u8 = 1;

/// The data key. Never printed.
#[derive(Clone)]
pub struct DataKey([u8; 32]);

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DataKey(<redacted>)")
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct Unreadable;

/// What a sealed value is for: part of what it is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    WebhookSecret,
    DownstreamSecret,
}

impl Purpose {
    fn label(self) -> &'static str {
        match self {
            // Sealed before purposes existed: the empty label keeps those values readable.
            Purpose::WebhookSecret => "",
            // Named when the only secret was a password; kept so stored values stay readable.
            Purpose::DownstreamSecret => "downstream-password",
        }
    }
}

impl DataKey {
    pub fn new(bytes: [u8; 32]) -> DataKey {
        DataKey(bytes)
    }

    /// 64 hexadecimal digits.
    pub fn from_hex(s: &str) -> Option<DataKey> {
        let v = hex::decode(s.trim()).ok()?;
        Some(DataKey(v.try_into().ok()?))
    }

    /// `TNS_DATA_KEY`; without it, `fallback` (a role that seals nothing, or `tns dev`'s
    /// public key), or an error when there is none.
    pub fn from_vars(vars: &Vars<'_>, fallback: Option<DataKey>) -> Result<DataKey, ConfigError> {
        match (vars.get("TNS_DATA_KEY"), fallback) {
            (Some(k), _) => DataKey::from_hex(&k)
                .ok_or_else(|| vars.bad("TNS_DATA_KEY", "must be 64 hexadecimal digits (32 bytes)")),
            (None, Some(key)) => Ok(key),
            (None, None) => Err(vars.bad(
                "TNS_DATA_KEY",
                "is required outside `tns dev` (64 hexadecimal digits, e.g. `openssl rand -hex 32`)",
            )),
        }
    }

    fn key(&self) -> LessSafeKey {
        LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &self.0).expect("32-byte key"))
    }

    /// version ‖ nonce ‖ ciphertext ‖ tag, bound to the organization.
    pub fn seal(&self, org_id: OrgId, plaintext: &[u8]) -> Vec<u8> {
        self.seal_for(org_id, Purpose::WebhookSecret, plaintext)
    }

    pub fn open(&self, org_id: OrgId, sealed: &[u8]) -> Result<Vec<u8>, Unreadable> {
        self.open_for(org_id, Purpose::WebhookSecret, sealed)
    }

    /// Sealed for one purpose (the additional data is the organization and the purpose), so a
    /// value sealed for one column does not open when copied into another.
    pub fn seal_for(&self, org_id: OrgId, purpose: Purpose, plaintext: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).expect("system randomness");
        let mut buf = plaintext.to_vec();
        self.key()
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad(org_id, purpose)), &mut buf)
            .expect("sealing cannot fail for in-memory sizes");
        let mut out = Vec::with_capacity(1 + NONCE_LEN + buf.len());
        out.push(VERSION);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&buf);
        out
    }

    pub fn open_for(&self, org_id: OrgId, purpose: Purpose, sealed: &[u8]) -> Result<Vec<u8>, Unreadable> {
        let (&version, rest) = sealed.split_first().ok_or(Unreadable)?;
        if version != VERSION || rest.len() < NONCE_LEN {
            return Err(Unreadable);
        }
        let (nonce, ct) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unreadable)?;
        let mut buf = ct.to_vec();
        let plain =
            self.key().open_in_place(nonce, Aad::from(aad(org_id, purpose)), &mut buf).map_err(|_| Unreadable)?;
        Ok(plain.to_vec())
    }
}

impl DataKey {
    /// A keyed one-way digest of `value` for organization `org_id` (HMAC-SHA-256 under a key
    /// derived from the data key for `label`): to find a value again by equality without
    /// keeping it, where a plain hash of a small space (identity numbers) could be reversed by
    /// trying every value.
    pub fn digest(&self, label: &str, org_id: OrgId, value: &[u8]) -> Vec<u8> {
        let derived = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &self.0), label.as_bytes());
        let key = hmac::Key::new(hmac::HMAC_SHA256, derived.as_ref());
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(&org_id.get().to_be_bytes());
        ctx.update(value);
        ctx.sign().as_ref().to_vec()
    }
}

/// The organization (8 bytes, big-endian) followed by the purpose's label: for webhook
/// secrets, exactly what secrets sealed before purposes existed were bound to.
fn aad(org_id: OrgId, purpose: Purpose) -> Vec<u8> {
    let mut a = org_id.get().to_be_bytes().to_vec();
    a.extend_from_slice(purpose.label().as_bytes());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org(id: i64) -> OrgId {
        OrgId::for_tests(id)
    }

    #[test]
    fn round_trip_is_bound_to_key_and_organization() {
        let k = DataKey::new([7; 32]);
        let sealed = k.seal(org(42), b"whsec_abc");
        assert_ne!(&sealed[1 + NONCE_LEN..], b"whsec_abc", "not stored in the clear");
        assert_eq!(k.open(org(42), &sealed).unwrap(), b"whsec_abc");
        assert_eq!(k.open(org(43), &sealed), Err(Unreadable), "another organization's row");
        assert_eq!(DataKey::new([8; 32]).open(org(42), &sealed), Err(Unreadable), "another key");
        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert_eq!(k.open(org(42), &tampered), Err(Unreadable));
        assert_ne!(k.seal(org(42), b"x"), k.seal(org(42), b"x"), "fresh nonce each time");
        assert_eq!(format!("{k:?}"), "DataKey(<redacted>)");
        let pw = k.seal_for(org(42), Purpose::DownstreamSecret, b"pw");
        assert_eq!(k.open_for(org(42), Purpose::DownstreamSecret, &pw).unwrap(), b"pw");
        assert_eq!(k.open(org(42), &pw), Err(Unreadable), "another purpose");
        assert!(DataKey::from_hex(&"ab".repeat(32)).is_some());
        assert!(DataKey::from_hex("abcd").is_none());
    }
}
