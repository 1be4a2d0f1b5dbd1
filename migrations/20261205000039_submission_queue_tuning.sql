-- The submission queue, tuned as the webhook queue was (…006): what a scheduler writes per
-- attempt, less.
--
-- 1. submission_attempts keeps no foreign keys. Recording a batch of outcomes inserted one
-- attempt per submission, and each insert ran two checks, each a query of its own: one on the
-- submission (a row lock on the very row the same statement had just updated) and one on the
-- organization. The references hold by construction: attempts are inserted only by the
-- scheduler's claim and complete statements, from submission rows that statement holds
-- (updated under their lease token), with that row's org_id. What the keys still did, removing
-- attempts with their submission (and so with their organization, whose deletion cascades to
-- its submissions), a statement-level trigger does, once per deleting statement instead of a
-- check per inserted row. (Erasing an organization deletes its attempts first anyway.)
ALTER TABLE submission_attempts
    DROP CONSTRAINT submission_attempts_submission_id_fkey,
    DROP CONSTRAINT submission_attempts_org_id_fkey;

-- Deletes the rows of table TG_ARGV[0] (in the parent's schema) whose column TG_ARGV[1] names a
-- deleted row (`gone`, the statement's transition table): an AFTER DELETE … FOR EACH STATEMENT
-- trigger's body for a child table that keeps no foreign key to its parent. (TRUNCATE is not
-- followed; nothing truncates these tables.)
CREATE FUNCTION delete_followers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I.%I c USING gone WHERE c.%I = gone.id', TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1]);
    RETURN NULL;
END
$$;

CREATE TRIGGER submission_attempts_follow_submissions
    AFTER DELETE ON submissions
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION delete_followers('submission_attempts', 'submission_id');

-- 2. The unique (id, org_id) key on submissions existed only as the target of the attempts'
-- key (…010). No update of a submission is HOT (a claim moves `run_at`, a completion `state`,
-- both indexed), so every claim and every completion wrote an entry in it; `id` alone is the
-- primary key, and look-ups by id and organization use it.
ALTER TABLE submissions DROP CONSTRAINT submissions_id_org_key;
