//! The core types of TNS, below every role and the database layer: what a request's fields
//! parse into ([`domain`]), the closed sets of states and operations, scopes, and the pieces
//! more than one role needs (sealing secrets at rest, signing webhooks, the SSRF guard,
//! configuration parsing, logging set-up). Nothing here talks to a database or a network
//! service except the guard's DNS lookup.

pub mod basis;
pub mod client;
pub mod domain;
pub mod env;
pub mod error_body;
pub mod guard;
pub mod ids;
pub mod keys;
pub mod metrics;
pub mod refdata;
pub mod scopes;
pub mod sealing;
pub mod signing;
pub mod telemetry;
