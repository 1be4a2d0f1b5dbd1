-- A goods trip may have a second driver taking turns at the wheel and a trailer: U-ETDS's goods
-- trip takes `sofor2TCNo` and `plaka2` beside the first driver and the vehicle's plate.
ALTER TABLE cargo
    ADD COLUMN second_driver_id BIGINT REFERENCES personnel (id),
    ADD COLUMN trailer_plate TEXT CHECK (trailer_plate ~ '^[A-Z0-9]{1,20}$'),
    ADD CONSTRAINT cargo_second_driver_check CHECK (
        second_driver_id IS NULL OR (driver_id IS NOT NULL AND second_driver_id <> driver_id));
