-- Several loads on one goods trip: a shipment's `items` are loads besides its own (the
-- shipment's fields are the first), each with its goods and parties, loaded and unloaded where
-- and when the shipment is. Each goes to U-ETDS as a load of the shipment's one trip. Stored as
-- the API parsed them (a JSON array of objects), at most 49; the API's parser is their rule.
ALTER TABLE cargo ADD COLUMN items JSONB NOT NULL DEFAULT '[]';
-- Validated apart, so the table is never locked for the scan.
ALTER TABLE cargo ADD CONSTRAINT cargo_items_check
    CHECK (jsonb_typeof(items) = 'array' AND jsonb_array_length(items) <= 49) NOT VALID;
ALTER TABLE cargo VALIDATE CONSTRAINT cargo_items_check;
