//! Drift: what the downstream holds of a delivered record, changed outside TNS (a trip
//! cancelled or edited on e-Devlet, say). The jobs role's drift checks compare what TNS
//! delivered with what the downstream answers now and keep the differences on the record's
//! latest submission, shown there and told by a `submission.drifted` webhook.

use serde::{Deserialize, Serialize};
use tns_adapter::Observed;
use utoipa::ToSchema;

use super::fields::str_enum;

str_enum! {
    /// Which fact differs.
    pub enum DriftField {
        /// `active` or `cancelled`.
        State = "state",
        Plate = "plate",
        /// `YYYY-MM-DD`
        DepartureDate = "departure_date",
        /// `HH:MM`
        DepartureTime = "departure_time",
        /// Passengers held and not cancelled, as a count.
        Passengers = "passengers",
        /// Crew held and not cancelled, as a count.
        Crew = "crew",
    }
}

/// One fact that differs: what TNS delivered and what the downstream holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Difference {
    pub field: DriftField,
    pub expected: String,
    pub found: String,
}

/// What the last drift check found different (absent while nothing was).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Drift {
    pub checked_at: chrono::DateTime<chrono::Utc>,
    pub differences: Vec<Difference>,
}

/// The facts that differ between what TNS delivered and what the downstream holds (`found`,
/// as a plugin observes it; what was delivered is stated in the same fields), in a fixed
/// order; only facts both sides state are compared. Plates compare without spaces or case,
/// times by their `HH:MM`.
pub fn differences(delivered: &Observed, found: &Observed) -> Vec<Difference> {
    fn state(cancelled: bool) -> String {
        if cancelled { "cancelled" } else { "active" }.to_string()
    }
    let plate = |p: &String| p.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_uppercase();
    let time = |t: &String| t.trim().chars().take(5).collect::<String>();
    let date = |d: &String| d.trim().to_string();
    let count = |n: &u32| n.to_string();
    let mut out = vec![];
    if delivered.cancelled != found.cancelled {
        out.push(Difference {
            field: DriftField::State,
            expected: state(delivered.cancelled),
            found: state(found.cancelled),
        });
    }
    fn compare<T>(
        out: &mut Vec<Difference>,
        field: DriftField,
        ours: &Option<T>,
        theirs: &Option<T>,
        norm: impl Fn(&T) -> String,
    ) {
        if let (Some(a), Some(b)) = (ours, theirs) {
            let (a, b) = (norm(a), norm(b));
            if a != b {
                out.push(Difference { field, expected: a, found: b });
            }
        }
    }
    compare(&mut out, DriftField::Plate, &delivered.plate, &found.plate, plate);
    compare(&mut out, DriftField::DepartureDate, &delivered.departure_date, &found.departure_date, date);
    compare(&mut out, DriftField::DepartureTime, &delivered.departure_time, &found.departure_time, time);
    compare(&mut out, DriftField::Passengers, &delivered.passengers, &found.passengers, count);
    compare(&mut out, DriftField::Crew, &delivered.crew, &found.crew, count);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Observed {
        Observed {
            cancelled: false,
            plate: Some("34ABC123".into()),
            departure_date: Some("2026-12-01".into()),
            departure_time: Some("08:00".into()),
            passengers: Some(3),
            crew: Some(1),
        }
    }

    #[test]
    fn the_same_trip_in_other_spellings_does_not_drift() {
        let found = Observed { plate: Some("34 abc 123".into()), departure_time: Some("08:00:00".into()), ..facts() };
        assert!(differences(&facts(), &found).is_empty());
        // What the downstream does not say is not compared.
        let silent = Observed { plate: None, passengers: None, crew: None, ..facts() };
        assert!(differences(&facts(), &silent).is_empty());
    }

    #[test]
    fn each_changed_fact_is_named_with_both_values() {
        let found = Observed {
            cancelled: true,
            plate: Some("06XYZ99".into()),
            departure_time: Some("09:30".into()),
            passengers: Some(2),
            ..facts()
        };
        let d = differences(&facts(), &found);
        let fields: Vec<_> = d.iter().map(|d| d.field).collect();
        assert_eq!(fields, [DriftField::State, DriftField::Plate, DriftField::DepartureTime, DriftField::Passengers]);
        assert_eq!((d[0].expected.as_str(), d[0].found.as_str()), ("active", "cancelled"));
        assert_eq!((d[1].expected.as_str(), d[1].found.as_str()), ("34ABC123", "06XYZ99"));
        assert_eq!(d[3].found, "2");
    }
}
