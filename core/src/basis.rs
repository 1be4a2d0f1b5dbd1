//! What the roles' settings start from. The API seals what the scheduler and the jobs open, and
//! both sides apply one SSRF policy and one adapter timeout, so the binary reads these into a
//! [`Basis`] and hands it to each role's `from_vars`; no role reads them itself.

use std::time::Duration;

use crate::{env::Profile, guard::Policy, sealing::DataKey};

#[derive(Debug, Clone)]
pub struct Basis {
    pub profile: Profile,
    /// Seals and opens webhook secrets and downstream passwords (`TNS_DATA_KEY`).
    pub data_key: DataKey,
    /// How long one adapter call may take (`TNS_ADAPTER_TIMEOUT_SECS`).
    pub call_timeout: Duration,
    /// What the SSRF guard lets through besides public https endpoints.
    pub policy: Policy,
}

impl Basis {
    /// Unit tests' basis: a zero key, a one-minute timeout and everything allowed.
    pub fn for_tests(profile: Profile) -> Basis {
        Basis { profile, data_key: DataKey::new([0; 32]), call_timeout: Duration::from_secs(60), policy: Policy::OPEN }
    }
}
