//! Pre-flight checks: what an organization asks the downstream about a record before it is
//! submitted — the vehicle's inspection and authorisation certificate, the drivers'
//! professional qualification, Turkish identity numbers against names, passengers' travel
//! permits — and what a check that does not pass does: nothing (`off`, the default), a
//! warning on the submission (`warn`), or refusing the submit with a 422 (`refuse`). A check
//! the downstream cannot answer is a warning in either mode, never a refusal.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::fields::str_enum;

str_enum! {
    /// What a check that did not pass does to a submit.
    pub enum PreflightMode {
        /// No checks are made.
        Off = "off",
        /// The submission goes, with a warning per check that did not pass.
        Warn = "warn",
        /// The submit is refused (422) while a check does not pass.
        Refuse = "refuse",
    }
}

str_enum! {
    /// A pre-flight check.
    pub enum CheckKind {
        /// The vehicle's periodic inspection is valid on the departure (loading) day.
        VehicleInspection = "vehicle_inspection",
        /// The vehicle is on the firm's authorisation certificate, valid on that day.
        Authorisation = "authorisation",
        /// Each driver holds a professional qualification certificate.
        Qualification = "qualification",
        /// Each Turkish crew member's and passenger's identity number belongs to their name.
        Identity = "identity",
        /// Each Turkish passenger holds a travel permit (a service from the 2021 travel
        /// restrictions; off unless chosen).
        TravelPermit = "travel_permit",
    }
}

/// The checks made when an organization turns checks on without choosing.
pub const DEFAULT_CHECKS: &[CheckKind] =
    &[CheckKind::VehicleInspection, CheckKind::Authorisation, CheckKind::Qualification, CheckKind::Identity];

/// Checks one submit makes at most (an identity check is one per person); those beyond are
/// named in a warning as not made.
pub const MAX_CHECKS: usize = 100;

/// The organization's pre-flight policy.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreflightIn {
    pub mode: PreflightMode,
    /// The checks to make (each at most once); absent: `vehicle_inspection`,
    /// `authorisation`, `qualification` and `identity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 5)]
    pub checks: Option<Vec<CheckKind>>,
}

impl PreflightIn {
    /// `checks` holds at most this many entries (one of each kind).
    pub const MAX_CHOSEN: usize = 5;

    /// The checks chosen, each once, in the order given.
    pub fn chosen(&self) -> Vec<CheckKind> {
        let mut out: Vec<CheckKind> = vec![];
        for k in self.checks.as_deref().unwrap_or(DEFAULT_CHECKS) {
            if !out.contains(k) {
                out.push(*k);
            }
        }
        out
    }
}
