//! An organization's choice of downstream, as a request states it ([`DownstreamIn`]) and as a
//! value whose rule across fields holds ([`Choice`]): U-ETDS comes with its credentials, any
//! other adapter with none.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{
    kinds::{AdapterName, Environment},
    uetds::{WsPassword, WsUsername},
    Invalid,
};

/// Choose the downstream. For `uetds`, `environment`, `ws_username` and `ws_password` are
/// required, and checked with U-ETDS before they are saved; for `sandbox` they must be absent
/// (switching to the sandbox clears the stored credentials).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DownstreamIn {
    pub adapter: AdapterName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws_username: Option<WsUsername>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws_password: Option<WsPassword>,
}

/// A firm's U-ETDS web-service login, not yet checked with U-ETDS.
#[derive(Debug)]
pub struct UetdsLogin {
    pub environment: Environment,
    pub username: WsUsername,
    pub password: WsPassword,
}

/// A downstream choice whose rule across fields holds; made by parsing a [`DownstreamIn`], so
/// `Plain` never holds `uetds`.
#[derive(Debug)]
pub enum Choice {
    Uetds(UetdsLogin),
    /// An adapter that takes no credentials.
    Plain(AdapterName),
}

impl Choice {
    pub fn adapter(&self) -> AdapterName {
        match self {
            Choice::Uetds(_) => AdapterName::Uetds,
            Choice::Plain(adapter) => *adapter,
        }
    }

    /// The rule [`TryFrom<DownstreamIn>`] applies, as JSON Schema keywords of `DownstreamIn`.
    pub fn schema_rules() -> Value {
        json!({
            "if": {"properties": {"adapter": {"const": AdapterName::Uetds.as_str()}}},
            "then": {"required": ["environment", "ws_username", "ws_password"],
                     "properties": {"environment": {"type": "string"}, "ws_username": {"type": "string"},
                                    "ws_password": {"type": "string"}}},
            "else": {"properties": {"environment": {"type": "null"}, "ws_username": {"type": "null"},
                                    "ws_password": {"type": "null"}}},
        })
    }
}

impl TryFrom<DownstreamIn> for Choice {
    type Error = Invalid;

    fn try_from(input: DownstreamIn) -> Result<Choice, Invalid> {
        if input.adapter == AdapterName::Uetds {
            let missing = |f: &str| Invalid::new(f, "is required for the `uetds` adapter");
            return Ok(Choice::Uetds(UetdsLogin {
                environment: input.environment.ok_or_else(|| missing("environment"))?,
                username: input.ws_username.ok_or_else(|| missing("ws_username"))?,
                password: input.ws_password.ok_or_else(|| missing("ws_password"))?,
            }));
        }
        for (field, given) in [
            ("environment", input.environment.is_some()),
            ("ws_username", input.ws_username.is_some()),
            ("ws_password", input.ws_password.is_some()),
        ] {
            if given {
                return Err(Invalid::new(field, "is only for the `uetds` adapter"));
            }
        }
        Ok(Choice::Plain(input.adapter))
    }
}
