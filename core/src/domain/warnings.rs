//! What the downstream will want but a record lacks when it is submitted. U-ETDS takes a trip
//! first and its crew and passengers in later calls, so none of this refuses a submission: it
//! travels with it as `warnings`, on the submit answer, the submission record and the
//! `submission.*` webhooks.

use chrono::{FixedOffset, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    fields::str_enum,
    kinds::{RoleType, TripKind},
};

str_enum! {
    /// Why a warning was given.
    pub enum WarningCode {
        /// No crew member with role `driver` (a journey), or no `driver_id` (a shipment).
        NoDriver = "no_driver",
        /// The shipment's `driver_id` names a person whose role is not `driver`.
        NotADriver = "not_a_driver",
        /// The journey has no passengers yet.
        NoPassengers = "no_passengers",
        /// Departure is less than an hour away or past: U-ETDS expects a trip before then.
        LateNotice = "late_notice",
        /// A pre-flight check with the downstream did not pass (the organization's policy
        /// `warn`): the detail says which and what the downstream said.
        CheckFailed = "check_failed",
        /// A pre-flight check could not be made (the downstream did not answer, or the
        /// submit's checks ran out); says nothing about the vehicle or person.
        CheckNotMade = "check_not_made",
    }
}

/// One warning: its code, the field it is about, and a sentence naming that field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Warning {
    pub code: WarningCode,
    /// The field it is about, as a request names it (`personnel_ids`, `passengers[2].identity_number`).
    pub field: String,
    /// What is missing and why U-ETDS wants it, starting with the field's name.
    pub detail: String,
}

impl Warning {
    pub fn new(code: WarningCode, field: impl Into<String>, why: &str) -> Warning {
        let field = field.into();
        Warning { detail: format!("{field}: {why}"), code, field }
    }
}

/// The facts about a journey the warnings look at.
pub struct JourneyFacts<'a> {
    pub trip_kind: TripKind,
    /// Departure as written (Türkiye's time, UTC+3 all year).
    pub departure: NaiveDateTime,
    /// The crew's roles, in order.
    pub crew: &'a [RoleType],
    pub passengers: usize,
}

/// Türkiye's civil time, as departures are written.
pub fn turkey() -> FixedOffset {
    FixedOffset::east_opt(3 * 3600).expect("a valid offset")
}

/// Warnings for a journey about to be sent.
pub fn journey(j: &JourneyFacts<'_>) -> Vec<Warning> {
    let mut out = vec![];
    if !j.crew.contains(&RoleType::Driver) {
        out.push(Warning::new(
            WarningCode::NoDriver,
            "personnel_ids",
            "no crew member with role `driver`; U-ETDS expects the driver in the trip's personnel",
        ));
    }
    if j.passengers == 0 {
        let why = match j.trip_kind {
            TripKind::Tarifeli => "none yet; a scheduled trip is notified with its passengers (tickets)",
            TripKind::Tarifesiz => "none yet; U-ETDS expects the passenger list before departure",
        };
        out.push(Warning::new(WarningCode::NoPassengers, "passengers", why));
    }
    let now = Utc::now().with_timezone(&turkey()).naive_local();
    if j.departure < now + chrono::Duration::hours(1) {
        out.push(Warning::new(
            WarningCode::LateNotice,
            "departure",
            "less than an hour away or past; U-ETDS expects a trip to be notified at least an hour before departure",
        ));
    }
    out
}

/// Warnings for a shipment about to be sent: `driver` is the role of the person `driver_id`
/// names, if any.
pub fn cargo(driver: Option<RoleType>, second_driver: Option<RoleType>) -> Vec<Warning> {
    let not_a_driver = |field: &str, other: RoleType| {
        Warning::new(
            WarningCode::NotADriver,
            field,
            &format!("names a {other}, not a driver; U-ETDS's goods service expects the driver"),
        )
    };
    let mut out = match driver {
        None => vec![Warning::new(
            WarningCode::NoDriver,
            "driver_id",
            "no driver; U-ETDS's goods service expects the driver's identity number",
        )],
        Some(RoleType::Driver) => vec![],
        Some(other) => vec![not_a_driver("driver_id", other)],
    };
    out.extend(second_driver.filter(|r| *r != RoleType::Driver).map(|other| not_a_driver("second_driver_id", other)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(days: i64) -> NaiveDateTime {
        Utc::now().with_timezone(&turkey()).naive_local() + chrono::Duration::days(days)
    }

    fn codes(w: &[Warning]) -> Vec<WarningCode> {
        w.iter().map(|w| w.code).collect()
    }

    #[test]
    fn a_complete_journey_has_none() {
        let crew = [RoleType::Host, RoleType::Driver];
        let j = JourneyFacts { trip_kind: TripKind::Tarifeli, departure: at(2), crew: &crew, passengers: 2 };
        assert!(journey(&j).is_empty(), "{:?}", journey(&j));
    }

    #[test]
    fn what_is_missing_is_named() {
        let j =
            JourneyFacts { trip_kind: TripKind::Tarifesiz, departure: at(-1), crew: &[RoleType::Host], passengers: 3 };
        let w = journey(&j);
        assert_eq!(codes(&w), [WarningCode::NoDriver, WarningCode::LateNotice]);
        assert_eq!(w[0].field, "personnel_ids");
        assert!(w[0].detail.starts_with("personnel_ids: "));
        let empty = JourneyFacts { trip_kind: TripKind::Tarifeli, departure: at(3), crew: &[], passengers: 0 };
        assert_eq!(codes(&journey(&empty)), [WarningCode::NoDriver, WarningCode::NoPassengers]);
        assert_eq!(codes(&cargo(None, None)), [WarningCode::NoDriver]);
        assert_eq!(codes(&cargo(Some(RoleType::Guide), None)), [WarningCode::NotADriver]);
        assert!(cargo(Some(RoleType::Driver), None).is_empty());
        assert!(cargo(Some(RoleType::Driver), Some(RoleType::Driver)).is_empty());
        let second = cargo(Some(RoleType::Driver), Some(RoleType::Host));
        assert_eq!((second.len(), second[0].field.as_str()), (1, "second_driver_id"));
    }
}
