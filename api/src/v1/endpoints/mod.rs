pub mod account;
pub mod api_keys;
pub mod auth;
pub mod billing;
pub mod usage;
