//! The OpenAPI 3.1 document: utoipa's derive writes the operations and schemas from the
//! handlers and types; [`finish`] then adds what the derive cannot say, each from the code that
//! enforces it:
//! - partial-update (`PUT`) schemas, derived from the create schema they patch;
//! - rules across an input's fields ([`AcrossFields`]), next to the check that applies them;
//! - every status an operation can answer, with the error body and the rate-limit headers the
//!   admission layer sets (from what the operation is: authenticated, with a body, with ids);
//! - links from each create to the operations that take the id it returns;
//! - the webhook events, with the exact payloads the outbox writes.

use serde_json::{json, Map, Value};
use utoipa::{
    openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi, ToSchema,
};

use crate::{admission, error::ErrorBody, limits::MAX_BODY_BYTES};

/// Declare the schema of a partial update (`PUT` with any subset of fields) of `$input`: a
/// marker component the finishing pass replaces with `$input`'s schema made partial.
macro_rules! patch_schema {
    ($name:ident, $input:ty) => {
        /// Any subset of the fields; `null` removes an optional one.
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                tns_core::domain::fields::raw_schema(serde_json::json!({
                    $crate::v1::openapi::PATCH_OF: <$input as utoipa::ToSchema>::name()
                }))
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
        }
    };
}
pub(crate) use patch_schema;

/// The marker keyword of a patch schema, naming the input it is a partial update of.
pub const PATCH_OF: &str = "x-tns-patch-of";

/// Rules across an input's fields, stated as JSON Schema keywords added to its component.
/// Ordering rules JSON Schema cannot state go in `x-tns-not-before`: pairs of (earlier, later)
/// lists of JSON pointers into the body, compared as the tuples they name.
pub trait AcrossFields: ToSchema {
    fn json_rules() -> Value;
}

const DESCRIPTION: &str = "\
Multi-tenant API for U-ETDS notifications: vehicles, personnel, journeys with passengers and cargo \
shipments, submitted to the Ministry's system and tracked by polling and signed webhooks.

**Errors** are `{\"error\", \"detail\", \"code\"}` (`field` too on 422), `code` a stable machine name of \
the case to branch on (`ErrorCode` lists them): 400 a body that is not one JSON value \
(or not `application/json`); 401 missing or invalid credentials; 403 a missing scope, or a suspended \
organization creating, changing or submitting (it still reads, revokes keys, and uses billing and support); 404 a record \
that does not exist for the organization, in the path or named by the body; 409 a valid request the \
record's state refuses (not a draft, a duplicate, a limit, a partial update that would leave the \
record breaking a rule across fields); 422 a field that breaks its rule; 429 a rate limit.

**Rules** are in the schemas: patterns, bounds and enums are exactly what the API checks. Two \
custom formats carry check digits: `tckn` (a T.C. kimlik numarası: 11 digits, d1 ≠ 0, \
d10 = (7·(d1+d3+d5+d7+d9) − (d2+d4+d6+d8)) mod 10, d11 = (d1+…+d10) mod 10) and `vkn` (a tax number: \
10 digits, the Revenue Administration's check digit). Orders JSON Schema cannot state are listed \
in `x-tns-not-before` (arrival not before departure, unloading not before loading), and values that \
must differ in `x-tns-other-than` (a second driver is another person than the first).

**Rate limits**: every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` (-1 = \
unlimited) and `X-RateLimit-Reset` (Unix time of the next UTC month) for the organization's \
monthly quota, or for the per-client-IP limit on unauthenticated calls; a 429 carries \
`Retry-After`.

**Lists** are newest first, `limit` 1–200 (default 50), `next_cursor` and `has_more`.

**Idempotency**: a POST may carry `Idempotency-Key` (1–255 visible ASCII characters): the same key \
and request within 24 hours replays the first answer (not for answers carrying a secret); the same \
key with another request is 422, and a repeat while the first is running is 409.

**Submissions** need only a record that exists: what U-ETDS will want but the record lacks comes \
back as `warnings`, never as a refusal.";

#[derive(OpenApi)]
#[openapi(
    info(title = "TNS — Transport Notification Service", version = "1.0.0", description = DESCRIPTION),
    servers((url = "/api/v1")),
    modifiers(&Security),
    // What only query parameters name (the derive registers the schemas bodies use).
    components(schemas(ErrorBody, tns_core::domain::fields::Limit, tns_core::domain::fields::Cursor,
        tns_core::domain::fields::Day, tns_core::domain::fields::MonthField, tns_core::domain::national::CityId,
        tns_core::domain::fields::RecordId, tns_core::domain::kinds::RecordStatus, tns_core::domain::kinds::SubmissionState,
        tns_core::domain::kinds::TargetType, tns_core::domain::kinds::DeliveryStatus, tns_core::domain::kinds::AnyEventType,
        crate::v1::answers::TestEventData)),
    tags((name = "auth"), (name = "account"), (name = "billing"), (name = "journeys"), (name = "vehicles"),
         (name = "personnel"), (name = "cargo"), (name = "submissions"), (name = "reference"), (name = "support"),
         (name = "webhooks"), (name = "meta"))
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key (`sk_live_…`) or an access token from /auth/token"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "tns_session",
                "Portal session from /auth/login; unsafe methods also need X-CSRF-Token",
            ))),
        );
    }
}

/// Finish the derived document (see the module's documentation). `across` are the inputs'
/// rules across fields, by component name.
pub fn finish(doc: utoipa::openapi::OpenApi, across: &[(String, Value)]) -> Value {
    // Through a JSON value: every keyword utoipa has no model for is added here, and keys come
    // out in one stable order.
    let mut doc = serde_json::to_value(doc).expect("the document serializes");
    doc["openapi"] = json!("3.1.0");
    for (name, rules) in across {
        if let Some(Value::Object(schema)) = doc.pointer_mut(&format!("/components/schemas/{name}")) {
            schema.extend(rules.as_object().cloned().unwrap_or_default());
        }
    }
    patches(&mut doc);
    responses(&mut doc);
    links(&mut doc);
    webhooks(&mut doc);
    doc
}

fn schemas(doc: &mut Value) -> &mut Map<String, Value> {
    doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut).expect("the document has schemas")
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn referenced(v: &Value) -> Option<&str> {
    v.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/")
}

/// Replace every patch marker with the partial form of the input it names.
fn patches(doc: &mut Value) {
    let markers: Vec<(String, String)> = schemas(doc)
        .iter()
        .filter_map(|(name, s)| Some((name.clone(), s.get(PATCH_OF)?.as_str()?.to_string())))
        .collect();
    for (name, input) in markers {
        let partial = partial_of(doc, &input);
        schemas(doc).insert(name, partial);
    }
}

/// `input`'s schema as a merge patch (RFC 7396) of it: no field required; the optional ones also
/// take `null` (which removes them); nested objects partial in turn; the rules across fields
/// left out (a patch that is valid field by field but breaks one once merged is a 409).
fn partial_of(doc: &mut Value, input: &str) -> Value {
    let source = schemas(doc).get(input).cloned().unwrap_or_else(|| panic!("no schema {input} to patch"));
    let required: Vec<String> = source["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let mut props = Map::new();
    for (field, schema) in source["properties"].as_object().cloned().unwrap_or_default() {
        let mut schema = partial_property(doc, schema);
        let nullable = schema.get("oneOf").is_some_and(|alts| {
            alts.as_array().is_some_and(|a| a.iter().any(|s| s.get("type") == Some(&json!("null"))))
        });
        if !required.contains(&field) && !nullable {
            schema = json!({"anyOf": [{"type": "null"}, schema]});
        }
        props.insert(field, schema);
    }
    json!({
        "type": "object",
        "description": format!("Any subset of the fields of {input}; `null` removes an optional field."),
        "properties": props,
        "additionalProperties": false,
    })
}

/// A property of a patch: an object it refers to becomes that object's patch.
fn partial_property(doc: &mut Value, schema: Value) -> Value {
    if let Some(target) = referenced(&schema) {
        let is_object = schemas(doc).get(target).is_some_and(|s| s.get("properties").is_some());
        if is_object {
            let patch_name = format!("{target}Patch");
            if !schemas(doc).contains_key(&patch_name) {
                let partial = partial_of(doc, target);
                schemas(doc).insert(patch_name.clone(), partial);
            }
            let mut out = reference(&patch_name);
            if let Some(d) = schema.get("description") {
                out["description"] = d.clone();
            }
            return out;
        }
        return schema;
    }
    if let Some(Value::Array(alts)) = schema.get("oneOf") {
        let alts: Vec<Value> = alts.clone().into_iter().map(|a| partial_property(doc, a)).collect();
        let mut out = schema;
        out["oneOf"] = Value::Array(alts);
        return out;
    }
    schema
}

/// The statuses every operation can answer, by what the operation is, with the error body; the
/// rate-limit headers on every answer the admission layer makes.
/// Statuses that can come without the rate headers.
const UNMETERED: [&str; 3] = ["413", "500", "503"];

fn responses(doc: &mut Value) {
    let request_id = json!({"$ref": "#/components/headers/X-Request-Id"});
    let rate_headers = json!({
        "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
        "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"},
        "X-RateLimit-Reset": {"$ref": "#/components/headers/X-RateLimit-Reset"},
    });
    // (status, component name, description). Some answers come before (or without) a rate
    // decision, so they carry no rate headers: a body declared too large is refused by the body
    // limit in front of the admission layer (413), a panic unwinds past it (500), and a store it
    // needs may be down (503).
    let standard = [
        ("400", "BadRequest", "The body is not one JSON value (malformed, or followed by more than whitespace), or not sent as `application/json`."),
        ("401", "Unauthorized", "Missing or invalid credentials."),
        ("403", "Forbidden", "The credential lacks the scope this needs, a cookie session sent no valid X-CSRF-Token, or the organization is suspended or closed and this creates, changes or submits (`detail` says why; reads, revoking a key, billing and support still answer)."),
        ("404", "NotFound", "No such record for this organization."),
        ("409", "Conflict", "The record's state refuses the request; on a POST also a repeat of an `Idempotency-Key` whose first request is still being answered, or whose answer carried a secret (never replayed)."),
        ("413", "PayloadTooLarge", "The body is larger than 1 MiB (whatever the operation)."),
        ("422", "ValidationError", "A field breaks its rule; `field` names it and `detail` says why (on a POST, `Idempotency-Key` when it is malformed, was used with another request, or is sent to /auth/*)."),
        ("429", "TooManyRequests", "A rate limit: the monthly quota (authenticated) or too many unauthenticated calls from this address."),
        ("500", "InternalServerError", "An unexpected error; no details are given (they are logged)."),
        ("503", "ServiceUnavailable", "A store the request needs is unavailable (PostgreSQL, then with `Retry-After`; the quota store in fail-closed mode; the session store); retry shortly."),
    ];
    debug_assert_eq!(MAX_BODY_BYTES, 1 << 20, "the 413 description says 1 MiB");
    let mut components_responses = Map::new();
    for (status, name, description) in standard {
        let mut response =
            json!({"description": description, "content": {"application/json": {"schema": reference("ErrorBody")}}});
        if !UNMETERED.contains(&status) {
            response["headers"] = rate_headers.clone();
        }
        if status == "429" {
            response["headers"]["Retry-After"] = json!({"$ref": "#/components/headers/Retry-After"});
        }
        if status == "503" {
            response["headers"] = json!({"Retry-After": {"description": "Seconds to wait: sent while PostgreSQL is unreachable.", "schema": {"type": "integer", "minimum": 0}}});
        }
        response["headers"]["X-Request-Id"] = request_id.clone();
        components_responses.insert(name.to_string(), response);
    }
    let components = doc["components"].as_object_mut().expect("components");
    components.insert("responses".into(), Value::Object(components_responses));
    components.insert(
        "headers".into(),
        json!({
            "X-RateLimit-Limit": {"required": true, "description": "The monthly quota of the organization (or the per-client-IP limit of unauthenticated calls); -1 when unlimited.", "schema": {"type": "integer"}},
            "X-RateLimit-Remaining": {"required": true, "description": "Calls left in the period; -1 when unlimited.", "schema": {"type": "integer"}},
            "X-RateLimit-Reset": {"required": true, "description": "When the period ends: Unix time (the next UTC month for the quota).", "schema": {"type": "integer"}},
            "Retry-After": {"required": true, "description": "Seconds until a retry can succeed.", "schema": {"type": "integer", "minimum": 0}},
            "X-Request-Id": {"required": true, "description": "This request's ID: the caller's `X-Request-Id` when it sent one of at most 128 characters of `A-Z a-z 0-9 - _ . :`, else a new one. Every log line of the request carries it, and a 5xx answer's `detail` ends with it: quote it to support.", "schema": {"type": "string", "maxLength": 128, "pattern": "^[A-Za-z0-9._:-]+$"}},
        }),
    );
    let named = |status: &str| standard.iter().find(|(s, _, _)| *s == status).map(|(_, n, _)| *n).expect("standard");
    let paths = doc["paths"].as_object_mut().expect("paths");
    for (path, item) in paths.iter_mut() {
        for (method, op) in item.as_object_mut().expect("path item").iter_mut() {
            let requirements = op["security"].as_array().cloned().unwrap_or_default();
            let authenticated = requirements.iter().any(|r| r != &json!({}));
            let scoped = requirements
                .iter()
                .filter_map(Value::as_object)
                .flat_map(|r| r.values())
                .any(|scopes| scopes.as_array().is_some_and(|s| !s.is_empty()));
            let unsafe_method = method != "get";
            // Judged as anonymous whatever credential comes (no 401, 403 or suspension).
            let anonymous = admission::ANONYMOUS.contains(&path.as_str());
            let has_body = op.get("requestBody").is_some();
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let in_path = params.iter().any(|p| p["in"] == "path");
            let in_query = params.iter().any(|p| p["in"] == "query");
            // The body limit stands in front of every route.
            let mut statuses = vec!["413"];
            if has_body {
                statuses.push("400");
            }
            if authenticated {
                statuses.push("401");
            }
            // A missing scope, a cookie session's missing CSRF token, or a suspended
            // organization's credential (on a public route too, when one is sent).
            let verb = axum::http::Method::from_bytes(method.to_ascii_uppercase().as_bytes()).expect("an HTTP method");
            let suspension = !anonymous && !admission::spared_when_suspended(&verb, path);
            if suspension || (authenticated && (scoped || unsafe_method)) {
                statuses.push("403");
            }
            if in_path {
                statuses.push("404");
            }
            // `Idempotency-Key` on a POST: kept for the credential (a repeat whose first request
            // is running is 409), refused on the anonymous routes (422).
            if method == "post" && authenticated {
                statuses.push("409");
            }
            if has_body || in_query || method == "post" {
                statuses.push("422");
            }
            statuses.extend(["429", "500", "503"]);
            let responses = op["responses"].as_object_mut().expect("responses");
            // The operation's own answers: the rate headers, and a description when it has none.
            for (status, response) in responses.iter_mut() {
                let response = response.as_object_mut().expect("response");
                if response.get("description").and_then(Value::as_str).is_none_or(str::is_empty) {
                    let reason = status.parse::<u16>().ok().and_then(|s| axum::http::StatusCode::from_u16(s).ok());
                    let text = reason.and_then(|s| s.canonical_reason()).unwrap_or("Answer");
                    response.insert("description".into(), json!(text));
                }
                let headers = response.entry("headers").or_insert_with(|| json!({}));
                headers["X-Request-Id"] = request_id.clone();
                if UNMETERED.contains(&status.as_str()) {
                    continue;
                }
                let headers = response.entry("headers").or_insert_with(|| json!({}));
                let headers = headers.as_object_mut().expect("headers");
                for (name, h) in rate_headers.as_object().expect("object") {
                    headers.entry(name.clone()).or_insert_with(|| h.clone());
                }
                if status == "429" {
                    headers.insert("Retry-After".into(), json!({"$ref": "#/components/headers/Retry-After"}));
                }
            }
            for status in statuses {
                responses
                    .entry(status.to_string())
                    .or_insert_with(|| json!({"$ref": format!("#/components/responses/{}", named(status))}));
            }
        }
    }
}

/// Links from each create (and submit) to the operations that take the id it answers with:
/// `POST /a` → every operation on `/a/{id}…`, its `id` from the response; nested creates keep
/// the parent ids from the request.
fn links(doc: &mut Value) {
    let ops: Vec<(String, String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, item)| {
            item.as_object().expect("item").iter().filter_map(move |(method, op)| {
                Some((path.clone(), method.clone(), op.get("operationId")?.as_str()?.to_string()))
            })
        })
        .collect();
    for (path, method, _) in &ops {
        if method != "post" {
            continue;
        }
        let (status, id_field, target_prefix) = match path.as_str() {
            p if p.ends_with("/submit") => ("202", "submission_id", "/portal/submissions/{id}".to_string()),
            _ => ("201", "id", String::new()),
        };
        let prefix = if target_prefix.is_empty() {
            // The new record's own path: the collection plus its id parameter.
            let param = if path.contains("{id}") { "{passenger_id}" } else { "{id}" };
            format!("{path}/{param}")
        } else {
            target_prefix
        };
        let new_param = prefix.rsplit('{').next().map(|p| p.trim_end_matches('}').to_string()).unwrap_or_default();
        let known = path_params(path);
        let mut links = Map::new();
        for (other_path, _, other_id) in &ops {
            if !(other_path == &prefix || other_path.starts_with(&format!("{prefix}/"))) {
                continue;
            }
            let mut parameters = Map::new();
            for name in path_params(other_path) {
                let expr = if name == new_param {
                    format!("$response.body#/{id_field}")
                } else if known.contains(&name) {
                    format!("$request.path.{name}")
                } else {
                    // An id neither this request nor its answer has.
                    parameters.clear();
                    break;
                };
                parameters.insert(name, json!(expr));
            }
            if !parameters.is_empty() {
                links.insert(other_id.clone(), json!({"operationId": other_id, "parameters": parameters}));
            }
        }
        if links.is_empty() {
            continue;
        }
        if let Some(response) = doc.pointer_mut(&format!("/paths/{}/{method}/responses/{status}", escape(path))) {
            response["links"] = Value::Object(links);
        }
    }
}

fn path_params(path: &str) -> Vec<String> {
    path.split('{').skip(1).filter_map(|p| p.split('}').next()).map(str::to_string).collect()
}

/// A path as a JSON pointer token.
fn escape(path: &str) -> String {
    path.replace('~', "~0").replace('/', "~1")
}

/// The events a subscription receives: the exact bodies the outbox writes and the headers every
/// delivery carries.
fn webhooks(doc: &mut Value) {
    let journey = <crate::v1::answers::JourneyOut as ToSchema>::name();
    let submission = <tns_http::wire::SubmissionOut as ToSchema>::name();
    let test_data = reference(&<crate::v1::answers::TestEventData as ToSchema>::name());
    let events = [
        ("journey.created", "A journey was created.", reference(&journey)),
        ("submission.delivered", "A submission reached `delivered`.", reference(&submission)),
        ("submission.failed", "A submission reached `failed`.", reference(&submission)),
        (
            "submission.unknown",
            "A submission became `unknown`: an earlier call may have reached the downstream and looking it up \
             failed; it is looked up again (`next_attempt_at`) and never sent again until its outcome is known.",
            reference(&submission),
        ),
        (
            "submission.drifted",
            "A drift check found the downstream holding something else than TNS delivered (the trip cancelled or \
             edited outside TNS): the record's latest submission with its `drift`. Sent whenever the differences \
             change, not on every check that finds the same.",
            reference(&submission),
        ),
        (
            "test",
            "Sent by `POST /portal/webhooks/test-event` to every active subscription or the one named.",
            test_data,
        ),
    ];
    let headers = [
        ("X-Webhook-Signature", "Lowercase hex HMAC-SHA256 of the raw body, keyed with the subscription's secret (the whole string, as UTF-8). Compare in constant time; reject (401) on a mismatch."),
        ("X-Webhook-Id", "The event id, the same on every retry: dedupe on it."),
        ("X-Webhook-Timestamp", "Unix seconds of this attempt."),
        ("X-Webhook-Event", "The event type."),
        ("webhook-id", "Standard Webhooks: the event id (as X-Webhook-Id)."),
        ("webhook-timestamp", "Standard Webhooks: Unix seconds of this attempt (as X-Webhook-Timestamp)."),
        ("webhook-signature", "Standard Webhooks: `v1,<base64 HMAC-SHA256>` over `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of a `whsec_` secret; two space-separated entries while a rotated-out secret still signs (24 h). Verify with any Standard Webhooks library."),
    ];
    let parameters: Vec<Value> = headers
        .iter()
        .map(|(name, d)| json!({"name": name, "in": "header", "required": true, "description": d, "schema": {"type": "string"}}))
        .collect();
    let mut out = Map::new();
    for (kind, description, data) in events {
        let schema_name = format!("{}Event", kind.split('.').map(capitalize).collect::<String>());
        schemas(doc).insert(
            schema_name.clone(),
            json!({
                "type": "object",
                "description": format!("The body of a `{kind}` delivery."),
                "required": ["id", "type", "created_at", "data"],
                "properties": {
                    "id": {"type": "integer", "description": "The event id (also X-Webhook-Id)."},
                    "type": {"const": kind},
                    "created_at": {"type": "string", "format": "date-time"},
                    "data": data,
                },
            }),
        );
        out.insert(
            kind.to_string(),
            json!({"post": {
                "operationId": format!("on_{}", kind.replace('.', "_")),
                "summary": description,
                "description": "POSTed with a 10 s timeout; any 2xx answer is a delivery. Anything else is retried after about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h and 12 h (±20 %), longer when a 429/5xx answer says Retry-After; redirects are not followed.",
                "parameters": parameters,
                "requestBody": {"required": true, "content": {"application/json": {"schema": reference(&schema_name)}}},
                "responses": {"2XX": {"description": "Received."}},
            }}),
        );
    }
    doc["webhooks"] = Value::Object(out);
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_schemas_are_partial_and_nest() {
        let mut doc = json!({"components": {"schemas": {
            "In": {"type": "object", "required": ["a", "o"], "properties": {
                "a": {"type": "string"},
                "b": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
                "c": {"type": "array"},
                "o": {"$ref": "#/components/schemas/Inner"},
            }, "if": {}, "then": {}},
            "Inner": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}},
            "InPatch": {PATCH_OF: "In"},
        }}});
        patches(&mut doc);
        let p = &doc["components"]["schemas"]["InPatch"];
        assert!(p.get("required").is_none() && p.get("if").is_none());
        assert_eq!(p["properties"]["a"], json!({"type": "string"}), "a required field never takes null");
        assert_eq!(p["properties"]["b"]["oneOf"][0], json!({"type": "null"}));
        assert_eq!(p["properties"]["c"]["anyOf"][0], json!({"type": "null"}), "an optional one does");
        assert_eq!(p["properties"]["o"]["$ref"], "#/components/schemas/InnerPatch");
        assert!(doc["components"]["schemas"]["InnerPatch"].get("required").is_none());
    }

    /// Every `$ref` of the served document names something the document has.
    #[test]
    fn every_reference_resolves() {
        fn walk(v: &Value, doc: &Value, seen: &mut usize) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::String(r)) = m.get("$ref") {
                        let pointer = r.strip_prefix('#').expect("local references only");
                        assert!(doc.pointer(pointer).is_some(), "unresolved {r}");
                        *seen += 1;
                    }
                    m.values().for_each(|x| walk(x, doc, seen));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, doc, seen)),
                _ => {}
            }
        }
        let doc: Value = serde_json::from_str(crate::v1::openapi_document()).unwrap();
        let mut seen = 0;
        walk(&doc, &doc, &mut seen);
        assert!(seen > 100, "{seen}");
        assert!(doc["components"]["schemas"].as_object().unwrap().values().all(|s| s.get(PATCH_OF).is_none()));
    }

    /// The error body's `code` is required and lists every code, with what each means.
    #[test]
    fn the_error_body_lists_its_codes() {
        let doc: Value = serde_json::from_str(crate::v1::openapi_document()).unwrap();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["ErrorBody"]["properties"]["code"]["$ref"], "#/components/schemas/ErrorCode");
        assert!(schemas["ErrorBody"]["required"].as_array().unwrap().contains(&json!("code")));
        let codes = schemas["ErrorCode"]["enum"].as_array().unwrap();
        assert_eq!(codes.len(), crate::error::Code::ALL.len());
        assert!(codes.contains(&json!("not_draft")) && codes.contains(&json!("invalid_field")));
        assert!(schemas["ErrorCode"]["description"].as_str().unwrap().contains("- `not_draft`: Only a draft"));
    }

    #[test]
    fn path_parameters() {
        assert_eq!(path_params("/portal/journeys/{id}/passengers/{passenger_id}"), ["id", "passenger_id"]);
        assert_eq!(escape("/a/{id}"), "~1a~1{id}");
    }
}
