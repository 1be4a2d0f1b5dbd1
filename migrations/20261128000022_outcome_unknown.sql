-- A submission whose outcome downstream cannot be established is `unknown`: an earlier call may
-- have reached the downstream (its answer lost), and looking it up failed or could not finish.
-- Such a submission is never sent again blindly: it stays in the queue (claimed again with
-- back-off, each attempt only looking it up) until the look-up answers, or an operator resolves
-- it (`tns admin resolve`, `POST /admin/v1/organizations/{id}/submissions/{sid}/resolve`).
-- A duplicate trip at the Ministry is worse than a late one.
ALTER TABLE submissions DROP CONSTRAINT submissions_state_check,
    ADD CONSTRAINT submissions_state_check CHECK (state IN ('pending', 'unknown', 'delivered', 'failed'));

-- The queue and the one-in-flight-per-record rule cover both unfinished states (the claim's
-- predicate names the same list, so the planner keeps using the partial index).
DROP INDEX submissions_queue_idx;
CREATE INDEX submissions_queue_idx ON submissions (org_id, run_at) WHERE state IN ('pending', 'unknown');
DROP INDEX submissions_one_pending_key;
CREATE UNIQUE INDEX submissions_one_pending_key ON submissions (org_id, target_type, target_id)
    WHERE state IN ('pending', 'unknown');

-- `submission.unknown` tells an organization when one of its submissions starts waiting so.
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_event_type_check,
    ADD CONSTRAINT webhook_subscriptions_event_type_check CHECK (event_type IN (
        'journey.created', 'submission.delivered', 'submission.failed', 'submission.unknown'));
