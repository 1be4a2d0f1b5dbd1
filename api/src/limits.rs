//! Limits every request meets, stated once: the layers enforce them, the document states them.

/// The largest request body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
