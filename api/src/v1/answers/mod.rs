//! What the API answers: its own types, each built from the store's row, so the public shape
//! changes only here. A column renamed in a migration changes a row (and its `#[sqlx]`
//! mapping), never an answer; an answer can leave a column out or add what no column holds.
//!
//! A record's answer composes the parsed value its row holds (the fields a request sets, named
//! as the request names them, `null` where unset) with the record's id, state and [`Stamp`],
//! rather than listing those fields again. Each keeps the schema name clients know (`Vehicle`,
//! not `VehicleOut`).
//!
//! [`Stamp`]: tns_core::domain::stamp::Stamp

mod billing;
mod closure;
mod identity;
mod integration;
mod records;
mod support;

pub use billing::*;
pub use closure::*;
pub use identity::*;
pub use integration::*;
pub use records::*;
pub use support::*;
