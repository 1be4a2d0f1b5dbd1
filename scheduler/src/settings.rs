//! How a scheduler works its queues, parsed from `TNS_*` variables (README.md lists them with
//! their defaults).

use std::time::{Duration, Instant};

use tns_core::{
    basis::Basis,
    env::{ConfigError, Vars},
    guard::Policy,
    sealing::DataKey,
};

use crate::attempt::record_margin;

#[derive(Debug, Clone)]
pub struct SchedulerSettings {
    /// Rows claimed per statement: batching at the database is what makes the queue fast.
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
    /// PostgreSQL connections of the scheduler (plus one for LISTEN each for submissions and
    /// webhooks).
    pub db_connections: u32,
    pub webhooks: WebhookSettings,
}

impl SchedulerSettings {
    /// The scheduler's variables, on the basis the binary read (the adapters' timeout,
    /// the data key that unseals webhook secrets and downstream passwords, the SSRF policy).
    pub fn from_vars(vars: &Vars<'_>, basis: &Basis) -> Result<SchedulerSettings, ConfigError> {
        let call_timeout = basis.call_timeout;
        let ms = Duration::from_millis;
        let lease = vars.parse_secs("TNS_SCHEDULER_LEASE_SECS", 300, 2, 7200)?;
        // A call starts only if it can end, and be recorded, inside the lease; a lease shorter
        // than that would never let one start.
        if lease <= call_timeout + record_margin(lease) {
            return Err(vars.bad(
                "TNS_SCHEDULER_LEASE_SECS",
                "must be longer than TNS_ADAPTER_TIMEOUT_SECS plus the recording margin (5 s, or a quarter of the lease)",
            ));
        }
        Ok(SchedulerSettings {
            batch: vars.parse_int("TNS_SCHEDULER_BATCH", 64, 1, 1000)? as usize,
            max_in_flight: vars.parse_int("TNS_SCHEDULER_MAX_IN_FLIGHT", 256, 1, 10_000)? as usize,
            adapter_concurrency: vars.parse_int("TNS_ADAPTER_CONCURRENCY", 64, 1, 1024)? as usize,
            call_timeout,
            lease,
            poll_interval: ms(vars.parse_int("TNS_SCHEDULER_POLL_MS", 1000, 10, 60_000)?),
            retry: Backoff {
                base: ms(vars.parse_int("TNS_RETRY_BASE_MS", 2000, 1, 600_000)?),
                cap: vars.parse_secs("TNS_RETRY_CAP_SECS", 3600, 1, 86_400)?,
                window: vars.parse_secs("TNS_RETRY_WINDOW_SECS", 86_400, 0, 30 * 86_400)?,
            },
            shutdown_grace: vars.parse_secs("TNS_SCHEDULER_SHUTDOWN_GRACE_SECS", 25, 0, 3600)?,
            db_connections: vars.parse_int("TNS_SCHEDULER_DB_CONNECTIONS", 4, 1, 100)? as u32,
            webhooks: WebhookSettings::from_vars(vars, basis.data_key.clone(), basis.policy)?,
        })
    }
}

impl Default for SchedulerSettings {
    fn default() -> SchedulerSettings {
        SchedulerSettings {
            batch: 64,
            max_in_flight: 256,
            adapter_concurrency: 64,
            call_timeout: Duration::from_secs(60),
            lease: Duration::from_secs(300),
            poll_interval: Duration::from_secs(1),
            retry: Backoff::default(),
            shutdown_grace: Duration::from_secs(25),
            db_connections: 4,
            webhooks: WebhookSettings::default(),
        }
    }
}

/// How webhooks are delivered.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Unseals subscription secrets (`TNS_DATA_KEY`).
    pub data_key: DataKey,
    /// Waits before the 2nd, 3rd, … attempt; after the last, the delivery has failed.
    pub schedule: Vec<Duration>,
    /// Each wait is stretched or shrunk by up to this fraction at random, so retries of many
    /// deliveries to one recovering receiver spread out.
    pub jitter: f64,
    /// A `Retry-After` longer than the scheduled wait is honoured up to this.
    pub retry_after_cap: Duration,
    /// One POST, connect to last byte.
    pub timeout: Duration,
    /// POSTs in progress at once in this process.
    pub concurrency: usize,
    /// POSTs of one organization in progress at once in this process (at most `concurrency`),
    /// so one tenant's hanging endpoints cannot hold every slot.
    pub org_concurrency: usize,
    /// How long a claim holds a delivery (at least [`WebhookSettings::MIN_LEASE_TIMEOUTS`]
    /// timeouts and the recording margin; see [`WebhookSettings::send_by`]).
    pub lease: Duration,
    /// A subscription without a successful delivery for this long is deactivated.
    pub disable_after: Duration,
    /// What the SSRF guard lets through besides public https endpoints.
    pub policy: Policy,
}

/// Nine attempts over about a day: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h.
pub const DEFAULT_WEBHOOK_SCHEDULE: &str = "5s,30s,2m,10m,30m,1h,3h,6h,12h";

impl Default for WebhookSettings {
    fn default() -> WebhookSettings {
        WebhookSettings {
            data_key: DataKey::new([0; 32]),
            schedule: parse_schedule(DEFAULT_WEBHOOK_SCHEDULE).expect("valid default"),
            jitter: 0.2,
            retry_after_cap: Duration::from_secs(12 * 3600),
            timeout: Duration::from_secs(10),
            concurrency: 64,
            org_concurrency: default_org_concurrency(64),
            lease: Duration::from_secs(60),
            disable_after: Duration::from_secs(5 * 86_400),
            policy: Policy::default(),
        }
    }
}

/// An organization's POST slots unless configured: a quarter of them all, at least one.
pub fn default_org_concurrency(concurrency: usize) -> usize {
    (concurrency / 4).max(1)
}

/// Deliveries a scheduler holds per POST in flight (see [`WebhookSettings::held`]).
pub const WEBHOOK_HELD_PER_SLOT: usize = 32;

/// Kept free at the end of a lease to record the attempt before the lease runs out.
pub const WEBHOOK_RECORD_MARGIN: Duration = Duration::from_secs(5);

impl WebhookSettings {
    pub fn from_vars(vars: &Vars<'_>, data_key: DataKey, policy: Policy) -> Result<WebhookSettings, ConfigError> {
        let schedule = vars.get("TNS_WEBHOOK_RETRY_SCHEDULE").unwrap_or_else(|| DEFAULT_WEBHOOK_SCHEDULE.to_string());
        let timeout = vars.parse_secs("TNS_WEBHOOK_TIMEOUT_SECS", 10, 1, 60)?;
        let lease = vars.parse_secs("TNS_WEBHOOK_LEASE_SECS", 120, 2, 3600)?;
        // A POST must end, and be recorded, inside its lease (or a second scheduler could send
        // the delivery meanwhile); a held delivery that cannot start in time is given back. The
        // lease leaves room to wait for a slot besides.
        if lease < timeout * Self::MIN_LEASE_TIMEOUTS + WEBHOOK_RECORD_MARGIN {
            return Err(vars.bad(
                "TNS_WEBHOOK_LEASE_SECS",
                &format!(
                    "must be at least {} × TNS_WEBHOOK_TIMEOUT_SECS + {} s",
                    Self::MIN_LEASE_TIMEOUTS,
                    WEBHOOK_RECORD_MARGIN.as_secs()
                ),
            ));
        }
        let concurrency = vars.parse_int("TNS_WEBHOOK_CONCURRENCY", 64, 1, 4096)?;
        let org_concurrency = vars.parse_int(
            "TNS_WEBHOOK_ORG_CONCURRENCY",
            default_org_concurrency(concurrency as usize) as u64,
            1,
            concurrency,
        )?;
        Ok(WebhookSettings {
            data_key,
            schedule: parse_schedule(&schedule).map_err(|e| vars.bad("TNS_WEBHOOK_RETRY_SCHEDULE", &e))?,
            jitter: 0.2,
            retry_after_cap: vars.parse_secs("TNS_WEBHOOK_RETRY_AFTER_CAP_SECS", 12 * 3600, 1, 7 * 86_400)?,
            timeout,
            concurrency: concurrency as usize,
            org_concurrency: org_concurrency as usize,
            lease,
            disable_after: vars.parse_secs("TNS_WEBHOOK_DISABLE_AFTER_SECS", 5 * 86_400, 1, 365 * 86_400)?,
            policy,
        })
    }

    /// The shortest lease, in timeouts (plus [`WEBHOOK_RECORD_MARGIN`]): room for a held
    /// delivery to wait for one timeout's worth before its own POST.
    pub const MIN_LEASE_TIMEOUTS: u32 = 2;

    /// Deliveries one scheduler holds at once: claimed and waiting for a POST slot, being
    /// POSTed, or being recorded. Claims and records are batches this size allows, so the
    /// database round trips overlap the HTTP ones. How long a held delivery may wait is
    /// bounded by [`WebhookSettings::send_by`], not by this number.
    pub fn held(&self) -> usize {
        self.concurrency * WEBHOOK_HELD_PER_SLOT
    }

    /// Deliveries one scheduler holds of one organization: as many per slot the organization
    /// may use as [`WebhookSettings::held`] holds per slot, so a tenant whose endpoints hang
    /// leaves room to claim everyone else's.
    pub fn org_held(&self) -> usize {
        self.org_concurrency.min(self.concurrency).max(1) * WEBHOOK_HELD_PER_SLOT
    }

    /// The last moment a delivery claimed at `claimed` (taken before the claim statement was
    /// sent, so never after the lease began) may start its POST: one that starts later could
    /// still be running, or not yet be recorded, when its lease runs out and another scheduler
    /// sends it too. A delivery that waited for a POST slot past this is given back untried.
    pub fn send_by(&self, claimed: Instant) -> Instant {
        claimed + self.lease.saturating_sub(self.timeout + WEBHOOK_RECORD_MARGIN)
    }

    /// The wait after `attempts` attempts failed, or `None` when the schedule is exhausted.
    /// `retry_after` (the receiver's ask) lengthens the wait, up to `retry_after_cap`; it
    /// never shortens it, so a receiver cannot pull retries into a tight loop.
    pub fn next_wait(&self, attempts: u32, retry_after: Option<Duration>, unit_random: f64) -> Option<Duration> {
        let step = *self.schedule.get(attempts.checked_sub(1)? as usize)?;
        let jittered = step.mul_f64(1.0 + self.jitter * (2.0 * unit_random.clamp(0.0, 1.0) - 1.0));
        Some(match retry_after {
            Some(ra) if ra > jittered => ra.min(self.retry_after_cap.max(jittered)),
            _ => jittered,
        })
    }
}

/// `5s,30s,2m,1h,250ms`: a comma-separated list of waits (units ms, s, m, h).
pub fn parse_schedule(s: &str) -> Result<Vec<Duration>, String> {
    s.split(',')
        .map(|part| {
            let part = part.trim();
            let split = part.find(|c: char| !c.is_ascii_digit()).unwrap_or(part.len());
            let (num, unit) = part.split_at(split);
            let n: u64 = num.parse().map_err(|_| format!("`{part}` is not a number with a unit (ms, s, m, h)"))?;
            let d = match unit {
                "ms" => Duration::from_millis(n),
                "s" => Duration::from_secs(n),
                "m" => Duration::from_secs(n * 60),
                "h" => Duration::from_secs(n * 3600),
                _ => return Err(format!("`{part}`: the unit must be ms, s, m or h")),
            };
            if d > Duration::from_secs(7 * 86_400) {
                return Err(format!("`{part}` is longer than a week"));
            }
            Ok(d)
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|v| if v.len() > 20 { Err("at most 20 retries".to_string()) } else { Ok(v) })
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
    fn webhook_schedule_jitter_and_retry_after() {
        let w = WebhookSettings::default();
        assert_eq!(w.schedule.len(), 9);
        assert_eq!(w.schedule[2], Duration::from_secs(120));
        assert_eq!(w.next_wait(1, None, 0.5), Some(Duration::from_secs(5)));
        assert_eq!(w.next_wait(1, None, 0.0), Some(Duration::from_secs(4)), "-20 %");
        assert_eq!(w.next_wait(9, None, 1.0), Some(Duration::from_secs(12 * 3600).mul_f64(1.2)));
        assert_eq!(w.next_wait(10, None, 0.5), None, "ten attempts, then failed");
        assert_eq!(w.next_wait(0, None, 0.5), None);
        assert_eq!(w.next_wait(1, Some(Duration::from_secs(60)), 0.5), Some(Duration::from_secs(60)), "honoured");
        assert_eq!(w.next_wait(2, Some(Duration::from_secs(1)), 0.5), Some(Duration::from_secs(30)), "never sooner");
        assert_eq!(w.next_wait(1, Some(Duration::from_secs(86_400 * 3)), 0.5), Some(Duration::from_secs(12 * 3600)));
        assert_eq!(
            parse_schedule("250ms, 1s,2m").unwrap(),
            vec![Duration::from_millis(250), Duration::from_secs(1), Duration::from_secs(120)]
        );
        assert!(parse_schedule("5").is_err());
        assert!(parse_schedule("5d").is_err());
        assert!(parse_schedule("").is_err());
    }

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
