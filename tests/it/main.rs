//! Integration tests: one binary, real PostgreSQL and Redis, each test on its own database
//! and Redis key prefix so they run in parallel and in any order.

mod adapters;
mod admin_api;
mod api_keys;
mod auth;
mod billing;
mod binary;
mod cargo;
mod chart;
mod contract;
mod errors;
mod fixtures;
mod fleet;
mod helpers;
mod idempotency;
mod invoices;
mod jobs;
mod journeys;
mod ops;
mod outage;
mod portal;
mod portal_journeys;
mod portal_team;
mod quota;
mod reference;
mod scopes;
mod security;
mod standing;
mod submissions;
mod tenancy;
mod uetds;
mod validation;
mod webhooks;
