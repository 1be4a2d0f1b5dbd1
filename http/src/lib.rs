//! What both HTTP APIs share (the tenants' `/api/v1` with the portal, and the operators'
//! `/admin/v1`): every request gets an ID and a span, so one failed request can be followed
//! through the logs of every process it touched.

pub mod request_id;
