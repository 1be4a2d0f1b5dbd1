//! A journey's passenger, as a request states it ([`PassengerIn`]: each field parsed by its
//! own type) and as a value whose rule across fields holds ([`NewPassenger`]: its
//! [`Identity`]); and a bulk call's list of them ([`Manifest`]: one entry per identity number).

use std::collections::HashMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    fields::{ceiling, Amount, Day, Text},
    kinds::Gender,
    national::{
        Barcode, IdentityNumber, Individual, Nationality, PersonName, Phone, PlaceId, SeatNo, TicketSerial, BAGGAGE_MAX,
    },
    Invalid,
};

/// Passengers one bulk call may carry.
pub const MAX_BULK: usize = 1000;

ceiling!(
    /// A ticket fare: non-negative, below a billion.
    Fare / FareCeiling, 1e9, "Ticket fare, non-negative, below 1000000000."
);

/// A passenger as sent on create; any subset of it on update.
///
/// Rules across fields: a Turkish national (`nationality` absent or `TR`) has a T.C. identity
/// number with valid check digits; a passenger with baggage has a seat number (the downstream
/// knows baggage by seat).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassengerIn {
    pub first_name: PersonName,
    pub last_name: PersonName,
    pub identity_number: IdentityNumber,
    pub gender: Gender,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nationality: Option<Nationality>,
    pub boarding_place_code: PlaceId,
    pub destination_place_code: PlaceId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket_serial_no: Option<TicketSerial>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticket_issue_date: Option<Day>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Fare>,
    /// Seat number (U-ETDS `koltukNo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat_no: Option<SeatNo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
    /// Baggage barcodes (at most 20; one listed twice is kept once), declared to U-ETDS once
    /// the passenger is accepted; needs `seat_no`. Absent or empty: no baggage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 20)]
    pub baggage: Option<Vec<Barcode>>,
}

/// A passenger whose every rule holds, in the shapes the journey keeps: what a row reads and an
/// answer shows of them. Personal data, so not `Debug`: nothing can print it by accident.
#[derive(Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(as = PassengerFields, description = "A passenger's fields, as stored: `null` where unset.")]
pub struct NewPassenger {
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub who: Individual,
    pub boarding_place_code: i32,
    pub destination_place_code: i32,
    pub ticket_serial_no: Option<String>,
    pub ticket_issue_date: Option<NaiveDate>,
    pub amount: Option<f64>,
    pub seat_no: Option<String>,
    pub phone: Option<String>,
    /// Baggage barcodes (empty when none).
    #[sqlx(json)]
    pub baggage: Vec<String>,
}

impl TryFrom<PassengerIn> for NewPassenger {
    type Error = Invalid;

    fn try_from(p: PassengerIn) -> Result<NewPassenger, Invalid> {
        let listed = p.baggage.unwrap_or_default();
        if listed.len() > BAGGAGE_MAX {
            return Err(Invalid::new("baggage", format!("must hold at most {BAGGAGE_MAX} barcodes")));
        }
        // A barcode listed twice (in any case) is one tag: kept once, where it came first.
        let mut baggage: Vec<String> = Vec::with_capacity(listed.len());
        for b in listed.into_iter().map(Barcode::into_inner) {
            if !baggage.contains(&b) {
                baggage.push(b);
            }
        }
        if !baggage.is_empty() && p.seat_no.is_none() {
            return Err(Invalid::new("baggage", "needs the passenger's `seat_no`: U-ETDS knows baggage by seat"));
        }
        Ok(NewPassenger {
            who: Individual::parse(p.identity_number, p.nationality, p.first_name, p.last_name, p.gender)?,
            boarding_place_code: p.boarding_place_code.0,
            destination_place_code: p.destination_place_code.0,
            ticket_serial_no: p.ticket_serial_no.map(Text::into_inner),
            ticket_issue_date: p.ticket_issue_date.map(|d| d.0),
            amount: p.amount.map(Amount::get),
            seat_no: p.seat_no.map(Text::into_inner),
            phone: p.phone.map(Phone::into_inner),
            baggage,
        })
    }
}

/// The body of a bulk upsert.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkIn {
    /// 1–1000 passengers. An identity number listed more than once is written once, with its
    /// last entry's fields.
    #[schema(min_items = 1, max_items = 1000)]
    pub passengers: Vec<PassengerIn>,
}

/// The passengers of a bulk call, one per identity number: upsert semantics within the call
/// too, so a repeated identity number takes its last entry's fields in its first entry's
/// place.
pub struct Manifest {
    entries: Vec<NewPassenger>,
    /// Identity number → index in `entries`.
    position: HashMap<String, usize>,
}

impl Manifest {
    pub fn entries(&self) -> &[NewPassenger] {
        &self.entries
    }

    /// Where an identity number's first entry stood (after every other one when absent): the
    /// order the answer lists the stored records in.
    pub fn position(&self, identity_number: &str) -> usize {
        self.position.get(identity_number).copied().unwrap_or(usize::MAX)
    }
}

impl TryFrom<BulkIn> for Manifest {
    type Error = Invalid;

    /// 1 to [`MAX_BULK`] entries, each parsed as a single passenger is; a bad one is named by
    /// its place (`passengers[3].identity_number`).
    fn try_from(input: BulkIn) -> Result<Manifest, Invalid> {
        if input.passengers.is_empty() || input.passengers.len() > MAX_BULK {
            return Err(Invalid::new("passengers", format!("must hold 1 to {MAX_BULK} passengers")));
        }
        let mut manifest = Manifest { entries: Vec::with_capacity(input.passengers.len()), position: HashMap::new() };
        for (i, passenger) in input.passengers.into_iter().enumerate() {
            let p = NewPassenger::try_from(passenger)
                .map_err(|e| Invalid::new(format!("passengers[{i}].{}", e.field), e.reason))?;
            match manifest.position.get(p.who.identity.number()) {
                Some(&at) => manifest.entries[at] = p,
                None => {
                    manifest.position.insert(p.who.identity.number().to_owned(), manifest.entries.len());
                    manifest.entries.push(p);
                }
            }
        }
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built directly: places need reference data, which these tests do not install.
    fn entry(identity: &str, first_name: &str, nationality: Option<&str>) -> PassengerIn {
        PassengerIn {
            first_name: Text::stored(first_name.into()),
            last_name: Text::stored("Yılmaz".into()),
            identity_number: IdentityNumber::stored(identity.into()),
            gender: Gender::E,
            nationality: nationality.map(|n| Nationality::stored(n.into())),
            boarding_place_code: PlaceId(1),
            destination_place_code: PlaceId(2),
            ticket_serial_no: None,
            ticket_issue_date: None,
            amount: None,
            seat_no: None,
            phone: None,
            baggage: None,
        }
    }

    #[test]
    fn a_repeated_identity_keeps_its_first_place_and_last_fields() {
        let input = BulkIn {
            passengers: vec![
                entry("U1", "Ali", Some("DE")),
                entry("U2", "Veli", Some("DE")),
                entry("U1", "Ayşe", Some("DE")),
            ],
        };
        let m = Manifest::try_from(input).unwrap();
        let names: Vec<&str> = m.entries().iter().map(|p| p.who.first_name.as_str()).collect();
        assert_eq!(names, ["Ayşe", "Veli"]);
        assert_eq!((m.position("U1"), m.position("U2"), m.position("X")), (0, 1, usize::MAX));
    }

    #[test]
    fn a_bad_entry_is_named_by_its_place() {
        let input = BulkIn { passengers: vec![entry("U1", "Ali", Some("DE")), entry("U1234567", "Veli", None)] };
        let e = Manifest::try_from(input).err().unwrap();
        assert_eq!(e.field, "passengers[1].identity_number");
        assert_eq!(Manifest::try_from(BulkIn { passengers: vec![] }).err().unwrap().field, "passengers");
    }
}
