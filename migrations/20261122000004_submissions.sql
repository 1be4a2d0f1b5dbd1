-- Submissions: what was sent downstream and how it went, which is also the queue the
-- scheduler works (ARCHITECTURE.md, "A journey's way").
--
-- The API inserts a submission with a frozen snapshot of what will be sent and NOTIFYs
-- `tns_submissions`; schedulers claim due rows with FOR UPDATE SKIP LOCKED, call the adapter,
-- and complete them in batches, NOTIFYing `tns_submissions_done` with the finished ids (the
-- API's `Prefer: wait` listens to it).

-- Which downstream an organization submits to. No row means the default, the sandbox.
-- The real adapter's credentials arrive with the U-ETDS adapter (encrypted at rest).
CREATE TABLE downstream_settings (
    org_id     BIGINT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    adapter    TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The downstream's reference of a delivered journey or shipment: set by its first delivered
-- submission and kept, so later changes to a journey go out as an amendment of it.
ALTER TABLE journeys ADD COLUMN downstream_reference TEXT;
ALTER TABLE cargo ADD COLUMN downstream_reference TEXT;

-- One notification sent (or to be sent) downstream.
--
-- Queue columns: a `pending` row is due when `run_at` has passed. Claiming sets `run_at` to the
-- end of the lease and `lease_token` to the claim's token; completing clears the token. A row
-- due while it still has a token was claimed by a scheduler that died or stopped: its outcome
-- is unknown, so the next attempt looks the reference up downstream before sending anything.
-- `attempts` counts claims; any claim after the first starts with that lookup.
CREATE TABLE submissions (
    id                   BIGSERIAL PRIMARY KEY,
    org_id               BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    target_type          TEXT NOT NULL CHECK (target_type IN ('journey', 'cargo')),
    target_id            BIGINT NOT NULL,
    -- `journey` (a full notification), `amendment` (passengers added, changed, removed since
    -- the last delivery of the journey) or `cargo`.
    operation            TEXT NOT NULL CHECK (operation IN ('journey', 'amendment', 'cargo')),
    adapter              TEXT NOT NULL,
    -- What is sent, in the adapter contract's JSON (tns_adapter::Journey, the amendment's
    -- added/changed/removed, or tns_adapter::Cargo): frozen at submit, auditable later.
    snapshot             JSONB NOT NULL,
    state                TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    downstream_reference TEXT,
    error_message        TEXT,
    -- Per-passenger outcomes of the delivering attempt (tns_adapter::PassengerResult[]).
    passenger_results    JSONB,
    attempts             INTEGER NOT NULL DEFAULT 0,
    run_at               TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_token          BIGINT,
    leased_at            TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at          TIMESTAMPTZ
);
-- The queue: only pending rows, by organization (claims take a few rows of every
-- organization with due work, so one tenant's backlog cannot starve another).
CREATE INDEX submissions_queue_idx ON submissions (org_id, run_at) WHERE state = 'pending';
-- Submitting a record that already has a pending submission returns that one.
CREATE UNIQUE INDEX submissions_one_pending_key ON submissions (org_id, target_type, target_id)
    WHERE state = 'pending';
CREATE INDEX submissions_org_idx ON submissions (org_id, id) INCLUDE (state, target_type, target_id);
CREATE INDEX submissions_target_idx ON submissions (org_id, target_type, target_id, id);

-- Every attempt of a submission, finished or given up on.
CREATE TABLE submission_attempts (
    id                   BIGSERIAL PRIMARY KEY,
    submission_id        BIGINT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
    org_id               BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    started_at           TIMESTAMPTZ NOT NULL,
    finished_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- delivered, partial (some passengers refused), found (an earlier attempt had delivered
    -- it; learned by lookup), transient, timeout, permanent, configuration, abandoned (the
    -- scheduler holding it stopped or died; outcome unknown until looked up).
    outcome              TEXT NOT NULL CHECK (outcome IN ('delivered', 'partial', 'found', 'transient', 'timeout',
                                                          'permanent', 'configuration', 'abandoned')),
    error                TEXT,
    downstream_reference TEXT
);
CREATE INDEX submission_attempts_submission_idx ON submission_attempts (submission_id, id);
