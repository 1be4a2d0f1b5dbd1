-- An organization's standing. New organizations are on trial until `trial_ends_at` (set at
-- registration from the configured trial length); the jobs role suspends a trial that ends
-- without a paid plan; operators suspend and reactivate with a reason. A suspended
-- organization keeps its data and its queued submissions: they wait, and go out once it is
-- reactivated (the scheduler's claim skips suspended organizations).
ALTER TABLE organizations
    ADD COLUMN trial_ends_at     TIMESTAMPTZ,
    ADD COLUMN status_reason     TEXT,
    ADD COLUMN status_changed_at TIMESTAMPTZ NOT NULL DEFAULT now();

-- Organizations already on trial get the default trial length from their registration.
UPDATE organizations SET trial_ends_at = created_at + interval '14 days' WHERE status = 'trial';
-- Registration sets the configured length; rows inserted otherwise get the default one.
ALTER TABLE organizations
    ALTER COLUMN trial_ends_at SET DEFAULT now() + interval '14 days',
    ADD CONSTRAINT organizations_trial_has_an_end CHECK (status <> 'trial' OR trial_ends_at IS NOT NULL);
-- The trial-expiry job's scan.
CREATE INDEX organizations_trial_idx ON organizations (trial_ends_at) WHERE status = 'trial';

-- Every operator action (and every standing change the jobs make): who, what, when, on which
-- organization, the state before and after. Rows are only ever inserted.
CREATE TABLE audit_log (
    id      BIGSERIAL PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- `operator:<name>` for a person, `jobs` for the periodic jobs.
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    -- Kept when the organization is deleted: the log outlives what it describes.
    org_id  BIGINT REFERENCES organizations (id) ON DELETE SET NULL,
    before  JSONB,
    after   JSONB,
    reason  TEXT
);
CREATE INDEX audit_log_org_idx ON audit_log (org_id, id);
