//! The API's extractors are the ones both HTTP APIs share; its state says how large a body it
//! takes.

pub use tns_http::extract::*;

impl BodyLimit for crate::state::AppState {
    const MAX_BODY_BYTES: usize = crate::limits::MAX_BODY_BYTES;
}
