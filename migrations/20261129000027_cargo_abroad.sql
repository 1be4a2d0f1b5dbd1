-- Goods may be loaded or unloaded abroad (an export, an import, a transit): U-ETDS's load takes
-- the country code (`yuklemeUlkeKodu`, `bosaltmaUlkeKodu`) and the province and district only
-- in Türkiye. `…_country` is NULL for Türkiye (every shipment before this).
ALTER TABLE cargo
    ALTER COLUMN loading_city_id DROP NOT NULL,
    ALTER COLUMN loading_district_id DROP NOT NULL,
    ALTER COLUMN unloading_city_id DROP NOT NULL,
    ALTER COLUMN unloading_district_id DROP NOT NULL,
    ADD COLUMN loading_country TEXT CHECK (loading_country ~ '^[A-Z]{2}$' AND loading_country <> 'TR'),
    ADD COLUMN unloading_country TEXT CHECK (unloading_country ~ '^[A-Z]{2}$' AND unloading_country <> 'TR'),
    -- In Türkiye a province and a district, abroad neither.
    ADD CONSTRAINT cargo_loading_where_check CHECK (
        (loading_country IS NULL) = (loading_city_id IS NOT NULL)
        AND (loading_country IS NULL) = (loading_district_id IS NOT NULL)),
    ADD CONSTRAINT cargo_unloading_where_check CHECK (
        (unloading_country IS NULL) = (unloading_city_id IS NOT NULL)
        AND (unloading_country IS NULL) = (unloading_district_id IS NOT NULL));
