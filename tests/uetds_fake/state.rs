//! What the fake service has been told, per service, environment and firm (the username): the
//! records the real service would keep, kept readable so a test can assert on them ("exactly one
//! trip with firmaSeferNo tns-42, three valid passengers"). The fake stores what it is sent and
//! does not invent duplicate rules the published material does not state: a trip or passenger
//! sent twice is stored twice, which is exactly what the tests look for.

use std::collections::HashMap;

use chrono::{NaiveDate, NaiveDateTime};

use super::xml::Element;

/// Which U-ETDS service a request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// Non-scheduled passenger service (`uetdsarizi`).
    Arizi,
    /// Goods service, V3 operations (`uetdsesya`).
    Esya,
    /// Scheduled passenger service (`uetdstarifeli`).
    Tarifeli,
}

/// Test or production path (the fake keeps their records apart, as the real services do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Env {
    Test,
    Production,
}

/// Whether a record is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 'Geçerli'.
    Valid,
    /// 'İptal'.
    Cancelled,
}

impl Status {
    /// The Turkish label the service reports.
    pub fn label(self) -> &'static str {
        match self {
            Status::Valid => "Geçerli",
            Status::Cancelled => "İptal",
        }
    }

    /// The numeric code the fake reports next to the label (the codes are not published; the
    /// fake uses 1 and 2 so a client that keys on the number instead of the label is noticed).
    pub fn code(self) -> i32 {
        match self {
            Status::Valid => 1,
            Status::Cancelled => 2,
        }
    }
}

/// A passenger trip (arızi or tarifeli).
#[derive(Debug, Clone)]
pub struct Trip {
    pub service: Service,
    pub env: Env,
    /// Username (UNET number) of the firm that declared it.
    pub firm: String,
    /// `uetdsSeferReferansNo`: `YYMMDD` of the departure date and 8 digits.
    pub reference: i64,
    pub firma_sefer_no: String,
    pub plate: String,
    pub description: Option<String>,
    pub phone: Option<String>,
    pub departure_date: NaiveDate,
    /// As sent (`HH:mm`).
    pub departure_time: String,
    /// Arızi only.
    pub end_date: Option<NaiveDate>,
    pub end_time: Option<String>,
    /// Tarifeli only (`unetGuzergahKodu`).
    pub route_code: Option<i64>,
    /// Tarifeli only (`seyahatSuresi`, hours).
    pub travel_hours: Option<i32>,
    pub status: Status,
    pub cancel_reason: Option<String>,
    /// When the fake recorded it (local time).
    pub declared_at: NaiveDateTime,
    /// How many `seferGuncelle` / `seferPlakaDegistir` calls changed it.
    pub updates: u32,
    pub groups: Vec<Group>,
    pub crew: Vec<CrewMember>,
    pub passengers: Vec<Passenger>,
    /// Baggage barcodes (`yolcuBagajEkle`), each with its passenger's identity and seat.
    pub baggage: Vec<Bag>,
}

/// One baggage barcode on a trip.
#[derive(Debug, Clone)]
pub struct Bag {
    pub identity: String,
    pub seat: String,
    pub barcode: String,
    pub status: Status,
}

impl Trip {
    /// Baggage barcodes not withdrawn.
    pub fn valid_baggage(&self) -> impl Iterator<Item = &Bag> {
        self.baggage.iter().filter(|b| b.status == Status::Valid)
    }

    /// Passengers not cancelled.
    pub fn valid_passengers(&self) -> impl Iterator<Item = &Passenger> {
        self.passengers.iter().filter(|p| p.status == Status::Valid)
    }

    /// Crew members not cancelled.
    pub fn active_crew(&self) -> impl Iterator<Item = &CrewMember> {
        self.crew.iter().filter(|c| c.status == Status::Valid)
    }

    /// Groups not cancelled.
    pub fn valid_groups(&self) -> impl Iterator<Item = &Group> {
        self.groups.iter().filter(|g| g.status == Status::Valid)
    }
}

/// An arızi passenger group (`seferGrupEkle`).
#[derive(Debug, Clone)]
pub struct Group {
    /// `uetdsGrupRefNo` (sent back as `grupId`).
    pub id: i64,
    pub name: String,
    pub description: String,
    pub start_country: String,
    pub start_province: i64,
    pub start_district: i64,
    pub start_place: Option<String>,
    pub end_country: String,
    pub end_province: i64,
    pub end_district: i64,
    pub end_place: String,
    pub fare: Option<String>,
    pub status: Status,
}

/// A crew member (`personelEkle`).
#[derive(Debug, Clone)]
pub struct CrewMember {
    pub id: i64,
    /// `turKodu`: 0 driver, 1 co-driver, 2 host, 3 hostess, 4 other, 5 guide.
    pub kind: i32,
    pub nationality: String,
    pub identity: String,
    pub gender: String,
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub address: Option<String>,
    pub status: Status,
}

/// A passenger (`yolcuEkleCoklu` / `yolcuEkle` / tarifeli `yolcuBiletEkle`).
#[derive(Debug, Clone)]
pub struct Passenger {
    /// `uetdsBiletRefNo` (12 digits).
    pub ticket_ref: i64,
    pub nationality: String,
    pub identity: String,
    pub gender: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub seat: Option<String>,
    pub phone: Option<String>,
    /// Arızi: the group (`grupId`).
    pub group_id: Option<i64>,
    /// Tarifeli: boarding and alighting stop codes.
    pub boarding: Option<i64>,
    pub alighting: Option<i64>,
    pub ticket_serial: Option<String>,
    pub fare: Option<String>,
    pub status: Status,
    pub cancel_reason: Option<String>,
    /// Reported as not having come (`yolcuGelmeyenBildir`), with the note given.
    pub no_show: Option<String>,
}

/// A registered caller address or range (`ipTanimla`): its id, first and last address.
pub(crate) type AllowedIp = (i64, String, Option<String>);

/// A goods trip (eşya V3 `yeniSeferEkleV3`).
#[derive(Debug, Clone)]
pub struct CargoTrip {
    pub env: Env,
    pub firm: String,
    /// `seferId`.
    pub id: i64,
    pub firma_sefer_no: Option<String>,
    pub plate1: String,
    pub plate2: Option<String>,
    pub driver1: String,
    pub driver2: Option<String>,
    pub start_date: NaiveDate,
    pub start_time: String,
    pub end_date: NaiveDate,
    pub end_time: String,
    pub status: Status,
    pub cancel_code: Option<String>,
    pub cancel_reason: Option<String>,
    pub declared_at: NaiveDateTime,
    pub updates: u32,
    pub loads: Vec<Load>,
}

impl CargoTrip {
    /// Loads not cancelled.
    pub fn valid_loads(&self) -> impl Iterator<Item = &Load> {
        self.loads.iter().filter(|l| l.status == Status::Valid)
    }
}

/// A load (`sefereYukEkleV3` item).
#[derive(Debug, Clone)]
pub struct Load {
    /// `yukId`.
    pub id: i64,
    pub firma_yuk_no: Option<String>,
    /// `tasimaTuruKodu`: 1 dangerous, 2 other.
    pub transport_kind: String,
    pub status: Status,
    pub cancel_code: Option<String>,
    pub cancel_reason: Option<String>,
    /// How many `yukDuzenleV3` calls changed it.
    pub updates: u32,
    /// The item exactly as sent (or as last edited), for assertions on any other field.
    pub input: Element,
}

/// A firm's web-service account (HTTP Basic and `wsuser` both carry it).
#[derive(Debug, Clone)]
pub struct Account {
    pub user: String,
    pub password: String,
    pub title: String,
}

/// Everything the fake service stores.
#[derive(Debug, Default)]
pub(crate) struct Store {
    pub accounts: HashMap<String, Account>,
    /// Take any user name and password as a firm's (a contract fuzzer's random credentials).
    pub open_accounts: bool,
    pub trips: Vec<Trip>,
    pub cargo: Vec<CargoTrip>,
    /// Each firm's registered caller addresses, by environment.
    pub allowed: HashMap<(String, Env), Vec<AllowedIp>>,
    /// What the Ministry's registers answer to pre-flight checks.
    pub registers: Registers,
    seq: i64,
}

/// The registers behind the pre-flight checks. Anything not listed is in order: an inspection
/// valid until the end of 2030, a plate on the firm's certificate, a driver with an SRC
/// certificate, an identity number that matches the name, a travel permit.
#[derive(Debug, Default, Clone)]
pub struct Registers {
    /// Inspections valid until a day other than the default, by plate.
    pub inspections: HashMap<String, NaiveDate>,
    /// Plates on no authorisation certificate.
    pub unauthorised: std::collections::HashSet<String>,
    /// Drivers without a professional qualification, by identity number.
    pub unqualified: std::collections::HashSet<String>,
    /// Identity numbers that do not match the name sent.
    pub mismatched: std::collections::HashSet<String>,
}

impl Store {
    /// Next value of the one counter behind every reference number (so no two references of any
    /// kind are ever equal, and a client that sends one kind where another belongs is answered
    /// "not found" instead of by luck).
    /// The firm these credentials sign in as, if they do.
    pub(crate) fn account(&self, user: &str, password: &str) -> Option<Account> {
        match self.accounts.get(user) {
            Some(a) if a.password == password => Some(a.clone()),
            _ if self.open_accounts => {
                Some(Account { user: user.into(), password: password.into(), title: format!("TEST FİRMASI {user}") })
            }
            _ => None,
        }
    }

    pub(crate) fn next(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    /// A new `uetdsSeferReferansNo`: `YYMMDD` of the departure date, then 8 digits.
    pub(crate) fn trip_reference(&mut self, departure: NaiveDate) -> i64 {
        let n = self.next();
        format!("{}{:08}", departure.format("%y%m%d"), n).parse().expect("14 digits fit an i64")
    }

    /// A new 12-digit `uetdsBiletRefNo`.
    pub(crate) fn ticket_reference(&mut self) -> i64 {
        100_000_000_000 + self.next()
    }

    /// A new group id (9 digits).
    pub(crate) fn group_id(&mut self) -> i64 {
        400_000_000 + self.next()
    }

    /// A new crew record id.
    pub(crate) fn crew_id(&mut self) -> i64 {
        600_000 + self.next()
    }

    /// A new eşya `seferId` (10 digits).
    pub(crate) fn cargo_trip_id(&mut self) -> i64 {
        3_000_000_000 + self.next()
    }

    /// A new eşya `yukId` (10 digits).
    pub(crate) fn load_id(&mut self) -> i64 {
        7_000_000_000 + self.next()
    }
}
