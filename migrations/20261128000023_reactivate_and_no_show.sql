-- Two more things a submission sends for a delivered journey, queued like its cancellation:
-- - `reactivate`: a journey cancelled downstream is brought back (U-ETDS `seferAktif`); once
--   delivered the journey is `delivered` again (and takes changes), a failed one leaves it
--   `cancelled`;
-- - `no_show`: one of its passengers did not come (U-ETDS `yolcuGelmeyenBildir`, due within 30
--   minutes of departure); it leaves the journey's status as it was, delivered or not.
ALTER TABLE submissions DROP CONSTRAINT submissions_operation_check,
    ADD CONSTRAINT submissions_operation_check
        CHECK (operation IN ('journey', 'amendment', 'cargo', 'cancel', 'reactivate', 'no_show'));
