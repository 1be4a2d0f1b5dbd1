-- KVKK: an organization's owner may have everything TNS holds about the organization, as a
-- ZIP of JSON and CSV files. The request is answered at once (202) and the jobs role builds
-- the archive; it is kept 7 days from when it is ready, then dropped (the row stays, `expired`,
-- as the record that it was given). At most one is being built per organization at a time.
CREATE TABLE data_exports (
    id           BIGSERIAL PRIMARY KEY,
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- The member who asked (their session, or an API key they made).
    requested_by BIGINT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready', 'failed', 'expired')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    ready_at     TIMESTAMPTZ,
    expires_at   TIMESTAMPTZ,
    -- Held while the jobs role builds it, so two leaders never build one twice; a build that
    -- never finished (its process killed) is started again at most twice more.
    leased_until TIMESTAMPTZ,
    attempts     INT NOT NULL DEFAULT 0,
    archive      BYTEA,
    size_bytes   BIGINT CHECK (size_bytes >= 0),
    error        TEXT CHECK (length(error) <= 2000),
    CHECK ((state = 'ready') = (archive IS NOT NULL)),
    CHECK (state <> 'ready' OR (ready_at IS NOT NULL AND expires_at IS NOT NULL))
);
CREATE INDEX data_exports_org_idx ON data_exports (org_id, id);
CREATE UNIQUE INDEX data_exports_one_pending_key ON data_exports (org_id) WHERE state = 'pending';
CREATE INDEX data_exports_pending_idx ON data_exports (id) WHERE state = 'pending';
CREATE INDEX data_exports_ready_idx ON data_exports (expires_at) WHERE state = 'ready';
