//! What a submission sends, in the adapter contract's types: a journey with its crew and
//! passengers, or a cargo shipment (the difference since a delivery is
//! `tns_store::submissions::delivery`). Pure conversions, no I/O.

use tns_adapter::{Cargo, DangerousGoods, Journey, Load, Party, Passenger, Person, Stop, Tarifeli};

use tns_core::{
    domain::{cargo::CargoFields, fields::Time, journey::Place, kinds::DangerousPackaging, national::Individual},
    refdata::RefData,
};
use tns_store as db;

fn stop(refdata: &RefData, date: String, time: String, district_id: i32) -> Stop {
    // Every stored district id was checked against the reference data on write.
    let district = refdata.district(district_id);
    Stop {
        date,
        time,
        city_id: district.map_or(0, |d| d.city_id),
        district_id,
        place: district.map(|d| d.name.clone()),
        country: None,
    }
}

fn journey_stop(refdata: &RefData, s: &db::journeys::Stop) -> Stop {
    let (date, time) = (s.date.0.to_string(), s.time.0.format("%H:%M").to_string());
    match s.whereabouts() {
        Place::District(d) => stop(refdata, date, time, d),
        Place::Abroad { country, name } => {
            Stop { date, time, city_id: 0, district_id: 0, place: Some(name), country: Some(country) }
        }
    }
}

/// The contract's person, in `role`, from who a stored crew member or passenger is.
fn person(who: &Individual, role: String, phone: Option<&str>) -> Person {
    Person {
        role,
        identity_number: who.identity.number().to_owned(),
        first_name: who.first_name.clone(),
        last_name: who.last_name.clone(),
        gender: who.gender.as_str().to_string(),
        nationality: who.identity.nationality().map(str::to_owned),
        phone: phone.map(str::to_owned),
    }
}

pub fn crew_member(p: &db::personnel::Person) -> Person {
    person(&p.person.who, p.person.role_type.as_str().to_string(), p.person.phone.as_deref())
}

pub fn passenger(row: &db::passengers::Passenger) -> Passenger {
    let p = &row.passenger;
    Passenger {
        key: row.id.to_string(),
        person: person(&p.who, "passenger".into(), p.phone.as_deref()),
        boarding_place_code: p.boarding_place_code,
        destination_place_code: p.destination_place_code,
        seat_no: p.seat_no.clone(),
        ticket_serial_no: p.ticket_serial_no.clone(),
        amount: p.amount,
        baggage: p.baggage.clone(),
    }
}

pub fn journey(
    refdata: &RefData,
    row: &db::journeys::Journey,
    crew: &[db::personnel::Person],
    passengers: &[db::passengers::Passenger],
) -> Journey {
    let j = &row.journey;
    Journey {
        plate: j.plate.clone(),
        departure: journey_stop(refdata, &j.departure),
        arrival: journey_stop(refdata, &j.arrival),
        tarifeli: j.tarifeli_context.as_ref().map(|t| Tarifeli {
            firma_id: t.firma_id,
            unet_guzergah_kodu: t.unet_guzergah_kodu,
            kalkis_yer_id: t.kalkis_yer_id,
            varis_yer_id: t.varis_yer_id,
            seyahat_suresi_saat: t.seyahat_suresi_saat,
        }),
        crew: crew.iter().map(crew_member).collect(),
        passengers: passengers.iter().map(passenger).collect(),
    }
}

/// The shipment's people: its driver and a second one, when it has them.
pub struct CargoCrew<'a> {
    pub driver: Option<&'a db::personnel::Person>,
    pub second_driver: Option<&'a db::personnel::Person>,
}

/// Dangerous goods of a load's three fields (which the API took only together).
fn dangerous(
    un: Option<&str>,
    packaging: Option<DangerousPackaging>,
    exemption: Option<&str>,
) -> Option<DangerousGoods> {
    Some(DangerousGoods {
        un_number: un?.to_string(),
        packaging: packaging?.as_str().to_string(),
        exemption: exemption.map(str::to_string),
    })
}

pub fn cargo(refdata: &RefData, c: &CargoFields, plate: String, crew: CargoCrew<'_>) -> Cargo {
    let hh_mm = |t: Time| t.0.format("%H:%M").to_string();
    let items = c
        .items
        .iter()
        .map(|i| Load {
            cargo_type: i.cargo_type,
            amount: i.cargo_amount,
            unit: i.cargo_unit.as_str().to_string(),
            sender: Party { tax_number: i.sender_tax_number.clone(), name: i.sender_name.clone() },
            receiver: Party { tax_number: i.receiver_tax_number.clone(), name: i.receiver_name.clone() },
            dangerous: dangerous(i.un_number.as_deref(), i.dangerous_packaging, i.dangerous_exemption.as_deref()),
        })
        .collect();
    Cargo {
        plate,
        items,
        dangerous: dangerous(c.un_number.as_deref(), c.dangerous_packaging, c.dangerous_exemption.as_deref()),
        driver: crew.driver.map(crew_member),
        second_driver: crew.second_driver.map(crew_member),
        trailer_plate: c.trailer_plate.clone(),
        transport_type: c.transport_type,
        cargo_type: c.cargo_type,
        transport_mode: c.transport_mode,
        amount: c.cargo_amount,
        unit: c.cargo_unit.as_str().to_string(),
        sender: Party { tax_number: c.sender_tax_number.clone(), name: c.sender_name.clone() },
        receiver: Party { tax_number: c.receiver_tax_number.clone(), name: c.receiver_name.clone() },
        loading: handover(
            refdata,
            c.loading_date.0,
            hh_mm(c.loading_time),
            (c.loading_city_id, c.loading_district_id),
            &c.loading_country,
        ),
        unloading: handover(
            refdata,
            c.unloading_date.0,
            hh_mm(c.unloading_time),
            (c.unloading_city_id, c.unloading_district_id),
            &c.unloading_country,
        ),
    }
}

/// Where goods change hands: a province's district at home (as stored), or a country abroad
/// (no province, district or place name).
fn handover(
    refdata: &RefData,
    date: chrono::NaiveDate,
    time: String,
    (city, district): (Option<i32>, Option<i32>),
    country: &Option<String>,
) -> Stop {
    match (city, district) {
        (Some(city_id), Some(district)) => Stop { city_id, ..stop(refdata, date.to_string(), time, district) },
        _ => Stop { date: date.to_string(), time, city_id: 0, district_id: 0, place: None, country: country.clone() },
    }
}
