-- An Idempotency-Key belongs to the credential that used it (an API key with its tokens:
-- `key:<id>`; a portal user: `user:<id>`), not to the whole organization: another credential's
-- same key is a request of its own, judged by its own scope, never answered from the first.
ALTER TABLE idempotency_keys ADD COLUMN credential TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey,
    ADD PRIMARY KEY (org_id, credential, key);
ALTER TABLE idempotency_keys ALTER COLUMN credential DROP DEFAULT;
