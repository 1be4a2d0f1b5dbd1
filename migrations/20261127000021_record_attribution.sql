-- Who made each record and who changed it last, named as submissions name who queued them
-- (`user:<id>` for a member, `key:<id>` for an API key and its tokens). Passengers name their
-- own; a journey's `changed_by` is about its fields and crew. Retiring a vehicle or person is a
-- change. Rows older than this name no one.
ALTER TABLE vehicles  ADD COLUMN created_by TEXT CHECK (char_length(created_by) <= 200),
                      ADD COLUMN changed_by TEXT CHECK (char_length(changed_by) <= 200);
ALTER TABLE personnel ADD COLUMN created_by TEXT CHECK (char_length(created_by) <= 200),
                      ADD COLUMN changed_by TEXT CHECK (char_length(changed_by) <= 200);
ALTER TABLE journeys  ADD COLUMN created_by TEXT CHECK (char_length(created_by) <= 200),
                      ADD COLUMN changed_by TEXT CHECK (char_length(changed_by) <= 200);
ALTER TABLE cargo     ADD COLUMN created_by TEXT CHECK (char_length(created_by) <= 200),
                      ADD COLUMN changed_by TEXT CHECK (char_length(changed_by) <= 200);
ALTER TABLE passengers ADD COLUMN created_by TEXT CHECK (char_length(created_by) <= 200),
                       ADD COLUMN changed_by TEXT CHECK (char_length(changed_by) <= 200);
