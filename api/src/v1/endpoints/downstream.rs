//! `/portal/downstream`: which downstream system the organization's submissions go to, and its
//! U-ETDS credentials.

use axum::{extract::State, Json};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, ErrorBody},
    extract::ApiJson,
    state::{AppState, CREDENTIAL_CHECKS_PER_HOUR},
    submit::DEFAULT_ADAPTER,
};
use tns_adapter_host::credentials;
pub use tns_core::domain::downstream::DownstreamIn;
use tns_core::{
    domain::{
        downstream::Choice,
        kinds::{AdapterName, Environment},
    },
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::{
    self as db,
    downstream::{Setting, StoredCredentials},
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, ToSchema)]
pub struct Downstream {
    /// The adapter new submissions go to (`sandbox` until changed).
    pub adapter: String,
    /// The adapters an organization may choose.
    pub available: &'static [AdapterName],
    /// U-ETDS's environment the credentials are for; null unless the adapter is `uetds`.
    pub environment: Option<Environment>,
    /// The firm's UNET number (U-ETDS's web-service user name); null unless the adapter is
    /// `uetds`. The password is never shown.
    pub ws_username: Option<String>,
    /// When the setting was last changed; null while it is the default.
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl crate::v1::openapi::AcrossFields for DownstreamIn {
    fn json_rules() -> serde_json::Value {
        Choice::schema_rules()
    }
}

fn answer(setting: Option<Setting>) -> Downstream {
    match setting {
        Some(s) => Downstream {
            adapter: s.adapter,
            available: AdapterName::ALL,
            environment: s.environment,
            ws_username: s.ws_username,
            updated_at: Some(s.updated_at),
        },
        None => Downstream {
            adapter: DEFAULT_ADAPTER.to_string(),
            available: AdapterName::ALL,
            environment: None,
            ws_username: None,
            updated_at: None,
        },
    }
}

/// The organization's setting, as `GET /portal/downstream` answers it.
pub async fn current(st: &AppState, org: i64) -> ApiResult<Downstream> {
    Ok(answer(db::downstream::get(&st.db, org).await?))
}

/// The organization's downstream setting. Scope `account:read`.
#[utoipa::path(get, path = "/portal/downstream", operation_id = "get_downstream", tag = "submissions",
    responses((status = 200, body = Downstream)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn get(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<Downstream>> {
    Ok(Json(current(&st, p.org_id).await?))
}

/// Choose the downstream for new submissions (pending ones keep theirs; amendments and
/// cancellations of a delivered journey go where the journey went). U-ETDS credentials are
/// checked with U-ETDS (`kullaniciKontrol`) before anything is saved: wrong ones are a 422
/// carrying U-ETDS's own message, an unreachable U-ETDS a 503. Scope `account:write`.
#[utoipa::path(put, path = "/portal/downstream", operation_id = "set_downstream", tag = "submissions", request_body = DownstreamIn,
    responses((status = 200, body = Downstream),
              (status = 422, body = ErrorBody, description = "A field breaks its rule, credentials are missing for `uetds` or given for another adapter, or U-ETDS refused the credentials (its message in `detail`)"),
              (status = 429, body = ErrorBody, description = "More than 10 credential checks this hour (each is a login at U-ETDS)"),
              (status = 503, body = ErrorBody, description = "U-ETDS could not be reached to check the credentials; nothing was saved")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn put(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<DownstreamIn>,
) -> ApiResult<Json<Downstream>> {
    Ok(Json(set(&st, &p, input).await?))
}

/// Choose the downstream for `p`'s organization, the credentials checked with U-ETDS first
/// (what `PUT /portal/downstream` does; the portal's page calls it too).
pub async fn set(st: &AppState, p: &Principal, input: DownstreamIn) -> ApiResult<Downstream> {
    let choice = Choice::try_from(input)?;
    let creds = match &choice {
        Choice::Uetds(login) => {
            let credentials = tns_adapter::Credentials {
                username: login.username.as_str().to_string(),
                password: login.password.as_str().to_string(),
                environment: credentials::environment_of(login.environment),
            };
            let budget = st.credential_checks.hit(&st.redis, &p.org_id.to_string()).await;
            if !budget.admitted {
                return Err(ApiError::TooManyRequests {
                    detail: format!(
                        "at most {CREDENTIAL_CHECKS_PER_HOUR} credential checks per hour; try again after the hour"
                    ),
                    retry_after_secs: (budget.reset - chrono::Utc::now().timestamp()).max(1) as u64,
                });
            }
            st.downstreams.verify(AdapterName::Uetds.as_str(), credentials, "ws_password").await?;
            Some((login, credentials::seal(&st.cfg.data_key, p.org_id, login.password.as_str())))
        }
        Choice::Plain(_) => None,
    };
    let stored = creds.map(|(login, sealed)| StoredCredentials {
        environment: login.environment,
        ws_username: login.username.as_str(),
        ws_password_sealed: sealed,
    });
    let setting = db::downstream::set(&st.db, p.org_id, choice.adapter().as_str(), stored).await?;
    // `GET /portal/me` shows the user name: this process answers anew at once.
    st.profiles.remove_where(|(org, _), _| *org == p.org_id);
    Ok(answer(Some(setting)))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, put))
}
