-- Members: an organization's people, each with a role, invited by its owner or an admin; and
-- passwords they change or reset.

-- Roles, each a set of the API's scopes (README, "Team members"): the owner and admins may do
-- everything (admins manage dispatchers and viewers; the owner manages admins too),
-- dispatchers keep journeys and cargo, viewers read submissions, webhooks and billing. One
-- owner per organization: the user who registered it.
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users
    ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'dispatcher', 'viewer')),
    -- A member removed is kept (API keys they made and tickets they opened name them; history
    -- says who did what) but can no longer sign in, and their address may be invited again.
    ADD COLUMN removed_at TIMESTAMPTZ,
    -- Sessions opened before this are refused: changing or resetting a password, or removal,
    -- ends them all. NULL: none was ever ended.
    ADD COLUMN sessions_valid_after TIMESTAMPTZ,
    -- Who invited them (NULL for the owner, who registered).
    ADD COLUMN invited_by BIGINT REFERENCES users (id),
    ADD CONSTRAINT users_owner_stays CHECK (role <> 'owner' OR removed_at IS NULL);
CREATE UNIQUE INDEX users_one_owner_key ON users (org_id) WHERE role = 'owner';
-- One account per address, among the people who can sign in.
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE removed_at IS NULL;

-- An invitation is a link shown once (and e-mailed where SMTP is configured); only its
-- SHA-256 is kept. Accepting it makes a member with the role given, once, before it expires.
CREATE TABLE invitations (
    id          BIGSERIAL PRIMARY KEY,
    org_id      BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email       TEXT NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    role        TEXT NOT NULL CHECK (role IN ('admin', 'dispatcher', 'viewer')),
    token_hash  BYTEA NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    invited_by  BIGINT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at  TIMESTAMPTZ NOT NULL,
    accepted_at TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ,
    FOREIGN KEY (invited_by, org_id) REFERENCES users (id, org_id)
);
-- One open invitation per address and organization (inviting again replaces it).
CREATE UNIQUE INDEX invitations_open_key ON invitations (org_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- A password reset is a link e-mailed to the member, valid for an hour and once; only its
-- SHA-256 is kept.
CREATE TABLE password_resets (
    token_hash BYTEA PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);
