//! `/portal/downstream`: which downstream system the organization's submissions go to, and
//! the credentials it gave for it. What adapters there are and what each takes is learnt from
//! the loaded plugins' descriptions: nothing here names one.

use std::collections::BTreeMap;
use tns_core::ids::OrgId;

use axum::{extract::State, Json};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::ApiJson,
    state::{AppState, CREDENTIAL_CHECKS_PER_HOUR},
};
use tns_adapter::{Credentials, Description, Records};
use tns_adapter_host::{credentials, Plugins};
pub use tns_core::domain::downstream::DownstreamIn;
use tns_core::scopes::need::{AccountRead, AccountWrite};
use tns_store::{
    self as db,
    downstream::{Setting, StoredCredentials},
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, ToSchema)]
pub struct Downstream {
    /// The adapter new submissions go to (until one is chosen, the default adapter's; null
    /// when this deployment has none).
    pub adapter: Option<String>,
    /// The adapters an organization may choose.
    pub available: Vec<String>,
    /// What each of them is and takes.
    pub adapters: Vec<AdapterOut>,
    /// The credential fields given for the adapter that are not secret (U-ETDS: `environment`
    /// and `ws_username`), by name, at the top level.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub fields: BTreeMap<String, String>,
    /// The secret credential fields that are set; their values are never shown.
    pub secrets_set: Vec<String>,
    /// When the setting was last changed; null while it is the default.
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// An adapter as its plugin describes itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterOut {
    pub name: String,
    pub title: String,
    pub summary: String,
    /// Organizations that have chosen no downstream submit here.
    pub default: bool,
    /// The records it takes: `journeys`, `cargo`.
    pub accepts: Vec<String>,
    /// The fields `PUT /portal/downstream` takes for it, all required.
    pub credentials: Vec<CredentialFieldOut>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CredentialFieldOut {
    pub name: String,
    pub title: String,
    /// What the value must be.
    pub hint: String,
    /// Sealed at rest and never shown back.
    pub secret: bool,
    /// When not empty, the value is one of these.
    pub choices: Vec<String>,
    /// When set, the whole value matches this regular expression.
    pub pattern: Option<String>,
    pub max_len: usize,
}

fn records_name(r: Records) -> &'static str {
    match r {
        Records::Journeys => "journeys",
        Records::Cargo => "cargo",
    }
}

impl From<&Description> for AdapterOut {
    fn from(d: &Description) -> AdapterOut {
        AdapterOut {
            name: d.name.clone(),
            title: d.title.get("en").to_string(),
            summary: d.summary.get("en").to_string(),
            default: d.default,
            accepts: d.accepts.iter().map(|r| records_name(*r).to_string()).collect(),
            credentials: d
                .credentials
                .iter()
                .map(|f| CredentialFieldOut {
                    name: f.name.clone(),
                    title: f.title.get("en").to_string(),
                    hint: f.hint.get("en").to_string(),
                    secret: f.secret,
                    choices: f.choices.clone(),
                    pattern: f.pattern.clone(),
                    max_len: f.max_len,
                })
                .collect(),
        }
    }
}

/// `DownstreamIn`'s schema for the loaded adapters: one `oneOf` branch per adapter with its
/// own fields, so a client (and a fuzzer) can build a valid choice from the document alone.
pub fn schema_of(adapters: &[Description]) -> Value {
    let branches: Vec<Value> = adapters
        .iter()
        .map(|d| {
            let mut properties = serde_json::Map::new();
            properties.insert("adapter".into(), json!({"const": d.name}));
            for f in &d.credentials {
                let mut p = json!({"type": "string", "minLength": 1, "maxLength": f.max_len,
                                   "title": f.title.get("en"), "description": f.hint.get("en")});
                if !f.choices.is_empty() {
                    p["enum"] = json!(f.choices);
                }
                if let Some(pattern) = &f.pattern {
                    p["pattern"] = json!(format!("^(?:{pattern})$"));
                }
                if f.secret {
                    p["writeOnly"] = json!(true);
                }
                properties.insert(f.name.clone(), p);
            }
            let mut required = vec!["adapter".to_string()];
            required.extend(d.credentials.iter().map(|f| f.name.clone()));
            json!({"type": "object", "title": d.title.get("en"), "description": d.summary.get("en"),
                   "properties": properties, "required": required, "additionalProperties": false})
        })
        .collect();
    let mut schema = json!({
        "type": "object",
        "description": "Choose the downstream: `adapter` is one of `GET /portal/downstream`'s `available`; the other \
                        fields are that adapter's credentials, all required (none for an adapter that takes none).",
        "properties": {"adapter": {"type": "string", "enum": adapters.iter().map(|d| d.name.clone()).collect::<Vec<_>>()}},
        "required": ["adapter"],
    });
    // JSON Schema wants both non-empty: a process without adapters states only the shape.
    if !branches.is_empty() {
        schema["oneOf"] = json!(branches);
    } else {
        schema["properties"]["adapter"] = json!({"type": "string"});
    }
    schema
}

fn answer(plugins: &Plugins, setting: Option<Setting>) -> Downstream {
    let adapters: Vec<AdapterOut> = plugins.descriptions().iter().map(AdapterOut::from).collect();
    let available = adapters.iter().map(|a| a.name.clone()).collect();
    match setting {
        Some(s) => Downstream {
            adapter: Some(s.adapter),
            available,
            adapters,
            fields: s.fields.0,
            secrets_set: s.secret_names,
            updated_at: Some(s.updated_at),
        },
        None => Downstream {
            adapter: plugins.default_name().map(str::to_string),
            available,
            adapters,
            fields: BTreeMap::new(),
            secrets_set: vec![],
            updated_at: None,
        },
    }
}

/// The organization's setting, as `GET /portal/downstream` answers it.
pub async fn current(st: &AppState, org: OrgId) -> ApiResult<Downstream> {
    Ok(answer(&st.downstreams.registry(), db::downstream::get(&st.db, org).await?))
}

/// The organization's downstream setting. Scope `account:read`.
#[utoipa::path(get, path = "/portal/downstream", operation_id = "get_downstream", tag = "submissions",
    responses((status = 200, body = Downstream)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn get(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<Downstream>> {
    Ok(Json(current(&st, p.org_id).await?))
}

/// Choose the downstream for new submissions (pending ones keep theirs; amendments and
/// cancellations of a delivered journey go where the journey went). An adapter that takes
/// credentials checks them with its downstream before anything is saved (U-ETDS:
/// `kullaniciKontrol`): wrong ones are a 422 carrying the downstream's own message, an
/// unreachable downstream a 503. Scope `account:write`.
#[utoipa::path(put, path = "/portal/downstream", operation_id = "set_downstream", tag = "submissions", request_body = DownstreamIn,
    responses((status = 200, body = Downstream),
              (status = 422, body = ErrorBody, description = "No such adapter, a credential field missing, breaking its rule or not the adapter's, or the downstream refused the credentials (its message in `detail`)"),
              (status = 429, body = ErrorBody, description = "More than 10 credential checks this hour (each is a login at the downstream)"),
              (status = 503, body = ErrorBody, description = "The downstream could not be reached to check the credentials; nothing was saved")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn put(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<DownstreamIn>,
) -> ApiResult<Json<Downstream>> {
    Ok(Json(set(&st, &p, input).await?))
}

/// The choice `input` states, checked against the adapter's description: the adapter and the
/// credentials it takes (each field present, a string, within its rule; no other field).
pub fn parse_choice(plugins: &Plugins, input: DownstreamIn) -> ApiResult<(Description, Credentials)> {
    let d = plugins.description(&input.adapter).ok_or_else(|| {
        let names: Vec<String> = plugins.descriptions().into_iter().map(|d| d.name).collect();
        ApiError::validation("adapter", format!("must be one of: {}", names.join(", ")))
    })?;
    let mut given = BTreeMap::new();
    for (name, value) in input.fields {
        if !d.credentials.iter().any(|f| f.name == name) {
            return Err(ApiError::validation(&name, format!("is not a field of the `{}` adapter", d.name)));
        }
        match value {
            Value::Null => {}
            Value::String(s) => {
                given.insert(name, s);
            }
            _ => return Err(ApiError::validation(&name, "must be a string")),
        }
    }
    for f in &d.credentials {
        let v = given
            .get(&f.name)
            .ok_or_else(|| ApiError::validation(&f.name, format!("is required for the `{}` adapter", d.name)))?;
        let rule = || match f.hint.get("en") {
            "" => format!("must be at most {} characters", f.max_len),
            hint => hint.to_string(),
        };
        if v.is_empty() || v.chars().count() > f.max_len {
            return Err(ApiError::validation(&f.name, rule()));
        }
        if !f.choices.is_empty() && !f.choices.contains(v) {
            return Err(ApiError::validation(&f.name, format!("must be one of: {}", f.choices.join(", "))));
        }
        if let Some(pattern) = &f.pattern {
            // Checked valid when the plugin loaded.
            let whole = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(anyhow::Error::from)?;
            if !whole.is_match(v) {
                return Err(ApiError::validation(&f.name, rule()));
            }
        }
    }
    Ok((d, Credentials { fields: given }))
}

/// Choose the downstream for `p`'s organization, its credentials checked with the downstream
/// first (what `PUT /portal/downstream` does; the portal's page calls it too).
pub async fn set(st: &AppState, p: &Principal, input: DownstreamIn) -> ApiResult<Downstream> {
    let plugins = st.downstreams.registry();
    let (adapter, given) = parse_choice(&plugins, input)?;
    if !adapter.credentials.is_empty() {
        let budget = st.credential_checks.hit(&st.redis, &p.org_id.to_string()).await;
        if !budget.admitted {
            return Err(ApiError::TooManyRequests {
                code: Code::RateLimited,
                detail: format!(
                    "at most {CREDENTIAL_CHECKS_PER_HOUR} credential checks per hour; try again after the hour"
                ),
                retry_after_secs: (budget.reset - chrono::Utc::now().timestamp()).max(1) as u64,
            });
        }
        // A refusal is blamed on the secret (the password), the field a person retypes.
        let blamed = adapter.credentials.iter().find(|f| f.secret).unwrap_or(&adapter.credentials[0]).name.clone();
        st.downstreams.verify(&adapter.name, given.clone(), &blamed).await?;
    }
    let sealed = credentials::seal(&st.cfg.data_key, p.org_id, &adapter, &given);
    let stored = StoredCredentials { fields: sealed.fields, secrets: sealed.secrets };
    let setting = db::downstream::set(&st.db, p.org_id, &adapter.name, stored).await?;
    // `GET /portal/me` shows the user name: this process answers anew at once.
    st.profiles.remove_where(|(org, _), _| *org == p.org_id);
    Ok(answer(&plugins, Some(setting)))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, put))
}
