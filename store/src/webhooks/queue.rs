//! The webhook delivery queue's statements: claim a batch, record a batch of attempts, give
//! back what was not sent, recover and release claims, count the queue, fail what is left of
//! deactivated subscriptions. Schema and rules: migrations/…_webhooks.sql,
//! …_webhook_queue_tuning.sql, …_webhook_hardening.sql, …_webhook_queue.sql and
//! …_webhook_claims.sql: a pending delivery is either a row in `webhook_queue` or an open entry
//! of a claim in `webhook_claims`, which holds the lease; the delivery row is written when an
//! attempt is recorded, when a re-claim moves its latest attempt to the history, and when it
//! fails with its subscription.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
    time::Duration,
};
use tns_core::ids::OrgId;

use crate::leases::{Depth, Lease};

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tns_core::domain::kinds::DeliveryOutcome;

/// `webhook_emit` NOTIFYs here when it creates deliveries (see the migration).
pub const CHANNEL: &str = "tns_webhooks";

/// A position in an organization's part of the queue, `(run_at, id)`: a claim takes that
/// organization's due rows after it.
pub type Cursor = (DateTime<Utc>, i64);

/// Where a claim starts and how much it may take.
#[derive(Debug, Clone)]
pub struct ClaimFrom {
    /// Per organization, the last row an earlier claim took; organizations without one are
    /// scanned from their first row.
    pub cursors: Vec<(i64, Cursor)>,
    /// Per organization, how many more deliveries the claiming scheduler may hold;
    /// organizations not listed may take `room`.
    pub rooms: Vec<(i64, usize)>,
    pub room: usize,
    /// The organization served last: the claim's turns start after it.
    pub after_org: i64,
}

impl ClaimFrom {
    /// Every organization from its first row, without limits.
    pub fn start() -> ClaimFrom {
        ClaimFrom { cursors: vec![], rooms: vec![], room: i32::MAX as usize, after_org: 0 }
    }
}

/// A claimed delivery with what is needed to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    /// With `id`, its place in its organization's part of the queue (see [`Cursor`]).
    pub run_at: DateTime<Utc>,
    pub org_id: OrgId,
    pub event_id: i64,
    pub event_type: String,
    pub subscription_id: i64,
    /// Claims so far, this one included.
    pub attempts: i32,
    pub lease_token: i64,
    /// How many rows the claim could take of this organization, and how many due ones it
    /// found (fewer: it reached the end of the organization's due rows).
    pub lim: i32,
    pub found: i64,
    /// The subscription as this claim read it: one copy shared by all its deliveries in the
    /// claim.
    pub subscription: Arc<Endpoint>,
    pub body: String,
}

/// A subscription as a claim read it: where its deliveries go and what signs them.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Endpoint {
    pub endpoint_url: String,
    pub secret_sealed: Vec<u8>,
    /// The secret a rotation replaced, while it still signs, and until when.
    pub previous_secret_sealed: Option<Vec<u8>>,
    pub previous_secret_until: Option<DateTime<Utc>>,
    /// False when the subscription was deactivated or deleted after the event: not sent.
    pub active: bool,
}

/// A claim's row: the delivery (its subscription is read once per claim, see [`claim`]).
#[derive(sqlx::FromRow)]
struct ClaimedRow {
    id: i64,
    run_at: DateTime<Utc>,
    org_id: OrgId,
    event_id: i64,
    event_type: String,
    subscription_id: i64,
    attempts: i32,
    lease_token: i64,
    lim: i32,
    body: String,
}

/// A subscription as [`endpoints`] reads it.
#[derive(sqlx::FromRow)]
struct EndpointRow {
    id: i64,
    org_id: OrgId,
    #[sqlx(flatten)]
    endpoint: Endpoint,
}

impl Claimed {
    pub fn lease(&self) -> Lease {
        Lease { org: self.org_id.get(), id: self.id, token: self.lease_token }
    }
}

/// Claim up to `n` due deliveries for `lease`, fairly across organizations: the batch takes
/// each organization's oldest due delivery before anyone's second (turns starting after
/// `from.after_org`), so one tenant's backlog delays another's delivery by a claim at most.
/// Each organization contributes at most its share of `n` (its turn comes within `n`
/// organizations) and its room (what the scheduler may still hold of it), so a claim may return
/// fewer than `n` while work remains. The answer is in the fair order, which is put together
/// here ([`fair_order`]): sorting and numbering the rows cost the statement more per row than
/// the rest of its choice.
///
/// The claimed rows leave the queue, and one `webhook_claims` row with `token` lists them and
/// holds their lease (see the migration …_webhook_claims.sql).
///
/// The organizations with pending rows are found by a loose index scan of the queue index (one
/// probe each, however long its backlog); each is read after its cursor (see
/// `…_webhook_queue_tuning.sql`: finished rows stay in the index as dead entries until VACUUM,
/// and a claim that always started at an organization's oldest row would step over all of
/// them). A delivery tried before moves its latest attempt from the row to `webhook_attempts`;
/// a due row whose lease ran out was claimed by a scheduler that stopped: recorded as an
/// `abandoned` attempt after it.
///
/// The claim's subscriptions are read right after it, once each, by a second statement
/// ([`endpoints`]); the deliveries of one subscription in a claim share that one decoded copy
/// ([`Claimed::subscription`]), so what the scheduler prepares from it (the checked URL, the
/// unsealed keys) is looked up once per subscription, not per delivery. (Joined in the claim,
/// every row paid an index probe and carried the columns, decoded again; joined once per claim
/// inside the statement, PostgreSQL planned nested loops over the claim.) A subscription that
/// is gone, or of another organization (neither happens while the deliveries' foreign key to
/// it holds), is read as inactive: its deliveries are recorded as skipped and fail.
/// Should that read fail, the claim is given back (if that fails too, it is recovered when its
/// lease runs out, as when a claim's answer is lost).
pub async fn claim(db: &PgPool, n: usize, lease: Duration, token: i64, from: &ClaimFrom) -> sqlx::Result<Vec<Claimed>> {
    let room = |r: usize| i32::try_from(r).unwrap_or(i32::MAX);
    let rows: Vec<ClaimedRow> = sqlx::query_as(
        "WITH RECURSIVE orgs(org_id) AS (
            -- Downwards, so each probe lands on an organization's newest entry: its oldest ones
            -- are where finished deliveries leave dead entries behind.
            (SELECT org_id FROM webhook_queue ORDER BY org_id DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT q.org_id FROM webhook_queue q WHERE q.org_id < orgs.org_id ORDER BY q.org_id DESC LIMIT 1)
              FROM orgs WHERE orgs.org_id IS NOT NULL
         ), pos AS (
            SELECT o.org_id, COALESCE(c.run_at, '-infinity') AS after_at, COALESCE(c.id, 0) AS after_id,
                   COALESCE(r.room, $9) AS room
              FROM orgs o
              LEFT JOIN unnest($4::bigint[], $5::timestamptz[], $6::bigint[]) AS c(org_id, run_at, id) USING (org_id)
              LEFT JOIN unnest($7::bigint[], $8::int[]) AS r(org_id, room) USING (org_id)
             WHERE o.org_id IS NOT NULL
         ), ready AS MATERIALIZED (
            -- Organizations with a claimable row after their cursor and room for it: the share
            -- of each is counted among these only (an organization whose rows all wait for a
            -- retry must not shrink everyone's share). At most `n`, numbered in turn order.
            SELECT pos.*, row_number() OVER (ORDER BY pos.org_id <= $10, pos.org_id) AS turn FROM pos
             WHERE pos.room > 0
               AND EXISTS (SELECT 1 FROM webhook_queue w
                            WHERE w.org_id = pos.org_id
                              AND (w.run_at, w.id) > (pos.after_at, pos.after_id) AND w.run_at <= now()
                              AND (w.lease_token IS NULL OR w.lease_expires_at <= now()))
             ORDER BY pos.org_id <= $10, pos.org_id
             LIMIT $1
         ), chosen AS MATERIALIZED (
            -- Each its share of `n` within its room: the shares add up to `n`, the first
            -- organizations in turn taking one more where `n` does not divide evenly.
            SELECT d.*, l.lim FROM ready
             CROSS JOIN (SELECT count(*) AS k FROM ready) c
             CROSS JOIN LATERAL (
                SELECT LEAST(ready.room, $1 / c.k + (ready.turn <= $1 % c.k)::int)::int AS lim
             ) l
             CROSS JOIN LATERAL (
                SELECT w.ctid AS tid, w.id, w.org_id, w.attempts, w.lease_token AS old_token,
                       w.leased_at AS old_leased_at
                  FROM webhook_queue w
                 WHERE w.org_id = ready.org_id
                   AND (w.run_at, w.id) > (ready.after_at, ready.after_id) AND w.run_at <= now()
                   AND (w.lease_token IS NULL OR w.lease_expires_at <= now())
                 ORDER BY w.run_at, w.id
                 LIMIT l.lim
                   FOR UPDATE SKIP LOCKED
             ) d
         ), again AS (
            -- Claimed before (rare): the delivery row's latest attempt moves to
            -- webhook_attempts, and an expired lease is recorded as abandoned after it. Locked,
            -- so the attempt read is the latest one (a late record by the scheduler whose lease
            -- ran out may have committed since this statement began).
            SELECT chosen.id, chosen.org_id, chosen.old_token, chosen.old_leased_at, d.attempt_started_at,
                   d.attempt_duration_ms, d.attempt_outcome, d.attempt_status, d.attempt_error
              FROM chosen JOIN webhook_deliveries d ON d.org_id = chosen.org_id AND d.id = chosen.id
             WHERE chosen.attempts > 0
               FOR UPDATE OF d
         ), history AS (
            INSERT INTO webhook_attempts (delivery_id, org_id, started_at, duration_ms, outcome, response_status, error)
            SELECT id, org_id, started_at, duration_ms, outcome, status, error FROM (
                SELECT id, org_id, attempt_started_at AS started_at, attempt_duration_ms AS duration_ms,
                       attempt_outcome AS outcome, attempt_status AS status, attempt_error AS error, 1 AS k
                  FROM again WHERE attempt_outcome IS NOT NULL
                UNION ALL
                SELECT id, org_id, old_leased_at, NULL, 'abandoned', NULL,
                       'abandoned: the scheduler sending it stopped before recording the outcome', 2
                  FROM again WHERE old_token IS NOT NULL
            ) earlier
            ORDER BY id, k
         ), moved AS (
            UPDATE webhook_deliveries d
               SET attempt_started_at = NULL, attempt_duration_ms = NULL, attempt_outcome = NULL,
                   attempt_status = NULL, attempt_error = NULL
              FROM again
             WHERE d.org_id = again.org_id AND d.id = again.id AND again.attempt_outcome IS NOT NULL
         ), claimed AS (
            DELETE FROM webhook_queue q
             USING chosen
             -- The array makes the rows' addresses a TID scan's: the planner, misjudging how many
             -- rows `chosen` has, would otherwise hash-join on a scan of the whole queue.
             WHERE q.ctid = chosen.tid AND q.ctid = ANY(ARRAY(SELECT tid FROM chosen))
            RETURNING q.id, q.run_at, q.org_id, q.event_id, q.subscription_id, q.attempts + 1 AS attempts,
                      $3::bigint AS lease_token, chosen.lim
         ), leased AS (
            INSERT INTO webhook_claims (token, leased_at, lease_expires_at, org_ids, ids, attempts, open)
            SELECT $3, now(), now() + make_interval(secs => $2), array_agg(org_id), array_agg(id),
                   array_agg(attempts), count(*)
              FROM claimed HAVING count(*) > 0
         )
         SELECT c.*, e.type AS event_type, e.body
           FROM claimed c
           JOIN webhook_events e ON e.id = c.event_id AND e.org_id = c.org_id",
    )
    .bind(i64::try_from(n).unwrap_or(i64::MAX))
    .bind(lease.as_secs_f64())
    .bind(token)
    .bind(from.cursors.iter().map(|c| c.0).collect::<Vec<i64>>())
    .bind(from.cursors.iter().map(|c| c.1 .0).collect::<Vec<DateTime<Utc>>>())
    .bind(from.cursors.iter().map(|c| c.1 .1).collect::<Vec<i64>>())
    .bind(from.rooms.iter().map(|r| r.0).collect::<Vec<i64>>())
    .bind(from.rooms.iter().map(|r| room(r.1)).collect::<Vec<i32>>())
    .bind(room(from.room))
    .bind(from.after_org)
    .fetch_all(db)
    .await?;
    let mut ids: Vec<i64> = rows.iter().map(|r| r.subscription_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let subscriptions = match endpoints(db, &ids).await {
        Ok(s) => s,
        Err(e) => {
            let held: Vec<Lease> =
                rows.iter().map(|r| Lease { org: r.org_id.get(), id: r.id, token: r.lease_token }).collect();
            if let Err(back) = give_back(db, &held).await {
                tracing::warn!(error = %crate::redacted(&back), "giving back a claim whose subscriptions could not be read failed; it is recovered when its lease runs out");
            }
            return Err(e);
        }
    };
    Ok(fair_order(with_subscriptions(rows, &subscriptions), from.after_org))
}

/// The subscriptions with the given ids, with their organization, as a claim sends with them:
/// the replaced secret only while it still signs.
async fn endpoints(db: &PgPool, ids: &[i64]) -> sqlx::Result<HashMap<i64, (OrgId, Arc<Endpoint>)>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<EndpointRow> = sqlx::query_as(
        "SELECT id, org_id, endpoint_url, secret_sealed,
                CASE WHEN previous_secret_expires_at > now() THEN previous_secret_sealed END AS previous_secret_sealed,
                CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_until,
                active
           FROM webhook_subscriptions WHERE id = ANY($1)",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, (r.org_id, Arc::new(r.endpoint)))).collect())
}

/// Gives each subscription's deliveries in the claim its one shared copy; a subscription not
/// found for the delivery's organization, an inactive one.
fn with_subscriptions(rows: Vec<ClaimedRow>, subscriptions: &HashMap<i64, (OrgId, Arc<Endpoint>)>) -> Vec<Claimed> {
    let gone = Arc::new(Endpoint {
        endpoint_url: String::new(),
        secret_sealed: vec![],
        previous_secret_sealed: None,
        previous_secret_until: None,
        active: false,
    });
    rows.into_iter()
        .map(|r| {
            let subscription = match subscriptions.get(&r.subscription_id) {
                Some((org, endpoint)) if *org == r.org_id => endpoint.clone(),
                _ => gone.clone(),
            };
            Claimed {
                id: r.id,
                run_at: r.run_at,
                org_id: r.org_id,
                event_id: r.event_id,
                event_type: r.event_type,
                subscription_id: r.subscription_id,
                attempts: r.attempts,
                lease_token: r.lease_token,
                lim: r.lim,
                found: 0,
                subscription,
                body: r.body,
            }
        })
        .collect()
}

/// A claim's rows in the fair order: every organization's first row before anyone's second,
/// each organization's in `(run_at, id)` order, and within a round the organizations after
/// `after_org` first, then from the lowest. Counts each organization's rows (`found`).
fn fair_order(mut claimed: Vec<Claimed>, after_org: i64) -> Vec<Claimed> {
    claimed.sort_by_key(|c| (c.org_id.get(), c.run_at, c.id));
    let mut keys = Vec::with_capacity(claimed.len());
    for rows in claimed.chunk_by_mut(|a, b| a.org_id == b.org_id) {
        let found = rows.len() as i64;
        for (turn, c) in rows.iter_mut().enumerate() {
            c.found = found;
            keys.push((turn, c.org_id.get() <= after_org, c.org_id.get()));
        }
    }
    let mut ranked: Vec<((usize, bool, i64), Claimed)> = keys.into_iter().zip(claimed).collect();
    ranked.sort_by_key(|(key, _)| *key);
    ranked.into_iter().map(|(_, c)| c).collect()
}

/// The claims these leases name, each once, in token order: the order every statement that
/// changes claims locks them in.
fn claim_tokens<'a>(leases: impl Iterator<Item = &'a Lease>) -> Vec<i64> {
    let mut tokens: Vec<i64> = leases.map(|l| l.token).collect();
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// Give back held deliveries that were not sent (held too long to send within their lease, or
/// not started when the scheduler stopped): each leaves its claim's lists and is queued again,
/// due at once, and the claim that did not lead to an attempt is not counted. Only deliveries
/// listed and still open in a claim with the given token are touched (a recovered claim has
/// queued its open entries itself; a recorded one is settled), so giving back twice gives back
/// nothing the second time. Returns how many were given back.
pub async fn give_back(db: &PgPool, held: &[Lease]) -> sqlx::Result<u64> {
    let back: HashSet<(i64, i64, i64)> = held.iter().map(|l| (l.token, l.org, l.id)).collect();
    let tokens = claim_tokens(held.iter());
    let mut tx = db.begin().await?;
    let claims: Vec<(i64, Vec<i64>, Vec<i64>, Vec<i32>)> = sqlx::query_as(
        "SELECT token, org_ids, ids, attempts FROM webhook_claims WHERE token = ANY($1) ORDER BY token FOR UPDATE",
    )
    .bind(&tokens)
    .fetch_all(&mut *tx)
    .await?;
    // Asked back and listed: queued again if still open (the delivery's count is below the
    // claim's), with the count before this claim: the claim is not counted.
    let asked: Vec<(i64, i64, i64, i32)> = claims
        .iter()
        .flat_map(|(token, orgs, ids, attempts)| {
            orgs.iter().zip(ids).zip(attempts).map(move |((org, id), n)| (*token, *org, *id, *n))
        })
        .filter(|(token, org, id, _)| back.contains(&(*token, *org, *id)))
        .collect();
    let col = |f: fn(&(i64, i64, i64, i32)) -> i64| asked.iter().map(f).collect::<Vec<i64>>();
    let queued: HashSet<(i64, i64)> = sqlx::query_as(
        "INSERT INTO webhook_queue (org_id, id, run_at, event_id, subscription_id, attempts)
         SELECT d.org_id, d.id, d.run_at, d.event_id, d.subscription_id, b.attempts - 1
           FROM unnest($1::bigint[], $2::bigint[], $3::int[]) AS b(org_id, id, attempts)
           JOIN webhook_deliveries d ON d.org_id = b.org_id AND d.id = b.id
          WHERE d.state = 'pending' AND d.attempts < b.attempts
         ON CONFLICT (org_id, id) DO NOTHING
         RETURNING org_id, id",
    )
    .bind(col(|a| a.1))
    .bind(col(|a| a.2))
    .bind(asked.iter().map(|a| a.3).collect::<Vec<i32>>())
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    // What went back leaves its claim's lists and is no longer open there.
    for (token, orgs, ids, attempts) in claims {
        let mut kept: (Vec<i64>, Vec<i64>, Vec<i32>) = Default::default();
        for ((org, id), n) in orgs.into_iter().zip(ids).zip(attempts) {
            if !(back.contains(&(token, org, id)) && queued.contains(&(org, id))) {
                kept.0.push(org);
                kept.1.push(id);
                kept.2.push(n);
            }
        }
        sqlx::query(
            "UPDATE webhook_claims SET org_ids = $2, ids = $3, attempts = $4,
                    open = open - (cardinality(ids) - cardinality($3::bigint[]))
              WHERE token = $1",
        )
        .bind(token)
        .bind(&kept.0)
        .bind(&kept.1)
        .bind(&kept.2)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("DELETE FROM webhook_claims WHERE token = ANY($1) AND open = 0")
        .bind(&tokens)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(queued.len() as u64)
}

/// Recover the claims whose lease ran out (their scheduler stopped before recording, or
/// released them when it shut down), all of them or those with the given tokens: the claim
/// goes, and each of its open entries is queued again naming it, so the claim that takes the
/// delivery next records the lost attempt as `abandoned` after the delivery's latest one. A
/// claim locked right now (its late record, or another scheduler recovering it) is left for the
/// next time. Returns how many deliveries were queued.
pub async fn recover(db: &PgPool, only: Option<&[i64]>) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "WITH expired AS (
            DELETE FROM webhook_claims
             WHERE token IN (SELECT token FROM webhook_claims
                              WHERE lease_expires_at <= now() AND ($1::bigint[] IS NULL OR token = ANY($1))
                              ORDER BY token
                                FOR UPDATE SKIP LOCKED)
            RETURNING token, leased_at, lease_expires_at, org_ids, ids, attempts
         ), open AS (
            -- Locked, so an attempt recorded since this statement began is seen (its delivery's
            -- count reached the claim's): only entries nobody recorded are queued.
            SELECT d.org_id, d.id, d.run_at, d.event_id, d.subscription_id, x.attempts, e.token, e.leased_at,
                   e.lease_expires_at
              FROM expired e
             CROSS JOIN LATERAL unnest(e.org_ids, e.ids, e.attempts) AS x(org_id, id, attempts)
              JOIN webhook_deliveries d ON d.org_id = x.org_id AND d.id = x.id
             WHERE d.state = 'pending' AND d.attempts < x.attempts
               FOR UPDATE OF d
         )
         INSERT INTO webhook_queue (org_id, id, run_at, event_id, subscription_id, attempts, lease_token, leased_at,
                                    lease_expires_at)
         SELECT org_id, id, run_at, event_id, subscription_id, attempts, token, leased_at, lease_expires_at FROM open
         ON CONFLICT (org_id, id) DO NOTHING",
    )
    .bind(only)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}

/// Release the claims of held deliveries at once (a scheduler shutting down with attempts
/// unfinished), so another scheduler need not wait for their leases to run out: they are
/// recovered now. Returns how many deliveries were queued again.
pub async fn release(db: &PgPool, held: &[Lease]) -> sqlx::Result<u64> {
    let tokens = claim_tokens(held.iter());
    sqlx::query(
        "UPDATE webhook_claims SET lease_expires_at = now()
          WHERE token IN (SELECT token FROM webhook_claims WHERE token = ANY($1) ORDER BY token FOR UPDATE)",
    )
    .bind(&tokens)
    .execute(db)
    .await?;
    recover(db, Some(&tokens)).await
}

/// The queue's depth: queued rows by due or waiting, and the open entries of the claims.
pub async fn depth(db: &PgPool) -> sqlx::Result<Depth> {
    sqlx::query_as(
        "SELECT count(*) FILTER (WHERE due <= now()) AS ready,
                count(*) FILTER (WHERE due > now()) AS waiting,
                (SELECT COALESCE(sum(open), 0) FROM webhook_claims)::bigint AS leased,
                COALESCE(floor(extract(epoch FROM now() - LEAST(
                    min(due) FILTER (WHERE due <= now()),
                    (SELECT min(lease_expires_at) FROM webhook_claims WHERE lease_expires_at <= now() AND open > 0)))), 0)::bigint
                    AS oldest_due_secs
           FROM (SELECT CASE WHEN lease_token IS NULL THEN run_at ELSE GREATEST(run_at, lease_expires_at) END AS due
                   FROM webhook_queue) q",
    )
    .fetch_one(db)
    .await
}

/// One attempt's outcome, as recorded.
#[derive(Debug, Clone)]
pub struct Attempted {
    /// The delivery and the lease it was claimed with.
    pub lease: Lease,
    /// Claims so far, the one of this attempt included ([`Claimed::attempts`]).
    pub attempts: i32,
    pub subscription_id: i64,
    /// `delivered`, `rejected`, `timeout`, `unreachable`, `refused` or `skipped`.
    pub outcome: DeliveryOutcome,
    pub response_status: Option<i32>,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub duration_ms: i32,
    /// When to try again; `None` with a failed outcome means the delivery has failed for good.
    pub retry_at: Option<DateTime<Utc>>,
}

/// What a batch says about each subscription it touched (`skipped` attempts say nothing):
/// whether any delivery succeeded, and when the first failed attempt started. In subscription
/// order, so concurrent recorders lock subscription rows in the same order.
fn health(batch: &[&Attempted]) -> BTreeMap<i64, (bool, Option<DateTime<Utc>>)> {
    let mut h: BTreeMap<i64, (bool, Option<DateTime<Utc>>)> = BTreeMap::new();
    for a in batch.iter().filter(|a| a.outcome != DeliveryOutcome::Skipped) {
        let (ok, first_failure) = h.entry(a.subscription_id).or_default();
        if a.outcome == DeliveryOutcome::Delivered {
            *ok = true;
        } else if first_failure.is_none_or(|f| a.started_at < f) {
            *first_failure = Some(a.started_at);
        }
    }
    h
}

/// Record a batch of attempts in one statement: the deliveries whose claim is still held (not
/// recovered by another scheduler) and still open in it (not recorded already: a batch written
/// twice records nothing the second time) with their attempt, each claim counted down by what
/// was recorded of it, a retry queued again, and each subscription's health: a success clears
/// `failing_since`; a failure sets it if unset, and deactivates the subscription (reason
/// `failing`) once it has gone `disable_after` without a success. Then the claims with nothing
/// left open go (one left behind by a failure between the two goes when its lease runs out).
/// Returns the ids of the deliveries recorded and of the subscriptions this batch deactivated.
pub async fn record(db: &PgPool, batch: &[&Attempted], disable_after: Duration) -> sqlx::Result<(Vec<i64>, Vec<i64>)> {
    fn col<'a, T>(batch: &[&'a Attempted], f: impl Fn(&'a Attempted) -> T) -> Vec<T> {
        batch.iter().map(|a| f(a)).collect()
    }
    let tokens = claim_tokens(batch.iter().map(|a| &a.lease));
    // Health from every attempt made, its claim held or not: each says how the endpoint answered.
    let health = health(batch);
    let rows: Vec<(Option<i64>, Option<i64>)> = sqlx::query_as(
        "WITH held AS MATERIALIZED (
            -- The claims first, in token order (as giving back and recovering lock them): a
            -- give-back that committed meanwhile is counted from, a recovered claim is not here.
            SELECT token FROM webhook_claims WHERE token = ANY($15) ORDER BY token FOR UPDATE
         ), r AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::timestamptz[],
                                 $7::int[], $8::timestamptz[], $13::int[], $14::bigint[])
                   AS r(id, token, outcome, status, error, started_at, duration_ms, retry_at, attempts, org_id)
             WHERE token IN (SELECT token FROM held)
         ), d AS (
            -- Open entries only: an entry recorded already has the claim's count.
            UPDATE webhook_deliveries d
               SET state = CASE WHEN r.outcome = 'delivered' THEN 'delivered'
                                WHEN r.retry_at IS NULL THEN 'failed' ELSE 'pending' END,
                   run_at = COALESCE(r.retry_at, d.run_at),
                   attempts = r.attempts,
                   last_response_status = r.status,
                   last_error = r.error,
                   finished_at = CASE WHEN r.outcome = 'delivered' OR r.retry_at IS NULL THEN now() END,
                   attempt_started_at = r.started_at, attempt_duration_ms = r.duration_ms, attempt_outcome = r.outcome,
                   attempt_status = r.status, attempt_error = r.error
              FROM r
             WHERE d.org_id = r.org_id AND d.id = r.id AND d.state = 'pending' AND d.attempts < r.attempts
            RETURNING d.org_id, d.id, d.run_at, d.event_id, d.subscription_id, d.attempts, d.state, r.token
         ), counted AS (
            UPDATE webhook_claims c SET open = c.open - k.n
              FROM (SELECT token, count(*)::int AS n FROM d GROUP BY token) k
             WHERE c.token = k.token
         ), retried AS (
            -- Due again: back in the queue. (It left the queue with its claim; the conflict
            -- clause only keeps a broken invariant from failing the whole batch forever.)
            INSERT INTO webhook_queue (org_id, id, run_at, event_id, subscription_id, attempts)
            SELECT org_id, id, run_at, event_id, subscription_id, attempts FROM d WHERE state = 'pending'
            ON CONFLICT (org_id, id) DO NOTHING
         ), subs AS (
            UPDATE webhook_subscriptions s
               SET last_success_at = CASE WHEN h.ok THEN now() ELSE s.last_success_at END,
                   failing_since = CASE WHEN h.ok THEN NULL ELSE COALESCE(s.failing_since, h.first_failure) END,
                   active = s.active AND (h.ok OR COALESCE(s.failing_since, h.first_failure)
                                                  > now() - make_interval(secs => $12)),
                   inactive_reason = CASE WHEN s.active AND NOT h.ok AND COALESCE(s.failing_since, h.first_failure)
                                               <= now() - make_interval(secs => $12)
                                          THEN 'failing' ELSE s.inactive_reason END,
                   updated_at = now()
              FROM unnest($9::bigint[], $10::bool[], $11::timestamptz[]) AS h(subscription_id, ok, first_failure)
             -- A healthy subscription's row is rewritten at most once a minute (last_success_at
             -- is that precise), not once per batch.
             WHERE s.id = h.subscription_id
               AND (NOT h.ok OR s.failing_since IS NOT NULL OR s.last_success_at IS NULL
                    OR s.last_success_at < now() - interval '1 minute')
            RETURNING s.id, s.active, s.inactive_reason
         )
         SELECT d.id, NULL::bigint FROM d
         UNION ALL
         SELECT NULL, subs.id FROM subs WHERE NOT subs.active AND subs.inactive_reason = 'failing'",
    )
    .bind(col(batch, |a| a.lease.id))
    .bind(col(batch, |a| a.lease.token))
    .bind(col(batch, |a| a.outcome.as_str()))
    .bind(col(batch, |a| a.response_status))
    .bind(col(batch, |a| a.error.as_deref()))
    .bind(col(batch, |a| a.started_at))
    .bind(col(batch, |a| a.duration_ms))
    .bind(col(batch, |a| a.retry_at))
    .bind(health.keys().copied().collect::<Vec<i64>>())
    .bind(health.values().map(|h| h.0).collect::<Vec<bool>>())
    .bind(health.values().map(|h| h.1).collect::<Vec<Option<DateTime<Utc>>>>())
    .bind(disable_after.as_secs_f64())
    .bind(col(batch, |a| a.attempts))
    .bind(col(batch, |a| a.lease.org))
    .bind(&tokens)
    .fetch_all(db)
    .await?;
    sqlx::query("DELETE FROM webhook_claims WHERE token = ANY($1) AND open = 0").bind(&tokens).execute(db).await?;
    let mut recorded = vec![];
    let mut deactivated = vec![];
    for (id, sub) in rows {
        match (id, sub) {
            (Some(id), _) => recorded.push(id),
            (_, Some(sub)) => deactivated.push(sub),
            _ => {}
        }
    }
    Ok((recorded, deactivated))
}

/// Fail the pending deliveries of subscriptions that are no longer active (deactivated for
/// failing, by request, or deleted), except those a scheduler holds right now: recording
/// their attempt settles them. Returns how many were failed.
pub async fn fail_inactive(db: impl sqlx::PgExecutor<'_>, subscriptions: &[i64]) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "WITH gone AS (
            DELETE FROM webhook_queue q USING webhook_subscriptions s
             WHERE s.id = ANY($1) AND NOT s.active AND q.subscription_id = s.id AND q.lease_token IS NULL
            RETURNING q.org_id, q.id, q.attempts
         )
         UPDATE webhook_deliveries d
            SET state = 'failed', finished_at = now(), last_error = 'the subscription is no longer active',
                attempts = gone.attempts
           FROM gone
          WHERE d.org_id = gone.org_id AND d.id = gone.id",
    )
    .bind(subscriptions)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}
