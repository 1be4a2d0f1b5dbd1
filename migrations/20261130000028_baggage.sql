-- A passenger's baggage: the barcodes of their tags, declared to U-ETDS (`yolcuBagajEkle`) once
-- the passenger is accepted. A JSON array of strings rather than `text[]`: the bulk upsert
-- writes passengers with one `unnest` of column arrays, and a ragged two-dimensional array is
-- not a PostgreSQL value. The API bounds the list (20 barcodes of 1–40 characters); the check
-- keeps any other writer within the same shape. It is added NOT VALID and validated apart, so
-- the table is not held under an exclusive lock while its rows are read.
ALTER TABLE passengers ADD COLUMN baggage JSONB NOT NULL DEFAULT '[]';
ALTER TABLE passengers ADD CONSTRAINT passengers_baggage_shape
    CHECK (jsonb_typeof(baggage) = 'array' AND jsonb_array_length(baggage) <= 20) NOT VALID;
ALTER TABLE passengers VALIDATE CONSTRAINT passengers_baggage_shape;
