-- Personal data retention (KVKK): once a journey or shipment ended longer ago than the retention
-- period (`TNS_PERSONAL_DATA_RETENTION_DAYS`), the jobs role erases the personal data it holds —
-- its passengers' identity numbers, names, phones, ticket serial numbers and baggage tags, a
-- shipment's sender and receiver, and the same in what its submissions sent — and a retired
-- person's once no record that still keeps its personal data names them. The records stay:
-- ids, places, times, counts, states, downstream references, and what was billed.
--
-- The erased form is a value no person has and no input rule accepts: `[erased]` for a name or
-- a tax number, `[erased:<row id>]` for an identity number (unique per row, so the passengers'
-- one-per-journey key and the personnel's one-per-organization key hold as they are). Nullable
-- fields become NULL. No existing constraint refuses that form, so none is relaxed.
--
-- `personal_data_erased_at` says when a row was erased (NULL: not yet). The checks below tie it
-- to the erased form, so a row marked erased cannot hold personal data again, and a person still
-- active is never erased. Each is added NOT VALID and validated apart, so the table is not held
-- under an exclusive lock while its rows are read.

-- A journey's own row holds no personal data; the mark covers its passengers and its
-- submissions, which the job erases in the same transaction.
ALTER TABLE journeys ADD COLUMN personal_data_erased_at TIMESTAMPTZ;
-- The job's candidates: journeys not erased yet, by the day they arrived.
CREATE INDEX journeys_personal_data_idx ON journeys (arrival_date) WHERE personal_data_erased_at IS NULL;

ALTER TABLE cargo ADD COLUMN personal_data_erased_at TIMESTAMPTZ;
CREATE INDEX cargo_personal_data_idx ON cargo (unloading_date) WHERE personal_data_erased_at IS NULL;
ALTER TABLE cargo ADD CONSTRAINT cargo_personal_data_erased_check CHECK (
    personal_data_erased_at IS NULL OR (
        sender_tax_number = '[erased]' AND sender_name = '[erased]'
        AND receiver_tax_number = '[erased]' AND receiver_name = '[erased]'
        AND NOT jsonb_path_exists(items, '$[*] ? (@.sender_tax_number != "[erased]" || @.sender_name != "[erased]"
                                                  || @.receiver_tax_number != "[erased]" || @.receiver_name != "[erased]")')
    )) NOT VALID;
ALTER TABLE cargo VALIDATE CONSTRAINT cargo_personal_data_erased_check;

ALTER TABLE personnel ADD COLUMN personal_data_erased_at TIMESTAMPTZ;
-- The job's candidates: retired people not erased yet (few: most are active).
CREATE INDEX personnel_retired_idx ON personnel (id) WHERE status = 'inactive' AND personal_data_erased_at IS NULL;
ALTER TABLE personnel ADD CONSTRAINT personnel_personal_data_erased_check CHECK (
    personal_data_erased_at IS NULL OR (
        status = 'inactive'
        AND identity_number = '[erased:' || id::text || ']' AND first_name = '[erased]' AND last_name = '[erased]'
        AND phone IS NULL AND address IS NULL AND hes_code IS NULL
    )) NOT VALID;
ALTER TABLE personnel VALIDATE CONSTRAINT personnel_personal_data_erased_check;

-- A submission's snapshot, per-passenger results, messages and the adapter's progress (which
-- may key crew by identity number) are erased with its record; only a finished one is, since
-- a submission in flight still sends what it holds. Operators' re-queues pass erased ones by.
ALTER TABLE submissions ADD COLUMN personal_data_erased_at TIMESTAMPTZ;
ALTER TABLE submissions ADD CONSTRAINT submissions_personal_data_erased_check CHECK (
    personal_data_erased_at IS NULL OR (state IN ('delivered', 'failed') AND progress = 'null')) NOT VALID;
ALTER TABLE submissions VALIDATE CONSTRAINT submissions_personal_data_erased_check;
