//! A cargo shipment as a request states it ([`CargoIn`]: each field parsed by its own type) and
//! as a value whose rules across fields hold ([`CargoShipment`], made only by parsing a
//! `CargoIn`).

use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{
    fields::{ceiling, Amount, Day, Int, RecordId, Text, Time},
    kinds::{CargoUnit, DangerousPackaging},
    national::{
        is_turkish, CargoTypeCode, CityId, ExemptionCode, Nationality, PlaceId, Plate, TaxId, Title, TransportMode,
        TransportType, UnNumber,
    },
    Invalid,
};
use crate::{
    ids::{PersonId, VehicleId},
    refdata,
};

ceiling!(
    /// A cargo amount: non-negative, below ten billion units.
    CargoAmount / CargoCeiling, 1e10, "Amount of cargo in `cargo_unit`, non-negative, below 10000000000."
);

/// A shipment as sent on create; any subset of it on update.
///
/// Rules across fields: each district belongs to its city; unloading is not before loading.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CargoIn {
    /// An active vehicle record of the organization.
    pub vehicle_id: RecordId,
    /// The driver, an active personnel record (U-ETDS's goods service wants the driver's
    /// identity; a shipment without one, or with a person who is not a driver, is submitted with a
    /// warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_id: Option<RecordId>,
    /// A second driver taking turns at the wheel: another active personnel record (with
    /// `driver_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_driver_id: Option<RecordId>,
    /// The trailer's plate, when the vehicle pulls one (U-ETDS `plaka2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailer_plate: Option<Plate>,
    pub transport_type: TransportType,
    pub cargo_type: CargoTypeCode,
    pub transport_mode: TransportMode,
    pub cargo_amount: CargoAmount,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: TaxId,
    pub sender_name: Title,
    pub receiver_tax_number: TaxId,
    pub receiver_name: Title,
    pub loading_date: Day,
    pub loading_time: Time,
    /// Required in Türkiye; absent when loading abroad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loading_city_id: Option<CityId>,
    /// A district of `loading_city_id`; absent when loading abroad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loading_district_id: Option<PlaceId>,
    /// The two-letter country code when loading abroad (no province or district then);
    /// absent (or `TR`): in Türkiye.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loading_country: Option<Nationality>,
    /// Not before loading.
    pub unloading_date: Day,
    pub unloading_time: Time,
    /// Required in Türkiye; absent when unloading abroad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unloading_city_id: Option<CityId>,
    /// A district of `unloading_city_id`; absent when unloading abroad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unloading_district_id: Option<PlaceId>,
    /// The two-letter country code when unloading abroad; absent (or `TR`): in Türkiye.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unloading_country: Option<Nationality>,
    /// Dangerous goods: their UN number (with `dangerous_packaging`); absent for other goods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub un_number: Option<UnNumber>,
    /// How the dangerous goods are carried (with `un_number`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    /// The exemption the dangerous goods are carried under, when one applies (with
    /// `un_number`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<ExemptionCode>,
    /// More loads on the same trip (at most 49): each its own goods and parties, loaded and
    /// unloaded where and when the shipment is. The shipment's own fields are its first load.
    /// Absent or empty: the shipment's own load alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 49)]
    pub items: Option<Vec<CargoItemIn>>,
}

/// Loads a shipment carries besides its own, at most.
pub const MAX_ITEMS: usize = 49;

/// One more load of a shipment: its goods and parties (the trip, the places and the times are
/// the shipment's).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CargoItemIn {
    pub cargo_type: CargoTypeCode,
    pub cargo_amount: CargoAmount,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: TaxId,
    pub sender_name: Title,
    pub receiver_tax_number: TaxId,
    pub receiver_name: Title,
    /// Dangerous goods: their UN number (with `dangerous_packaging`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub un_number: Option<UnNumber>,
    /// How the dangerous goods are carried (with `un_number`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    /// The exemption the dangerous goods are carried under (with `un_number`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<ExemptionCode>,
}

impl CargoItemIn {
    /// The rule across an item's fields, as JSON Schema: dangerous goods' fields go together.
    pub fn schema_rules() -> Value {
        dangerous_rule()
    }
}

/// Dangerous goods: none of their fields, or the number and the way of carrying (and an
/// exemption, if any).
fn dangerous_rule() -> Value {
    json!({"anyOf": [
        {"properties": {"un_number": {"type": "null"}, "dangerous_packaging": {"type": "null"},
                        "dangerous_exemption": {"type": "null"}}},
        {"required": ["un_number", "dangerous_packaging"],
         "properties": {"un_number": {"type": "string"}, "dangerous_packaging": {"type": "string"}}},
    ]})
}

/// The dangerous goods of a load's three fields, which go together (`at` prefixes the field
/// named when they do not).
fn dangerous_goods(
    at: &str,
    un: Option<UnNumber>,
    packaging: Option<DangerousPackaging>,
    exemption: Option<ExemptionCode>,
) -> Result<Option<Dangerous>, Invalid> {
    let field = |f: &str| format!("{at}{f}");
    Ok(match (un, packaging, exemption) {
        (Some(un), Some(packaging), exemption) => Some(Dangerous {
            un_number: un.into_inner(),
            packaging,
            exemption: exemption.map(ExemptionCode::into_inner),
        }),
        (Some(_), None, _) => return Err(Invalid::new(field("dangerous_packaging"), "is required with `un_number`")),
        (None, Some(_), _) => return Err(Invalid::new(field("un_number"), "is required with `dangerous_packaging`")),
        (None, None, Some(_)) => return Err(Invalid::new(field("dangerous_exemption"), "needs `un_number`")),
        (None, None, None) => None,
    })
}

/// Dangerous goods: what U-ETDS is told of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dangerous {
    pub un_number: String,
    pub packaging: DangerousPackaging,
    pub exemption: Option<String>,
}

/// What is carried, in U-ETDS's codes.
#[derive(Debug, Clone, PartialEq)]
pub struct Goods {
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub amount: f64,
    pub unit: CargoUnit,
}

/// A sender or a receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    pub tax_number: String,
    pub name: String,
}

/// Where and when the goods are loaded or unloaded: a district of its province, or a country
/// abroad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handover {
    pub date: NaiveDate,
    pub time: NaiveTime,
    pub place: Site,
}

/// Where goods change hands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// A province and one of its districts.
    Province { city_id: i32, district_id: i32 },
    /// A country other than Türkiye, by its two-letter code.
    Abroad { country: String },
}

/// A shipment whose every rule holds: each field's, and those across fields. The vehicle and
/// the driver are still only ids: whether the organization has them active is the store's to
/// say.
#[derive(Debug, Clone)]
pub struct CargoShipment {
    vehicle_id: VehicleId,
    driver_id: Option<PersonId>,
    second_driver_id: Option<PersonId>,
    trailer_plate: Option<String>,
    goods: Goods,
    sender: Party,
    receiver: Party,
    loading: Handover,
    unloading: Handover,
    dangerous: Option<Dangerous>,
    /// The loads besides the shipment's own, each of whose rules holds.
    items: Vec<CargoItemIn>,
}

impl CargoShipment {
    pub fn items(&self) -> &[CargoItemIn] {
        &self.items
    }
    pub fn dangerous(&self) -> Option<&Dangerous> {
        self.dangerous.as_ref()
    }
    pub fn vehicle_id(&self) -> VehicleId {
        self.vehicle_id
    }
    pub fn driver_id(&self) -> Option<PersonId> {
        self.driver_id
    }
    pub fn second_driver_id(&self) -> Option<PersonId> {
        self.second_driver_id
    }
    pub fn trailer_plate(&self) -> Option<&str> {
        self.trailer_plate.as_deref()
    }
    pub fn goods(&self) -> &Goods {
        &self.goods
    }
    pub fn sender(&self) -> &Party {
        &self.sender
    }
    pub fn receiver(&self) -> &Party {
        &self.receiver
    }
    pub fn loading(&self) -> &Handover {
        &self.loading
    }
    pub fn unloading(&self) -> &Handover {
        &self.unloading
    }

    /// The rules [`TryFrom<CargoIn>`] applies across fields, as JSON Schema keywords of
    /// `CargoIn`: each district with its province, one alternative per province listing its
    /// places; the order, which JSON Schema cannot state, in `x-tns-not-before`.
    pub fn schema_rules() -> Value {
        let provinces = |kind: &str| -> Value {
            let alternatives: Vec<Value> = refdata::installed()
                .map(|r| {
                    r.cities
                        .iter()
                        .map(|c| {
                            let ids: Vec<i32> =
                                r.districts.iter().filter(|d| d.city_id == c.id).map(|d| d.id).collect();
                            let texts: Vec<String> = ids.iter().map(i32::to_string).collect();
                            json!({"properties": {
                                format!("{kind}_city_id"): {"const": c.id},
                                format!("{kind}_district_id"): {"anyOf": [{"enum": ids}, {"enum": texts}]},
                            }})
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({"anyOf": alternatives})
        };
        // Abroad: a country other than TR, no province or district; else both, of one province.
        let site = |kind: &str| -> Value {
            let (country, city, district) =
                (format!("{kind}_country"), format!("{kind}_city_id"), format!("{kind}_district_id"));
            json!({"anyOf": [
                {"required": [country], "properties": {
                    country.clone(): {"type": "string", "not": {"pattern": "^[Tt][Rr]$"}},
                    city.clone(): {"type": "null"}, district.clone(): {"type": "null"}}},
                {"allOf": [
                    {"required": [city, district]},
                    {"properties": {country: {"anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[Tt][Rr]$"}]}}},
                    provinces(kind),
                ]},
            ]})
        };
        // A second driver takes turns with a first one; dangerous goods' fields go together.
        let needs = |field: &str, other: &str| {
            json!({
                "if": {"required": [field], "properties": {field: {"not": {"type": "null"}}}},
                "then": {"required": [other], "properties": {other: {"not": {"type": "null"}}}},
            })
        };
        let dangerous = dangerous_rule();
        json!({
            "allOf": [site("loading"), site("unloading"), needs("second_driver_id", "driver_id"), dangerous],
            "x-tns-other-than": [["/second_driver_id", "/driver_id"]],
            "x-tns-not-before": [[["/loading_date", "/loading_time"], ["/unloading_date", "/unloading_time"]]],
        })
    }
}

/// `kind`'s place as given: a province and district (checked to be in it), or a country abroad
/// and neither.
struct Given {
    date: Day,
    time: Time,
    city: Option<CityId>,
    district: Option<PlaceId>,
    country: Option<Nationality>,
}

fn handover(kind: &str, g: Given) -> Result<Handover, Invalid> {
    let field = |f: &str| format!("{kind}_{f}");
    let abroad = g.country.as_ref().map(|c| c.as_str()).filter(|c| !is_turkish(Some(c)));
    let place = match (abroad, g.city, g.district) {
        (Some(country), None, None) => Site::Abroad { country: country.to_string() },
        (Some(_), Some(_), _) => return Err(Invalid::new(field("city_id"), "must be absent when abroad")),
        (Some(_), None, Some(_)) => return Err(Invalid::new(field("district_id"), "must be absent when abroad")),
        (None, None, _) => return Err(Invalid::new(field("city_id"), "is required in Türkiye")),
        (None, Some(_), None) => return Err(Invalid::new(field("district_id"), "is required in Türkiye")),
        (None, Some(city), Some(district)) => {
            if district.city() != Some(city.0) {
                return Err(Invalid::new(
                    field("district_id"),
                    format!("district {} is not in province {}", district.0, city.0),
                ));
            }
            Site::Province { city_id: city.0, district_id: district.0 }
        }
    };
    Ok(Handover { date: g.date.0, time: g.time.0, place })
}

impl TryFrom<CargoIn> for CargoShipment {
    type Error = Invalid;

    fn try_from(c: CargoIn) -> Result<CargoShipment, Invalid> {
        let loading = handover(
            "loading",
            Given {
                date: c.loading_date,
                time: c.loading_time,
                city: c.loading_city_id,
                district: c.loading_district_id,
                country: c.loading_country,
            },
        )?;
        let unloading = handover(
            "unloading",
            Given {
                date: c.unloading_date,
                time: c.unloading_time,
                city: c.unloading_city_id,
                district: c.unloading_district_id,
                country: c.unloading_country,
            },
        )?;
        if (unloading.date, unloading.time) < (loading.date, loading.time) {
            return Err(Invalid::new("unloading_date", "unloading must not be before loading"));
        }
        let person = |id: RecordId| PersonId(id.get());
        let (driver_id, second_driver_id) = (c.driver_id.map(person), c.second_driver_id.map(person));
        match (driver_id, second_driver_id) {
            (None, Some(_)) => return Err(Invalid::new("second_driver_id", "needs a first driver (`driver_id`)")),
            (Some(a), Some(b)) if a == b => {
                return Err(Invalid::new("second_driver_id", "must be another person than `driver_id`"))
            }
            _ => {}
        }
        let dangerous = dangerous_goods("", c.un_number, c.dangerous_packaging, c.dangerous_exemption)?;
        let items = c.items.unwrap_or_default();
        if items.len() > MAX_ITEMS {
            return Err(Invalid::new("items", format!("at most {MAX_ITEMS} loads besides the shipment's own")));
        }
        for (i, item) in items.iter().enumerate() {
            let at = format!("items[{i}].");
            dangerous_goods(&at, item.un_number.clone(), item.dangerous_packaging, item.dangerous_exemption.clone())?;
        }
        Ok(CargoShipment {
            vehicle_id: VehicleId(c.vehicle_id.get()),
            driver_id,
            second_driver_id,
            trailer_plate: c.trailer_plate.map(Plate::into_inner),
            goods: Goods {
                // The bounds of these fields' types fit the narrower columns.
                transport_type: c.transport_type.get() as i16,
                cargo_type: c.cargo_type.get() as i32,
                transport_mode: c.transport_mode.get() as i16,
                amount: c.cargo_amount.get(),
                unit: c.cargo_unit,
            },
            sender: Party { tax_number: c.sender_tax_number.into_inner(), name: c.sender_name.into_inner() },
            receiver: Party { tax_number: c.receiver_tax_number.into_inner(), name: c.receiver_name.into_inner() },
            loading,
            unloading,
            dangerous,
            items,
        })
    }
}

/// A shipment as stored: the flat columns a [`CargoShipment`] is written as, read back by its
/// row and shown by its answer. Read back as plain values, without the input's rules (which
/// may grow stricter than what was stored under them).
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(description = "A shipment's fields, as stored: absent where unset.")]
pub struct CargoFields {
    #[schema(value_type = i64)]
    pub vehicle_id: VehicleId,
    #[schema(value_type = Option<i64>)]
    pub driver_id: Option<PersonId>,
    /// A second driver (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    pub second_driver_id: Option<PersonId>,
    /// The trailer's plate (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailer_plate: Option<String>,
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub cargo_amount: f64,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: String,
    pub sender_name: String,
    pub receiver_tax_number: String,
    pub receiver_name: String,
    #[sqlx(try_from = "NaiveDate")]
    pub loading_date: Day,
    #[sqlx(try_from = "NaiveTime")]
    pub loading_time: Time,
    /// Absent when loading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_city_id: Option<i32>,
    /// Absent when loading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_district_id: Option<i32>,
    /// The country when loading abroad; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_country: Option<String>,
    #[sqlx(try_from = "NaiveDate")]
    pub unloading_date: Day,
    #[sqlx(try_from = "NaiveTime")]
    pub unloading_time: Time,
    /// Absent when unloading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_city_id: Option<i32>,
    /// Absent when unloading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_district_id: Option<i32>,
    /// The country when unloading abroad; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_country: Option<String>,
    /// Dangerous goods' UN number (absent for other goods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub un_number: Option<String>,
    /// How dangerous goods are carried (absent for other goods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    /// The exemption dangerous goods travel under (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<String>,
    /// The loads besides the shipment's own (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[sqlx(json)]
    pub items: Vec<CargoItem>,
}

/// The stored shipment as its input, which a partial update is merged into.
impl From<&CargoFields> for CargoIn {
    fn from(c: &CargoFields) -> Self {
        CargoIn {
            vehicle_id: Int::stored(c.vehicle_id.get()),
            driver_id: c.driver_id.map(|d| Int::stored(d.get())),
            second_driver_id: c.second_driver_id.map(|d| Int::stored(d.get())),
            trailer_plate: c.trailer_plate.clone().map(Plate::stored),
            transport_type: Int::stored(c.transport_type.into()),
            cargo_type: Int::stored(c.cargo_type.into()),
            transport_mode: Int::stored(c.transport_mode.into()),
            cargo_amount: Amount::stored(c.cargo_amount),
            cargo_unit: c.cargo_unit,
            sender_tax_number: TaxId::stored(c.sender_tax_number.clone()),
            sender_name: Text::stored(c.sender_name.clone()),
            receiver_tax_number: TaxId::stored(c.receiver_tax_number.clone()),
            receiver_name: Text::stored(c.receiver_name.clone()),
            loading_date: c.loading_date,
            loading_time: c.loading_time,
            loading_city_id: c.loading_city_id.map(CityId),
            loading_district_id: c.loading_district_id.map(PlaceId),
            loading_country: c.loading_country.clone().map(Nationality::stored),
            unloading_date: c.unloading_date,
            unloading_time: c.unloading_time,
            unloading_city_id: c.unloading_city_id.map(CityId),
            unloading_district_id: c.unloading_district_id.map(PlaceId),
            unloading_country: c.unloading_country.clone().map(Nationality::stored),
            un_number: c.un_number.clone().map(UnNumber::stored),
            dangerous_packaging: c.dangerous_packaging,
            dangerous_exemption: c.dangerous_exemption.clone().map(ExemptionCode::stored),
            items: (!c.items.is_empty()).then(|| c.items.iter().map(CargoItemIn::from).collect()),
        }
    }
}

impl From<&CargoItemIn> for CargoItem {
    fn from(i: &CargoItemIn) -> CargoItem {
        CargoItem {
            // The bounds of the field's type fit the column's.
            cargo_type: i.cargo_type.get() as i32,
            cargo_amount: i.cargo_amount.get(),
            cargo_unit: i.cargo_unit,
            sender_tax_number: i.sender_tax_number.as_str().to_string(),
            sender_name: i.sender_name.as_str().to_string(),
            receiver_tax_number: i.receiver_tax_number.as_str().to_string(),
            receiver_name: i.receiver_name.as_str().to_string(),
            un_number: i.un_number.as_ref().map(|u| u.as_str().to_string()),
            dangerous_packaging: i.dangerous_packaging,
            dangerous_exemption: i.dangerous_exemption.as_ref().map(|e| e.as_str().to_string()),
        }
    }
}

impl From<&CargoItem> for CargoItemIn {
    fn from(i: &CargoItem) -> CargoItemIn {
        CargoItemIn {
            cargo_type: Int::stored(i.cargo_type.into()),
            cargo_amount: Amount::stored(i.cargo_amount),
            cargo_unit: i.cargo_unit,
            sender_tax_number: TaxId::stored(i.sender_tax_number.clone()),
            sender_name: Text::stored(i.sender_name.clone()),
            receiver_tax_number: TaxId::stored(i.receiver_tax_number.clone()),
            receiver_name: Text::stored(i.receiver_name.clone()),
            un_number: i.un_number.clone().map(UnNumber::stored),
            dangerous_packaging: i.dangerous_packaging,
            dangerous_exemption: i.dangerous_exemption.clone().map(ExemptionCode::stored),
        }
    }
}

/// A handover's columns: date, time, province, district, country.
type HandoverColumns = (Day, Time, Option<i32>, Option<i32>, Option<String>);

fn handover_columns(h: &Handover) -> HandoverColumns {
    let (city, district, country) = match &h.place {
        Site::Province { city_id, district_id } => (Some(*city_id), Some(*district_id), None),
        Site::Abroad { country } => (None, None, Some(country.clone())),
    };
    (Day(h.date), Time(h.time), city, district, country)
}

impl From<&CargoShipment> for CargoFields {
    fn from(c: &CargoShipment) -> CargoFields {
        let (loading_date, loading_time, loading_city_id, loading_district_id, loading_country) =
            handover_columns(&c.loading);
        let (unloading_date, unloading_time, unloading_city_id, unloading_district_id, unloading_country) =
            handover_columns(&c.unloading);
        let dangerous = c.dangerous.as_ref();
        CargoFields {
            vehicle_id: c.vehicle_id,
            driver_id: c.driver_id,
            second_driver_id: c.second_driver_id,
            trailer_plate: c.trailer_plate.clone(),
            transport_type: c.goods.transport_type,
            cargo_type: c.goods.cargo_type,
            transport_mode: c.goods.transport_mode,
            cargo_amount: c.goods.amount,
            cargo_unit: c.goods.unit,
            sender_tax_number: c.sender.tax_number.clone(),
            sender_name: c.sender.name.clone(),
            receiver_tax_number: c.receiver.tax_number.clone(),
            receiver_name: c.receiver.name.clone(),
            loading_date,
            loading_time,
            loading_city_id,
            loading_district_id,
            loading_country,
            unloading_date,
            unloading_time,
            unloading_city_id,
            unloading_district_id,
            unloading_country,
            un_number: dangerous.map(|d| d.un_number.clone()),
            dangerous_packaging: dangerous.map(|d| d.packaging),
            dangerous_exemption: dangerous.and_then(|d| d.exemption.clone()),
            items: c.items.iter().map(CargoItem::from).collect(),
        }
    }
}

/// A further load as stored: plain values, read back without the input's rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CargoItem {
    pub cargo_type: i32,
    pub cargo_amount: f64,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: String,
    pub sender_name: String,
    pub receiver_tax_number: String,
    pub receiver_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub un_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refdata::{City, District, RefData};

    /// Two provinces of one district each; the only reference data this test binary installs.
    fn places() {
        let city = |id: i32| City { id, name: format!("il {id}") };
        let district =
            |id: i32, city_id: i32| District { id, city_id, name: format!("ilçe {id}"), kind: "district".into() };
        refdata::install(RefData::new(vec![city(34), city(6)], vec![district(1, 34), district(2, 6)]));
    }

    fn shipment(patch: Value) -> CargoIn {
        places();
        let mut v = json!({
            "vehicle_id": 1, "driver_id": 2, "transport_type": 1, "cargo_type": 3, "transport_mode": 1,
            "cargo_amount": 12.5, "cargo_unit": "KG",
            "sender_tax_number": "1234567890", "sender_name": "Gönderen A.Ş.",
            "receiver_tax_number": "1234567890", "receiver_name": "Alıcı Ltd.",
            "loading_date": "2026-05-01", "loading_time": "08:00", "loading_city_id": 34, "loading_district_id": 1,
            "unloading_date": "2026-05-02", "unloading_time": "07:00", "unloading_city_id": 6,
            "unloading_district_id": 2,
        });
        for (k, val) in patch.as_object().unwrap() {
            v[k] = val.clone();
        }
        serde_json::from_value(v).expect("each field is valid on its own")
    }

    fn field(patch: Value) -> String {
        CargoShipment::try_from(shipment(patch)).expect_err("the rule refuses it").field
    }

    #[test]
    fn a_valid_shipment_parses() {
        let s = CargoShipment::try_from(shipment(json!({}))).unwrap();
        assert_eq!((s.vehicle_id(), s.driver_id()), (VehicleId(1), Some(PersonId(2))));
        assert_eq!((s.goods().transport_type, s.goods().amount, s.goods().unit), (1, 12.5, CargoUnit::Kg));
        assert_eq!(s.loading().place, Site::Province { city_id: 34, district_id: 1 });
        assert_eq!(s.unloading().place, Site::Province { city_id: 6, district_id: 2 });
        assert_eq!(s.sender().name, "Gönderen A.Ş.");
    }

    #[test]
    fn each_district_is_in_its_province() {
        assert_eq!(field(json!({"loading_city_id": 6})), "loading_district_id");
        assert_eq!(field(json!({"unloading_district_id": 1})), "unloading_district_id");
        // Loading is checked first.
        assert_eq!(field(json!({"loading_district_id": 2, "unloading_district_id": 1})), "loading_district_id");
    }

    #[test]
    fn unloading_is_not_before_loading() {
        assert_eq!(field(json!({"unloading_date": "2026-05-01", "unloading_time": "07:59"})), "unloading_date");
        assert_eq!(field(json!({"unloading_date": "2026-04-30", "unloading_time": "09:00"})), "unloading_date");
        let same = json!({"unloading_date": "2026-05-01", "unloading_time": "08:00"});
        assert!(CargoShipment::try_from(shipment(same)).is_ok(), "unloading as it loads is allowed");
    }

    #[test]
    fn goods_may_be_loaded_or_unloaded_abroad_by_country_alone() {
        let abroad = json!({"unloading_city_id": null, "unloading_district_id": null, "unloading_country": "de"});
        let s = CargoShipment::try_from(shipment(abroad)).unwrap();
        assert_eq!(s.unloading().place, Site::Abroad { country: "DE".into() });
        assert_eq!(field(json!({"unloading_country": "DE"})), "unloading_city_id", "no province abroad");
        assert_eq!(field(json!({"unloading_country": "DE", "unloading_city_id": null})), "unloading_district_id");
        assert_eq!(field(json!({"loading_city_id": null})), "loading_city_id", "a province at home");
        assert_eq!(field(json!({"loading_district_id": null})), "loading_district_id");
        let home = json!({"loading_country": "TR"});
        assert!(CargoShipment::try_from(shipment(home)).is_ok(), "TR is at home");
    }
}
