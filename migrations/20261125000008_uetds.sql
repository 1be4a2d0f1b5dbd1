-- The real U-ETDS adapter: each organization's own credentials, notifications that take
-- several downstream calls and resume where they stopped, cancellations.

-- An organization's downstream: the adapter, and for U-ETDS the environment and the firm's
-- web-service credentials (its UNET number and password). The password is sealed with the
-- operator's data key (ChaCha20-Poly1305, bound to the organization and to this purpose) and
-- never leaves the database in the clear except to the processes that call U-ETDS. Either all
-- three are set (adapter `uetds`) or none (any other adapter): nothing half-set.
ALTER TABLE downstream_settings
    ADD COLUMN environment TEXT CHECK (environment IN ('test', 'production')),
    ADD COLUMN ws_username TEXT,
    ADD COLUMN ws_password BYTEA,
    ADD CONSTRAINT downstream_settings_credentials_check CHECK (
        (environment IS NULL) = (ws_username IS NULL) AND (ws_username IS NULL) = (ws_password IS NULL)
    );

-- The user name lives with the password now; `GET /portal/me` reads it from here. (The column
-- on organizations was never written.)
ALTER TABLE organizations DROP COLUMN ws_username;

-- Submissions gain an operation: `cancel` withdraws a delivered journey or shipment.
ALTER TABLE submissions DROP CONSTRAINT submissions_operation_check,
    ADD CONSTRAINT submissions_operation_check CHECK (operation IN ('journey', 'amendment', 'cargo', 'cancel'));

-- What the calls made so far for this submission achieved, as the adapter described it (for
-- U-ETDS: the trip reference, the passenger group, the crew and the passengers accepted). Each
-- step is recorded, under the claim's lease, before the next call starts, so a retry continues
-- from the first missing step instead of notifying anything twice.
ALTER TABLE submissions ADD COLUMN progress JSONB NOT NULL DEFAULT 'null';

-- A submission of a record whose latest submission failed after the downstream took part of it
-- starts from that one's progress, and reconciles first under the references of the earlier
-- submissions it continues (`tns-<id>`, oldest first): what the downstream holds under them is
-- this notification's too.
ALTER TABLE submissions ADD COLUMN earlier_references TEXT[] NOT NULL DEFAULT '{}';

-- What the adapter keeps of a delivered notification to change or cancel it later (the
-- receipt's `state`; for U-ETDS's non-scheduled trips, the passenger group).
ALTER TABLE submissions ADD COLUMN downstream_state JSONB NOT NULL DEFAULT 'null';

-- A claim gives a submission back untried when its lease would end before the next call could
-- finish and be recorded; after some calls, that is recorded as an attempt `given_back`.
ALTER TABLE submission_attempts DROP CONSTRAINT submission_attempts_outcome_check,
    ADD CONSTRAINT submission_attempts_outcome_check CHECK (outcome IN (
        'delivered', 'partial', 'found', 'transient', 'timeout', 'permanent', 'configuration', 'abandoned',
        'given_back'));

-- A journey or shipment withdrawn downstream is `cancelled`: it takes no more edits or submits.
ALTER TABLE journeys DROP CONSTRAINT journeys_status_check,
    ADD CONSTRAINT journeys_status_check CHECK (status IN ('draft', 'submitted', 'delivered', 'failed', 'cancelled'));
ALTER TABLE cargo DROP CONSTRAINT cargo_status_check,
    ADD CONSTRAINT cargo_status_check CHECK (status IN ('draft', 'submitted', 'delivered', 'failed', 'cancelled'));
