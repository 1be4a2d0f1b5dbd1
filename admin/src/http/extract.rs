//! The admin API's inputs, each failure an [`AdminError`]: bodies and path ids through the
//! extractors both APIs share ([`ApiJson`], [`ApiPath`]; the admin API takes bodies of at most
//! `MAX_BODY_BYTES`), and query parameters taken one by one by name, one that does not parse
//! (or is unknown) a 422 naming it.

use std::collections::HashMap;

use axum::{extract::FromRequestParts, http::request::Parts};

pub use tns_http::extract::{ApiJson, ApiPath};

use super::error::AdminError;

impl tns_http::extract::BodyLimit for super::AdminState {
    const MAX_BODY_BYTES: usize = super::MAX_BODY_BYTES;
}

/// The query string's parameters, taken one by one by name; [`Params::done`] refuses any left.
pub struct Params(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AdminError> {
        let mut params = HashMap::new();
        for (name, value) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
            if params.insert(name.to_string(), value.to_string()).is_some() {
                return Err(AdminError::validation(name, "is given twice"));
            }
        }
        Ok(Params(params))
    }
}

impl Params {
    /// Parameter `name` parsed by `parse` (whose error is the reason shown after the name);
    /// empty counts as absent.
    pub fn take<T>(
        &mut self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, AdminError> {
        match self.0.remove(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => parse(&v).map(Some).map_err(|reason| AdminError::validation(name, reason)),
        }
    }

    pub fn done(self) -> Result<(), AdminError> {
        match self.0.into_keys().min() {
            None => Ok(()),
            Some(unknown) => Err(AdminError::validation(unknown, "is not a parameter of this endpoint")),
        }
    }
}
