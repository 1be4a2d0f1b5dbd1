//! How a scheduler works its queue. Parsed from `TNS_*` variables by the `tns` binary's
//! configuration (README.md lists them with their defaults).

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Rows claimed per statement (DESIGN.md: batching at the database is what makes the
    /// queue fast).
    pub batch: usize,
    /// Submissions this process holds at once (claimed, being sent, or being recorded).
    pub max_in_flight: usize,
    /// Calls in progress at once per adapter.
    pub adapter_concurrency: usize,
    /// How long one plugin call may take before its outcome counts as unknown.
    pub call_timeout: Duration,
    /// How long a claim holds a submission; after that another scheduler may take it over
    /// (and looks it up downstream first). Longer than `call_timeout`.
    pub lease: Duration,
    /// Polling for due work when no notification arrives (retries whose time has come, lost
    /// notifications).
    pub poll_interval: Duration,
    pub retry: Backoff,
    /// On SIGTERM: how long in-flight calls may finish before their submissions are released.
    pub shutdown_grace: Duration,
    /// PostgreSQL connections of the scheduler (plus one for LISTEN).
    pub db_connections: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            batch: 64,
            max_in_flight: 256,
            adapter_concurrency: 64,
            call_timeout: Duration::from_secs(60),
            lease: Duration::from_secs(300),
            poll_interval: Duration::from_secs(1),
            retry: Backoff::default(),
            shutdown_grace: Duration::from_secs(25),
            db_connections: 4,
        }
    }
}

/// Retries of transient failures: capped exponential backoff with jitter, until `window`
/// after the submission was created (about a day), then `failed`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
    pub window: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { base: Duration::from_secs(2), cap: Duration::from_secs(3600), window: Duration::from_secs(86_400) }
    }
}

impl Backoff {
    /// The wait before the next try after `attempts` tries: base·2^(attempts−1), capped, of which
    /// a random half is kept ("equal jitter": never less than half, so retries of many
    /// submissions spread out without collapsing to zero).
    pub fn delay(&self, attempts: u32, unit_random: f64) -> Duration {
        let exp = self.base.saturating_mul(1u32.checked_shl(attempts.saturating_sub(1).min(30)).unwrap_or(u32::MAX));
        let d = exp.min(self.cap);
        d.mul_f64(0.5 + 0.5 * unit_random.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let b = Backoff::default();
        assert_eq!(b.delay(1, 1.0), Duration::from_secs(2));
        assert_eq!(b.delay(2, 1.0), Duration::from_secs(4));
        assert_eq!(b.delay(5, 1.0), Duration::from_secs(32));
        assert_eq!(b.delay(40, 1.0), Duration::from_secs(3600), "capped");
        assert_eq!(b.delay(40, 0.0), Duration::from_secs(1800), "at least half");
        // About a day in all: the retries a day holds at the upper and lower bound of the jitter.
        let tries = |r: f64| {
            let (mut n, mut total) = (0u32, Duration::ZERO);
            while total < b.window {
                n += 1;
                total += b.delay(n, r);
            }
            n
        };
        assert!((30..=60).contains(&tries(1.0)), "{}", tries(1.0));
        assert!((45..=80).contains(&tries(0.0)), "{}", tries(0.0));
    }
}
