-- The delivery queue gets a table of its own (…006 and …040 tuned it inside the delivery rows).
--
-- A delivery row was the queue entry too: claiming rewrote the whole row (lease columns), and
-- recording moved it out of the queue's partial indexes, which no update can do in place, so
-- every recorded attempt wrote a new version of the wide row with an entry in each of its
-- indexes. Now `webhook_queue` holds one narrow row per pending delivery (what claiming and
-- ordering need, and the lease), and the delivery row is what the API reads:
--
-- - Claiming locks and rewrites only queue rows; no indexed column changes, so the new
--   versions stay on their pages (HOT; hence the fill factor). The delivery row is not touched,
--   except when the delivery was claimed before: then its latest attempt moves to
--   webhook_attempts, as before.
-- - Recording a final outcome deletes the queue row (no new version, no index entry) and
--   updates the delivery row, whose indexes no longer mention `state`: in place. A retry moves
--   the queue row's `run_at` instead.
-- - A pending delivery has exactly one queue row, inserted by `webhook_emit` with it and
--   removed when it is recorded final, failed as inactive, or deleted (trigger below).
--
-- Measured with bench/webhooks.sh (bench/README.md has the figures). The scheduler must not run
-- an older version meanwhile: it would claim from columns that are gone (README: upgrade notes).
CREATE TABLE webhook_queue (
    org_id           BIGINT NOT NULL,
    -- The delivery's id: (org_id, id) is its key in webhook_deliveries too.
    id               BIGINT NOT NULL,
    -- When it is due: at emit, then at each retry. The delivery row keeps a copy for the API.
    run_at           TIMESTAMPTZ NOT NULL,
    event_id         BIGINT NOT NULL,
    subscription_id  BIGINT NOT NULL,
    -- Claims so far (a claim counts before its attempt is recorded; giving back an unsent
    -- delivery takes it back). Recording an attempt, or failing the delivery because its
    -- subscription is no longer active, copies it to the delivery.
    attempts         INTEGER NOT NULL DEFAULT 0,
    -- Held by a scheduler while lease_token is set and lease_expires_at is ahead; a row whose
    -- lease ran out is claimable again, and that claim records the lost attempt as abandoned.
    lease_token      BIGINT,
    leased_at        TIMESTAMPTZ,
    lease_expires_at TIMESTAMPTZ,
    PRIMARY KEY (org_id, id)
) WITH (fillfactor = 50);
-- The claim's order: organization by organization, each from its cursor (…006, …009).
CREATE INDEX webhook_queue_due_idx ON webhook_queue (org_id, run_at, id);
-- Failing what is left of a deactivated subscription.
CREATE INDEX webhook_queue_subscription_idx ON webhook_queue (subscription_id);

-- No delivery may be written while its pending rows are copied (an API pod of the previous
-- version still emits into the old shape until this commits); reads go on.
LOCK TABLE webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO webhook_queue (org_id, id, run_at, event_id, subscription_id, attempts, lease_token, leased_at,
                           lease_expires_at)
SELECT org_id, id, run_at, event_id, subscription_id, attempts, lease_token, leased_at, lease_expires_at
  FROM webhook_deliveries
 WHERE state = 'pending';

DROP INDEX webhook_deliveries_queue_idx;
DROP INDEX webhook_deliveries_subscription_idx;
ALTER TABLE webhook_deliveries DROP COLUMN lease_token, DROP COLUMN leased_at, DROP COLUMN lease_expires_at;

-- Queue rows go with their deliveries (an organization's erasure, retention's cascade from
-- events), by the statement-level trigger that already removes their attempts (…006: no
-- per-row foreign-key checks on the scheduler's path).
CREATE OR REPLACE FUNCTION webhook_attempts_follow_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_attempts a USING gone WHERE a.delivery_id = gone.id;
    DELETE FROM webhook_queue q USING gone WHERE q.org_id = gone.org_id AND q.id = gone.id;
    RETURN NULL;
END
$$;

-- As in …005, and each delivery enters the queue in the same statement. The envelope's
-- `created_at` is written by json_time (…041), the same text as before.
CREATE OR REPLACE FUNCTION webhook_emit(orgs BIGINT[], types TEXT[], datas JSONB[], targets BIGINT[] DEFAULT NULL)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    created INTEGER;
BEGIN
    IF coalesce(cardinality(orgs), 0) = 0 THEN
        RETURN 0;
    END IF;
    WITH e AS (
        SELECT * FROM unnest(orgs, types, datas, COALESCE(targets, array_fill(NULL::BIGINT, ARRAY[cardinality(orgs)])))
               WITH ORDINALITY AS i(org_id, type, data, target, n)
    ), m AS (
        SELECT e.n, s.id AS subscription_id
          FROM e JOIN webhook_subscriptions s ON s.org_id = e.org_id AND s.active
               AND (s.id = e.target OR (e.target IS NULL AND (s.event_type = e.type OR e.type = 'test')))
    ), ev AS MATERIALIZED (
        SELECT e.*, nextval(pg_get_serial_sequence('webhook_events', 'id')) AS id, now() AS at
          FROM e WHERE e.n IN (SELECT n FROM m)
    ), events AS (
        INSERT INTO webhook_events (id, org_id, type, body, created_at)
        SELECT id, org_id, type,
               jsonb_build_object('id', id, 'type', type, 'created_at', json_time(at), 'data', data)::text,
               at
          FROM ev
    ), deliveries AS (
        INSERT INTO webhook_deliveries (org_id, event_id, subscription_id, event_type, created_at, run_at)
        SELECT ev.org_id, ev.id, m.subscription_id, ev.type, ev.at, ev.at FROM ev JOIN m USING (n)
        RETURNING org_id, id, run_at, event_id, subscription_id
    ), queued AS (
        INSERT INTO webhook_queue (org_id, id, run_at, event_id, subscription_id)
        SELECT org_id, id, run_at, event_id, subscription_id FROM deliveries
        RETURNING 1
    )
    SELECT count(*) INTO created FROM queued;
    IF created > 0 THEN
        PERFORM pg_notify('tns_webhooks', '');
    END IF;
    RETURN created;
END
$$;
