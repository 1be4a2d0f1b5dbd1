//! An organization's downstream credentials, opened for one call: stored as the fields its
//! plugin describes, each secret one sealed under the data key, in the clear only for as long
//! as a call needs them.

use std::collections::BTreeMap;
use tns_core::ids::OrgId;

use base64::{engine::general_purpose::STANDARD, Engine};
use tns_adapter::{Credentials, Description};
use tns_core::sealing::{DataKey, Purpose};

/// A secret the data key cannot open: the operator's configuration problem (the key was
/// changed), said without the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable;

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stored downstream credentials cannot be read with this data key (TNS_DATA_KEY changed?)")
    }
}

impl std::error::Error for Unreadable {}

/// Credentials as stored: the plain fields as given, each secret field sealed (base64).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sealed {
    pub fields: BTreeMap<String, String>,
    pub secrets: BTreeMap<String, String>,
}

impl Sealed {
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.secrets.is_empty()
    }
}

/// Open stored credentials for one call.
pub fn open(key: &DataKey, org: OrgId, stored: &Sealed) -> Result<Credentials, Unreadable> {
    let mut fields = stored.fields.clone();
    for (name, sealed) in &stored.secrets {
        let bytes = STANDARD.decode(sealed).map_err(|_| Unreadable)?;
        let plain = key.open_for(org, Purpose::DownstreamSecret, &bytes).map_err(|_| Unreadable)?;
        fields.insert(name.clone(), String::from_utf8(plain).map_err(|_| Unreadable)?);
    }
    Ok(Credentials { fields })
}

/// Seal what `adapter` calls secret in `given`, for storage.
pub fn seal(key: &DataKey, org: OrgId, adapter: &Description, given: &Credentials) -> Sealed {
    let mut out = Sealed::default();
    for (name, value) in &given.fields {
        if adapter.credentials.iter().any(|f| f.secret && &f.name == name) {
            let sealed = key.seal_for(org, Purpose::DownstreamSecret, value.as_bytes());
            out.secrets.insert(name.clone(), STANDARD.encode(sealed));
        } else {
            out.fields.insert(name.clone(), value.clone());
        }
    }
    out
}
