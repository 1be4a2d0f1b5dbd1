-- A claim takes its deliveries out of the queue, and one row per claim holds their lease.
--
-- Until now a claim locked each queue row and rewrote it with the lease (token, times,
-- attempts), and recording a final outcome deleted it: two writes of every row, plus the
-- lock. Now the claim deletes the rows it takes (after the lock SKIP LOCKED needs) and writes
-- one `webhook_claims` row listing them; recording updates the delivery rows and counts the
-- claim down, and a retry puts its delivery back in the queue. Measured with bench/webhooks.sh
-- (bench/README.md has the figures).
--
-- A pending delivery is therefore in exactly one of two places: a queue row, or an open entry
-- of a claim (listed in the claim and not yet recorded: the delivery row's `attempts` is still
-- below the claim's count for it). What moves it between them, each in one transaction:
--
-- - a claim: queue rows → a new claim row;
-- - recording a retry: the claim's entry is settled (its count goes down) and a queue row is
--   inserted; a final outcome only settles the entry;
-- - giving back a delivery that was not sent: it leaves the claim's lists and a queue row is
--   inserted with the claim's count taken back;
-- - recovering a claim whose lease ran out (its scheduler stopped, or shut down and expired
--   it): the claim row goes, and each of its open entries gets a queue row that names the
--   claim (`lease_token`, `leased_at`), so the claim that takes it next records the lost
--   attempt as `abandoned`, as before.
--
-- Whatever changes a claim row locks it first, in token order (recovery skips a locked one), so
-- a record racing a give-back or a recovery of the same claim sees what the other committed.
-- Recording settles only open entries, so a batch written twice counts nothing the second time.
-- A claim lists delivery ids only; those of an erased organization's deliveries stay listed
-- until the claim goes (when the rest is recorded, or its lease runs out).
CREATE TABLE webhook_claims (
    -- The claim's random token: what the recorder presents.
    token            BIGINT PRIMARY KEY,
    leased_at        TIMESTAMPTZ NOT NULL,
    lease_expires_at TIMESTAMPTZ NOT NULL,
    -- The deliveries taken, position by position: their keys and the claim count each had
    -- with this claim (the queue row's `attempts` + 1). Given-back entries are removed; recorded
    -- ones stay until the claim goes.
    org_ids          BIGINT[] NOT NULL,
    ids              BIGINT[] NOT NULL,
    attempts         INTEGER[] NOT NULL,
    -- Entries neither recorded nor given back; the row goes when it reaches 0.
    open             INTEGER NOT NULL CHECK (open >= 0)
);
-- Recovery looks for expired claims on every scheduler's rescan.
CREATE INDEX webhook_claims_expiry_idx ON webhook_claims (lease_expires_at);

-- `webhook_queue`'s lease columns stay, with a narrower meaning: set only on a row that a
-- recovered claim put back (its claimable-again time in `lease_expires_at`, already past), or
-- on a row an older scheduler leased before this migration, which the claims take once that
-- lease runs out, as they did. New claims leave them unset.
COMMENT ON COLUMN webhook_queue.lease_token IS
    'The claim that took this delivery last and stopped before recording it (recorded as abandoned by the next claim)';
