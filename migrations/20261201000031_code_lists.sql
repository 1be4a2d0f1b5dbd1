-- The downstream's code lists: the codes some of its fields take (why a goods trip or load is
-- cancelled, the goods types and quantity units, how dangerous goods travel and their
-- exemptions), served to clients under `GET /ref/code-lists` and used to check a shipment's
-- `cancel_kind`.
--
-- One row per list, platform-wide: the Ministry publishes one set for every firm. This
-- migration ships the copy public sources show; the jobs role replaces a list with the
-- downstream's own once it can read them (with the credentials of the platform's reference
-- organization) and refreshes it daily. A list the downstream does not answer keeps what it
-- had, so a service that is down leaves the last good copy (or the shipped one) in place.
-- Lists no public source shows ship empty: a code is then not checked by TNS, only by the
-- downstream.
CREATE TABLE code_lists (
    name         TEXT PRIMARY KEY CHECK (name IN ('trip_cancel_kinds', 'load_cancel_kinds', 'transport_kinds',
                                                  'goods_types', 'dangerous_goods_types', 'goods_units',
                                                  'dangerous_goods_units', 'dangerous_packaging',
                                                  'dangerous_exemptions')),
    source       TEXT NOT NULL CHECK (source IN ('shipped', 'downstream')),
    -- [{"code": "...", "name": "..."}], at most 1 000 (the store bounds what it writes).
    codes        JSONB NOT NULL CHECK (jsonb_typeof(codes) = 'array'),
    -- When the downstream's copy was read; NULL for the shipped one.
    refreshed_at TIMESTAMPTZ,
    -- When the downstream last answered for this list (with codes or empty); NULL if never. A
    -- list it has not answered for a day is asked again (hourly while it does not answer).
    checked_at   TIMESTAMPTZ,
    CHECK ((source = 'downstream') = (refreshed_at IS NOT NULL))
);

INSERT INTO code_lists (name, source, codes) VALUES
    ('trip_cancel_kinds', 'shipped', '[]'),
    ('load_cancel_kinds', 'shipped', '[]'),
    ('transport_kinds', 'shipped', '[{"code": "1", "name": "Tehlikeli madde"}, {"code": "2", "name": "Diğer"}]'),
    ('goods_types', 'shipped', '[]'),
    ('dangerous_goods_types', 'shipped', '[]'),
    ('goods_units', 'shipped', '[{"code": "KG", "name": "Kilogram"}, {"code": "TON", "name": "Ton"},
                                 {"code": "AD", "name": "Adet"}, {"code": "L", "name": "Litre"},
                                 {"code": "MG", "name": "Miligram"}, {"code": "PK", "name": "Paket"}]'),
    ('dangerous_goods_units', 'shipped', '[{"code": "KG", "name": "Kilogram"}, {"code": "TON", "name": "Ton"},
                                           {"code": "AD", "name": "Adet"}, {"code": "L", "name": "Litre"},
                                           {"code": "MG", "name": "Miligram"}, {"code": "PK", "name": "Paket"}]'),
    ('dangerous_packaging', 'shipped', '[{"code": "1", "name": "Ambalajlı"}, {"code": "2", "name": "Tank"},
                                         {"code": "3", "name": "Dökme"}]'),
    ('dangerous_exemptions', 'shipped', '[]');
