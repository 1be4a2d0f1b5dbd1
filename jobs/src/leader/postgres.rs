//! Leadership outside a cluster: a session-level PostgreSQL advisory lock, held by a connection
//! of its own for as long as the term lasts. The lock ends with the session, so a replica that
//! dies (even `kill -9`) gives leadership up as soon as PostgreSQL notices the connection is
//! gone; a replica whose connection fails stops its jobs at once.

use std::time::Duration;

use anyhow::Context;
use sqlx::{postgres::PgConnectOptions, ConnectOptions, Connection, PgConnection};

use super::Leadership;

pub struct AdvisoryLock {
    options: PgConnectOptions,
    /// The lock's key: one per deployment (and database).
    key: i64,
    /// How often the holder checks its connection is alive.
    check: Duration,
}

impl AdvisoryLock {
    pub fn new(url: &str, key: i64, check: Duration) -> anyhow::Result<AdvisoryLock> {
        let options: PgConnectOptions = url.parse().context("TNS_DATABASE_URL")?;
        Ok(AdvisoryLock { options: options.application_name("tns-jobs-leader"), key, check })
    }

    /// Lead now if nobody does.
    pub(super) async fn try_acquire(&self) -> anyhow::Result<Option<Leadership>> {
        let mut conn = self.options.connect().await.context("connecting for the leader lock")?;
        let got: bool =
            sqlx::query_scalar("SELECT pg_try_advisory_lock($1)").bind(self.key).fetch_one(&mut conn).await?;
        if !got {
            conn.close().await.ok();
            return Ok(None);
        }
        let check = self.check;
        Ok(Some(Leadership::new(|lost| tokio::spawn(hold(conn, check, lost)))))
    }
}

/// Keep the session (and so the lock) until it fails; then the term is over.
async fn hold(mut conn: PgConnection, check: Duration, lost: tokio::sync::watch::Sender<bool>) {
    let mut tick = tokio::time::interval(check);
    loop {
        tick.tick().await;
        let alive = tokio::time::timeout(check, sqlx::query("SELECT 1").execute(&mut conn)).await;
        if !matches!(alive, Ok(Ok(_))) {
            tracing::warn!("the leader lock's connection failed; leadership is lost");
            let _ = lost.send(true);
            return;
        }
    }
}
