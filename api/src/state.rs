//! Shared state of the API role: one clone per request, everything behind an `Arc`.

use std::{ops::Deref, sync::Arc};
use tns_core::ids::{OrgId, UserId};

use sqlx::PgPool;

use crate::{
    auth::{jwt::Jwt, KeyStore},
    cache::TtlMap,
    downstream::Downstreams,
    metrics::Metrics,
    quota::Quota,
    redis_store::RedisStore,
    settings::ApiSettings,
    throttle::{AccountBackoff, Budget, IpThrottle},
    waiter::Waiters,
};
use tns_core::refdata::RefData;
use tns_store::{
    accounts::Profile,
    health::DbHealth,
    journey_writer::{JourneyWriter, Writers},
};

/// Downstream credential checks an organization may make per hour.
pub const CREDENTIAL_CHECKS_PER_HOUR: u64 = 10;

pub struct Inner {
    pub cfg: ApiSettings,
    pub db: PgPool,
    pub redis: Arc<RedisStore>,
    pub keys: KeyStore,
    pub jwt: Jwt,
    pub quota: Quota,
    /// Unauthenticated requests per client.
    pub throttle: IpThrottle,
    /// Refused credentials per client: a client over this budget gets no more key lookups,
    /// while valid keys from the same address are not held back by anyone's anonymous calls.
    pub refused: IpThrottle,
    /// Downstream credential checks per organization: each is a login attempt at U-ETDS, which
    /// must not become a way to guess passwords there through us.
    pub credential_checks: Budget,
    /// Failed sign-ins per account, and the wait they impose.
    pub signins: AccountBackoff,
    pub metrics: Arc<Metrics>,
    /// `GET /portal/me` answers by (organization, user), kept as long as API keys.
    pub profiles: TtlMap<(OrgId, UserId), Profile>,
    /// Provinces and districts, loaded once at start-up (the process's installed copy).
    pub refdata: &'static RefData,
    pub journeys: JourneyWriter,
    /// Requests waiting (`Prefer: wait`) for submissions to finish.
    pub waiters: Waiters,
    /// The adapter plugins, for the calls the API makes itself (credentials, reports).
    pub downstreams: Downstreams,
    /// `/readyz`'s last Redis ping.
    pub readiness: crate::health::Readiness,
    /// Whether PostgreSQL is known down (the role's database watch decides): requests are then
    /// answered 503 at once instead of waiting for a connection.
    pub db_health: DbHealth,
}

#[derive(Clone)]
pub struct AppState(pub Arc<Inner>);

impl Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(
        cfg: ApiSettings,
        db: PgPool,
        redis: RedisStore,
        refdata: &'static RefData,
        downstreams: Downstreams,
    ) -> (AppState, Writers) {
        let redis = Arc::new(redis);
        let metrics = Arc::new(Metrics::new());
        // One writer per sixteen connections of the pool (one at least) writes journeys; the
        // rest serves everything else. Fewer writers make larger batches, and PostgreSQL's
        // cost is per statement and commit as much as per row: under `bench/operations.sh`
        // (16 connections) one writer made 6 100–6 500 creates/s, two 5 000–5 500, four 4 100–4 800.
        let (journeys, writers) =
            JourneyWriter::new(db.clone(), (db.options().get_max_connections() as usize / 16).max(1));
        let state = AppState(Arc::new(Inner {
            keys: KeyStore::new(cfg.auth_cache_ttl, metrics.key_lookups.clone()),
            profiles: TtlMap::new(cfg.auth_cache_ttl, 100_000),
            jwt: Jwt::new(&cfg.signing_secret),
            quota: Quota::new(redis.clone(), db.clone(), metrics.clone(), cfg.quota),
            throttle: IpThrottle::new(
                "ip",
                cfg.auth_rate_limit,
                cfg.auth_rate_window.as_secs(),
                cfg.trust_forwarded_for,
            ),
            refused: IpThrottle::new(
                "refused",
                cfg.auth_rate_limit,
                cfg.auth_rate_window.as_secs(),
                cfg.trust_forwarded_for,
            ),
            signins: AccountBackoff::default(),
            credential_checks: Budget::new("credential-checks", CREDENTIAL_CHECKS_PER_HOUR, 3600),
            refdata,
            journeys,
            waiters: Waiters::default(),
            downstreams,
            readiness: Default::default(),
            db_health: DbHealth::default(),
            cfg,
            db,
            redis,
            metrics,
        }));
        (state, writers)
    }
}
