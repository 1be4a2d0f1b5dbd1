-- The audit log is append-only, in the database itself: the application's statements (or a
-- mistaken hand at a psql prompt) can add entries, never change or remove one. (A role that
-- owns the table can still drop the trigger; SECURITY.md says how to keep that role apart.)

-- An admin API change names the operator token it was made with: names may repeat (two
-- operators called Ayşe, a token made again under the same name), ids never do. No foreign
-- key: an entry outlives its token, and must never be rewritten when one goes.
ALTER TABLE audit_log ADD COLUMN operator_token_id BIGINT;

-- UPDATE and DELETE are refused, with one exception the schema itself makes: deleting an
-- organization sets `org_id` to NULL in its entries (ON DELETE SET NULL), so the entries
-- outlive it. That update, and only that one, passes: nothing else changes, and the
-- organization is gone (an entry cannot be detached from an organization that exists).
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.org_id IS NOT NULL AND NEW.org_id IS NULL
       AND (NEW.id, NEW.at, NEW.actor, NEW.operator_token_id, NEW.action, NEW.before, NEW.after, NEW.reason)
           IS NOT DISTINCT FROM
           (OLD.id, OLD.at, OLD.actor, OLD.operator_token_id, OLD.action, OLD.before, OLD.after, OLD.reason)
       AND NOT EXISTS (SELECT 1 FROM organizations WHERE id = OLD.org_id) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
