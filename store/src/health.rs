//! Whether PostgreSQL can be reached, as one process sees it: which errors say it cannot
//! ([`unreachable`]), and a breaker ([`DbHealth`]) that a watch opens once the database has
//! failed every probe for [`OPEN_AFTER`], so requests stop waiting for connections that will not
//! come, and closes at the first probe it answers.

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use sqlx::{Connection, Executor, PgConnection, PgPool};
use tokio::time::{Instant, MissedTickBehavior};

/// What a 503 for an unreachable database tells a client to wait (`Retry-After`, seconds).
pub const RETRY_AFTER_SECS: u64 = 3;

/// How long probes must have failed before the breaker opens. A restart quicker than this is
/// ridden out as before: requests wait for the pool, which retries refused connections.
pub const OPEN_AFTER: Duration = Duration::from_secs(3);
/// Probes are this far apart (at most one a second, whoever is waiting).
const PROBE_EVERY: Duration = Duration::from_secs(1);
/// A probe not answered by then failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// True when `e` says the database could not be reached or used (rather than refusing the
/// statement): no connection within the pool's acquire timeout, a broken or refused socket, TLS,
/// a server shutting down, starting up or out of connections. Such a request may be retried.
pub fn unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => true,
        // Class 08: connection exceptions; 57P01–57P03: shutdown and start-up; 53300: too many
        // connections.
        sqlx::Error::Database(db) => {
            db.code().is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03" | "53300"))
        }
        _ => false,
    }
}

/// The breaker: closed (the database answers) unless [`DbHealth::watch`] opened it.
#[derive(Debug, Default)]
pub struct DbHealth {
    down: AtomicBool,
}

impl DbHealth {
    /// Whether the database is known to be down: one atomic load, for every request.
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Probe `pool`'s database every second for as long as the process runs: open the breaker
    /// once probes have failed for [`OPEN_AFTER`], close it at the first that succeeds. An
    /// outage is logged when it is first seen, when the breaker opens and when it ends, never
    /// once a probe.
    pub async fn watch(&self, pool: &PgPool) {
        let mut tick = tokio::time::interval(PROBE_EVERY);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut failing_since: Option<Instant> = None;
        loop {
            tick.tick().await;
            let failure = match tokio::time::timeout(PROBE_TIMEOUT, probe(pool)).await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(crate::redacted(&e)),
                Err(_) => Some(format!("no answer within {PROBE_TIMEOUT:?}")),
            };
            match (failure, failing_since) {
                (None, None) => {}
                (None, Some(since)) => {
                    failing_since = None;
                    let secs = since.elapsed().as_secs();
                    if self.down.swap(false, Ordering::Relaxed) {
                        tracing::warn!(after_secs = secs, "PostgreSQL answers again: requests are served");
                    } else {
                        tracing::info!(after_secs = secs, "PostgreSQL answers probes again");
                    }
                }
                (Some(error), None) => {
                    tracing::warn!(%error, "PostgreSQL did not answer a probe");
                    failing_since = Some(Instant::now());
                }
                (Some(_), Some(since)) => {
                    if since.elapsed() >= OPEN_AFTER && !self.down.swap(true, Ordering::Relaxed) {
                        tracing::error!(
                            for_secs = since.elapsed().as_secs(),
                            "PostgreSQL is unreachable: requests are answered 503 at once until a probe succeeds"
                        );
                    }
                }
            }
        }
    }
}

/// `SELECT 1` on a connection the pool holds idle (taken without waiting: a busy pool is no
/// sign of an outage), else on a new one, which also shows whether the server takes
/// connections at all.
async fn probe(pool: &PgPool) -> sqlx::Result<()> {
    if let Some(mut conn) = pool.try_acquire() {
        if conn.execute("SELECT 1").await.is_ok() {
            return Ok(());
        }
        // Broken: the pool opens a replacement when it needs one.
        conn.close_on_drop();
    }
    let mut conn = PgConnection::connect_with(&pool.connect_options()).await?;
    conn.execute("SELECT 1").await?;
    conn.close().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_is_what_a_retry_may_mend() {
        use std::io::{Error, ErrorKind};
        assert!(unreachable(&sqlx::Error::PoolTimedOut));
        assert!(unreachable(&sqlx::Error::PoolClosed));
        assert!(unreachable(&sqlx::Error::Io(Error::from(ErrorKind::ConnectionRefused))));
        assert!(unreachable(&sqlx::Error::Io(Error::from(ErrorKind::UnexpectedEof))));
        assert!(!unreachable(&sqlx::Error::RowNotFound));
        assert!(!unreachable(&sqlx::Error::ColumnNotFound("id".into())));
        assert!(!unreachable(&sqlx::Error::Protocol("unexpected message".into())));
    }
}
