//! `tns`: one binary that composes the roles. The role crates (`tns-api`, `tns-scheduler`,
//! `tns-jobs`, `tns-admin`) never depend on each other; this crate decides which of them a
//! process runs and wires them to the shared parts (configuration, the database, the adapter
//! plugins).

pub mod config;
pub mod probes;
pub mod roles;
