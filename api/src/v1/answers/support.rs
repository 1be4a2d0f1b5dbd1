//! Support tickets.

use chrono::{DateTime, Utc};
use tns_core::{
    domain::kinds::{Priority, TicketStatus},
    ids::TicketId,
};
use tns_http::answer;
use tns_store::tickets::Ticket;

answer! {
    TicketOut as Ticket from Ticket {
        #[schema(value_type = i64)]
        id: TicketId,
        subject: String,
        /// Present on the created record; lists leave it out.
        #[serde(skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        priority: Priority,
        /// `open` when created.
        status: TicketStatus,
        created_at: DateTime<Utc>,
    }
}
