-- Webhooks (README.md, "Webhooks"): subscriptions, the outbox of events, one delivery per event
-- and subscription (which is also the queue the scheduler works), and every delivery attempt.
--
-- Events are written by `webhook_emit` inside the statement or transaction of the change that
-- causes them (a journey created, a submission finished, a test), so there is no event without
-- its change and no change without its event. Schedulers claim due deliveries with
-- FOR UPDATE SKIP LOCKED and a lease token, POST them, and record each attempt.

-- Where an organization wants to hear about one type of event.
CREATE TABLE webhook_subscriptions (
    id                 BIGSERIAL PRIMARY KEY,
    org_id             BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    event_type         TEXT NOT NULL CHECK (event_type IN ('journey.created', 'submission.delivered',
                                                          'submission.failed')),
    endpoint_url       TEXT NOT NULL CHECK (length(endpoint_url) <= 2048),
    -- The signing secret, sealed (ChaCha20-Poly1305 under TNS_DATA_KEY, bound to the
    -- organization): the scheduler needs it back to sign, so it cannot be hashed.
    secret_sealed      BYTEA NOT NULL,
    active             BOOLEAN NOT NULL DEFAULT true,
    -- Why it was deactivated: `by request`, or `failing` (no successful delivery for the
    -- configured period, 5 days by default).
    inactive_reason    TEXT,
    -- The first failed attempt since the last success; cleared by a success or a reactivation.
    failing_since      TIMESTAMPTZ,
    last_success_at    TIMESTAMPTZ,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Deleted subscriptions stay, inactive, so their delivery records still name them.
    deleted_at         TIMESTAMPTZ,
    CHECK (deleted_at IS NULL OR NOT active)
);
-- Fan-out: the active subscriptions of an organization for an event type.
CREATE INDEX webhook_subscriptions_fanout_idx ON webhook_subscriptions (org_id, event_type) WHERE active;
CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (org_id, id) WHERE deleted_at IS NULL;

-- The outbox: one row per event that had at least one subscriber. `body` is the exact text
-- that is POSTed and signed, fixed once so every retry carries the same bytes.
CREATE TABLE webhook_events (
    id         BIGSERIAL PRIMARY KEY,
    org_id     BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- One event on its way to one subscription (the "delivery record" of the API).
--
-- Queue columns: a `pending` row is due when `run_at` has passed and it holds no live lease.
-- Claiming sets `lease_token`, `leased_at` and `lease_expires_at` but leaves `run_at` alone, so
-- the claim touches no indexed column and PostgreSQL can update the row in place (HOT; hence
-- the fill factor) instead of adding queue-index entries that every later claim would step
-- over. Recording an attempt clears the token (only with the same token, so a scheduler whose
-- lease ran out cannot record over the one that took over) and moves `run_at` to the retry.
-- A due row whose lease expired was claimed by a scheduler that stopped: its attempt is
-- recorded as `abandoned` and the delivery is sent again (receivers dedupe on X-Webhook-Id).
CREATE TABLE webhook_deliveries (
    id                   BIGSERIAL PRIMARY KEY,
    org_id               BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    event_id             BIGINT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    subscription_id      BIGINT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_type           TEXT NOT NULL,
    state                TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts             INTEGER NOT NULL DEFAULT 0,
    last_response_status INTEGER,
    last_error           TEXT,
    run_at               TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_token          BIGINT,
    leased_at            TIMESTAMPTZ,
    lease_expires_at     TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at          TIMESTAMPTZ
) WITH (fillfactor = 70);
CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (run_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_org_idx ON webhook_deliveries (org_id, id);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id) WHERE state = 'pending';

-- Every attempt of a delivery.
CREATE TABLE webhook_attempts (
    id              BIGSERIAL PRIMARY KEY,
    delivery_id     BIGINT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    org_id          BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    started_at      TIMESTAMPTZ NOT NULL,
    duration_ms     INTEGER,
    -- delivered (2xx), rejected (another status), timeout, unreachable (connection, TLS,
    -- DNS), refused (the address is not allowed: SSRF guard), abandoned (the scheduler
    -- sending it stopped), skipped (the subscription was deactivated or deleted meanwhile).
    outcome         TEXT NOT NULL CHECK (outcome IN ('delivered', 'rejected', 'timeout', 'unreachable', 'refused',
                                                     'abandoned', 'skipped')),
    response_status INTEGER,
    error           TEXT
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);

-- Emit events: for each (organization, type, data, target subscription or NULL) that has at
-- least one active subscriber, one outbox row with its final body and one delivery per
-- subscriber, and a NOTIFY so a scheduler starts at once (sent at commit, so never for a
-- rolled-back change). A NULL target means every active subscription of that event type; a
-- `test` event without a target goes to every active subscription of the organization.
-- Returns the number of deliveries created. Called with arrays so a batch is one call.
CREATE FUNCTION webhook_emit(orgs BIGINT[], types TEXT[], datas JSONB[], targets BIGINT[] DEFAULT NULL)
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
               jsonb_build_object('id', id, 'type', type,
                                  'created_at', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                  'data', data)::text,
               at
          FROM ev
    ), deliveries AS (
        INSERT INTO webhook_deliveries (org_id, event_id, subscription_id, event_type, created_at, run_at)
        SELECT ev.org_id, ev.id, m.subscription_id, ev.type, ev.at, ev.at FROM ev JOIN m USING (n)
        RETURNING 1
    )
    SELECT count(*) INTO created FROM deliveries;
    IF created > 0 THEN
        PERFORM pg_notify('tns_webhooks', '');
    END IF;
    RETURN created;
END
$$;
