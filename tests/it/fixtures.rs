//! Valid payloads for the operations resources, and an organization with a vehicle and a
//! driver to hang journeys and cargo on.

use serde_json::{json, Value};

use crate::helpers::{tckn, Api, Env, InProcessScheduler, Org, TestApp};

/// İstanbul / Kadıköy and Adana / Ceyhan (MERNIS codes).
pub(crate) const ISTANBUL: i64 = 34;
pub(crate) const KADIKOY: i64 = 1421;
pub(crate) const ADANA: i64 = 1;
pub(crate) const CEYHAN: i64 = 1219;
/// İstanbul Havalimanı, an airport code in the district list.
pub(crate) const IST_AIRPORT: i64 = 99157;
/// A VKN and a T.C. number with valid checksums (the published check-digit examples).
pub(crate) const VKN: &str = "4540536920";
pub(crate) const TCKN: &str = "17291716060";

pub(crate) fn vehicle(plate: &str) -> Value {
    json!({"plate": plate, "vehicle_type": "otobus", "brand": "Mercedes", "model": "Travego", "model_year": 2022,
           "capacity": 46, "phone": "+90 532 000 00 00"})
}

pub(crate) fn person(n: u64, role: &str) -> Value {
    json!({"identity_number": tckn(n), "first_name": "Mehmet", "last_name": "Demir", "gender": "E", "role_type": role})
}

/// A scheduled journey exactly in the documented shape (no crew).
pub(crate) fn journey(vehicle_id: Value) -> Value {
    json!({
        "vehicle_id": vehicle_id,
        "departure": {"date": "2026-12-01", "time": "08:30", "district_id": KADIKOY.to_string()},
        "arrival": {"date": "2026-12-01", "time": "20:15", "district_id": CEYHAN.to_string()},
        "tarifeli_context": tarifeli(),
    })
}

/// The context of a scheduled trip Kadıköy → Ceyhan.
pub(crate) fn tarifeli() -> Value {
    json!({"firma_id": 1, "unet_guzergah_kodu": 1001, "kalkis_yer_id": KADIKOY, "varis_yer_id": CEYHAN,
           "seyahat_suresi_saat": 12})
}

/// A non-scheduled (tarifesiz) journey.
pub(crate) fn tarifesiz(vehicle_id: Value) -> Value {
    let mut j = journey(vehicle_id);
    j["trip_kind"] = json!("tarifesiz");
    j.as_object_mut().unwrap().remove("tarifeli_context");
    j
}

pub(crate) fn passenger(n: u64) -> Value {
    json!({"first_name": "Ali", "last_name": "Kaya", "identity_number": tckn(n), "gender": "E",
           "boarding_place_code": KADIKOY, "destination_place_code": CEYHAN, "amount": 450.5,
           "ticket_serial_no": "A-1", "ticket_issue_date": "2026-11-20", "seat_no": "12"})
}

pub(crate) fn cargo(vehicle_id: i64) -> Value {
    json!({
        "vehicle_id": vehicle_id, "transport_type": 1, "cargo_type": 7, "transport_mode": 1,
        "cargo_amount": 1250.5, "cargo_unit": "KG",
        "sender_tax_number": VKN, "sender_name": "Gönderen A.Ş.",
        "receiver_tax_number": TCKN, "receiver_name": "Alıcı Kişi",
        "loading_date": "2026-12-01", "loading_time": "07:00", "loading_city_id": ISTANBUL, "loading_district_id": KADIKOY,
        "unloading_date": "2026-12-02", "unloading_time": "09:45", "unloading_city_id": ADANA, "unloading_district_id": CEYHAN,
    })
}

/// A webhook subscription whose deliveries go nowhere (loopback's discard port).
pub(crate) fn subscription() -> Value {
    json!({"event_type": "journey.created", "endpoint_url": "http://127.0.0.1:9/"})
}

/// An organization with one vehicle and one driver.
pub(crate) struct Fleet {
    pub org: Org,
    pub vehicle_id: i64,
    pub plate: String,
    pub driver_id: i64,
}

impl Fleet {
    pub(crate) async fn new(api: &Api) -> Fleet {
        let org = api.register().await;
        let plate = format!("34TNS{}", org.id % 100_000);
        let v = api.post_ok("/portal/vehicles", &org.key, vehicle(&plate), 201).await;
        let d = api.post_ok("/portal/personnel", &org.key, person(org.id as u64 * 10 + 1, "driver"), 201).await;
        Fleet { vehicle_id: v["id"].as_i64().unwrap(), plate, driver_id: d["id"].as_i64().unwrap(), org }
    }

    pub(crate) fn key(&self) -> &str {
        &self.org.key
    }

    /// Create a journey on the fleet's vehicle with its driver; its id.
    pub(crate) async fn journey(&self, api: &Api) -> i64 {
        let mut body = journey(json!(self.vehicle_id));
        body["personnel_ids"] = json!([self.driver_id]);
        api.post_ok("/portal/journeys", self.key(), body, 201).await["id"].as_i64().unwrap()
    }
}

/// An API with a scheduler delivering through the sandbox, and an organization's fleet.
pub(crate) async fn delivering() -> (TestApp, InProcessScheduler, Fleet) {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let scheduler = InProcessScheduler::start(&env).await;
    let fleet = Fleet::new(&app).await;
    (app, scheduler, fleet)
}
