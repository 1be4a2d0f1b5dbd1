//! A journey as a request states it ([`JourneyIn`]: each field parsed by its own type) and as
//! a value whose rules across fields hold ([`NewJourney`], made only by parsing a `JourneyIn`).

use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::ids::{PersonId, VehicleId};

use super::{
    fields::{Day, Text, Time},
    kinds::TripKind,
    national::{is_turkish, Crew, Nationality, PlaceId, PositiveCode, TravelHours, VehicleRef},
    Invalid,
};

/// Departure or arrival: in Türkiye a district (or airport); abroad, for a non-scheduled trip
/// crossing the border, a country and a place's name.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopIn {
    pub date: Day,
    pub time: Time,
    /// District or airport id of the reference data (`GET /ref/districts`), string or integer.
    /// Required in Türkiye; absent for a stop abroad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub district_id: Option<PlaceId>,
    /// For a stop abroad (a `tarifesiz` trip only): its two-letter country code. Absent (or
    /// `TR`): the stop is in Türkiye.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<Nationality>,
    /// For a stop abroad: the place's name (a city, a border gate), as U-ETDS shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Text<200>>,
}

/// Where a stop is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A district or airport id of the reference data.
    District(i32),
    /// A place abroad: its country code (never `TR`) and name.
    Abroad { country: String, name: String },
}

impl Place {
    pub fn is_abroad(&self) -> bool {
        matches!(self, Place::Abroad { .. })
    }
}

impl StopIn {
    /// The stop's place, by the rule across its fields; `field` names the stop in errors.
    fn place_at(&self, field: &str) -> Result<Place, Invalid> {
        let country = self.country.as_ref().map(|c| c.as_str()).filter(|c| !is_turkish(Some(c)));
        match (country, &self.district_id, &self.place) {
            (None, Some(d), None) => Ok(Place::District(d.0)),
            (None, None, _) => Err(Invalid::new(format!("{field}.district_id"), "is required for a stop in Türkiye")),
            (None, Some(_), Some(_)) => Err(Invalid::new(
                format!("{field}.place"),
                "is for a stop abroad only (with `country`); a stop in Türkiye is its district_id",
            )),
            (Some(_), Some(_), _) => Err(Invalid::new(
                format!("{field}.district_id"),
                "must be absent for a stop abroad: name the place in `place`",
            )),
            (Some(_), None, None) => {
                Err(Invalid::new(format!("{field}.place"), "is required for a stop abroad (the place's name)"))
            }
            (Some(c), None, Some(name)) => {
                Ok(Place::Abroad { country: c.to_string(), name: name.as_str().to_string() })
            }
        }
    }
}

/// Context of a scheduled (tarifeli) trip.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TarifeliIn {
    pub firma_id: PositiveCode,
    pub unet_guzergah_kodu: PositiveCode,
    /// Departure place id (reference data).
    pub kalkis_yer_id: PlaceId,
    /// Arrival place id (reference data).
    pub varis_yer_id: PlaceId,
    pub seyahat_suresi_saat: TravelHours,
}

/// A journey as sent on create; any subset of it on update.
///
/// Rules across fields: arrival is not before departure; `tarifeli_context` is present exactly
/// when `trip_kind` is `tarifeli` (the default).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JourneyIn {
    pub vehicle_id: VehicleRef,
    pub departure: StopIn,
    /// Not before departure.
    pub arrival: StopIn,
    /// `tarifeli` (a scheduled trip, the default) or `tarifesiz` (a non-scheduled one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_kind: Option<TripKind>,
    /// Required for a `tarifeli` trip; absent (or null) for a `tarifesiz` one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tarifeli_context: Option<TarifeliIn>,
    /// Crew; none when absent or null. What U-ETDS will want (a driver) is checked when the
    /// journey is submitted, as a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personnel_ids: Option<Crew>,
}

/// Where and when a journey leaves or arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub date: NaiveDate,
    pub time: NaiveTime,
    pub place: Place,
}

impl Stop {
    fn at(&self) -> (NaiveDate, NaiveTime) {
        (self.date, self.time)
    }

    fn parse(s: &StopIn, field: &str) -> Result<Stop, Invalid> {
        Ok(Stop { date: s.date.0, time: s.time.0, place: s.place_at(field)? })
    }
}

/// The context U-ETDS's scheduled service identifies a trip by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduled {
    pub firma_id: i64,
    pub unet_guzergah_kodu: i64,
    pub kalkis_yer_id: i64,
    pub varis_yer_id: i64,
    pub seyahat_suresi_saat: i64,
}

/// A scheduled trip with its context, or a non-scheduled one, which has none: the kind and
/// the context cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trip {
    Tarifeli(Scheduled),
    Tarifesiz,
}

impl Trip {
    pub fn kind(&self) -> TripKind {
        match self {
            Trip::Tarifeli(_) => TripKind::Tarifeli,
            Trip::Tarifesiz => TripKind::Tarifesiz,
        }
    }

    pub fn context(&self) -> Option<&Scheduled> {
        match self {
            Trip::Tarifeli(s) => Some(s),
            Trip::Tarifesiz => None,
        }
    }
}

/// A journey whose every rule holds: each field's, and those across fields. The crew and the
/// vehicle are still only ids: whether the organization has them active is the store's to say.
#[derive(Debug, Clone)]
pub struct NewJourney {
    vehicle: VehicleRef,
    departure: Stop,
    arrival: Stop,
    trip: Trip,
    crew: Vec<PersonId>,
}

impl NewJourney {
    pub fn vehicle(&self) -> &VehicleRef {
        &self.vehicle
    }
    pub fn departure(&self) -> &Stop {
        &self.departure
    }
    pub fn arrival(&self) -> &Stop {
        &self.arrival
    }
    pub fn trip(&self) -> &Trip {
        &self.trip
    }
    /// Personnel record ids, in the order given.
    pub fn crew(&self) -> &[PersonId] {
        &self.crew
    }

    /// The rule across a stop's fields, as JSON Schema keywords of `StopIn`: a district in
    /// Türkiye (no `country`, or `TR`), else a place's name and no district.
    pub fn stop_schema_rules() -> Value {
        json!({
            "if": {"anyOf": [
                {"not": {"required": ["country"]}},
                {"properties": {"country": {"anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[Tt][Rr]$"}]}}},
            ]},
            "then": {"required": ["district_id"], "properties": {"district_id": {"not": {"type": "null"}}, "place": {"type": "null"}}},
            "else": {"required": ["place"], "properties": {"district_id": {"type": "null"}, "place": {"type": "string"}}},
        })
    }

    /// The rules [`TryFrom<JourneyIn>`] applies across fields, as JSON Schema keywords of
    /// `JourneyIn` (the order, which JSON Schema cannot state, in `x-tns-not-before`): a stop
    /// abroad only on a `tarifesiz` trip, and one stop at least in Türkiye.
    pub fn schema_rules() -> Value {
        // A stop abroad: a country other than TR.
        let abroad = json!({"required": ["country"], "properties": {"country": {"type": "string", "not": {"pattern": "^[Tt][Rr]$"}}}});
        let home = json!({"not": abroad});
        json!({
            // One end at least in Türkiye.
            "not": {"required": ["departure", "arrival"], "properties": {"departure": abroad, "arrival": abroad}},
            "if": {"properties": {"trip_kind": {"const": TripKind::Tarifesiz.as_str()}}, "required": ["trip_kind"]},
            "then": {"properties": {"tarifeli_context": {"type": "null"}}},
            // A scheduled trip stays at home.
            "else": {"required": ["tarifeli_context"], "properties": {
                "tarifeli_context": {"type": "object"}, "departure": home, "arrival": home}},
            "x-tns-not-before": [[["/departure/date", "/departure/time"], ["/arrival/date", "/arrival/time"]]],
        })
    }
}

impl TryFrom<JourneyIn> for NewJourney {
    type Error = Invalid;

    fn try_from(input: JourneyIn) -> Result<NewJourney, Invalid> {
        let (departure, arrival) =
            (Stop::parse(&input.departure, "departure")?, Stop::parse(&input.arrival, "arrival")?);
        if arrival.at() < departure.at() {
            return Err(Invalid::new("arrival", "must not be before departure"));
        }
        if departure.place.is_abroad() && arrival.place.is_abroad() {
            return Err(Invalid::new("arrival.country", "one of departure and arrival at least must be in Türkiye"));
        }
        let abroad = [("departure", &departure), ("arrival", &arrival)].into_iter().find(|(_, s)| s.place.is_abroad());
        if let (Some((field, _)), TripKind::Tarifeli) = (abroad, input.trip_kind.unwrap_or(TripKind::Tarifeli)) {
            return Err(Invalid::new(
                format!("{field}.country"),
                "a stop abroad is for a `tarifesiz` (non-scheduled) trip only",
            ));
        }
        let trip = match (input.trip_kind.unwrap_or(TripKind::Tarifeli), input.tarifeli_context) {
            (TripKind::Tarifeli, Some(t)) => Trip::Tarifeli(Scheduled {
                firma_id: t.firma_id.get(),
                unet_guzergah_kodu: t.unet_guzergah_kodu.get(),
                kalkis_yer_id: t.kalkis_yer_id.0.into(),
                varis_yer_id: t.varis_yer_id.0.into(),
                seyahat_suresi_saat: t.seyahat_suresi_saat.get(),
            }),
            (TripKind::Tarifeli, None) => return Err(Invalid::new(
                "tarifeli_context",
                "is required for a `tarifeli` (scheduled) trip; send `trip_kind: tarifesiz` for a non-scheduled one",
            )),
            (TripKind::Tarifesiz, None) => Trip::Tarifesiz,
            (TripKind::Tarifesiz, Some(_)) => {
                return Err(Invalid::new("tarifeli_context", "must be absent for a `tarifesiz` (non-scheduled) trip"))
            }
        };
        Ok(NewJourney {
            vehicle: input.vehicle_id,
            departure,
            arrival,
            trip,
            crew: input.personnel_ids.map(|c| c.0.into_iter().map(PersonId).collect()).unwrap_or_default(),
        })
    }
}

/// Context of a scheduled (tarifeli) trip, as stored and shown.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TarifeliContext {
    pub firma_id: i64,
    pub unet_guzergah_kodu: i64,
    /// Departure place id (reference data).
    pub kalkis_yer_id: i64,
    /// Arrival place id (reference data).
    pub varis_yer_id: i64,
    /// Travel duration in hours, 1–72.
    pub seyahat_suresi_saat: i64,
}

/// Where and when a journey leaves or arrives: a district in Türkiye, or a country and a
/// place's name abroad.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Stop)]
pub struct StoredStop {
    pub date: Day,
    pub time: Time,
    /// District (or airport) id of the reference data, as a string of its digits; absent for a
    /// stop abroad.
    #[serde(serialize_with = "as_text", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, pattern = "^[1-9][0-9]*$")]
    pub district_id: Option<i32>,
    /// A stop abroad's two-letter country code; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// A stop abroad's place name; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

impl StoredStop {
    /// The stop's place.
    pub fn whereabouts(&self) -> Place {
        match (self.district_id, &self.country, &self.place) {
            (Some(d), _, _) => Place::District(d),
            (None, c, p) => {
                Place::Abroad { country: c.clone().unwrap_or_default(), name: p.clone().unwrap_or_default() }
            }
        }
    }
}

impl From<&Stop> for StoredStop {
    fn from(s: &Stop) -> StoredStop {
        let (district_id, country, place) = match &s.place {
            Place::District(d) => (Some(*d), None, None),
            Place::Abroad { country, name } => (None, Some(country.clone()), Some(name.clone())),
        };
        StoredStop { date: Day(s.date), time: Time(s.time), district_id, country, place }
    }
}

fn as_text<S: serde::Serializer>(id: &Option<i32>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.collect_str(id),
        None => s.serialize_none(),
    }
}

impl From<&Scheduled> for TarifeliContext {
    fn from(s: &Scheduled) -> TarifeliContext {
        TarifeliContext {
            firma_id: s.firma_id,
            unet_guzergah_kodu: s.unet_guzergah_kodu,
            kalkis_yer_id: s.kalkis_yer_id,
            varis_yer_id: s.varis_yer_id,
            seyahat_suresi_saat: s.seyahat_suresi_saat,
        }
    }
}

/// A journey as stored: what its row holds of the fields a request sets, read back as plain
/// values and shown by its answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = JourneyFields, description = "A journey's fields, as stored.")]
pub struct StoredJourney {
    /// As given on create: a vehicle record id or a plate.
    pub vehicle_id: String,
    /// The plate the journey runs under.
    pub plate: String,
    /// The vehicle record, when the journey names one (by id or by a registered plate).
    #[schema(value_type = Option<i64>)]
    pub vehicle_record_id: Option<VehicleId>,
    pub departure: StoredStop,
    pub arrival: StoredStop,
    /// Present exactly when `trip_kind` is `tarifeli`.
    pub tarifeli_context: Option<TarifeliContext>,
    pub trip_kind: TripKind,
    /// Crew, in the order given.
    #[schema(value_type = Vec<i64>)]
    pub personnel_ids: Vec<PersonId>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fields::Int;

    fn stop(date: &str, time: &str) -> StopIn {
        StopIn {
            date: Day(date.parse().unwrap()),
            time: Time(NaiveTime::parse_from_str(time, "%H:%M").unwrap()),
            district_id: Some(PlaceId(1)),
            country: None,
            place: None,
        }
    }

    fn abroad(date: &str, time: &str, country: &str, place: &str) -> StopIn {
        StopIn {
            district_id: None,
            country: Some(Nationality::stored(country.into())),
            place: Some(Text::parse(place).unwrap()),
            ..stop(date, time)
        }
    }

    fn context() -> TarifeliIn {
        TarifeliIn {
            firma_id: Int::stored(7),
            unet_guzergah_kodu: Int::stored(8),
            kalkis_yer_id: PlaceId(1),
            varis_yer_id: PlaceId(2),
            seyahat_suresi_saat: Int::stored(5),
        }
    }

    fn journey(kind: Option<TripKind>, ctx: Option<TarifeliIn>) -> JourneyIn {
        JourneyIn {
            vehicle_id: VehicleRef::Record(VehicleId(3)),
            departure: stop("2026-05-01", "08:00"),
            arrival: stop("2026-05-01", "12:30"),
            trip_kind: kind,
            tarifeli_context: ctx,
            personnel_ids: Some(Crew(vec![4, 5])),
        }
    }

    fn field(r: Result<NewJourney, Invalid>) -> String {
        r.expect_err("the rule refuses it").field
    }

    #[test]
    fn a_valid_journey_parses_into_its_trip() {
        let j = NewJourney::try_from(journey(None, Some(context()))).unwrap();
        assert_eq!(j.trip().kind(), TripKind::Tarifeli, "tarifeli is the default");
        assert_eq!(j.trip().context().map(|s| s.seyahat_suresi_saat), Some(5));
        assert_eq!(j.crew(), [PersonId(4), PersonId(5)]);
        let j = NewJourney::try_from(journey(Some(TripKind::Tarifesiz), None)).unwrap();
        assert_eq!(j.trip(), &Trip::Tarifesiz);
        let mut no_crew = journey(Some(TripKind::Tarifesiz), None);
        no_crew.personnel_ids = None;
        assert!(NewJourney::try_from(no_crew).unwrap().crew().is_empty());
    }

    #[test]
    fn arrival_is_not_before_departure() {
        let mut j = journey(None, Some(context()));
        j.arrival = stop("2026-05-01", "07:59");
        assert_eq!(field(NewJourney::try_from(j)), "arrival");
        let mut j = journey(None, Some(context()));
        j.arrival = stop("2026-04-30", "23:00");
        assert_eq!(field(NewJourney::try_from(j)), "arrival", "the date counts before the time");
        let mut j = journey(None, Some(context()));
        j.arrival = stop("2026-05-01", "08:00");
        assert!(NewJourney::try_from(j).is_ok(), "arriving as it leaves is allowed");
    }

    #[test]
    fn the_context_is_present_exactly_for_a_tarifeli_trip() {
        assert_eq!(field(NewJourney::try_from(journey(None, None))), "tarifeli_context");
        assert_eq!(field(NewJourney::try_from(journey(Some(TripKind::Tarifeli), None))), "tarifeli_context");
        assert_eq!(
            field(NewJourney::try_from(journey(Some(TripKind::Tarifesiz), Some(context())))),
            "tarifeli_context"
        );
    }

    #[test]
    fn the_order_rule_is_checked_first() {
        let mut j = journey(Some(TripKind::Tarifesiz), Some(context()));
        j.arrival = stop("2026-04-01", "08:00");
        assert_eq!(field(NewJourney::try_from(j)), "arrival");
    }

    #[test]
    fn a_non_scheduled_trip_may_leave_or_arrive_abroad_by_country_and_place() {
        let mut j = journey(Some(TripKind::Tarifesiz), None);
        j.arrival = abroad("2026-05-01", "12:30", "BG", "Sofya");
        let parsed = NewJourney::try_from(j).unwrap();
        assert_eq!(parsed.arrival().place, Place::Abroad { country: "BG".into(), name: "Sofya".into() });
        assert_eq!(parsed.departure().place, Place::District(1));
        // `TR` is Türkiye: a district, as without a country.
        let mut j = journey(Some(TripKind::Tarifesiz), None);
        j.departure.country = Some(Nationality::stored("TR".into()));
        assert!(NewJourney::try_from(j).is_ok());
    }

    #[test]
    fn a_stop_abroad_has_a_place_and_no_district_and_the_trip_touches_turkiye_unscheduled() {
        let tarifesiz = || journey(Some(TripKind::Tarifesiz), None);
        let mut j = tarifesiz();
        j.arrival = StopIn { place: None, ..abroad("2026-05-01", "12:30", "BG", "x") };
        assert_eq!(field(NewJourney::try_from(j)), "arrival.place");
        let mut j = tarifesiz();
        j.arrival = StopIn { district_id: Some(PlaceId(1)), ..abroad("2026-05-01", "12:30", "BG", "Sofya") };
        assert_eq!(field(NewJourney::try_from(j)), "arrival.district_id");
        let mut j = tarifesiz();
        j.arrival = StopIn { district_id: None, ..stop("2026-05-01", "12:30") };
        assert_eq!(field(NewJourney::try_from(j)), "arrival.district_id");
        let mut j = tarifesiz();
        j.departure.place = Some(Text::parse("Kadıköy").unwrap());
        assert_eq!(field(NewJourney::try_from(j)), "departure.place");
        let mut j = tarifesiz();
        j.departure = abroad("2026-05-01", "08:00", "GR", "Atina");
        j.arrival = abroad("2026-05-01", "12:30", "BG", "Sofya");
        assert_eq!(field(NewJourney::try_from(j)), "arrival.country");
        let mut j = journey(None, Some(context()));
        j.departure = abroad("2026-05-01", "08:00", "GR", "Atina");
        assert_eq!(field(NewJourney::try_from(j)), "departure.country", "scheduled trips stay in Türkiye");
    }
}
