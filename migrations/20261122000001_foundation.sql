-- Platform foundation: plans, organizations, users, subscriptions, API keys, monthly usage.
--
-- Tenancy rule: every tenant-owned row carries `org_id`, and every query the API runs on
-- such a table filters on it. Another tenant's row is indistinguishable from a missing one.

-- Plans are product data, not tenant data. `monthly_quota` NULL means unlimited.
-- `overage_unit_try` NULL means a hard limit (429 beyond the quota); a price per extra
-- call makes the quota soft (calls beyond it are served and billed).
CREATE TABLE plans (
    code             TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    monthly_quota    INTEGER CHECK (monthly_quota IS NULL OR monthly_quota >= 0),
    price_try        NUMERIC(12, 2) NOT NULL CHECK (price_try >= 0),
    billing_period   TEXT NOT NULL CHECK (billing_period IN ('monthly', 'yearly')),
    overage_unit_try NUMERIC(12, 4) CHECK (overage_unit_try IS NULL OR overage_unit_try >= 0),
    sort_order       INTEGER NOT NULL DEFAULT 0
);

-- The plans of the API contract: the yearly Y-plans, plus the monthly `starter` and `growth` plans of the plan list.
INSERT INTO plans (code, name, monthly_quota, price_try, billing_period, overage_unit_try, sort_order) VALUES
    ('starter', 'Starter',           1000,     99.00, 'monthly', NULL,  10),
    ('growth',  'Growth',           10000,    499.00, 'monthly', 0.05,  20),
    ('Y-10',    'Yearly 10',         1000,  14000.00, 'yearly',  NULL,  30),
    ('Y-25',    'Yearly 25',         2500,  28000.00, 'yearly',  NULL,  40),
    ('Y-50',    'Yearly 50',         5000,  40000.00, 'yearly',  NULL,  50),
    ('Y-100',   'Yearly 100',       10000,  56000.00, 'yearly',  NULL,  60),
    ('Y-999',   'Yearly Unlimited',  NULL, 100000.00, 'yearly',  NULL,  70);

-- A tenant. New organizations start on trial; operators move them on (a later issue).
CREATE TABLE organizations (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL,
    tax_number  TEXT NOT NULL CHECK (tax_number ~ '^[0-9]{10}$'),
    status      TEXT NOT NULL DEFAULT 'trial' CHECK (status IN ('trial', 'active', 'suspended')),
    -- U-ETDS web-service user name; set with the real adapter's credentials (later issue).
    ws_username TEXT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Portal users. E-mail addresses are unique across the platform, compared case-insensitively,
-- because login is by e-mail alone.
CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    org_id        BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email         TEXT NOT NULL,
    full_name     TEXT NOT NULL,
    -- PHC string (argon2id); the password itself is never stored.
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL DEFAULT 'owner' CHECK (role IN ('owner')),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_org_id_idx ON users (org_id);

-- One current subscription per organization.
CREATE TABLE subscriptions (
    org_id     BIGINT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    plan_code  TEXT NOT NULL REFERENCES plans (code),
    status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active')),
    started_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- API keys. Only a SHA-256 hash of the key is stored: the key is high-entropy random data,
-- so a fast hash is enough and lets every request look its key up by an index probe.
-- `prefix` is the short display part shown in lists so people can tell keys apart.
-- Revocation keeps the row (audit, and tokens minted from it must keep failing).
CREATE TABLE api_keys (
    id         BIGSERIAL PRIMARY KEY,
    org_id     BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by BIGINT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    key_hash   BYTEA NOT NULL UNIQUE,
    scopes     TEXT[] NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ
);
CREATE INDEX api_keys_org_active_idx ON api_keys (org_id, id) WHERE revoked_at IS NULL;

-- Monthly usage per route template, persisted from the Redis counters. Redis is the live
-- counter; this table is its durable copy (the flusher writes GREATEST(old, new), so many
-- API pods may flush the same month in any order) and the seed when Redis lost a month.
-- The monthly total is the sum of `total_calls` over a month's rows.
CREATE TABLE usage_monthly (
    org_id      BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    month       DATE NOT NULL CHECK (extract(day FROM month) = 1),
    endpoint    TEXT NOT NULL,
    total_calls BIGINT NOT NULL DEFAULT 0 CHECK (total_calls >= 0),
    error_calls BIGINT NOT NULL DEFAULT 0 CHECK (error_calls >= 0),
    PRIMARY KEY (org_id, month, endpoint)
);
