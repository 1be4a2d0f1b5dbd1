-- Closing an organization (KVKK erasure). The owner closes it; for a grace period
-- (`TNS_ORGANIZATION_GRACE_DAYS`) nothing is deleted and the owner may reopen it: it reads and
-- exports its data, but creates, changes and submits nothing, and is billed for nothing from
-- the day it closed (its current term ends that day, the unused days charged in advance are
-- credited). Once the grace period is over and its last invoice (the credit, and the overage of
-- the month it closed in) is issued, the jobs role erases it: every row it owns goes, except
-- what law and billing keep — invoices with their lines, a credit balance still owed to it, and
-- the audit log. The organization's own row stays as the invoices' and the log's anchor, with
-- its name and U-ETDS user erased and its tax number freed for a new registration.

ALTER TABLE organizations
    DROP CONSTRAINT organizations_status_check,
    ADD CONSTRAINT organizations_status_check CHECK (status IN ('trial', 'active', 'suspended', 'closed')),
    -- When the owner closed it, and when it may be erased (closing time + the grace period).
    ADD COLUMN closed_at TIMESTAMPTZ,
    ADD COLUMN erase_after TIMESTAMPTZ,
    -- The standing reopening restores (an operator's suspension, say, is not lifted by closing
    -- and reopening).
    ADD COLUMN closed_from TEXT CHECK (closed_from IN ('trial', 'active', 'suspended')),
    ADD COLUMN closed_from_reason TEXT,
    -- Whether its plan was billed when it closed: a suspended organization that was is billed
    -- again once reopened (closing and reopening must not stop what a suspension does not).
    ADD COLUMN closed_billed BOOLEAN,
    -- When the jobs role erased it; the row is a tombstone from then on.
    ADD COLUMN erased_at TIMESTAMPTZ;

-- A closed organization knows when it closed, when it goes and what reopening restores; the
-- others carry none of it; only a closed one is ever erased. (The statement above already
-- holds the table, and every row is open: checked as it is added.)
ALTER TABLE organizations ADD CONSTRAINT organizations_closure_check CHECK (
    (status = 'closed') = (closed_at IS NOT NULL)
    AND (closed_at IS NULL) = (erase_after IS NULL)
    AND (closed_at IS NULL) = (closed_from IS NULL)
    AND (closed_at IS NULL) = (closed_billed IS NULL)
    AND (erased_at IS NULL OR status = 'closed')
);

-- The erasure job's scan: closed organizations not erased yet, by when they may be.
CREATE INDEX organizations_erasure_idx ON organizations (erase_after) WHERE status = 'closed' AND erased_at IS NULL;
