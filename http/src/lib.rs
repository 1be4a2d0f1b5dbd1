//! What both HTTP APIs share (the tenants' `/api/v1` with the portal, and the operators'
//! `/admin/v1`): every request gets an ID and a span, so one failed request can be followed
//! through the logs of every process it touched; one error type and its JSON body; the
//! extractors that parse each input once and refuse it with a 4xx naming the field; what both
//! answer of the same rows (`wire`); and [`answer!`], which writes an answer type from a row.

pub mod answers;
pub mod error;
pub mod extract;
mod objects;
pub mod request_id;
pub mod wire;
