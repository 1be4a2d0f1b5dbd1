//! The admin API's inputs, each failure an [`AdminError`]: a body that is not JSON is 400, a
//! JSON body of the wrong shape a 422 naming the field, a query parameter that does not parse
//! (or is unknown) a 422 naming it, a path id that cannot exist a 404.

use std::collections::HashMap;

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Path, Request},
    http::{header, request::Parts, StatusCode},
};
use serde::de::DeserializeOwned;

use super::error::AdminError;

/// A JSON request body.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = AdminError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AdminError> {
        let mime = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if !mime.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json") {
            return Err(AdminError::BadRequest("send the body as JSON with `Content-Type: application/json`".into()));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|r| match r.status() {
            StatusCode::PAYLOAD_TOO_LARGE => AdminError::PayloadTooLarge,
            _ => AdminError::BadRequest("could not read the request body".into()),
        })?;
        parse(&bytes).map(Body)
    }
}

/// One JSON value of `T`'s shape: malformed JSON (or anything after the value) is 400; a value
/// of the wrong shape 422, naming where.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AdminError> {
    let malformed = |e: serde_json::Error| AdminError::BadRequest(format!("the body is not valid JSON: {e}"));
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: serde_json::Value = serde::Deserialize::deserialize(&mut de).map_err(malformed)?;
    de.end().map_err(malformed)?;
    if !value.is_object() {
        return Err(AdminError::validation("body", "must be a JSON object"));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let message = e.into_inner().to_string();
        // serde names a missing or unknown field in its message, at the path of the object.
        let named = |prefix: &str| message.strip_prefix(prefix).and_then(|m| m.split('`').next()).map(String::from);
        let within = |name: String| if at == "." { name } else { format!("{at}.{name}") };
        if let Some(missing) = named("missing field `") {
            AdminError::validation(within(missing), "is required")
        } else if let Some(unknown) = named("unknown field `") {
            AdminError::validation(if at == "." { unknown } else { at }, "is not a field of this request")
        } else {
            AdminError::validation(at, message)
        }
    })
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

/// Ids in the path; one that is not a whole number names nothing, so it is a 404.
pub struct Ids<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Ids<T> {
    type Rejection = AdminError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AdminError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(ids)) => Ok(Ids(ids)),
            Err(_) => Err(AdminError::NotFound("no such record".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct In {
        reason: String,
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        n: u8,
    }

    fn field(r: Result<In, AdminError>) -> String {
        match r {
            Err(AdminError::Validation { field, .. }) => field,
            other => panic!("not a 422: {other:?}"),
        }
    }

    #[test]
    fn bodies_are_400_when_not_json_and_422_naming_the_field_otherwise() {
        for bad in [&b"{nope"[..], b"", br#"{"reason":"x"}}"#] {
            assert!(matches!(parse::<In>(bad), Err(AdminError::BadRequest(_))), "{bad:?}");
        }
        assert_eq!(field(parse(b"[]")), "body");
        assert_eq!(field(parse(b"{}")), "reason");
        assert_eq!(field(parse(br#"{"reason":1}"#)), "reason");
        assert_eq!(field(parse(br#"{"reason":"x","colour":1}"#)), "colour");
        assert_eq!(field(parse(br#"{"reason":"x","inner":{}}"#)), "inner.n");
        assert_eq!(field(parse(br#"{"reason":"x","inner":{"n":300}}"#)), "inner.n");
        assert!(parse::<In>(br#" {"reason":"x"} "#).is_ok());
    }
}
