-- Operator tokens: the credentials of the operators' admin HTTP API (`/admin/v1`, on a listener
-- of its own), for platform staff, never tenants. `tns admin token create` makes one and shows
-- it once; only its SHA-256 is kept, so a copy of this table opens nothing. Each token names
-- the operator it belongs to (the audit log says `operator:<name>` for what it did) and holds
-- the scopes it was given:
--   read           list and search organizations, read the audit log (and invoices)
--   write          change an organization's status or plan, re-queue its failed submissions
--   personal-data  see a submission as it was sent, identity numbers unmasked
-- No scope implies another. A revoked token is kept (the audit log names its operator) and
-- refused at once: nothing caches a lookup.
CREATE TABLE operator_tokens (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL CHECK (name <> ''),
    token_hash   BYTEA NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    scopes       TEXT[] NOT NULL
        CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'write', 'personal-data']::text[]),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at   TIMESTAMPTZ,
    -- When the token last authenticated a request (never after its revocation).
    last_used_at TIMESTAMPTZ
);
