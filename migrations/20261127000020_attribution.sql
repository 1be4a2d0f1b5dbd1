-- Who did it: every submission names the credential that queued it, as the audit log names
-- people (`user:<id>` for a member signed in to the portal, `key:<id>` for an API key and the
-- tokens made from it, `operator:<name>` for an operator's re-queue). Submissions made before
-- this name no one.
ALTER TABLE submissions ADD COLUMN submitted_by TEXT CHECK (char_length(submitted_by) <= 200);
