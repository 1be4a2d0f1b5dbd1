-- A journey cancelled downstream can be re-activated there (U-ETDS `seferAktif`), queued as a
-- submission like its cancellation: operation `reactivate`. Once delivered, the journey is
-- `delivered` again (and takes changes again); a failed one leaves it `cancelled`.
ALTER TABLE submissions DROP CONSTRAINT submissions_operation_check,
    ADD CONSTRAINT submissions_operation_check
        CHECK (operation IN ('journey', 'amendment', 'cargo', 'cancel', 'reactivate'));
