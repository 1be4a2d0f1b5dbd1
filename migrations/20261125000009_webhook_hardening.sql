-- Webhook hardening: secret rotation, and claims fair across organizations. Nothing changes
-- for rows already there.

-- 1. Secret rotation.
--
-- `POST /portal/webhooks/{id}/rotate-secret` moves the current secret here and seals a new one
-- in `secret_sealed`. Deliveries are signed with both until `previous_secret_expires_at` (24 h
-- later), so receivers can switch to the new secret without refusing a delivery meanwhile.
-- Sealed like the current one (same key, bound to the organization); a second rotation within
-- the 24 h replaces it, so at most two secrets sign.
ALTER TABLE webhook_subscriptions
    ADD COLUMN previous_secret_sealed     BYTEA,
    ADD COLUMN previous_secret_expires_at TIMESTAMPTZ,
    ADD CONSTRAINT webhook_subscriptions_previous_secret_check
        CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL));

-- 2. Claims take turns between organizations.
--
-- A claim used to take the oldest due deliveries of all tenants, so one tenant's backlog (or
-- its endpoints hanging until the timeout) delayed everyone else's deliveries behind it. Now a
-- claim finds the organizations with pending deliveries by a loose scan of this index (one
-- probe each) and takes each one's oldest due rows, in turns; it resumes each organization
-- after the last row it took of it (the cursor of …_webhook_queue_tuning.sql, kept per
-- organization). `id` still makes the key unique, so cursors are exact.
DROP INDEX webhook_deliveries_queue_idx;
CREATE INDEX webhook_deliveries_queue_idx ON webhook_deliveries (org_id, run_at, id) WHERE state = 'pending';
