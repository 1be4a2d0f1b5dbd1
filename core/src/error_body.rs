//! The body of every error answer, the tenants' API and the operators' alike: one shape, so a
//! client handles both the same way.

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use utoipa::{
    openapi::{schema::Schema, ObjectBuilder, RefOr, Type},
    PartialSchema, ToSchema,
};

/// The error body of every failed request.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The HTTP status name, e.g. `Validation Error`.
    pub error: String,
    /// Which field or why.
    pub detail: String,
    /// What went wrong, as a stable machine code: branch on it, not on `detail`.
    pub code: Code,
    /// The offending field, on 422 answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// The enum, its wire names and their meanings from one list, so the OpenAPI document, the
/// serializer and `as_str` cannot drift apart.
macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal,)+) => {
        /// The stable machine code of an error answer: one per case, never renamed (a new case
        /// gets a new code).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in the order the documentation lists them.
            pub const ALL: &[Code] = &[$(Code::$variant),+];

            /// Its wire name (snake_case).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }

            /// When it is given (its documentation, one line).
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$variant => concat!($($doc),+).trim_start(),)+
                }
            }
        }
    };
}

codes! {
    // By status, when nothing more specific applies.
    /// A request the API cannot read (400).
    BadRequest = "bad_request",
    /// The body is not one JSON value: malformed, or followed by more than whitespace (400).
    MalformedJson = "malformed_json",
    /// The body is not sent as `application/json` (400).
    UnsupportedMediaType = "unsupported_media_type",
    /// Missing, invalid, expired or revoked credentials (401).
    Unauthorized = "unauthorized",
    /// Refused for a reason no other code names (403).
    Forbidden = "forbidden",
    /// The credential lacks a scope the operation needs, or a key would get one its maker lacks (403).
    MissingScope = "missing_scope",
    /// A cookie session's unsafe request without the session's `X-CSRF-Token` (403).
    InvalidCsrfToken = "invalid_csrf_token",
    /// Only the organization's owner may do this (403).
    OwnerOnly = "owner_only",
    /// The organization is suspended: it reads and exports, but creates, changes and submits nothing (403).
    OrganizationSuspended = "organization_suspended",
    /// The organization is closed: it creates, changes and submits nothing (403), and is not closed again (409).
    OrganizationClosed = "organization_closed",
    /// No such record for this organization, or no such endpoint (404).
    NotFound = "not_found",
    /// The endpoint does not take this method (405).
    MethodNotAllowed = "method_not_allowed",
    // The record's state refuses a valid request (409).
    /// Only a draft can be deleted: the record has been submitted (409).
    NotDraft = "not_draft",
    /// A notified journey's `trip_kind` or `tarifeli_context`, or a notified scheduled trip's
    /// vehicle and times, cannot change; cancel it and create another (409).
    NotEditable = "not_editable",
    /// The record has a pending submission; retry once it has finished (409).
    PendingSubmission = "pending_submission",
    /// The record is cancelled downstream: it takes no more changes, passengers nor submissions (409).
    Cancelled = "cancelled",
    /// Only a record cancelled downstream is re-activated (409).
    NotCancelled = "not_cancelled",
    /// The record has not been delivered downstream: nothing to cancel, re-activate, fetch a
    /// report of or report a no-show for (409).
    NotDelivered = "not_delivered",
    /// The record's people's data was erased past the retention period: no more changes of them nor submissions (409).
    PersonalDataErased = "personal_data_erased",
    /// Another record holds this unique value: a plate, identity number, e-mail, tax number or baggage barcode (409).
    Duplicate = "duplicate",
    /// The organization or record holds the most it may: API keys, webhook subscriptions, passengers (409).
    LimitReached = "limit_reached",
    /// A partial update leaves the merged record breaking a rule across fields, or lacking a required one (409).
    MergedRecordInvalid = "merged_record_invalid",
    /// The downstream refused the request; its message is in `detail` (409).
    DownstreamRefused = "downstream_refused",
    /// The downstream refused the organization's credentials; set them again with PUT /portal/downstream (409).
    CredentialsRefused = "credentials_refused",
    /// The organization's downstream takes no such records, or would refuse a value (`detail` names each field) (409).
    DownstreamCannotTake = "downstream_cannot_take",
    /// No downstream is chosen (and there is no default), or it keeps no such list or has no credentials (409).
    NoDownstream = "no_downstream",
    /// An `Idempotency-Key` whose first request is still running, failed, or answered with a secret (409).
    IdempotencyConflict = "idempotency_conflict",
    /// The export is still being built: wait for it (409).
    ExportNotReady = "export_not_ready",
    /// The export failed; ask for a new one (409).
    ExportFailed = "export_failed",
    /// The webhook subscription is inactive; reactivate it first (409).
    SubscriptionInactive = "subscription_inactive",
    /// Only a closed organization is reopened (409).
    OrganizationNotClosed = "organization_not_closed",
    /// Only an open invoice is paid or voided (409, admin API).
    InvoiceNotOpen = "invoice_not_open",
    /// The submission's outcome is not unknown: there is nothing to resolve (409, admin API).
    OutcomeKnown = "outcome_known",
    /// The submission is being looked up right now; retry in a minute (409, admin API).
    Busy = "busy",
    /// The resolution does not fit what is known of the submission (409, admin API).
    NotResolvable = "not_resolvable",
    // By status again.
    /// The body is larger than the API takes (413).
    PayloadTooLarge = "payload_too_large",
    /// A field breaks its rule; `field` names it (422).
    InvalidField = "invalid_field",
    /// Too many requests for a limit other than the monthly quota; see `Retry-After` (429).
    RateLimited = "rate_limited",
    /// The organization's monthly quota of calls is used up (429).
    QuotaExceeded = "quota_exceeded",
    /// An unexpected error; the details are in the log, under the request ID (500).
    Internal = "internal",
    /// The method is not one the API knows (501).
    NotImplemented = "not_implemented",
    /// The downstream answered with something that is not readable (502).
    BadGateway = "bad_gateway",
    /// A store or service the request needs cannot be reached, or the request took too long; retry shortly (503).
    Unavailable = "unavailable",
    /// PostgreSQL cannot be reached; retry after `Retry-After` (503).
    DatabaseUnavailable = "database_unavailable",
}

impl Code {
    /// The code of an error answer made from a bare status (a layer's, not a handler's).
    pub fn for_status(status: u16) -> Code {
        match status {
            400 => Code::BadRequest,
            401 => Code::Unauthorized,
            403 => Code::Forbidden,
            404 => Code::NotFound,
            405 => Code::MethodNotAllowed,
            413 => Code::PayloadTooLarge,
            422 => Code::InvalidField,
            429 => Code::RateLimited,
            501 => Code::NotImplemented,
            502 => Code::BadGateway,
            503 | 504 => Code::Unavailable,
            s if s < 500 => Code::BadRequest,
            _ => Code::Internal,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A string enum of every code, its description listing when each is given.
impl PartialSchema for Code {
    fn schema() -> RefOr<Schema> {
        let mut description = String::from(
            "What went wrong, as a stable machine code: one per case, never renamed. Branch on it, \
             not on `detail` (English text that may change).\n",
        );
        for code in Code::ALL {
            description.push_str(&format!("\n- `{code}`: {}", code.meaning()));
        }
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(Code::ALL.iter().map(|c| c.as_str())))
            .description(Some(description))
            .into()
    }
}

impl ToSchema for Code {
    fn name() -> Cow<'static, str> {
        "ErrorCode".into()
    }
}

/// The contract's name of HTTP status `code` whose reason phrase is `reason`: the phrase, but
/// 422 is "Validation Error", not the RFC's.
pub fn status_name(code: u16, reason: Option<&'static str>) -> &'static str {
    match code {
        422 => "Validation Error",
        _ => reason.unwrap_or("Error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case_and_serialize_as_named() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{name}");
            assert!(!name.starts_with('_') && !name.ends_with('_') && !name.contains("__"), "{name}");
            assert_eq!(serde_json::to_value(code).unwrap(), name);
            assert!(!code.meaning().is_empty(), "{name} has a meaning");
        }
    }

    #[test]
    fn the_readme_lists_every_code() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        let missing: Vec<_> =
            Code::ALL.iter().map(|c| c.as_str()).filter(|c| !readme.contains(&format!("| `{c}` |"))).collect();
        assert!(missing.is_empty(), "not in README.md's table of error codes: {missing:?}");
    }

    #[test]
    fn the_body_keeps_the_contract_fields_first() {
        let body = ErrorBody { error: "Conflict".into(), detail: "d".into(), code: Code::NotDraft, field: None };
        assert_eq!(serde_json::to_string(&body).unwrap(), r#"{"error":"Conflict","detail":"d","code":"not_draft"}"#);
    }
}
