//! When a record was made and last changed, and by which credential: the four columns every
//! record keeps, read into its row and shown in its answer as they are.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// When a record was made and last changed, and by whom.
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct Stamp {
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Who created it: `user:<id>` (a member) or `key:<id>` (an API key); `null` for records
    /// older than this field.
    pub created_by: Option<String>,
    /// Who changed it last (the creator until it is first changed), named the same way.
    pub changed_by: Option<String>,
}
