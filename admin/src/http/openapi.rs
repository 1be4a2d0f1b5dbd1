//! The admin API's own OpenAPI 3.1 document (`/admin/v1/openapi.json`), apart from the tenant
//! API's: utoipa's derive writes the operations and schemas from the handlers, then [`finish`]
//! states on each operation its required scope and the errors every operation of its kind can
//! answer, from what it is (authenticated, with a body, with ids, with query parameters).

use serde_json::{json, Value};
use utoipa::{
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi,
};

use super::error::ErrorBody;

const DESCRIPTION: &str = "\
The operators' API, for platform staff (never tenants), on a listener of its own that no Ingress \
routes to. Every operation but this document needs an operator token (`Authorization: Bearer \
tnsop_…`, made with `tns admin token create NAME --scope …`) holding the scope the operation \
names: `read` (organizations, their invoices, the audit log), `write` (status, plan, re-queueing, \
invoices paid or void), `personal-data` (a submission as sent, unmasked). No scope implies another. Every change and every look at \
personal data is written to the audit log as `operator:<the token's name>`.

**Errors** are `{\"error\", \"detail\", \"code\"}` (`field` too on 422), `code` a stable machine name of \
the case to branch on (`ErrorCode` lists them): 400 a body that is not one JSON value \
(or not `application/json`); 401 a missing, unknown or revoked token; 403 a token without the \
operation's scope; 404 an unknown route or id; 413 a body over 64 KiB; 422 a field or query \
parameter that breaks its rule, named; 429 too many requests with one token, or too many refused tokens from one address (`Retry-After`).";

#[derive(OpenApi)]
#[openapi(
    info(title = "TNS admin API", version = "1.0.0", description = DESCRIPTION),
    servers((url = "/admin/v1")),
    modifiers(&Security),
    components(schemas(ErrorBody)),
    tags((name = "organizations"), (name = "invoices"), (name = "audit"), (name = "meta"))
)]
pub struct AdminDoc;

/// The security scheme's name in the document.
pub const SCHEME: &str = "operator_token";

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        openapi.components.get_or_insert_with(Default::default).add_security_scheme(
            SCHEME,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An operator token (`tnsop_…`) from `tns admin token create`"))
                    .build(),
            ),
        );
    }
}

/// The derived document, finished (see the module's documentation).
pub fn finish(doc: utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(doc).expect("the document serializes");
    doc["openapi"] = json!("3.1.0");
    let error = |description: &str| {
        json!({"description": description,
               "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}})
    };
    let Some(paths) = doc["paths"].as_object_mut() else { return doc };
    let methods = ["get", "put", "post", "delete", "patch"];
    let operations = paths.values_mut().filter_map(Value::as_object_mut).flat_map(|p| p.iter_mut());
    for op in operations.filter(|(method, _)| methods.contains(&method.as_str())).map(|(_, op)| op) {
        let scopes: Vec<String> = op["security"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|req| req[SCHEME].as_array())
            .flatten()
            .filter_map(|s| s.as_str().map(|s| format!("`{s}`")))
            .collect();
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        let has = |place: &str| params.iter().any(|p| p["in"] == place);
        let mut errors = vec![];
        if !scopes.is_empty() {
            let text = op["description"].as_str().unwrap_or_default().to_string();
            op["description"] =
                json!(format!("{text}\n\nNeeds an operator token with the scope {}.", scopes.join(", ")).trim_start());
            errors.extend([
                ("401", "A missing, unknown or revoked operator token"),
                ("403", "The token lacks the operation's scope"),
                ("429", "Too many requests with this token, or too many refused tokens from this address (see `Retry-After`)"),
                ("503", "The database cannot be reached; retry after `Retry-After` seconds"),
            ]);
        }
        if op.get("requestBody").is_some() {
            errors.extend([
                ("400", "The body is not one JSON value, or not `application/json`"),
                ("413", "The body is larger than 64 KiB"),
                ("422", "A field breaks its rule (named in `field`)"),
            ]);
        }
        if has("query") {
            errors.push(("422", "A field or query parameter breaks its rule (named in `field`)"));
        }
        if has("path") {
            errors.push(("404", "No such record"));
        }
        let responses = op["responses"].as_object_mut().expect("every operation has responses");
        for (status, description) in errors {
            responses.entry(status).or_insert_with(|| error(description));
        }
    }
    doc
}
