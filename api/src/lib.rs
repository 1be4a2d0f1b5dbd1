//! TNS: the API role and the pieces every role shares (configuration, database, Redis).

pub mod admission;
pub mod auth;
pub mod background;
pub mod cache;
pub mod downstream;
pub mod error;
pub mod extract;
pub mod health;
pub mod idempotency;
pub mod limits;
pub mod mail;
pub mod metrics;
pub mod pdf;
pub mod portal;
pub mod preflight;
pub mod quota;
pub mod redis_store;
pub mod serve;
pub mod settings;
pub mod snapshot;
pub mod startup;
pub mod state;
pub mod submit;
pub mod throttle;
pub mod v1;
pub mod waiter;
