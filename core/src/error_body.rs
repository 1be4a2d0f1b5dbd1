//! The body of every error answer, the tenants' API and the operators' alike: one shape, so a
//! client handles both the same way.

use serde::Serialize;
use utoipa::ToSchema;

/// The error body of every failed request.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The HTTP status name, e.g. `Validation Error`.
    pub error: String,
    /// Which field or why.
    pub detail: String,
    /// The offending field, on 422 answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// The contract's name of HTTP status `code` whose reason phrase is `reason`: the phrase, but
/// 422 is "Validation Error", not the RFC's.
pub fn status_name(code: u16, reason: Option<&'static str>) -> &'static str {
    match code {
        422 => "Validation Error",
        _ => reason.unwrap_or("Error"),
    }
}
