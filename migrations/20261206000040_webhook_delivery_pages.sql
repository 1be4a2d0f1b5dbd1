-- The delivery queue, tuned again (…006 first): what claiming and recording a delivery write.
--
-- 1. Room for the claim's row version on the row's own page. A claim rewrites each row it takes
-- (lease token, lease times, attempt count) and touches no indexed column, so PostgreSQL keeps
-- the new version on the same page without new index entries (a HOT update) when the page has
-- room for it. At fill factor 70 a page of freshly emitted deliveries had room for about 40 % of
-- its rows' new versions, and a claim takes a page's rows together (they were emitted together):
-- the rest were written to other pages with an entry in every index, the queue index included,
-- where later claims stepped over them. A claimed row is about 30 bytes longer than an emitted
-- one; at 40 every row of a page fits its new version (measured: all claims HOT, against 42 %).
-- Pages written before this migration keep their old fill until rewritten.
ALTER TABLE webhook_deliveries SET (fillfactor = 40);

-- 2. One index fewer to write when a delivery is recorded. Recording moves a row out of the
-- queue's partial indexes, which no update can do in place, so each recorded attempt adds an
-- entry to every full index. Every read of a delivery names its organization (the API, exports,
-- closure), so the primary key becomes (org_id, id), which also serves listing an organization's
-- deliveries by id, and the separate (org_id, id) index goes. The scheduler's give-back and
-- release name the organization with the id. An id stays unique by its sequence. Rebuilding the
-- key locks the table while it runs (README: upgrade notes).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (org_id, id);
DROP INDEX webhook_deliveries_org_idx;
