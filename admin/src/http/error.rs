//! The admin API's errors are the error type both HTTP APIs share: the tenant API's body
//! (`{"error", "detail", "code"}`, `field` too on 422), and a 5xx never carries internal detail
//! (that goes to the log).

pub use tns_http::error::{internal, ApiError as AdminError, ApiResult as AdminResult, Code, ErrorBody};
