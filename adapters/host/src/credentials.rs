//! An organization's downstream credentials, opened for one call: stored with the password
//! sealed under the data key, in the clear only for as long as a call needs them.

use tns_adapter::{Credentials, Environment};
use tns_core::{
    domain::kinds,
    sealing::{DataKey, Purpose},
};

/// A password the data key cannot open: the operator's configuration problem (the key was
/// changed), said without the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable;

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stored downstream password cannot be read with this data key (TNS_DATA_KEY changed?)")
    }
}

impl std::error::Error for Unreadable {}

pub fn open(
    key: &DataKey,
    org: i64,
    environment: kinds::Environment,
    username: String,
    sealed: &[u8],
) -> Result<Credentials, Unreadable> {
    let password = key
        .open_for(org, Purpose::DownstreamPassword, sealed)
        .ok()
        .and_then(|p| String::from_utf8(p).ok())
        .ok_or(Unreadable)?;
    Ok(Credentials { username, password, environment: environment_of(environment) })
}

/// The contract's name for one of U-ETDS's environments.
pub fn environment_of(environment: kinds::Environment) -> Environment {
    match environment {
        kinds::Environment::Test => Environment::Test,
        kinds::Environment::Production => Environment::Production,
    }
}

/// Seal a password for storage.
pub fn seal(key: &DataKey, org: i64, password: &str) -> Vec<u8> {
    key.seal_for(org, Purpose::DownstreamPassword, password.as_bytes())
}
