//! What the operators' surfaces answer (the admin API's bodies and the command line's lines of
//! JSON): their own types, built from the store's rows as the tenants' API builds its answers.

use tns_core::{
    domain::kinds::{AuditAction, OrgStatus},
    ids::{OperatorTokenId, OrgId},
    scopes::operator::OperatorScope,
};
use tns_store::{accounts::OrgSummary, audit::Logged, operator_tokens::OperatorToken};

tns_http::answer! {
    /// One organization as operators list them.
    OrgSummaryOut as OrgSummary from OrgSummary {
        #[schema(value_type = i64)]
        id: OrgId,
        name: String,
        tax_number: String,
        status: OrgStatus,
        status_reason: Option<String>,
        plan_code: String,
        /// Calls this month as last persisted (the API processes persist every few seconds).
        calls_this_month: i64,
        /// Submissions waiting to go downstream.
        queued: i64,
        /// Another organization has the same tax number (registered before the rule of one per
        /// company): to be settled by an operator.
        shares_tax_number: bool,
    }
}

tns_http::answer! {
    /// One row of the log as operators read it.
    LoggedOut as Logged from Logged {
        id: i64,
        at: chrono::DateTime<chrono::Utc>,
        /// `operator:<name>` for an operator, `tenant:user:<id>` or `tenant:key:<id>` for the
        /// organization's own user or API key, `jobs` for the periodic jobs.
        actor: String,
        /// The operator token an admin API change was made with (names may repeat; ids do not).
        #[schema(value_type = Option<i64>)]
        operator_token_id: Option<OperatorTokenId>,
        action: AuditAction,
        #[schema(value_type = Option<i64>)]
        org_id: Option<OrgId>,
        before: Option<serde_json::Value>,
        after: Option<serde_json::Value>,
        reason: Option<String>,
    }
}

tns_http::answer! {
    /// A token as operators list it: never its hash.
    OperatorTokenOut as OperatorToken from OperatorToken {
        #[schema(value_type = i64)]
        id: OperatorTokenId,
        /// The operator it belongs to (the audit log says `operator:<name>`).
        name: String,
        scopes: Vec<OperatorScope>,
        created_at: chrono::DateTime<chrono::Utc>,
        revoked_at: Option<chrono::DateTime<chrono::Utc>>,
        last_used_at: Option<chrono::DateTime<chrono::Utc>>,
    }
}
