-- Webhook delivery, tuned for throughput (measured with bench/webhooks.sh; bench/README.md
-- has the figures). Three changes, none visible through the API.

-- 1. Claims resume where the previous claim stopped.
--
-- A delivery that is finished stays in the queue index as a dead entry until VACUUM, and a
-- claim that always starts at the oldest due row steps over all of them: with a large backlog
-- being drained, most of a claim's time. The scheduler now keeps a cursor, the last
-- (run_at, id) it claimed, and the next claim starts after it; it starts from the beginning
-- again when a claim comes back short or the cursor is a second old, which picks up rows that
-- became due behind it (released, lease expired, committed late). `id` makes the key unique,
-- so the cursor is exact, and leaves no posting lists, whose dead entries cannot be marked
-- dead one by one.
DROP INDEX webhook_deliveries_queue_idx;
CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (run_at, id) WHERE state = 'pending';

-- 2. Attempts without per-row foreign-key checks.
--
-- A foreign key checks every inserted attempt with `SELECT … FOR KEY SHARE` on the delivery
-- (and on the organization): a row lock on the very delivery row the same statement has just
-- updated. Measured on the scheduler's recording statement, those two checks were almost half
-- of its time.
--
-- The references hold by construction: attempts are inserted only by the scheduler's claim and
-- record statements, from delivery rows that statement holds locked, with that row's org_id.
-- What the foreign keys still did, removing attempts with their delivery (and so with their
-- organization, whose deletion cascades to its deliveries), a statement-level trigger does,
-- once per deleting statement instead of a check per inserted row.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_org_id_fkey;

CREATE FUNCTION webhook_attempts_follow_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_attempts a USING gone WHERE a.delivery_id = gone.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER webhook_attempts_follow_deliveries
    AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_attempts_follow_deliveries();

-- 3. A delivery keeps its latest attempt.
--
-- Most deliveries are attempted once. Writing that attempt on the delivery row, which the
-- recording statement updates anyway, saves a row (and its two index entries) per delivery.
-- When a delivery is claimed again, the claiming statement moves its latest attempt to
-- webhook_attempts; so webhook_attempts holds the earlier attempts and the delivery the latest
-- one, and `webhook_attempt_history` shows all of them, in order, from one snapshot (an attempt
-- is never in both places, nor in neither). `abandoned` attempts, found when a claim takes
-- over an expired lease, go to webhook_attempts directly.
ALTER TABLE webhook_deliveries
    ADD COLUMN attempt_started_at  TIMESTAMPTZ,
    ADD COLUMN attempt_duration_ms INTEGER,
    ADD COLUMN attempt_outcome     TEXT CHECK (attempt_outcome IN ('delivered', 'rejected', 'timeout', 'unreachable',
                                                                   'refused', 'skipped')),
    ADD COLUMN attempt_status      INTEGER,
    ADD COLUMN attempt_error       TEXT;

-- Every attempt of every delivery; `seq` orders a delivery's attempts (the latest, still on
-- the delivery, has none and comes last).
CREATE VIEW webhook_attempt_history AS
SELECT delivery_id, org_id, id AS seq, started_at, duration_ms, outcome, response_status, error
  FROM webhook_attempts
UNION ALL
SELECT id, org_id, NULL, attempt_started_at, attempt_duration_ms, attempt_outcome, attempt_status, attempt_error
  FROM webhook_deliveries
 WHERE attempt_outcome IS NOT NULL;
