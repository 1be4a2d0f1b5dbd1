-- Retention: the jobs role drops webhook events older than the retention period once every
-- delivery of theirs is final; their deliveries go with them (ON DELETE CASCADE) and the
-- deliveries' attempts with those (the trigger of the queue-tuning migration).
--
-- The cascade and the "every delivery final" test look deliveries up by event: without this
-- index each deleted event would scan the deliveries table.
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id, org_id);
