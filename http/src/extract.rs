//! Request extractors of both APIs that turn every malformed input into an [`ApiError`]: a body
//! that is not JSON is 400, JSON whose fields are missing or of the wrong type is 422 naming the
//! field, a body over the API's limit 413, a path id that cannot exist is 404.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Path, Request},
    http::{header, request::Parts},
};
use serde::{de::DeserializeOwned, Deserialize};

use crate::{
    error::{ApiError, Code},
    objects::Objects,
};

/// What an API's state says of the bodies it takes (its router's `DefaultBodyLimit`).
pub trait BodyLimit {
    /// The largest request body, in bytes.
    const MAX_BODY_BYTES: usize;
}

/// A JSON request body of `T`'s shape.
pub struct ApiJson<T>(pub T);

impl<S: BodyLimit + Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
            })
            .unwrap_or(false);
        if !is_json {
            return Err(ApiError::BadRequest(
                Code::UnsupportedMediaType,
                "request body must be JSON sent with `Content-Type: application/json`".into(),
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|r| {
            if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge(S::MAX_BODY_BYTES)
            } else {
                ApiError::BadRequest(Code::BadRequest, "could not read the request body".into())
            }
        })?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// An optional JSON body: no body at all is `None`, `null` too; anything else must be one JSON
/// value, parsed as [`parse_json`] does. Only whitespace is not a JSON document, so it is a 400
/// like any other malformed body, not an absent one.
pub fn optional_json<T: DeserializeOwned>(body: &[u8]) -> Result<Option<T>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    parse_json(body)
}

/// Parse a JSON document into `T`, classifying failures as 400 (not one JSON value: malformed,
/// or followed by anything but whitespace) or 422 (a JSON value of the wrong shape; an array
/// where a record's object belongs too, which serde alone would take for its fields in order).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let not_json = |e: serde_json::Error| {
        ApiError::BadRequest(Code::MalformedJson, format!("request body is not valid JSON: {e}"))
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize(Objects(&mut de)) {
        Ok(value) => {
            de.end().map_err(not_json)?;
            Ok(value)
        }
        Err(err) => {
            // A shape error stops reading early, so first make sure the whole body is one JSON
            // value: `{"plate":"X"}}` is malformed (400) before it misses fields (422).
            let mut whole = serde_json::Deserializer::from_slice(bytes);
            serde::de::IgnoredAny::deserialize(&mut whole).and_then(|_| whole.end()).map_err(not_json)?;
            // Every request body of this API is an object; say so rather than "invalid type: sequence".
            if bytes.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b != b'{') {
                return Err(ApiError::validation("body", "must be a JSON object"));
            }
            let path = err.path().to_string();
            let inner = err.into_inner();
            match inner.classify() {
                serde_json::error::Category::Data => Err(data_error(&path, &inner)),
                _ => Err(not_json(inner)),
            }
        }
    }
}

/// The reason given for a missing required field.
pub const REQUIRED: &str = "is required";

/// Deserialize an already parsed JSON value, with the same 422 naming the field.
pub fn parse_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(Objects(value)).map_err(|err| {
        let path = err.path().to_string();
        data_error(&path, &err.into_inner())
    })
}

fn data_error(path: &str, err: &impl std::fmt::Display) -> ApiError {
    // serde_json appends " at line X column Y"; the field path says where instead.
    let msg = err.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
    if let Some(unknown) = msg.strip_prefix("unknown field `").and_then(|m| m.split('`').next()) {
        // serde_path_to_error's path already ends at the unknown key.
        let field = if path == "." { unknown.to_string() } else { path.to_string() };
        return ApiError::validation(field, "is not a field of this resource");
    }
    if msg.starts_with("data did not match any variant") {
        return ApiError::validation(path, "must be an integer or a string");
    }
    if let Some(missing) = msg.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
        let field = if path == "." { missing.to_string() } else { format!("{path}.{missing}") };
        return ApiError::validation(field, REQUIRED);
    }
    if path == "." {
        return ApiError::validation("body", format!("must be a JSON object ({msg})"));
    }
    ApiError::validation(path, msg)
}

/// A path parameter; one that does not parse names no record, so it is a 404.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|_| ApiError::NotFound("no such record".into()))
    }
}

/// Query string parameters; a bad one is a 422 naming it.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query().unwrap_or("")).map(ApiQuery)
    }
}

/// Deserialize a query string as [`ApiQuery`] does, with the same 422 naming the parameter.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        ApiError::validation(if path == "." { "query".into() } else { path }, err.into_inner().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Body {
        email: String,
        inner: Option<Inner>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    fn field_of(e: ApiError) -> String {
        match e {
            ApiError::Validation { field, .. } => field,
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn classifies_json_errors() {
        assert!(matches!(parse_json::<Body>(b"{nope"), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        assert!(matches!(parse_json::<Body>(b""), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        assert!(matches!(parse_json::<Body>(br#"{"email":"a"} x"#), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        // Trailing bytes make the body malformed even when its value has the wrong shape.
        assert!(matches!(
            parse_json::<Body>(br#"{"plate":"34ABC123"}}"#),
            Err(ApiError::BadRequest(Code::MalformedJson, _))
        ));
        assert!(matches!(parse_json::<Body>(b"{} []"), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        assert!(matches!(parse_json::<Body>(b"[] x"), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        assert!(parse_json::<Body>(b" {\"email\":\"a\"}\n\t ").is_ok(), "whitespace around the value is fine");
        assert_eq!(field_of(parse_json::<Body>(b"{}").unwrap_err()), "email");
        assert_eq!(field_of(parse_json::<Body>(br#"{"email":1}"#).unwrap_err()), "email");
        assert_eq!(field_of(parse_json::<Body>(br#"{"email":"a","inner":{}}"#).unwrap_err()), "inner.n");
        assert_eq!(field_of(parse_json::<Body>(br#"{"email":"a","inner":{"n":-1}}"#).unwrap_err()), "inner.n");
        assert_eq!(field_of(parse_json::<Body>(b"[]").unwrap_err()), "body");
        assert!(parse_json::<Body>(br#"{"email":"a"}"#).is_ok());
        // A record's fields in order, as an array, are not its object (serde alone takes them).
        assert_eq!(field_of(parse_json::<Body>(br#"["a", {"n": 1}]"#).unwrap_err()), "body");
        assert_eq!(field_of(parse_json::<Body>(br#"{"email":"a","inner":[1]}"#).unwrap_err()), "inner");
        assert_eq!(
            field_of(parse_value::<Body>(serde_json::json!({"email": "a", "inner": [1]})).unwrap_err()),
            "inner"
        );
    }

    #[test]
    fn optional_bodies() {
        assert!(matches!(optional_json::<Body>(b""), Ok(None)));
        assert!(matches!(optional_json::<Body>(b"null"), Ok(None)));
        assert!(matches!(optional_json::<Body>(b" null\n"), Ok(None)));
        assert!(
            matches!(optional_json::<Body>(b"\n"), Err(ApiError::BadRequest(Code::MalformedJson, _))),
            "whitespace is no document"
        );
        assert!(matches!(optional_json::<Body>(b"  \t"), Err(ApiError::BadRequest(Code::MalformedJson, _))));
        assert!(matches!(optional_json::<Body>(br#"{"email":"a"}"#), Ok(Some(_))));
        // Every field optional: an empty array would otherwise pass for `{}`.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Options {
            #[serde(default)]
            n: Option<u32>,
        }
        assert_eq!(field_of(optional_json::<Options>(b"[]").unwrap_err()), "body");
        assert_eq!(field_of(optional_json::<Options>(b"[7]").unwrap_err()), "body");
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: Option<u32>,
    }

    #[test]
    fn unknown_fields() {
        assert_eq!(field_of(parse_json::<Strict>(br#"{"b":1}"#).unwrap_err()), "b");
        assert_eq!(field_of(parse_value::<Strict>(serde_json::json!({"a": "x"})).unwrap_err()), "a");
    }
}
