//! What crosses the adapter boundary, as JSON. These are snapshots: the scheduler freezes
//! them on the submission row, so what was sent stays auditable.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    pub name: String,
    pub version: String,
}

/// The organization's own downstream credentials (U-ETDS web-service user and password).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("username", &self.username).field("password", &"***").finish()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    /// `YYYY-MM-DD`
    pub date: String,
    /// `HH:MM`
    pub time: String,
    pub city_id: i32,
    pub district_id: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tarifeli {
    pub firma_id: i64,
    pub unet_guzergah_kodu: i64,
    pub kalkis_yer_id: i64,
    pub varis_yer_id: i64,
    pub seyahat_suresi_saat: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Person {
    /// `driver`, `host`, `guide` or `other` for crew; `passenger` for passengers.
    pub role: String,
    pub identity_number: String,
    pub first_name: String,
    pub last_name: String,
    /// `E` or `K`.
    pub gender: String,
    /// Two-letter country code; `TR` when absent.
    pub nationality: Option<String>,
    pub phone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passenger {
    /// Our passenger id, echoed in per-passenger results.
    pub key: String,
    pub person: Person,
    pub boarding_place_code: i32,
    pub destination_place_code: i32,
    pub seat_no: Option<String>,
    pub ticket_serial_no: Option<String>,
    pub amount: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journey {
    pub plate: String,
    pub departure: Stop,
    pub arrival: Stop,
    pub tarifeli: Option<Tarifeli>,
    pub crew: Vec<Person>,
    pub passengers: Vec<Passenger>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JourneyRequest {
    /// Our reference for this submission: stable across retries, how lookups find it.
    pub reference: String,
    pub credentials: Option<Credentials>,
    pub journey: Journey,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemovedPassenger {
    pub key: String,
    pub identity_number: String,
    /// The downstream's reference of that passenger, when it gave one.
    pub downstream_reference: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmendRequest {
    pub reference: String,
    pub credentials: Option<Credentials>,
    /// The delivered journey's downstream reference.
    pub downstream_reference: String,
    pub added: Vec<Passenger>,
    pub changed: Vec<Passenger>,
    pub removed: Vec<RemovedPassenger>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Party {
    pub tax_number: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cargo {
    pub plate: String,
    pub driver: Option<Person>,
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub amount: f64,
    pub unit: String,
    pub sender: Party,
    pub receiver: Party,
    pub loading: Stop,
    pub unloading: Stop,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CargoRequest {
    pub reference: String,
    pub credentials: Option<Credentials>,
    pub cargo: Cargo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelRequest {
    pub reference: String,
    pub credentials: Option<Credentials>,
    pub downstream_reference: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupRequest {
    pub reference: String,
    pub credentials: Option<Credentials>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRequest {
    pub credentials: Option<Credentials>,
    pub downstream_reference: String,
}

/// One passenger's outcome. U-ETDS stores the accepted ones of a partly failed batch (its
/// code 88); only the failed ones may be sent again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassengerResult {
    pub key: String,
    pub downstream_reference: Option<String>,
    /// Why the downstream refused this passenger; `None` when accepted.
    pub error: Option<String>,
}

/// What the downstream answered for an accepted notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub downstream_reference: String,
    pub passengers: Vec<PassengerResult>,
    pub message: Option<String>,
}

impl Receipt {
    /// True when some passengers were refused (a partial success).
    pub fn is_partial(&self) -> bool {
        self.passengers.iter().any(|p| p.error.is_some())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub content_type: String,
    /// Base64 of the document's bytes.
    pub base64: String,
}
