-- Operations data: vehicles, personnel, journeys with crew and passengers, cargo shipments,
-- support tickets, and the Idempotency-Key store.
--
-- Tenancy: every table carries `org_id` and every query filters on it. Child rows (crew,
-- passengers) carry it too, so a query never has to join to learn whose row it is.
-- Lists are keyset-paginated newest first by id, hence the (org_id, id) indexes.

-- A vehicle. Deleting one that history refers to keeps it as `inactive` (it leaves the lists);
-- one plate is held by at most one active vehicle of an organization.
CREATE TABLE vehicles (
    id           BIGSERIAL PRIMARY KEY,
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    plate        TEXT NOT NULL CHECK (plate ~ '^[A-Z0-9]{1,20}$'),
    vehicle_type TEXT NOT NULL CHECK (vehicle_type IN ('otobus', 'minibus', 'midibus', 'sedan', 'van', 'kamyon', 'tir', 'dorse')),
    brand        TEXT,
    model        TEXT,
    model_year   INTEGER,
    capacity     INTEGER CHECK (capacity IS NULL OR capacity >= 0),
    phone        TEXT,
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX vehicles_org_active_idx ON vehicles (org_id, id) WHERE status = 'active';
CREATE UNIQUE INDEX vehicles_org_plate_key ON vehicles (org_id, plate) WHERE status = 'active';

-- Drivers, hosts, guides and other staff. Same retirement rule as vehicles; one identity
-- number is held by at most one active person of an organization.
CREATE TABLE personnel (
    id              BIGSERIAL PRIMARY KEY,
    org_id          BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    identity_number TEXT NOT NULL,
    first_name      TEXT NOT NULL,
    last_name       TEXT NOT NULL,
    gender          TEXT NOT NULL CHECK (gender IN ('E', 'K')),
    nationality     TEXT,
    role_type       TEXT NOT NULL CHECK (role_type IN ('driver', 'host', 'guide', 'other')),
    phone           TEXT,
    address         TEXT,
    hes_code        TEXT,
    status          TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX personnel_org_active_idx ON personnel (org_id, id) WHERE status = 'active';
CREATE UNIQUE INDEX personnel_org_identity_key ON personnel (org_id, identity_number) WHERE status = 'active';

-- A passenger trip. `vehicle_ref` is the caller's own words (a vehicle id or a plate) and
-- `plate` what it resolved to; `vehicle_record_id` links the vehicle record when there is
-- one. A journey without `tarifeli_context` is a non-scheduled (tarifesiz/arızi) trip.
-- `status` mirrors the latest submission: draft → submitted → delivered | failed.
CREATE TABLE journeys (
    id                    BIGSERIAL PRIMARY KEY,
    org_id                BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    vehicle_ref           TEXT NOT NULL,
    plate                 TEXT NOT NULL,
    vehicle_record_id     BIGINT REFERENCES vehicles (id),
    departure_date        DATE NOT NULL,
    departure_time        TIME NOT NULL,
    departure_district_id INTEGER NOT NULL REFERENCES ref_districts (id),
    arrival_date          DATE NOT NULL,
    arrival_time          TIME NOT NULL,
    arrival_district_id   INTEGER NOT NULL REFERENCES ref_districts (id),
    tarifeli_context      JSONB,
    status                TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted', 'delivered', 'failed')),
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((arrival_date, arrival_time) >= (departure_date, departure_time))
);
-- A list page picks its ids from these with an index-only scan (see pagination.rs), so the
-- filterable columns ride along in the main one.
CREATE INDEX journeys_org_idx ON journeys (org_id, id) INCLUDE (status, departure_date);
CREATE INDEX journeys_org_status_idx ON journeys (org_id, status, id);
CREATE INDEX journeys_vehicle_idx ON journeys (vehicle_record_id) WHERE vehicle_record_id IS NOT NULL;

-- The crew named on a journey, in the order given.
CREATE TABLE journey_crew (
    journey_id   BIGINT NOT NULL REFERENCES journeys (id) ON DELETE CASCADE,
    personnel_id BIGINT NOT NULL REFERENCES personnel (id),
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    position     SMALLINT NOT NULL,
    PRIMARY KEY (journey_id, personnel_id)
);
CREATE INDEX journey_crew_personnel_idx ON journey_crew (personnel_id);

-- Passengers, one per identity number within a journey (the bulk upsert's key).
CREATE TABLE passengers (
    id                     BIGSERIAL PRIMARY KEY,
    org_id                 BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    journey_id             BIGINT NOT NULL REFERENCES journeys (id) ON DELETE CASCADE,
    first_name             TEXT NOT NULL,
    last_name              TEXT NOT NULL,
    identity_number        TEXT NOT NULL,
    gender                 TEXT NOT NULL CHECK (gender IN ('E', 'K')),
    nationality            TEXT,
    boarding_place_code    INTEGER NOT NULL REFERENCES ref_districts (id),
    destination_place_code INTEGER NOT NULL REFERENCES ref_districts (id),
    ticket_serial_no       TEXT,
    ticket_issue_date      DATE,
    amount                 NUMERIC(12, 2) CHECK (amount IS NULL OR amount >= 0),
    seat_no                TEXT,
    phone                  TEXT,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (journey_id, identity_number)
);
CREATE INDEX passengers_journey_idx ON passengers (journey_id, id);

-- A goods shipment (U-ETDS eşya). `driver_id` names the driver the goods service needs.
CREATE TABLE cargo (
    id                    BIGSERIAL PRIMARY KEY,
    org_id                BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    vehicle_id            BIGINT NOT NULL REFERENCES vehicles (id),
    driver_id             BIGINT REFERENCES personnel (id),
    transport_type        SMALLINT NOT NULL CHECK (transport_type BETWEEN 1 AND 4),
    cargo_type            INTEGER NOT NULL CHECK (cargo_type > 0),
    transport_mode        SMALLINT NOT NULL CHECK (transport_mode IN (1, 2)),
    cargo_amount          NUMERIC(14, 3) NOT NULL CHECK (cargo_amount >= 0),
    cargo_unit            TEXT NOT NULL CHECK (cargo_unit IN ('KG', 'TON', 'ADET', 'M3', 'LITRE')),
    sender_tax_number     TEXT NOT NULL,
    sender_name           TEXT NOT NULL,
    receiver_tax_number   TEXT NOT NULL,
    receiver_name         TEXT NOT NULL,
    loading_date          DATE NOT NULL,
    loading_time          TIME NOT NULL,
    loading_city_id       INTEGER NOT NULL REFERENCES ref_cities (id),
    loading_district_id   INTEGER NOT NULL REFERENCES ref_districts (id),
    unloading_date        DATE NOT NULL,
    unloading_time        TIME NOT NULL,
    unloading_city_id     INTEGER NOT NULL REFERENCES ref_cities (id),
    unloading_district_id INTEGER NOT NULL REFERENCES ref_districts (id),
    status                TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted', 'delivered', 'failed')),
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((unloading_date, unloading_time) >= (loading_date, loading_time))
);
CREATE INDEX cargo_org_idx ON cargo (org_id, id) INCLUDE (status);
CREATE INDEX cargo_org_status_idx ON cargo (org_id, status, id);
CREATE INDEX cargo_vehicle_idx ON cargo (vehicle_id);
CREATE INDEX cargo_driver_idx ON cargo (driver_id) WHERE driver_id IS NOT NULL;

CREATE TABLE support_tickets (
    id         BIGSERIAL PRIMARY KEY,
    org_id     BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    priority   TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    status     TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'pending', 'closed')),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX support_tickets_org_idx ON support_tickets (org_id, id);

-- Idempotency-Key records: the first answer to a POST, replayed for 24 hours to the same
-- key with the same request. `request_hash` covers method, route and body, so a reused key
-- with another request is told apart. `status` NULL means the first request is still running.
-- Answers that carry a secret (a new API key) are not stored: `body` stays NULL and a repeat
-- is refused instead of replayed.
CREATE TABLE idempotency_keys (
    org_id       BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    request_hash BYTEA NOT NULL,
    status       SMALLINT,
    content_type TEXT,
    body         BYTEA,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
