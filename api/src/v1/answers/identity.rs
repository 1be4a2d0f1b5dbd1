//! Who acts for an organization: its users, the organization itself, and its API keys.

use tns_core::ids::{KeyId, OrgId, UserId};
use tns_http::answer;
use tns_store::{
    accounts::{Organization, Profile, User},
    api_keys::{ApiKeyInfo, CreatedKey},
};

use super::SubscriptionOut;

answer! {
    /// A user of an organization.
    UserOut as User from User {
        #[schema(value_type = i64)]
        user_id: UserId,
        #[schema(value_type = i64)]
        organization_id: OrgId,
        email: String,
        full_name: String,
        /// `owner` for the registering user.
        role: String,
    }
}

answer! {
    /// An organization: one tenant.
    OrganizationOut as Organization from Organization {
        #[schema(value_type = i64)]
        id: OrgId,
        name: String,
        tax_number: String,
        /// `trial`, `active`, `suspended` or `closed` (README.md says what each allows).
        status: String,
        /// Why the organization is in its status (set with a suspension or reactivation).
        status_reason: Option<String>,
        /// When a trial ends (then, without a paid plan, the organization is suspended).
        trial_ends_at: Option<chrono::DateTime<chrono::Utc>>,
        /// Calls per month of the current plan; -1 means unlimited.
        monthly_quota: i64,
        ws_username: Option<String>,
    }
}

answer! {
    /// Who a credential acts for: its user, organization and subscription.
    MeOut as MeOut from Profile {
        user: UserOut,
        organization: OrganizationOut,
        subscription: SubscriptionOut,
    }
}

answer! {
    /// An entry of the key list (the key itself is never shown again).
    KeyOut as ApiKeyInfo from ApiKeyInfo {
        #[schema(value_type = i64)]
        id: KeyId,
        name: String,
        /// The leading characters of the key, to tell keys apart.
        api_key_prefix: String,
        scopes: Vec<String>,
        created_at: chrono::DateTime<chrono::Utc>,
    }
}

answer! {
    /// A freshly created key: the only time the full key is returned.
    CreatedKeyOut as CreatedKey from CreatedKey {
        #[serde(flatten)]
        info: KeyOut,
        /// The full key. Shown once; store it now.
        api_key: String,
    }
}
