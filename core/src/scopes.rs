//! Scopes: `X:write` implies `X:read`; a key mints only keys with a subset of
//! its own scopes.

use std::{borrow::Cow, fmt};

use serde_json::{json, Value};

use crate::domain::fields::{field_impls, string, Field};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    JourneysRead,
    JourneysWrite,
    SubmissionsRead,
    WebhooksRead,
    WebhooksWrite,
    AccountRead,
    AccountWrite,
}

impl Scope {
    pub const ALL: [Scope; 7] = [
        Scope::JourneysRead,
        Scope::JourneysWrite,
        Scope::SubmissionsRead,
        Scope::WebhooksRead,
        Scope::WebhooksWrite,
        Scope::AccountRead,
        Scope::AccountWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::JourneysRead => "journeys:read",
            Scope::JourneysWrite => "journeys:write",
            Scope::SubmissionsRead => "submissions:read",
            Scope::WebhooksRead => "webhooks:read",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::AccountRead => "account:read",
            Scope::AccountWrite => "account:write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|sc| sc.as_str() == s)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// The write scope that implies this read scope, if any.
    fn implied_by(self) -> Option<Scope> {
        match self {
            Scope::JourneysRead => Some(Scope::JourneysWrite),
            Scope::WebhooksRead => Some(Scope::WebhooksWrite),
            Scope::AccountRead => Some(Scope::AccountWrite),
            _ => None,
        }
    }
}

impl Field for Scope {
    fn name() -> Cow<'static, str> {
        "Scope".into()
    }
    fn json_schema() -> Value {
        let names: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
        json!({"type": "string", "enum": names, "description": "`X:write` implies `X:read`."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        let name = string(v)?;
        Scope::parse(&name).ok_or_else(|| {
            let known: Vec<_> = Scope::ALL.iter().map(|s| s.as_str()).collect();
            format!("unknown scope `{name}` (known: {})", known.join(", "))
        })
    }
}
field_impls!(Scope);

/// Scopes as types: `needs!(Trait, Enum: A, B)` declares a unit struct per variant, each
/// implementing `Trait` with `SCOPE` its variant.
macro_rules! needs {
    ($needed:ident, $scope:ident: $($name:ident),* $(,)?) => {$(
        #[doc = concat!("Needs `", stringify!($name), "`.")]
        pub struct $name;
        impl $needed for $name {
            const SCOPE: $scope = $scope::$name;
        }
    )*};
}

/// A scope a route needs, as a type (see `auth::Caller`).
pub trait Needed: Send + Sync + 'static {
    const SCOPE: Scope;
}

/// The scopes as types, one per [`Scope`].
pub mod need {
    use super::{Needed, Scope};

    needs!(Needed, Scope: JourneysRead, JourneysWrite, SubmissionsRead, WebhooksRead, WebhooksWrite, AccountRead,
        AccountWrite);
}

/// A set of scopes as granted (implied reads are not stored, they are checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u16);

impl Scopes {
    pub fn all() -> Scopes {
        Scopes(Scope::ALL.iter().fold(0, |acc, s| acc | s.bit()))
    }

    /// The set of these scopes.
    /// What a member with `role` may do (a portal session carries it).
    pub fn of_role(role: crate::domain::kinds::Role) -> Scopes {
        use crate::domain::kinds::Role;
        match role {
            Role::Owner | Role::Admin => Scopes::all(),
            Role::Dispatcher => Scopes::of(&[Scope::JourneysWrite, Scope::SubmissionsRead, Scope::WebhooksRead]),
            Role::Viewer => Scopes::of(&[Scope::SubmissionsRead, Scope::WebhooksRead, Scope::AccountRead]),
        }
    }

    pub fn of(scopes: &[Scope]) -> Scopes {
        Scopes(scopes.iter().fold(0, |acc, s| acc | s.bit()))
    }

    /// Parse scope names; the error is the first unknown name.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Scopes, String> {
        let mut bits = 0;
        for n in names {
            bits |= Scope::parse(n).ok_or_else(|| n.to_string())?.bit();
        }
        Ok(Scopes(bits))
    }

    /// Parse scopes stored by this service; unknown names (from a future version) are ignored.
    pub fn from_stored(names: &[String]) -> Scopes {
        Scopes(names.iter().filter_map(|n| Scope::parse(n)).fold(0, |acc, s| acc | s.bit()))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn allows(self, s: Scope) -> bool {
        self.0 & s.bit() != 0 || s.implied_by().is_some_and(|w| self.0 & w.bit() != 0)
    }

    /// Whether every scope of `other` is allowed by `self`.
    pub fn covers(self, other: Scopes) -> bool {
        other.iter().all(|s| self.allows(s))
    }

    pub fn intersect(self, other: Scopes) -> Scopes {
        Scopes(Scope::ALL.iter().filter(|s| self.allows(**s) && other.allows(**s)).fold(0, |a, s| a | s.bit()))
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.0 & s.bit() != 0)
    }

    pub fn names(self) -> Vec<String> {
        self.iter().map(|s| s.as_str().to_string()).collect()
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.iter().map(Scope::as_str).collect::<Vec<_>>().join(" "))
    }
}

/// What an operator token (the admin API's credential, for platform staff) may do. Each is
/// granted on its own: none implies another.
pub mod operator {
    use crate::domain::fields::str_enum;

    str_enum! {
        /// An operator token's scope: `read` (organizations, their invoices, the audit log),
        /// `write` (status, plan, re-queueing, invoices paid or void), `personal-data` (a
        /// submission as sent, unmasked).
        pub enum OperatorScope {
            Read = "read",
            Write = "write",
            PersonalData = "personal-data",
        }
    }

    /// A scope an admin route needs, as a type (see the admin API's `Operator` extractor).
    pub trait Needed: Send + Sync + 'static {
        const SCOPE: OperatorScope;
    }

    /// The operator scopes as types, one per [`OperatorScope`].
    pub mod need {
        use super::{Needed, OperatorScope};

        needs!(Needed, OperatorScope: Read, Write, PersonalData);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_sets_of_scopes() {
        use crate::domain::kinds::Role;
        assert_eq!(Scopes::of_role(Role::Owner), Scopes::all());
        let d = Scopes::of_role(Role::Dispatcher);
        assert!(d.allows(Scope::JourneysWrite) && d.allows(Scope::JourneysRead) && !d.allows(Scope::AccountRead));
        let v = Scopes::of_role(Role::Viewer);
        assert!(!v.allows(Scope::JourneysRead), "a viewer sees people only masked (no journeys:read)");
        assert!(v.allows(Scope::SubmissionsRead) && !v.allows(Scope::WebhooksWrite));
        assert!(Role::Owner.manages(Role::Admin) && !Role::Admin.manages(Role::Admin));
        assert!(!Role::Dispatcher.manages(Role::Viewer) && !Role::Owner.manages(Role::Owner));
    }

    #[test]
    fn write_implies_read_and_subsets() {
        let s = Scopes::parse(["journeys:write", "submissions:read"]).unwrap();
        assert!(s.allows(Scope::JourneysRead));
        assert!(s.allows(Scope::JourneysWrite));
        assert!(!s.allows(Scope::AccountRead));
        assert!(s.covers(Scopes::parse(["journeys:read"]).unwrap()));
        assert!(!s.covers(Scopes::parse(["webhooks:read"]).unwrap()));
        assert!(!Scopes::parse(["journeys:read"]).unwrap().covers(s));
        assert_eq!(Scopes::parse(["nope"]).unwrap_err(), "nope");
        assert_eq!(s.to_string(), "journeys:write submissions:read");
        assert_eq!(Scopes::all().names().len(), 7);
    }
}
