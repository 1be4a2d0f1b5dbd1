//! Field rules of Türkiye's national records as the national notification system keeps them,
//! checked before anything is stored so that bad data fails now with a 422 naming the field
//! instead of later downstream. Each rule is a field type
//! (see [`super::fields`]) whose schema in the OpenAPI document states the same rule.
//!
//! String limits are the national system's: names 50, identity numbers 30, plates and phones 20,
//! addresses 100, HES codes 50, seat numbers 10. Identity and tax numbers carry check digits
//! (T.C. kimlik: d10 = (7·(d1+d3+d5+d7+d9) − (d2+d4+d6+d8)) mod 10, d11 = (d1+…+d10) mod 10,
//! d1 ≠ 0; VKN: the Revenue Administration's weighted rule), which the document names as the
//! formats `tckn` and `vkn`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::fields::{as_given, bounds, field_impls, pattern, string_field, upper, Field, Text};
use super::{kinds::Gender, Invalid};
use crate::{ids::VehicleId, refdata};

pub const NAME_MAX: usize = 50;
pub const ADDRESS_MAX: usize = 100;
pub const HES_MAX: usize = 50;
pub const SEAT_MAX: usize = 10;
pub const TICKET_SERIAL_MAX: usize = 30;
/// Sender and receiver titles (`gonderenUnvan`, `aliciUnvan`) have no published bound; this
/// one is generous for a company title and keeps rows small.
pub const TITLE_MAX: usize = 250;

/// T.C. kimlik numarası check digits.
pub fn is_tckn(s: &str) -> bool {
    let d: Vec<i32> = s.bytes().map(|b| b.wrapping_sub(b'0') as i32).collect();
    if d.len() != 11 || d.iter().any(|x| !(0..=9).contains(x)) || d[0] == 0 {
        return false;
    }
    let odd = d[0] + d[2] + d[4] + d[6] + d[8];
    let even = d[1] + d[3] + d[5] + d[7];
    let d10 = (7 * odd - even).rem_euclid(10);
    let d11 = d[..10].iter().sum::<i32>().rem_euclid(10);
    d[9] == d10 && d[10] == d11
}

/// Vergi kimlik numarası (VKN) check digit.
pub fn is_vkn(s: &str) -> bool {
    let d: Vec<u32> = s.bytes().map(|b| b.wrapping_sub(b'0') as u32).collect();
    if d.len() != 10 || d.iter().any(|x| *x > 9) {
        return false;
    }
    let sum: u32 = (0..9)
        .map(|p| {
            let tmp = (d[p] + 9 - p as u32) % 10;
            let v = (tmp * (1 << (9 - p))) % 9;
            if tmp != 0 && v == 0 {
                9
            } else {
                v
            }
        })
        .sum();
    (10 - sum % 10) % 10 == d[9]
}

pattern!(
    /// Letters and digits, spaces anywhere; 1–20 of them once the spaces are removed.
    PLATE = r"^ *(?:[A-Za-z0-9] *){1,20}$"
);
/// Raw length of a plate with its spaces.
const PLATE_RAW_MAX: usize = 32;

string_field! {
    /// A vehicle plate, upper-cased and without spaces. The civil pattern is not enforced: the
    /// downstream's own test plate (`06TARIFESIZ123`) breaks it.
    pub struct Plate as "Plate" {
        pattern: PLATE,
        max: Some(PLATE_RAW_MAX),
        error: "must be a plate of 1–20 letters and digits (spaces are removed)",
        normalize: |raw: &str| raw.chars().filter(|c| *c != ' ').collect::<String>().to_ascii_uppercase(),
        schema: {"description": "1–20 letters and digits; spaces are removed and letters upper-cased.",
                 "examples": ["34 ABC 123"]},
    }
}

pattern!(
    /// An 11-digit T.C. kimlik numarası (its check digits are the `tckn` format).
    TCKN = r"^[1-9][0-9]{10}$"
);
pattern!(
    /// A passport or foreign identity number.
    PASSPORT = r"^[A-Za-z0-9-]{1,30}$"
);

/// The schema of a T.C. kimlik numarası: the shape, and the check digits as format `tckn`.
fn tckn_schema() -> Value {
    json!({"type": "string", "pattern": TCKN.source(), "format": "tckn"})
}

string_field! {
    /// An identity number: a T.C. kimlik numarası or a passport or foreign identity number, 1–30
    /// letters, digits or `-`, upper-cased. Which one a person must have follows from their
    /// nationality: see [`check_identity`].
    pub struct IdentityNumber as "IdentityNumber" {
        pattern: PASSPORT,
        max: None,
        error: "must be 1–30 letters, digits or `-` (a T.C. identity number or a passport number)",
        normalize: upper,
        schema: {"description": "A T.C. kimlik numarası (for Turkish nationals: 11 digits with valid check digits, \
                                 format `tckn`) or a passport or foreign identity number: 1–30 letters, digits or `-`. \
                                 Upper-cased.",
                 "examples": ["10000000146", "U12345678"]},
    }
}

/// The rule across a person's fields: a Turkish national (nationality `TR`, or none given)
/// is identified by a T.C. kimlik numarası with valid check digits. `Err` is the reason.
fn check_identity(identity: &IdentityNumber, nationality: Option<&Nationality>) -> Result<(), &'static str> {
    if is_turkish(nationality.map(Nationality::as_str)) && !is_tckn(identity.as_str()) {
        return Err("must be a valid 11-digit T.C. identity number (check digits) for a Turkish national; for a \
                    foreign national send `nationality` and the passport number");
    }
    Ok(())
}

/// Who a person is to U-ETDS: an identity number and the nationality it belongs to, with the
/// rule across the two ([`check_identity`]) holding. Made by [`Identity::parse`], so a crew
/// member or passenger value a request made cannot carry a Turkish national without a valid
/// T.C. number; or read back from a row as stored (an erased person's holds the erasure's
/// placeholder), which is shown, never written back.
#[derive(Clone, PartialEq, Eq, Serialize, ToSchema, sqlx::FromRow)]
#[schema(description = "Who a person is: an identity number and the nationality it belongs to.")]
pub struct Identity {
    /// A T.C. kimlik numarası, or a passport or foreign identity number; upper-cased.
    #[serde(rename = "identity_number")]
    #[sqlx(rename = "identity_number")]
    number: String,
    /// Two upper-case letters; `null` means Turkish, as `TR` does.
    nationality: Option<String>,
}

impl Identity {
    /// `Err` names `identity_number`, the field to fix.
    pub fn parse(number: IdentityNumber, nationality: Option<Nationality>) -> Result<Identity, Invalid> {
        check_identity(&number, nationality.as_ref()).map_err(|why| Invalid::new("identity_number", why))?;
        Ok(Identity { number: number.into_inner(), nationality: nationality.map(Nationality::into_inner) })
    }

    /// Upper-cased, as stored.
    pub fn number(&self) -> &str {
        &self.number
    }

    /// Two upper-case letters; `None` when not given, which means Turkish (as `TR` does).
    pub fn nationality(&self) -> Option<&str> {
        self.nationality.as_deref()
    }
}

/// Personal data: the number is never printed.
impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity").field("number", &"***").field("nationality", &self.nationality).finish()
    }
}

/// Who a crew member or passenger is: their [`Identity`], names and gender, the part both
/// registries keep alike and U-ETDS names them by. Personal data, so not `Debug`.
#[derive(Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(description = "Who a person is: identity, names and gender.")]
pub struct Individual {
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub identity: Identity,
    pub first_name: String,
    pub last_name: String,
    pub gender: Gender,
}

impl Individual {
    /// Each field as its request parsed it; `Err` when the identity's rule fails
    /// ([`Identity::parse`]).
    pub fn parse(
        identity_number: IdentityNumber,
        nationality: Option<Nationality>,
        first_name: PersonName,
        last_name: PersonName,
        gender: Gender,
    ) -> Result<Individual, Invalid> {
        Ok(Individual {
            identity: Identity::parse(identity_number, nationality)?,
            first_name: first_name.into_inner(),
            last_name: last_name.into_inner(),
            gender,
        })
    }
}

/// [`check_identity`] in the document: when `nationality` is absent, null or TR (any case),
/// `identity_number` has the T.C. shape and format.
pub fn identity_rule() -> Value {
    json!({
        "if": {"anyOf": [
            {"not": {"required": ["nationality"]}},
            {"properties": {"nationality": {"anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[Tt][Rr]$"}]}}},
        ]},
        "then": {"properties": {"identity_number": tckn_schema()}},
    })
}

/// Baggage needs a seat number (the downstream knows baggage by seat), as JSON Schema.
pub fn baggage_rule() -> Value {
    json!({
        "if": {"required": ["baggage"], "properties": {"baggage": {"type": "array", "minItems": 1}}},
        "then": {"required": ["seat_no"], "properties": {"seat_no": {"not": {"type": "null"}}}},
    })
}

pattern!(NATIONALITY = r"^[A-Za-z]{2}$");

string_field! {
    /// A country code as U-ETDS takes it: two letters (ISO 3166-1 alpha-2 style), upper-cased.
    pub struct Nationality as "Nationality" {
        pattern: NATIONALITY,
        max: None,
        error: "must be a two-letter country code such as TR",
        normalize: upper,
        schema: {"description": "Two-letter country code (ISO 3166-1 alpha-2), upper-cased; absent means TR.",
                 "examples": ["TR"]},
    }
}

/// True when a nationality (absent means Turkish) calls for a T.C. identity number.
pub fn is_turkish(nationality: Option<&str>) -> bool {
    nationality.is_none_or(|n| n == "TR")
}

pattern!(
    /// Digits with `+`, spaces, `-` and parentheses; at least 3 digits.
    PHONE = r"^[ +()-]*(?:[0-9][ +()-]*){3,20}$"
);
const PHONE_MAX: usize = 20;

string_field! {
    /// A phone number: digits with optional `+`, spaces, `-` and parentheses, at most 20
    /// characters, at least 3 digits; stored trimmed.
    pub struct Phone as "Phone" {
        pattern: PHONE,
        max: Some(PHONE_MAX),
        error: "must be a phone number of at most 20 characters (digits, +, spaces, -, parentheses)",
        normalize: |raw: &str| raw.trim().to_string(),
        schema: {"description": "Digits with optional +, spaces, - and parentheses; at least 3 digits.",
                 "examples": ["+90 532 000 00 00"]},
    }
}

pattern!(VKN = r"^[0-9]{10}$");
pattern!(
    /// Either shape of a tax number (which one, and its check digits, [`TaxId`] checks).
    TAX_ID = r"^(?:[0-9]{10}|[1-9][0-9]{10})$"
);

string_field! {
    /// A sender's or receiver's tax number: a 10-digit VKN (a company) or an 11-digit T.C.
    /// number (a person), check digits verified.
    pub struct TaxId as "TaxId" {
        pattern: TAX_ID,
        max: None,
        error: "must be a 10-digit VKN or an 11-digit T.C. identity number with valid check digits",
        normalize: as_given,
        also: |raw: &str| is_vkn(raw) || is_tckn(raw),
        schema: {
            "description": "A 10-digit VKN (format `vkn`) or an 11-digit T.C. identity number (format `tckn`), \
                            check digits verified.",
            "anyOf": [{"type": "string", "pattern": VKN.source(), "format": "vkn"}, tckn_schema()],
            "examples": ["4540536920"],
        },
    }
}

/// The ids of the reference data in the document: every valid value listed.
fn place_ids() -> Vec<i32> {
    refdata::installed().map(|r| r.districts.iter().map(|d| d.id).collect()).unwrap_or_default()
}

/// A district or airport id of the reference data (`GET /ref/districts`), sent as an integer
/// or as a string of its digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaceId(pub i32);

impl PlaceId {
    fn parse(v: &Value) -> Result<PlaceId, String> {
        let id = match v {
            Value::Number(_) => super::fields::whole(v),
            // The canonical digits only, so a string is valid exactly when the document's list has it.
            Value::String(s) if s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0') && s.len() <= 9 => {
                s.parse().ok()
            }
            _ => None,
        };
        let unknown =
            || "must be a district or airport id of GET /ref/districts (an integer or its digits)".to_string();
        let id = id.and_then(|n| i32::try_from(n).ok()).ok_or_else(unknown)?;
        let data = refdata::installed().ok_or("reference data is not loaded")?;
        data.district(id).map(|d| PlaceId(d.id)).ok_or_else(unknown)
    }
}

impl PlaceId {
    /// The province the place is in.
    pub fn city(self) -> Option<i32> {
        refdata::installed()?.district(self.0).map(|d| d.city_id)
    }
}

impl Field for PlaceId {
    fn name() -> Cow<'static, str> {
        "PlaceId".into()
    }
    fn json_schema() -> Value {
        let ids = place_ids();
        let texts: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
        json!({
            "description": "A district or airport id of the reference data (GET /ref/districts), as an integer or \
                            as a string of its digits.",
            "anyOf": [{"type": "integer", "enum": ids}, {"type": "string", "enum": texts}],
            "examples": [1421],
        })
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::parse(&v)
    }
}
field_impls!(PlaceId);

impl Serialize for PlaceId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.0)
    }
}

/// A province id of the reference data (`GET /ref/cities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CityId(pub i32);

impl CityId {
    fn new(id: i64) -> Result<CityId, String> {
        let unknown = || "must be a province id of GET /ref/cities".to_string();
        let id = i32::try_from(id).map_err(|_| unknown())?;
        let data = refdata::installed().ok_or("reference data is not loaded")?;
        data.city(id).map(|c| CityId(c.id)).ok_or_else(unknown)
    }
}

impl Field for CityId {
    fn name() -> Cow<'static, str> {
        "CityId".into()
    }
    fn json_schema() -> Value {
        let ids: Vec<i32> = refdata::installed().map(|r| r.cities.iter().map(|c| c.id).collect()).unwrap_or_default();
        json!({"type": "integer", "enum": ids, "description": "A province id of the reference data (GET /ref/cities).",
               "examples": [34]})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::new(super::fields::integer(&v)?)
    }
}

impl<'de> serde::Deserialize<'de> for CityId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        CityId::new(super::fields::deserialize_integer(d)?).map_err(serde::de::Error::custom)
    }
}

impl utoipa::PartialSchema for CityId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        super::fields::raw_schema(Self::json_schema())
    }
}

impl utoipa::ToSchema for CityId {
    fn name() -> Cow<'static, str> {
        <Self as Field>::name()
    }
}

impl Serialize for CityId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.0)
    }
}

/// How a journey names its vehicle: a vehicle record id (an integer, or a string of its digits)
/// or a plate (linked to the active vehicle record holding it, if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VehicleRef {
    Record(VehicleId),
    Plate(Plate),
}

impl VehicleRef {
    /// The caller's words as stored (`vehicle_ref`), read back.
    pub fn stored(s: &str) -> VehicleRef {
        Self::from_json(Value::String(s.to_string())).unwrap_or_else(|_| VehicleRef::Plate(Plate::stored(s.into())))
    }
}

impl Field for VehicleRef {
    fn name() -> Cow<'static, str> {
        "VehicleRef".into()
    }
    fn json_schema() -> Value {
        json!({
            "description": "A vehicle record id (an integer, or a string of its digits) or a plate.",
            "anyOf": [{"type": "integer", "minimum": 1, "maximum": i64::MAX}, Plate::json_schema()],
            "examples": ["34ABC123", 12],
        })
    }
    fn from_json(v: Value) -> Result<Self, String> {
        match v {
            Value::Number(_) => match super::fields::whole(&v) {
                Some(id) if id >= 1 => Ok(VehicleRef::Record(VehicleId(id))),
                _ => Err("must be a vehicle record id (a positive integer) or a plate".into()),
            },
            Value::String(s) => {
                let id = (!s.starts_with('0') && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| s.parse::<i64>().ok())
                    .flatten();
                match id {
                    Some(id) => Ok(VehicleRef::Record(VehicleId(id))),
                    None => Plate::parse(&s).map(VehicleRef::Plate),
                }
            }
            other => Err(format!("must be a vehicle record id or a plate, not {other}")),
        }
    }
}
field_impls!(VehicleRef);

impl Serialize for VehicleRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            VehicleRef::Record(id) => s.serialize_i64(id.get()),
            VehicleRef::Plate(p) => s.serialize_str(p.as_str()),
        }
    }
}

/// Crew members one journey may name.
pub const MAX_CREW: usize = 10;

/// A journey's crew: personnel record ids, each once, at most [`MAX_CREW`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Crew(pub Vec<i64>);

impl Field for Crew {
    fn name() -> Cow<'static, str> {
        "Crew".into()
    }
    fn json_schema() -> Value {
        json!({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": i64::MAX}, "maxItems": MAX_CREW,
               "uniqueItems": true,
               "description": "Personnel record ids of the crew, in order, each once, at most 10."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        let Value::Array(items) = v else { return Err("must be an array of personnel record ids".into()) };
        if items.len() > MAX_CREW {
            return Err(format!("must name at most {MAX_CREW} crew members"));
        }
        let mut ids = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match super::fields::whole(item) {
                Some(id) if id >= 1 => {
                    if ids.contains(&id) {
                        return Err(format!("lists {id} twice (at {i})"));
                    }
                    ids.push(id);
                }
                _ => return Err(format!("[{i}] must be a personnel record id (a positive integer)")),
            }
        }
        Ok(Crew(ids))
    }
}
field_impls!(Crew);

impl Serialize for Crew {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

bounds!(
    /// Hours a scheduled trip takes.
    TravelHours / TravelHoursRange, 1, 72, "Travel duration in hours, 1–72."
);
bounds!(
    /// A positive code of the downstream (firm id, UNET route code).
    PositiveCode / PositiveCodeRange, 1, i64::MAX, "A positive integer code."
);
bounds!(
    /// A vehicle's model year: 1950 up to next year's models.
    ModelYear / ModelYearRange, 1950, super::fields::next_year(), "Model year, from 1950 to next year."
);
bounds!(
    /// Seats or load a vehicle takes.
    Capacity / CapacityRange, 0, 100_000, "Passenger or cargo capacity, 0–100000."
);
bounds!(
    /// The downstream's transport type: 1 road, 2 rail, 3 sea, 4 air.
    TransportType / TransportTypeRange, 1, 4, "1 road, 2 rail, 3 sea, 4 air."
);
bounds!(
    /// 1 full load, 2 partial load.
    TransportMode / TransportModeRange, 1, 2, "1 full load, 2 partial load."
);
bounds!(
    /// A cargo kind code of the downstream.
    CargoTypeCode / CargoTypeCodeRange, 1, i32::MAX as i64, "Cargo kind code (positive)."
);

/// A person's first or last name.
pub type PersonName = Text<NAME_MAX>;
pub type Address = Text<ADDRESS_MAX>;
pub type HesCode = Text<HES_MAX>;
pub type SeatNo = Text<SEAT_MAX>;
pub type TicketSerial = Text<TICKET_SERIAL_MAX>;
/// A company or person's title (sender, receiver).
pub type Title = Text<TITLE_MAX>;
/// Why a notification is cancelled (`iptalAciklama`, at most 400 characters downstream).
pub type CancelReason = Text<400>;
/// A code of the downstream's cancel kinds (a shipment's `cancel_kind`).
pub type CancelKind = Text<40>;

pattern!(
    /// A UN number (the four digits of the UN list of dangerous goods).
    UN_NUMBER = r"^[0-9]{4}$"
);

string_field! {
    /// A dangerous good's UN number (U-ETDS `unId`).
    pub struct UnNumber as "UnNumber" {
        pattern: UN_NUMBER,
        max: None,
        error: "must be a UN number: four digits, such as 1203",
        normalize: as_given,
        schema: {"description": "A dangerous good's UN number: four digits.", "examples": ["1203"]},
    }
}

pattern!(
    /// A code of U-ETDS's list of exemptions for dangerous goods: 1–20 letters, digits, `.` or `-`.
    EXEMPTION = r"^[A-Za-z0-9.-]{1,20}$"
);

string_field! {
    /// An exemption's code (U-ETDS `muafiyetTuru`, from its `paramTehlikeMaddeMuafiyetTurleri`).
    pub struct ExemptionCode as "ExemptionCode" {
        pattern: EXEMPTION,
        max: None,
        error: "must be an exemption code of 1–20 letters, digits, `.` or `-`",
        normalize: as_given,
        schema: {"description": "The code of an exemption from U-ETDS's list of dangerous-goods exemptions."},
    }
}

pattern!(
    /// A baggage tag's barcode: 1–40 letters, digits or `-`.
    BARCODE = r"^[A-Za-z0-9-]{1,40}$"
);

/// Baggage barcodes one passenger may carry.
pub const BAGGAGE_MAX: usize = 20;

string_field! {
    /// A baggage tag's barcode (U-ETDS `bagajBarkodNumaralari`), upper-cased.
    pub struct Barcode as "Barcode" {
        pattern: BARCODE,
        max: None,
        error: "must be a barcode of 1–40 letters, digits or `-`",
        normalize: upper,
        schema: {"description": "A baggage tag's barcode: 1–40 letters, digits or `-`, upper-cased.",
                 "examples": ["TNS0001234"]},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tckn_vectors() {
        for ok in ["17291716060", "10000000146", "11111111110", "23695921030"] {
            assert!(is_tckn(ok), "{ok}");
        }
        for bad in ["17291716050", "11111111111", "01729171606", "1729171606", "1729171606a", ""] {
            assert!(!is_tckn(bad), "{bad}");
        }
    }

    #[test]
    fn vkn_vectors() {
        assert!(is_vkn("4540536920"));
        assert!(is_vkn("1234567890"));
        assert!(!is_vkn("4540536921"));
        assert!(!is_vkn("123456789"));
    }

    #[test]
    fn identity_depends_on_nationality() {
        let id = |s: &str| IdentityNumber::parse(s).unwrap();
        let tr = Nationality::parse("tr").unwrap();
        let de = Nationality::parse("DE").unwrap();
        assert!(check_identity(&id("17291716060"), None).is_ok());
        assert!(check_identity(&id("17291716060"), Some(&tr)).is_ok());
        assert!(check_identity(&id("U1234567"), Some(&tr)).is_err());
        assert!(check_identity(&id("17291716050"), None).is_err(), "check digits");
        assert!(check_identity(&id("17291716050"), Some(&de)).is_ok(), "a foreign id may have 11 digits");
        assert_eq!(id("u123-45").as_str(), "U123-45");
        assert!(IdentityNumber::parse(&"A".repeat(31)).is_err());
        assert!(IdentityNumber::parse("").is_err());
        assert!(IdentityNumber::parse(" 17291716060").is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(Plate::parse(" 34 abc 123 ").unwrap().as_str(), "34ABC123");
        assert_eq!(Plate::parse("06TARIFESIZ123").unwrap().as_str(), "06TARIFESIZ123");
        assert!(Plate::parse("34-ABC-12").is_err());
        assert!(Plate::parse(&"1".repeat(21)).is_err());
        assert!(Plate::parse("   ").is_err());
        assert!(TaxId::parse("4540536920").is_ok());
        assert!(TaxId::parse("17291716060").is_ok());
        assert!(TaxId::parse("4540536921").is_err());
        assert_eq!(Nationality::parse("de").unwrap().as_str(), "DE");
        assert!(Nationality::parse("DEU").is_err());
        assert!(Phone::parse("+90 (532) 000-00-00").is_ok());
        assert!(Phone::parse("12").is_err());
        assert!(Phone::parse("+90 532 000 00 00 000").is_err(), "21 characters");
    }
}
