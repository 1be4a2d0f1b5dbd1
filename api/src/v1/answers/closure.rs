//! The organization's closure.

use chrono::{DateTime, Utc};
use tns_core::domain::kinds::OrgStatus;
use tns_http::answer;
use tns_store::closure::Closure;

answer! {
    /// An organization's closure, as the API shows it.
    ClosureOut as Closure from Closure {
        /// The organization's status: `closed` while it waits for erasure.
        status: OrgStatus,
        /// When the owner closed it (`null` unless closed).
        closed_at: Option<DateTime<Utc>>,
        /// From when it may be erased: until then the owner may reopen it (`null` unless closed).
        erase_after: Option<DateTime<Utc>>,
    }
}
