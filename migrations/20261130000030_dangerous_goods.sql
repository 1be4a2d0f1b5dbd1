-- Dangerous goods: U-ETDS's goods service is told a load is dangerous (`tasimaTuruKodu` 1) with
-- its UN number (`unId`), how it is carried (`tehlikeliMaddeTasimaSekli`: packaged, tank, bulk)
-- and, when one applies, the exemption it travels under (`muafiyetTuru`, a code of U-ETDS's
-- list). The number and the way of carrying go together; an exemption needs them.
ALTER TABLE cargo
    ADD COLUMN un_number TEXT CHECK (un_number ~ '^[0-9]{4}$'),
    ADD COLUMN dangerous_packaging TEXT CHECK (dangerous_packaging IN ('packaged', 'tank', 'bulk')),
    ADD COLUMN dangerous_exemption TEXT CHECK (dangerous_exemption ~ '^[A-Za-z0-9.-]{1,20}$'),
    ADD CONSTRAINT cargo_dangerous_goods_check CHECK (
        (un_number IS NULL) = (dangerous_packaging IS NULL)
        AND (dangerous_exemption IS NULL OR un_number IS NOT NULL));
