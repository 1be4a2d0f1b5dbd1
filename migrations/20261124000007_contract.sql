-- The API contract, exactly: journey kinds as an input, warnings on submissions, invoices.

-- A journey is a scheduled trip (`tarifeli`, the spec's default, with its `tarifeli_context`)
-- or a non-scheduled one (`tarifesiz`, U-ETDS's arızi service, without it). Until now the kind
-- followed from the context's presence; existing rows keep the kind they had. Adding the column
-- with a default writes no row; only the context-less journeys are touched.
ALTER TABLE journeys ADD COLUMN trip_kind TEXT NOT NULL DEFAULT 'tarifeli'
    CHECK (trip_kind IN ('tarifeli', 'tarifesiz'));
UPDATE journeys SET trip_kind = 'tarifesiz' WHERE tarifeli_context IS NULL;
ALTER TABLE journeys ALTER COLUMN trip_kind DROP DEFAULT,
    ADD CONSTRAINT journeys_trip_kind_context_check CHECK ((trip_kind = 'tarifeli') = (tarifeli_context IS NOT NULL));

-- What the downstream will want but the record lacked when it was submitted (no driver, no
-- passengers, …): `[{"code", "detail"}]`, frozen with the snapshot. Never a refusal: U-ETDS takes
-- a trip first and its crew and passengers in later calls.
ALTER TABLE submissions ADD COLUMN warnings JSONB NOT NULL DEFAULT '[]';

-- Invoices of an organization, one per billing period. Issuing them (base price, overage,
-- prorating, tax lines) is the billing jobs' work; this is the record the API lists.
CREATE TABLE invoices (
    id           BIGSERIAL PRIMARY KEY,
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    period_start DATE NOT NULL,
    period_end   DATE NOT NULL,
    total_amount NUMERIC(14, 2) NOT NULL CHECK (total_amount >= 0),
    status       TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'void')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (period_end >= period_start)
);
CREATE INDEX invoices_org_idx ON invoices (org_id, id);
