use serde_json::{json, Value};

use crate::helpers::*;

#[tokio::test]
async fn health_readiness_and_metrics() {
    let app = TestApp::spawn().await;
    let h = app.get_anon("/healthz").await;
    assert_eq!(h.status(), 200);
    let r = app.get_anon("/readyz").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), serde_json::json!({"postgres": "ok", "redis": "ok"}));

    let org = app.register().await;
    app.get("/portal/me", &org.key).await;
    app.delete("/portal/api-keys/12345", &org.key).await;
    let m = app.metrics().await;
    for needle in [
        r#"tns_http_requests_total{method="GET",route="/api/v1/portal/me",status="200"} 1"#,
        r#"tns_http_requests_total{method="DELETE",route="/api/v1/portal/api-keys/{id}",status="404"} 1"#,
        r#"tns_http_requests_total{method="POST",route="/api/v1/auth/register",status="201"} 1"#,
        r#"tns_http_request_duration_seconds_bucket{method="GET",route="/api/v1/portal/me",status="200",le="#,
        "tns_pg_pool_connections ",
        "tns_redis_pool_connections ",
        "tns_quota_redis_fallback_total 0",
    ] {
        assert!(m.contains(needle), "metrics lack {needle}:\n{m}");
    }
    assert!(!m.contains("12345"), "raw paths never become labels");
}

#[tokio::test]
async fn readiness_fails_when_redis_is_unreachable() {
    let app = TestApp::spawn_with(&[("TNS_REDIS_URL", "redis://127.0.0.1:1")]).await;
    let r = app.get_anon("/readyz").await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.json::<Value>().await.unwrap()["redis"], "unreachable");
    assert_eq!(app.get_anon("/healthz").await.status(), 200);
}

/// The contract's operations, as the spec lists them: every deployment serves and documents
/// these. (The rest of the document's operations are this product's extensions; the test below
/// takes them from the document itself, so a new route needs no second list.)
const SPEC_OPERATIONS: [(&str, &str); 40] = [
    ("post", "/auth/register"),
    ("post", "/auth/token"),
    ("post", "/auth/login"),
    ("get", "/portal/me"),
    ("get", "/portal/api-keys"),
    ("post", "/portal/api-keys"),
    ("delete", "/portal/api-keys/{id}"),
    ("post", "/portal/journeys"),
    ("get", "/portal/journeys"),
    ("post", "/portal/journeys/{id}/submit"),
    ("post", "/portal/journeys/{id}/passengers"),
    ("post", "/portal/journeys/{id}/passengers:bulk-upsert"),
    ("get", "/portal/journeys/{id}/passengers"),
    ("put", "/portal/journeys/{id}/passengers/{passenger_id}"),
    ("delete", "/portal/journeys/{id}/passengers/{passenger_id}"),
    ("get", "/portal/submissions"),
    ("get", "/portal/usage"),
    ("post", "/portal/vehicles"),
    ("get", "/portal/vehicles"),
    ("put", "/portal/vehicles/{id}"),
    ("delete", "/portal/vehicles/{id}"),
    ("post", "/portal/personnel"),
    ("get", "/portal/personnel"),
    ("put", "/portal/personnel/{id}"),
    ("delete", "/portal/personnel/{id}"),
    ("post", "/portal/cargo"),
    ("get", "/portal/cargo"),
    ("post", "/portal/cargo/{id}/submit"),
    ("get", "/ref/cities"),
    ("get", "/ref/districts"),
    ("post", "/portal/webhooks"),
    ("get", "/portal/webhooks"),
    ("get", "/portal/webhooks/events"),
    ("post", "/portal/webhooks/test-event"),
    ("get", "/portal/billing/plans"),
    ("get", "/portal/billing/subscription"),
    ("post", "/portal/billing/subscription/change"),
    ("get", "/portal/billing/invoices"),
    ("get", "/portal/support/tickets"),
    ("post", "/portal/support/tickets"),
];

#[tokio::test]
async fn openapi_document_covers_every_route() {
    let app = TestApp::spawn().await;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["servers"][0]["url"], "/api/v1");
    for (method, path) in SPEC_OPERATIONS {
        assert!(doc["paths"][path][method]["responses"].is_object(), "the spec's {method} {path} is documented");
    }
    // Every documented operation is served: with its path parameters filled, no route-level 404
    // (the fallback's "no such endpoint") and no 405, whatever else it answers without a key.
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            assert!(op["responses"].is_object(), "{method} {path} states its answers");
            let filled: String = path
                .split('/')
                .map(|segment| if segment.starts_with('{') { "1" } else { segment })
                .collect::<Vec<_>>()
                .join("/")
                .replace("{id}", "1");
            let res = app.req(method.to_uppercase().parse().unwrap(), &filled, None).send().await.unwrap();
            let status = res.status().as_u16();
            let body = res.text().await.unwrap_or_default();
            assert!(
                status != 405 && !(status == 404 && body.contains("no such endpoint")),
                "{method} {path}: {status} {body}"
            );
        }
    }
    assert!(operations > SPEC_OPERATIONS.len(), "the extensions are documented too ({operations} operations)");
    // An operation the document does not name is not served: the fallback answers.
    let res = app.req(reqwest::Method::GET, "/portal/no-such-thing", None).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert!(res.text().await.unwrap().contains("no such endpoint"));
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}

/// The document is precise enough to generate a client and fuzz the API from: parameters where
/// they are, one schema per name, every status with the error body and the rate headers, links
/// from creates, partial-update schemas, the webhook events.
#[tokio::test]
async fn openapi_document_states_what_the_api_does() {
    let app = TestApp::spawn().await;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let resolve = |v: &Value| -> Value {
        match v["$ref"].as_str() {
            Some(r) => doc.pointer(r.strip_prefix('#').unwrap()).cloned().unwrap_or_else(|| panic!("unresolved {r}")),
            None => v.clone(),
        }
    };
    let mut operation_ids = std::collections::HashSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let label = format!("{method} {path}");
            assert!(
                operation_ids.insert(op["operationId"].as_str().unwrap().to_string()),
                "{label}: unique operationId"
            );
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            for p in &params {
                let in_path = path.contains(&format!("{{{}}}", p["name"].as_str().unwrap()));
                match p["in"].as_str().unwrap() {
                    "path" => assert!(in_path && p["required"] == true, "{label}: {p}"),
                    "query" => assert!(!in_path && p["required"] != true, "{label}: optional query {p}"),
                    "header" => {}
                    other => panic!("{label}: parameter in {other}"),
                }
            }
            let statuses: Vec<&str> = op["responses"].as_object().unwrap().keys().map(String::as_str).collect();
            let must =
                |s: &str, why: &str| assert!(statuses.contains(&s), "{label} documents {s} ({why}): {statuses:?}");
            must("429", "every call is rate limited");
            must("500", "any call can fail");
            if op["security"].as_array().unwrap().iter().any(|r| r != &json!({})) {
                must("401", "authenticated");
            }
            if op.get("requestBody").is_some() {
                must("400", "has a body");
                must("413", "has a body");
                must("422", "has a body");
            }
            if params.iter().any(|p| p["in"] == "path") {
                must("404", "names a record");
            }
            for (status, response) in op["responses"].as_object().unwrap() {
                let response = resolve(response);
                if !status.starts_with('2') {
                    let schema = &response["content"]["application/json"]["schema"]["$ref"];
                    assert_eq!(schema, "#/components/schemas/ErrorBody", "{label} {status}");
                }
                if !["413", "500", "503"].contains(&status.as_str()) {
                    for h in ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] {
                        assert!(response["headers"][h].is_object(), "{label} {status} declares {h}");
                    }
                }
            }
        }
    }
    // The list filters are query parameters of the list, optional.
    let journeys: Vec<&str> = doc["paths"]["/portal/journeys"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(journeys, ["limit", "cursor", "status", "departure_from", "departure_to", "vehicle_id"]);

    // Two different records, two names.
    let schema_of = |path: &str, method: &str, status: &str| {
        doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]["$ref"].clone()
    };
    assert_eq!(schema_of("/portal/billing/subscription", "get", "200"), "#/components/schemas/PlanSubscription");
    assert_eq!(schema_of("/portal/webhooks/{id}", "get", "200"), "#/components/schemas/WebhookSubscription");
    assert!(doc["components"]["schemas"].get("Subscription").is_none());

    // Request schemas carry the rules: patterns, bounds, enums of the reference data.
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["Plate"]["pattern"].is_string() && schemas["Date"]["pattern"].is_string());
    assert_eq!(schemas["Text50"]["maxLength"], 50);
    let places = schemas["PlaceId"]["anyOf"][0]["enum"].as_array().unwrap();
    assert!(places.contains(&json!(1421)) && places.contains(&json!(99157)) && places.len() == 972 + 56);
    assert_eq!(schemas["JourneyIn"]["if"]["properties"]["trip_kind"]["const"], "tarifesiz");
    assert_eq!(schemas["JourneyIn"]["else"]["required"], json!(["tarifeli_context"]));
    // A partial update has no required field and takes the create's field rules.
    let patch = &doc["paths"]["/portal/vehicles/{id}"]["put"]["requestBody"]["content"]["application/json"]["schema"];
    let patch = resolve(patch);
    assert!(patch.get("required").is_none());
    assert_eq!(patch["properties"]["plate"]["$ref"], "#/components/schemas/Plate");

    // Links from creates to what takes their id.
    let links = &doc["paths"]["/portal/journeys"]["post"]["responses"]["201"]["links"];
    assert_eq!(links["submit_journey"]["parameters"]["id"], "$response.body#/id");
    let links = &doc["paths"]["/portal/journeys/{id}/submit"]["post"]["responses"]["202"]["links"];
    assert_eq!(links["get_submission"]["parameters"]["id"], "$response.body#/submission_id");
    let links = &doc["paths"]["/portal/journeys/{id}/passengers"]["post"]["responses"]["201"]["links"];
    assert_eq!(
        links["update_passenger"]["parameters"],
        json!({"id": "$request.path.id", "passenger_id": "$response.body#/id"})
    );

    // The webhook events with their payloads.
    let hooks = doc["webhooks"].as_object().unwrap();
    assert_eq!(
        hooks.keys().collect::<Vec<_>>(),
        [
            "journey.created",
            "submission.delivered",
            "submission.drifted",
            "submission.failed",
            "submission.unknown",
            "test"
        ]
    );
    let body = resolve(&hooks["submission.failed"]["post"]["requestBody"]["content"]["application/json"]["schema"]);
    assert_eq!(body["properties"]["data"]["$ref"], "#/components/schemas/Submission");
    assert_eq!(body["properties"]["type"]["const"], "submission.failed");
    let signature = hooks["journey.created"]["post"]["parameters"].as_array().unwrap();
    assert!(signature.iter().any(|p| p["name"] == "X-Webhook-Signature" && p["in"] == "header"));
}

/// What every answer looks like, pinned: the names, types and required fields of each schema a
/// 2xx answer of the document reaches (descriptions and examples left out). A change to an
/// answer's shape (a column renamed under it, a field dropped) fails here until it is meant:
/// `TNS_BLESS_ANSWERS=1` rewrites `tests/it/answers.json`, and the diff is reviewed as a change
/// to the public contract.
#[tokio::test]
async fn answers_keep_their_shape() {
    let app = TestApp::spawn().await;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let schemas = &doc["components"]["schemas"];
    let mut reached = std::collections::BTreeSet::new();
    let mut todo: Vec<&Value> = vec![];
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            for (status, answer) in op["responses"].as_object().unwrap() {
                if status.starts_with('2') {
                    todo.push(answer);
                }
            }
        }
    }
    while let Some(v) = todo.pop() {
        match v {
            Value::Object(m) => {
                if let Some(name) = m.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(SCHEMAS)) {
                    if reached.insert(name.to_string()) {
                        todo.push(&schemas[name]);
                    }
                }
                // A composed schema's parts are shown merged into it, not as answers of their own.
                todo.extend(m.iter().filter(|(k, _)| *k != "allOf").map(|(_, v)| v));
                for part in m.get("allOf").and_then(Value::as_array).into_iter().flatten() {
                    todo.extend(
                        part.as_object()
                            .into_iter()
                            .flat_map(|p| p.iter().filter(|(k, _)| *k != "$ref").map(|(_, v)| v)),
                    );
                    if let Some(name) = part["$ref"].as_str().and_then(|r| r.strip_prefix(SCHEMAS)) {
                        todo.push(&schemas[name]);
                    }
                }
            }
            Value::Array(a) => todo.extend(a),
            _ => {}
        }
    }
    let shapes: serde_json::Map<String, Value> =
        reached.iter().map(|n| (n.clone(), shape(schemas, &schemas[n.as_str()]))).collect();
    let shapes = serde_json::to_string_pretty(&Value::Object(shapes)).unwrap() + "\n";
    let pinned = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/answers.json");
    if std::env::var("TNS_BLESS_ANSWERS").is_ok_and(|v| v == "1") {
        std::fs::write(pinned, &shapes).unwrap();
    }
    let expected = std::fs::read_to_string(pinned).unwrap_or_default();
    assert!(
        expected == shapes,
        "an answer changed shape; if that is meant, rerun with TNS_BLESS_ANSWERS=1 and review tests/it/answers.json:\n{}",
        changed_lines(&expected, &shapes)
    );
}

const SCHEMAS: &str = "#/components/schemas/";

/// `v` with an `allOf` of objects merged into one object: what a client sees of a composed
/// answer (its parts' properties, all of their required ones).
fn merged(schemas: &Value, v: &Value) -> Value {
    let Some(parts) = v["allOf"].as_array() else { return v.clone() };
    let (mut properties, mut required) = (serde_json::Map::new(), vec![]);
    for part in parts {
        let part = match part["$ref"].as_str().and_then(|r| r.strip_prefix(SCHEMAS)) {
            Some(name) => merged(schemas, &schemas[name]),
            None => merged(schemas, part),
        };
        properties.extend(part["properties"].as_object().cloned().unwrap_or_default());
        required.extend(part["required"].as_array().cloned().unwrap_or_default());
    }
    required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    json!({"type": "object", "properties": properties, "required": required})
}

/// A schema with only what a client's code depends on, composed parts merged, keys sorted.
fn shape(schemas: &Value, v: &Value) -> Value {
    let v = &merged(schemas, v);
    const KEPT: [&str; 11] = [
        "$ref",
        "additionalProperties",
        "allOf",
        "anyOf",
        "enum",
        "format",
        "items",
        "oneOf",
        "properties",
        "required",
        "type",
    ];
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().filter(|k| KEPT.contains(&k.as_str())).collect();
            keys.sort();
            let out = keys
                .into_iter()
                .map(|k| {
                    let inner = match k.as_str() {
                        "properties" => {
                            let mut names: Vec<&String> =
                                m[k].as_object().map(|p| p.keys().collect()).unwrap_or_default();
                            names.sort();
                            Value::Object(
                                names.into_iter().map(|n| (n.clone(), shape(schemas, &m[k][n.as_str()]))).collect(),
                            )
                        }
                        "required" => {
                            let mut r = m[k].as_array().cloned().unwrap_or_default();
                            r.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                            Value::Array(r)
                        }
                        _ => shape(schemas, &m[k]),
                    };
                    (k.clone(), inner)
                })
                .collect();
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| shape(schemas, x)).collect()),
        other => other.clone(),
    }
}

fn changed_lines(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
    let from = first.saturating_sub(5);
    format!(
        "pinned:\n{}\nnow:\n{}",
        e[from..e.len().min(first + 5)].join("\n"),
        a[from..a.len().min(first + 5)].join("\n")
    )
}
