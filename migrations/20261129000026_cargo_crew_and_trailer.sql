-- A goods trip may have a second driver taking turns at the wheel and a trailer: U-ETDS's goods
-- trip takes `sofor2TCNo` and `plaka2` beside the first driver and the vehicle's plate. The
-- second driver is keyed with the organization, like every reference (a person of another
-- organization cannot be named), and indexed for retiring a person (is anyone still named?).
ALTER TABLE cargo
    ADD COLUMN second_driver_id BIGINT,
    ADD COLUMN trailer_plate TEXT CHECK (trailer_plate ~ '^[A-Z0-9]{1,20}$'),
    ADD CONSTRAINT cargo_second_driver_id_fkey FOREIGN KEY (second_driver_id, org_id) REFERENCES personnel (id, org_id),
    ADD CONSTRAINT cargo_second_driver_check CHECK (
        second_driver_id IS NULL OR (driver_id IS NOT NULL AND second_driver_id <> driver_id));
CREATE INDEX cargo_second_driver_idx ON cargo (second_driver_id) WHERE second_driver_id IS NOT NULL;
