-- Usage is a ledger. Until now PostgreSQL held copies of Redis's live counters (the larger
-- of the two kept), so the calls admitted since the last copy died with a Redis that lost its
-- data. From here each API process adds the calls it admitted (and the errors it counted)
-- since its last flush, whether Redis counted them or the process did alone while Redis was
-- away; `usage_monthly` and `usage_overage` are the sums of those additions.
--
-- `usage_versions` numbers the additions to each organization-month. Redis's copy of a month
-- is seeded from one consistent read of the ledger and keeps that read's version, so a process
-- whose calls were counted in a copy that was lost knows, by comparing its addition's version,
-- whether the new copy already has them (seeded after the addition) or must be given them.
--
-- Upgrading: the counters are continued from the rows as they are (the last copy); calls
-- counted in Redis and not yet copied when the new version starts (seconds' worth) are not
-- in the ledger.
CREATE TABLE usage_versions (
    org_id  BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    month   DATE NOT NULL CHECK (extract(day FROM month) = 1),
    version BIGINT NOT NULL CHECK (version > 0),
    PRIMARY KEY (org_id, month)
);
