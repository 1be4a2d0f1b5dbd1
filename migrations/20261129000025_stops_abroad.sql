-- A non-scheduled trip may cross the border: a departure or arrival abroad is a country code
-- and the place's name (U-ETDS's passenger group takes `…Ulke` and `…Yer`), with no district.
-- `…_country` is NULL for Türkiye (every stop before this), so existing rows need no change.
ALTER TABLE journeys
    ALTER COLUMN departure_district_id DROP NOT NULL,
    ALTER COLUMN arrival_district_id DROP NOT NULL,
    ADD COLUMN departure_country TEXT CHECK (departure_country ~ '^[A-Z]{2}$' AND departure_country <> 'TR'),
    ADD COLUMN departure_place TEXT CHECK (char_length(departure_place) BETWEEN 1 AND 200),
    ADD COLUMN arrival_country TEXT CHECK (arrival_country ~ '^[A-Z]{2}$' AND arrival_country <> 'TR'),
    ADD COLUMN arrival_place TEXT CHECK (char_length(arrival_place) BETWEEN 1 AND 200),
    -- In Türkiye a district and no place's name; abroad the reverse.
    ADD CONSTRAINT journeys_departure_where_check CHECK (
        (departure_country IS NULL) = (departure_district_id IS NOT NULL)
        AND (departure_country IS NULL) = (departure_place IS NULL)),
    ADD CONSTRAINT journeys_arrival_where_check CHECK (
        (arrival_country IS NULL) = (arrival_district_id IS NOT NULL)
        AND (arrival_country IS NULL) = (arrival_place IS NULL)),
    -- One end at least in Türkiye, and only non-scheduled trips go abroad.
    ADD CONSTRAINT journeys_abroad_check CHECK (
        (departure_country IS NULL OR arrival_country IS NULL)
        AND (trip_kind = 'tarifesiz' OR (departure_country IS NULL AND arrival_country IS NULL)));
