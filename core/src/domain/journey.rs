//! A journey as a request states it ([`JourneyIn`]: each field parsed by its own type) and as
//! a value whose rules across fields hold ([`NewJourney`], made only by parsing a `JourneyIn`).

use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{
    fields::{Day, Time},
    kinds::TripKind,
    uetds::{Crew, PlaceId, PositiveCode, TravelHours, VehicleRef},
    Invalid,
};

/// Departure or arrival.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopIn {
    pub date: Day,
    pub time: Time,
    /// District or airport id of the reference data (`GET /ref/districts`), string or integer.
    pub district_id: PlaceId,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    pub date: NaiveDate,
    pub time: NaiveTime,
    pub district_id: i32,
}

impl Stop {
    fn at(&self) -> (NaiveDate, NaiveTime) {
        (self.date, self.time)
    }
}

impl From<&StopIn> for Stop {
    fn from(s: &StopIn) -> Stop {
        Stop { date: s.date.0, time: s.time.0, district_id: s.district_id.0 }
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
    crew: Vec<i64>,
}

impl NewJourney {
    pub fn vehicle(&self) -> &VehicleRef {
        &self.vehicle
    }
    pub fn departure(&self) -> Stop {
        self.departure
    }
    pub fn arrival(&self) -> Stop {
        self.arrival
    }
    pub fn trip(&self) -> &Trip {
        &self.trip
    }
    /// Personnel record ids, in the order given.
    pub fn crew(&self) -> &[i64] {
        &self.crew
    }

    /// The rules [`TryFrom<JourneyIn>`] applies across fields, as JSON Schema keywords of
    /// `JourneyIn` (the order, which JSON Schema cannot state, in `x-tns-not-before`).
    pub fn schema_rules() -> Value {
        json!({
            "if": {"properties": {"trip_kind": {"const": TripKind::Tarifesiz.as_str()}}, "required": ["trip_kind"]},
            "then": {"properties": {"tarifeli_context": {"type": "null"}}},
            "else": {"required": ["tarifeli_context"], "properties": {"tarifeli_context": {"type": "object"}}},
            "x-tns-not-before": [[["/departure/date", "/departure/time"], ["/arrival/date", "/arrival/time"]]],
        })
    }
}

impl TryFrom<JourneyIn> for NewJourney {
    type Error = Invalid;

    fn try_from(input: JourneyIn) -> Result<NewJourney, Invalid> {
        let (departure, arrival) = (Stop::from(&input.departure), Stop::from(&input.arrival));
        if arrival.at() < departure.at() {
            return Err(Invalid::new("arrival", "must not be before departure"));
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
            crew: input.personnel_ids.map(|c| c.0).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fields::Int;

    fn stop(date: &str, time: &str) -> StopIn {
        StopIn {
            date: Day(date.parse().unwrap()),
            time: Time(NaiveTime::parse_from_str(time, "%H:%M").unwrap()),
            district_id: PlaceId(1),
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
            vehicle_id: VehicleRef::Record(3),
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
        assert_eq!(j.crew(), [4, 5]);
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
}
