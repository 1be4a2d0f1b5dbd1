//! The organization's id as a type of its own, so that a tenant and a record id cannot be
//! swapped in a call, and a number from a request cannot become a tenant.
//!
//! An [`OrgId`] has no public constructor: it is decoded from a row (the credential, session
//! member or organization that was looked up), so the only ways to hold one are to have
//! authenticated a caller, to be a role working through rows the database handed it, or to have
//! asked the database whether an organization of that number exists
//! (`tns_store::accounts::org_id`, which the operators' API and the tests use). It serializes as
//! the plain number for answers and logs, and deserializes from nothing.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, sqlx::Type)]
#[serde(transparent)]
#[sqlx(transparent)]
pub struct OrgId(i64);

impl OrgId {
    /// The number, for keys and labels outside the database (Redis keys, sealing's associated
    /// data, log fields).
    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for OrgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// For this crate's unit tests: an id without a row.
#[cfg(test)]
impl OrgId {
    pub fn for_tests(id: i64) -> Self {
        OrgId(id)
    }
}
