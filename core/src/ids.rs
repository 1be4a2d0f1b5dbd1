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

/// Record ids, one type per kind of record, so that a journey's id cannot be passed where a
/// shipment's or a vehicle's is meant. Unlike [`OrgId`] they come from requests too (a path, a
/// body's reference): a query that reads tenant data by one also takes the [`OrgId`], which is
/// what keeps tenants apart. The few look-ups by id alone are named in ARCHITECTURE.md's
/// invariants, each with what makes it safe. They serialize and deserialize as the plain number; a field of one is
/// documented as `#[schema(value_type = i64)]`.
macro_rules! record_ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize, sqlx::Type,
        )]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(pub i64);

        impl $name {
            /// The number, for cursors, labels and messages.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }
    )*};
}

record_ids! {
    /// A vehicle of an organization's registry.
    VehicleId;
    /// A crew member of an organization's personnel registry.
    PersonId;
    /// A journey.
    JourneyId;
    /// A passenger of a journey.
    PassengerId;
    /// A cargo shipment.
    CargoId;
    /// A submission of a journey or a shipment to its downstream.
    SubmissionId;
    /// An organization's API key.
    KeyId;
    /// A user: a member of an organization (its owner or one they invited). The one id looked
    /// up without its organization, by a session, which then checks the organization it found.
    UserId;
    /// A webhook subscription (an endpoint and the event type it receives), not the
    /// organization's subscription to a plan.
    WebhookSubscriptionId;
    /// A data export of an organization.
    ExportId;
    /// An operator token of the admin API (operators belong to no organization).
    OperatorTokenId;
    /// An invoice issued to an organization.
    InvoiceId;
    /// A support ticket an organization opened.
    TicketId;
}

/// A record a submission is of: a journey or a cargo shipment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Journey(JourneyId),
    Cargo(CargoId),
}

impl From<JourneyId> for Target {
    fn from(id: JourneyId) -> Target {
        Target::Journey(id)
    }
}

impl From<CargoId> for Target {
    fn from(id: CargoId) -> Target {
        Target::Cargo(id)
    }
}

impl Target {
    pub fn kind(self) -> crate::domain::kinds::TargetType {
        use crate::domain::kinds::TargetType;
        match self {
            Target::Journey(_) => TargetType::Journey,
            Target::Cargo(_) => TargetType::Cargo,
        }
    }

    /// The record's number, as the `target_id` columns hold it.
    pub fn id(self) -> i64 {
        match self {
            Target::Journey(id) => id.get(),
            Target::Cargo(id) => id.get(),
        }
    }

    /// The record of `kind` numbered `id` (a `target_type`, `target_id` pair read back).
    pub fn of(kind: crate::domain::kinds::TargetType, id: i64) -> Target {
        use crate::domain::kinds::TargetType;
        match kind {
            TargetType::Journey => Target::Journey(JourneyId(id)),
            TargetType::Cargo => Target::Cargo(CargoId(id)),
        }
    }
}
