-- Pre-flight checks with U-ETDS's own services before a submit (the vehicle's inspection and
-- authorisation, drivers' qualification, identities against names, travel permits).
--
-- An organization's policy: what a check that does not pass does (`off`: no checks, the
-- default; `warn`: a warning on the submission; `refuse`: the submit is a 422) and which checks
-- are made. No row means `off`.
CREATE TABLE preflight_policies (
    org_id     BIGINT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    mode       TEXT NOT NULL CHECK (mode IN ('off', 'warn', 'refuse')),
    checks     TEXT[] NOT NULL CHECK (checks <@ ARRAY['vehicle_inspection', 'authorisation', 'qualification',
                                                      'identity', 'travel_permit']),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The checks that passed, kept for the day they were asked (Türkiye's calendar day), so a
-- journey submitted again, or the next journey of the same bus and crew, asks nothing twice.
-- A check is keyed by an HMAC-SHA-256, under a key derived from the data key, of what it asked
-- and of whom (the adapter and environment): an identity number and a name are never kept here,
-- nor found again by trying every number. A check that failed, or could not be made, is asked
-- again next time (what failed may be put right the same day). Rows of past days are deleted
-- as new ones are written.
CREATE TABLE preflight_results (
    org_id     BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    day        DATE NOT NULL,
    subject    BYTEA NOT NULL CHECK (length(subject) = 32),
    detail     TEXT CHECK (length(detail) <= 1000),
    checked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, day, subject)
);
