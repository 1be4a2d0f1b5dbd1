//! The API's errors are the error type both HTTP APIs share.

pub use tns_http::error::*;
