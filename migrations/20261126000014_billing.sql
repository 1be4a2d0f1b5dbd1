-- Billing. TNS bills in arrears: the days an organization spends on a plan are a term; a term
-- is cut into periods (calendar months on a monthly plan, years from the term's first day on
-- a yearly plan), and each period is invoiced once it is over. A plan change ends the current
-- term that day and starts the next, so both plans are charged by day. Trials are not billed:
-- a term starts when the trial ends (a plan chosen, or an operator's activation).

-- The days spent on each plan. `ends_on` is the first day on the next plan (NULL for the
-- current term); `billed_until` is the first day not invoiced yet, moved forward in the
-- transaction that writes each invoice.
CREATE TABLE plan_terms (
    id           BIGSERIAL PRIMARY KEY,
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    plan_code    TEXT NOT NULL REFERENCES plans (code),
    starts_on    DATE NOT NULL,
    ends_on      DATE,
    billed_until DATE NOT NULL,
    CHECK (ends_on IS NULL OR ends_on > starts_on),
    CHECK (billed_until >= starts_on AND (ends_on IS NULL OR billed_until <= ends_on)),
    UNIQUE (org_id, starts_on)
);
-- At most one current term per organization.
CREATE UNIQUE INDEX plan_terms_current_key ON plan_terms (org_id) WHERE ends_on IS NULL;
-- The invoicing job's scan: terms with days not yet invoiced.
CREATE INDEX plan_terms_unbilled_idx ON plan_terms (billed_until) WHERE ends_on IS NULL OR billed_until < ends_on;

-- Active organizations are billed from the day billing is deployed: nothing before it was ever
-- billable (and the day a trial ended is not recorded). A suspended one is not: it may never
-- have left its trial; its term starts when it is reactivated.
INSERT INTO plan_terms (org_id, plan_code, starts_on, billed_until)
SELECT s.org_id, s.plan_code, (now() AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date
  FROM subscriptions s JOIN organizations o ON o.id = s.org_id
 WHERE o.status = 'active';

-- Calls served beyond a soft quota, per organization and month: what overage bills. Counted
-- by the same Redis script that admits each call, persisted with the other usage counters.
CREATE TABLE usage_overage (
    org_id BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    month  DATE NOT NULL CHECK (extract(day FROM month) = 1),
    calls  BIGINT NOT NULL CHECK (calls >= 0),
    PRIMARY KEY (org_id, month)
);

-- An invoice is its lines' sum plus KDV (its own line), due `due_on`; one per organization
-- and period start, whichever job runner writes it first (the other's insert does nothing).
-- The organization's name and tax number are kept as they were when it was issued.
-- (Rows written before this carry their total as their subtotal, no tax, due 14 days after
-- they were written.)
ALTER TABLE invoices
    ADD COLUMN billed_name       TEXT NOT NULL DEFAULT '',
    ADD COLUMN billed_tax_number TEXT NOT NULL DEFAULT '',
    ADD COLUMN subtotal          NUMERIC(14, 2) NOT NULL DEFAULT 0 CHECK (subtotal >= 0),
    ADD COLUMN tax_rate          NUMERIC(5, 2) NOT NULL DEFAULT 0 CHECK (tax_rate BETWEEN 0 AND 100),
    ADD COLUMN tax_amount        NUMERIC(14, 2) NOT NULL DEFAULT 0 CHECK (tax_amount >= 0),
    ADD COLUMN due_on            DATE NOT NULL DEFAULT ((now() AT TIME ZONE 'UTC')::date + 14),
    ADD COLUMN status_changed_at TIMESTAMPTZ NOT NULL DEFAULT now();
UPDATE invoices SET subtotal = total_amount, due_on = (created_at AT TIME ZONE 'UTC')::date + 14;
ALTER TABLE invoices
    ADD CONSTRAINT invoices_total_is_its_parts CHECK (total_amount = subtotal + tax_amount),
    ADD CONSTRAINT invoices_org_id_period_start_key UNIQUE (org_id, period_start);
-- The dunning job's scan: open invoices by due date.
CREATE INDEX invoices_open_due_idx ON invoices (due_on) WHERE status = 'open';

-- What an invoice charges, in order. Plan lines: `quantity` days of a full period of
-- `period_days` days priced `unit_price`. Overage lines: `quantity` calls of `usage_month` at
-- `unit_price` each. The tax line: `unit_price` is the taxed sum.
CREATE TABLE invoice_lines (
    invoice_id  BIGINT NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    position    SMALLINT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('plan', 'overage', 'tax')),
    description TEXT NOT NULL,
    quantity    BIGINT NOT NULL CHECK (quantity >= 0),
    unit_price  NUMERIC(14, 4) NOT NULL,
    period_days INTEGER CHECK (period_days > 0),
    usage_month DATE CHECK (extract(day FROM usage_month) = 1),
    amount      NUMERIC(14, 2) NOT NULL,
    PRIMARY KEY (invoice_id, position),
    CHECK ((kind = 'plan') = (period_days IS NOT NULL)),
    CHECK ((kind = 'overage') = (usage_month IS NOT NULL))
);
