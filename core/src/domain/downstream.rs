//! An organization's choice of downstream, as a request states it: the adapter's name and the
//! credential fields that adapter describes. Which adapters exist and what each takes is known
//! only from the loaded plugins, so the API checks a [`DownstreamIn`] against the chosen one's
//! description (and the OpenAPI document shows each adapter's shape as one branch of `oneOf`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Choose the downstream: `adapter` is one of `GET /portal/downstream`'s `available`; the other
/// fields are the credentials that adapter takes (`adapters[].credentials` there), all of them
/// required, none for an adapter that takes none. Each adapter's shape is a branch of `oneOf`.
#[derive(Deserialize, Serialize, ToSchema)]
pub struct DownstreamIn {
    pub adapter: String,
    /// The credential fields, by name (strings; `null` counts as absent).
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub fields: BTreeMap<String, Value>,
}

impl std::fmt::Debug for DownstreamIn {
    /// The fields' names only: some are secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownstreamIn").field("adapter", &self.adapter).field("fields", &self.fields.keys()).finish()
    }
}
