//! Scripted misbehaviour: a test queues what the next calls of an operation get instead of the
//! normal answer, to drive a client through every failure the real gateway and service produce.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// What a scripted call gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// A normal SOAP answer whose `return` carries this nonzero `sonucKodu` and `sonucMesaji`;
    /// nothing is stored.
    BusinessError { code: i32, message: String },
    /// HTTP 500 with a SOAP 1.1 Fault; `code` is the faultcode's local part (`Server`, `Client`)
    /// or a full QName. Nothing is stored.
    Fault { code: String, message: String },
    /// This HTTP status with an HTML gateway page (e.g. 401, 502, 503). Nothing is stored.
    Status(u16),
    /// HTTP 200 with an HTML gateway page instead of SOAP. Nothing is stored.
    Html,
    /// HTTP 200 with an empty body. Nothing is stored.
    Empty,
    /// This HTTP status with a plain-text page quoting the request as a careless gateway would:
    /// its `Authorization` header (the Basic credentials) and its body (the password in
    /// `<wsuser>`). Nothing is stored.
    Echo(u16),
    /// Holds the request for this long, then performs it and answers normally (the performing
    /// happens after the delay even if the client has given up by then: pick a delay longer than
    /// the test for "never answered, never done").
    Hang(Duration),
    /// Performs the operation at once (the state changes), then holds the answer for this long:
    /// the write happened, the answer came too late.
    HangAfterWrite(Duration),
    /// Performs the operation (the state changes as if it succeeded), then drops the connection
    /// without answering: the write happened, the answer is lost.
    LoseAnswer,
    /// Resets the connection (an RST, not a FIN) without performing the operation or answering:
    /// a proxy resetting it, a backend that crashed on reading it. Nothing is stored.
    Reset,
}

impl Behaviour {
    /// Shorthand for [`Behaviour::BusinessError`].
    pub fn business(code: i32, message: impl Into<String>) -> Self {
        Behaviour::BusinessError { code, message: message.into() }
    }

    /// Shorthand for [`Behaviour::Fault`].
    pub fn fault(code: impl Into<String>, message: impl Into<String>) -> Self {
        Behaviour::Fault { code: code.into(), message: message.into() }
    }
}

/// Per-operation queues of scripted behaviours, consumed in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Scripts {
    queues: HashMap<String, VecDeque<(usize, Behaviour)>>,
}

impl Scripts {
    /// Queues `b` for the next `times` calls of `op` (after anything already queued for it).
    pub(crate) fn push(&mut self, op: &str, times: usize, b: Behaviour) {
        if times > 0 {
            self.queues.entry(op.to_string()).or_default().push_back((times, b));
        }
    }

    /// The behaviour for this call of `op`, if one is queued (consuming one use of it).
    pub(crate) fn take(&mut self, op: &str) -> Option<Behaviour> {
        let queue = self.queues.get_mut(op)?;
        let (left, b) = queue.front_mut()?;
        let out = b.clone();
        *left -= 1;
        if *left == 0 {
            queue.pop_front();
        }
        Some(out)
    }

    /// How many scripted calls are still queued for `op`.
    pub(crate) fn pending(&self, op: &str) -> usize {
        self.queues.get(op).map_or(0, |q| q.iter().map(|(n, _)| n).sum())
    }

    /// Drops everything queued.
    pub(crate) fn clear(&mut self) {
        self.queues.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumes_in_order() {
        let mut s = Scripts::default();
        s.push("seferEkle", 2, Behaviour::Empty);
        s.push("seferEkle", 1, Behaviour::Html);
        assert_eq!(s.pending("seferEkle"), 3);
        assert_eq!(s.take("seferEkle"), Some(Behaviour::Empty));
        assert_eq!(s.take("seferEkle"), Some(Behaviour::Empty));
        assert_eq!(s.take("seferEkle"), Some(Behaviour::Html));
        assert_eq!(s.take("seferEkle"), None);
        assert_eq!(s.take("other"), None);
    }
}
