-- A passenger's baggage: the barcodes of their tags, declared to U-ETDS (`yolcuBagajEkle`) once
-- the passenger is accepted. A JSON array of strings rather than `text[]`: the bulk upsert
-- writes passengers with one `unnest` of column arrays, and a ragged two-dimensional array is
-- not a PostgreSQL value. The API bounds the list (20 barcodes of 1–40 characters); the check
-- keeps any other writer within the same shape.
ALTER TABLE passengers
    ADD COLUMN baggage JSONB NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(baggage) = 'array' AND jsonb_array_length(baggage) <= 20);
