//! The database layer: the pool, database creation for `tns dev`, migrations, and the SQL of
//! every table, one module per aggregate that owns its tables. Nothing outside this crate
//! writes SQL. Queries are checked at run time (`query_as` + `FromRow`), so building never
//! needs a database.

pub mod accounts;
pub mod api_keys;
pub mod audit;
pub mod billing;
pub mod cargo;
pub mod closure;
pub mod code_lists;
pub mod downstream;
pub mod erasure;
pub mod exports;
pub mod health;
pub mod idempotency;
pub mod journey_writer;
pub mod journeys;
pub mod leases;
pub mod members;
pub mod operator_tokens;
pub mod pagination;
pub mod passengers;
pub mod personnel;
pub mod preflight;
pub mod published;
pub mod records;
pub mod refdata;
pub mod retire;
pub mod submissions;
pub mod tickets;
pub mod usage;
pub mod vehicles;
pub mod webhooks;

/// A query whose rows come back as `R`: the type of the helpers that bind an aggregate's fields
/// for both its insert and its update.
pub type RowQuery<'q, R> = sqlx::query::QueryAs<'q, sqlx::Postgres, R, sqlx::postgres::PgArguments>;

use std::{str::FromStr, time::Duration};

use anyhow::Context;
use sqlx::{
    postgres::{PgConnectOptions, PgPoolOptions},
    ConnectOptions, Connection, PgPool,
};
use tns_core::env::{ConfigError, Vars};

/// The migrations, embedded at compile time. The migrator holds a PostgreSQL advisory lock
/// while it runs, so many replicas starting at once apply each migration exactly once.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Where the database is and how a process uses it.
#[derive(Clone)]
pub struct DbSettings {
    /// `TNS_DATABASE_URL`: may hold a password, so never printed.
    pub url: String,
    /// The pool of the API role (the scheduler has its own, smaller setting).
    pub max_connections: u32,
    /// How long a request of the API role waits for one of the pool's connections.
    pub acquire_timeout: Duration,
    /// Apply pending migrations at start-up (under an advisory lock, so replicas may race).
    pub migrate_on_start: bool,
}

impl std::fmt::Debug for DbSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbSettings")
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("migrate_on_start", &self.migrate_on_start)
            .finish_non_exhaustive()
    }
}

impl DbSettings {
    pub fn from_vars(vars: &Vars<'_>) -> Result<DbSettings, ConfigError> {
        Ok(DbSettings {
            url: vars.url(
                "TNS_DATABASE_URL",
                "postgres://postgres@127.0.0.1:5432/tns",
                &["postgres://", "postgresql://"],
            )?,
            max_connections: vars.parse_int("TNS_DB_MAX_CONNECTIONS", 20, 1, 1000)? as u32,
            acquire_timeout: vars.parse_secs("TNS_DB_ACQUIRE_TIMEOUT_SECS", ACQUIRE_TIMEOUT.as_secs(), 1, 300)?,
            migrate_on_start: vars.parse_bool("TNS_MIGRATE_ON_START", true)?,
        })
    }
}

/// Connect with `max_connections`; create the database first when asked (`tns dev`, tests);
/// migrate when configured.
pub async fn prepare(
    settings: &DbSettings,
    create: bool,
    max_connections: u32,
    application_name: &str,
) -> anyhow::Result<PgPool> {
    if create {
        ensure_database(&settings.url).await?;
    }
    let pool = open(&settings.url, max_connections, application_name, settings.acquire_timeout).await?;
    if settings.migrate_on_start {
        migrate(&pool).await?;
    }
    Ok(pool)
}

/// How long a caller waits for a connection of a pool, unless `TNS_DB_ACQUIRE_TIMEOUT_SECS`
/// says otherwise for the API's.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A pool whose sessions carry `application_name`, so operators (and tests) can tell the roles'
/// connections apart in `pg_stat_activity`.
pub async fn connect(url: &str, max_connections: u32, application_name: &str) -> anyhow::Result<PgPool> {
    open(url, max_connections, application_name, ACQUIRE_TIMEOUT).await
}

async fn open(
    url: &str,
    max_connections: u32,
    application_name: &str,
    acquire_timeout: Duration,
) -> anyhow::Result<PgPool> {
    let opts = PgConnectOptions::from_str(url)
        .context("TNS_DATABASE_URL is not a valid PostgreSQL URL")?
        .application_name(application_name);
    PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(1)
        .acquire_timeout(acquire_timeout)
        .connect_with(opts.log_statements(tracing::log::LevelFilter::Trace))
        .await
        .context("cannot connect to PostgreSQL")
}

/// Create the database named by `url` if it does not exist (used by `tns dev` and tests).
pub async fn ensure_database(url: &str) -> anyhow::Result<()> {
    let opts = PgConnectOptions::from_str(url).context("TNS_DATABASE_URL is not a valid PostgreSQL URL")?;
    let name = opts.get_database().unwrap_or("postgres").to_string();
    let mut admin = sqlx::PgConnection::connect_with(&opts.clone().database("postgres"))
        .await
        .context("cannot connect to PostgreSQL to create the database")?;
    let create = format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\""));
    match sqlx::query(&create).execute(&mut admin).await {
        Ok(_) => tracing::info!(database = %name, "created database"),
        // 42P04: duplicate_database. 23505: two creators raced on the catalog.
        Err(sqlx::Error::Database(e)) if matches!(e.code().as_deref(), Some("42P04" | "23505")) => {}
        Err(e) => return Err(e).context("cannot create the database"),
    }
    admin.close().await.ok();
    Ok(())
}

pub async fn migrate(db: &PgPool) -> anyhow::Result<()> {
    MIGRATOR.run(db).await.context("migrations failed")
}

/// A database error as it may be logged: its class, code and the object it names; never the
/// message or detail, which can quote values (personal data among them).
pub fn redacted(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(db) => format!(
            "database error {} on {}",
            db.code().as_deref().unwrap_or("?"),
            db.constraint().or_else(|| db.table()).unwrap_or("?")
        ),
        other => other.to_string(),
    }
}
