-- Fixed fees in advance, credits on change, and a day billed at the dearest plan held in it.
--
-- Until now a period was invoiced once it was over, and a plan change on the day a term began
-- dropped that term, so a plan held only in the daytime was never billed. From here on:
--
-- * a period (calendar month, or year from the term's first day) is charged on its first day,
--   whole, or for the rest of it when a term begins inside it;
-- * a term cut short is credited for the days charged beyond its new end, at the rate charged;
-- * a dearer plan takes the day of a change, a cheaper one starts the next day (the one it
--   replaces keeps the day), so a term may end on the day it began: it held no day but was
--   charged, and is kept to be credited;
-- * overage is invoiced per calendar month once the month is over;
-- * what credits exceed is the organization's credit balance, which pays later invoices.
--
-- Existing terms were billed in arrears up to `billed_until`; the next invoicing run charges
-- each from there to the end of its current period, in advance (a yearly plan's current year
-- at once): the transition bills nothing twice and leaves nothing unbilled.

-- `billed_until` runs ahead of `ends_on` after a cut, until the credit is invoiced (once
-- `ends_on` has come). `charged_price` is the price the last period charged was charged at:
-- what its unused days are credited at, should the plan's price change meanwhile (NULL before
-- the first charge, and for terms billed in arrears before: credited at the plan's price).
ALTER TABLE plan_terms
    ADD COLUMN charged_price NUMERIC(14, 2),
    DROP CONSTRAINT plan_terms_check,
    DROP CONSTRAINT plan_terms_check1,
    DROP CONSTRAINT plan_terms_org_id_starts_on_key,
    ADD CONSTRAINT plan_terms_ends_after_start CHECK (ends_on IS NULL OR ends_on >= starts_on),
    ADD CONSTRAINT plan_terms_billed_from_start CHECK (billed_until >= starts_on);
-- Terms that held days never overlap one start; a zero-day term shares its day with the next.
CREATE UNIQUE INDEX plan_terms_org_start_key ON plan_terms (org_id, starts_on)
    WHERE ends_on IS NULL OR ends_on > starts_on;
-- The invoicing job's two scans: periods begun and not charged, and cuts not yet credited.
DROP INDEX plan_terms_unbilled_idx;
CREATE INDEX plan_terms_uncharged_idx ON plan_terms (billed_until) WHERE ends_on IS NULL OR billed_until < ends_on;
CREATE INDEX plan_terms_uncredited_idx ON plan_terms (ends_on) WHERE billed_until > ends_on;
-- `follow` reads the terms around today of one organization.
CREATE INDEX plan_terms_org_idx ON plan_terms (org_id, starts_on);

-- One invoice may now carry a month's overage, a change's credit and the next period's fee,
-- and two may begin on one day (a change in the morning, another in the evening): exactly
-- once rests on the organization's invoicing lock and on what each term and month records as
-- billed, written in the invoice's transaction.
ALTER TABLE invoices DROP CONSTRAINT invoices_org_id_period_start_key;

-- New kinds of line: `credit` (days charged and no longer held: negative, `quantity` days of
-- `period_days`) and `balance` (credit carried forward, positive, or used, negative). Plan,
-- credit and overage lines say which days they are for.
ALTER TABLE invoice_lines
    DROP CONSTRAINT invoice_lines_kind_check,
    DROP CONSTRAINT invoice_lines_check,
    ADD COLUMN covers_from DATE,
    ADD COLUMN covers_to   DATE,
    ADD CONSTRAINT invoice_lines_kind_check CHECK (kind IN ('plan', 'credit', 'overage', 'balance', 'tax')),
    ADD CONSTRAINT invoice_lines_period_days_for_days CHECK ((kind IN ('plan', 'credit')) = (period_days IS NOT NULL)),
    ADD CONSTRAINT invoice_lines_covers CHECK ((covers_from IS NULL) = (covers_to IS NULL) AND covers_to >= covers_from);

-- Overage calls already invoiced, per month (was: summed from the lines at every run).
ALTER TABLE usage_overage ADD COLUMN billed_calls BIGINT NOT NULL DEFAULT 0 CHECK (billed_calls >= 0);
UPDATE usage_overage u
   SET billed_calls = s.billed
  FROM (SELECT i.org_id, l.usage_month, sum(l.quantity) AS billed
          FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id
         WHERE l.kind = 'overage'
         GROUP BY i.org_id, l.usage_month) s
 WHERE s.org_id = u.org_id AND s.usage_month = u.month;
CREATE INDEX usage_overage_unbilled_idx ON usage_overage (month) WHERE calls > billed_calls;

-- Credit an organization holds (before KDV): what credits exceeded the charges on an invoice,
-- spent by the next invoices first. Written only in the transaction that issues an invoice.
CREATE TABLE credit_balances (
    org_id BIGINT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    amount NUMERIC(14, 2) NOT NULL CHECK (amount >= 0)
);
