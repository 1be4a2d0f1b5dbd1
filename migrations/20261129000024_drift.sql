-- Drift checks. The jobs role asks the downstream what it holds now of recently delivered
-- records (a trip cancelled or edited on e-Devlet, outside TNS) and keeps what differs from
-- what TNS delivered on the record's latest submission:
--
-- `drift`            `{"checked_at", "differences": [{"field", "expected", "found"}]}` from the
--                    last check that found a difference; NULL while none did.
-- `drift_checked_at` when the submission was last checked: the job takes the longest unchecked
--                    first and leaves each alone for its interval.
ALTER TABLE submissions ADD COLUMN drift JSONB, ADD COLUMN drift_checked_at TIMESTAMPTZ;

-- `submission.drifted` tells an organization when a check finds a difference it had not found.
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_event_type_check,
    ADD CONSTRAINT webhook_subscriptions_event_type_check CHECK (event_type IN (
        'journey.created', 'submission.delivered', 'submission.failed', 'submission.unknown',
        'submission.drifted'));

-- The checks' candidates: records the downstream holds, departing from a given day on (old
-- trips are never looked at again, so the scan stays as small as the recent ones).
CREATE INDEX journeys_drift_idx ON journeys (departure_date)
    WHERE status IN ('delivered', 'cancelled') AND downstream_reference IS NOT NULL;
CREATE INDEX cargo_drift_idx ON cargo (loading_date)
    WHERE status IN ('delivered', 'cancelled') AND downstream_reference IS NOT NULL;
