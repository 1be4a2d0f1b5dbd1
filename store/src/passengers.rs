//! Passenger rows of a journey, scoped by organization.

use chrono::NaiveDate;
use sqlx::{types::Json, PgConnection, PgPool, Postgres, QueryBuilder};
use tns_core::ids::{JourneyId, OrgId, PassengerId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::{
    fields::{Amount, Day, Text},
    kinds::Gender,
    national::{Barcode, IdentityNumber, Nationality, Phone, PlaceId},
    passenger::{NewPassenger, PassengerIn},
    stamp::Stamp,
};

/// At most this many passengers on one journey.
pub const MAX_PER_JOURNEY: i64 = 5000;
pub const IDENTITY_KEY: &str = "passengers_journey_id_identity_number_key";

/// A passenger's row: their journey, their fields as a request set them and the stamp.
/// Personal data, so not `Debug`.
#[derive(Clone, sqlx::FromRow)]
pub struct Passenger {
    pub id: PassengerId,
    pub journey_id: JourneyId,
    #[sqlx(flatten)]
    pub passenger: NewPassenger,
    #[sqlx(flatten)]
    pub stamp: Stamp,
}

impl Keyed for Passenger {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

/// The stored passenger as their input, which a partial update is merged into.
impl From<&Passenger> for PassengerIn {
    fn from(r: &Passenger) -> Self {
        let p = &r.passenger;
        PassengerIn {
            first_name: Text::stored(p.who.first_name.clone()),
            last_name: Text::stored(p.who.last_name.clone()),
            identity_number: IdentityNumber::stored(p.who.identity.number().to_owned()),
            gender: p.who.gender,
            nationality: p.who.identity.nationality().map(|n| Nationality::stored(n.to_owned())),
            boarding_place_code: PlaceId(p.boarding_place_code),
            destination_place_code: PlaceId(p.destination_place_code),
            ticket_serial_no: p.ticket_serial_no.clone().map(Text::stored),
            ticket_issue_date: p.ticket_issue_date.map(Day),
            amount: p.amount.map(Amount::stored),
            seat_no: p.seat_no.clone().map(Text::stored),
            phone: p.phone.clone().map(Phone::stored),
            baggage: (!p.baggage.is_empty()).then(|| p.baggage.iter().cloned().map(Barcode::stored).collect()),
        }
    }
}

const COLUMNS: &str = "id, journey_id, first_name, last_name, identity_number, gender, nationality, boarding_place_code, \
     destination_place_code, ticket_serial_no, ticket_issue_date, amount::float8 AS amount, seat_no, phone, baggage, created_at, \
     updated_at, created_by, changed_by";

/// Column arrays for `unnest`, one entry per passenger.
#[derive(Default)]
struct Columns {
    first_name: Vec<String>,
    last_name: Vec<String>,
    identity_number: Vec<String>,
    gender: Vec<Gender>,
    nationality: Vec<Option<String>>,
    boarding: Vec<i32>,
    destination: Vec<i32>,
    ticket_serial_no: Vec<Option<String>>,
    ticket_issue_date: Vec<Option<NaiveDate>>,
    amount: Vec<Option<f64>>,
    seat_no: Vec<Option<String>>,
    phone: Vec<Option<String>>,
    baggage: Vec<Json<Vec<String>>>,
}

impl Columns {
    fn of(rows: &[NewPassenger]) -> Columns {
        let mut c = Columns::default();
        for p in rows {
            c.first_name.push(p.who.first_name.clone());
            c.last_name.push(p.who.last_name.clone());
            c.identity_number.push(p.who.identity.number().to_owned());
            c.gender.push(p.who.gender);
            c.nationality.push(p.who.identity.nationality().map(str::to_owned));
            c.boarding.push(p.boarding_place_code);
            c.destination.push(p.destination_place_code);
            c.ticket_serial_no.push(p.ticket_serial_no.clone());
            c.ticket_issue_date.push(p.ticket_issue_date);
            c.amount.push(p.amount);
            c.seat_no.push(p.seat_no.clone());
            c.phone.push(p.phone.clone());
            c.baggage.push(Json(p.baggage.clone()));
        }
        c
    }
}

/// A passenger with whether the upsert created it.
#[derive(sqlx::FromRow)]
pub struct Upserted {
    #[sqlx(flatten)]
    pub passenger: Passenger,
    pub inserted: bool,
}

/// Insert `rows` into a journey; with `upsert`, an existing identity number is updated
/// instead of refused. One statement, so all or nothing.
pub async fn write(
    tx: &mut PgConnection,
    org: OrgId,
    journey: JourneyId,
    rows: &[NewPassenger],
    upsert: bool,
    by: &str,
) -> sqlx::Result<Vec<Upserted>> {
    let c = Columns::of(rows);
    let on_conflict = if upsert {
        "ON CONFLICT (journey_id, identity_number) DO UPDATE SET first_name = EXCLUDED.first_name,
            last_name = EXCLUDED.last_name, gender = EXCLUDED.gender, nationality = EXCLUDED.nationality,
            boarding_place_code = EXCLUDED.boarding_place_code, destination_place_code = EXCLUDED.destination_place_code,
            ticket_serial_no = EXCLUDED.ticket_serial_no, ticket_issue_date = EXCLUDED.ticket_issue_date,
            amount = EXCLUDED.amount, seat_no = EXCLUDED.seat_no, phone = EXCLUDED.phone,
            baggage = EXCLUDED.baggage, updated_at = now(), changed_by = EXCLUDED.changed_by"
    } else {
        ""
    };
    sqlx::query_as(&format!(
        "INSERT INTO passengers (org_id, journey_id, first_name, last_name, identity_number, gender, nationality,
                                 boarding_place_code, destination_place_code, ticket_serial_no, ticket_issue_date,
                                 amount, seat_no, phone, baggage, created_by, changed_by)
         SELECT $1, $2, *, $16, $16 FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[],
                                      $10::text[], $11::date[], $12::float8[], $13::text[], $14::text[], $15::jsonb[])
         {on_conflict}
         RETURNING {COLUMNS}, (xmax = 0) AS inserted"
    ))
    .bind(org)
    .bind(journey)
    .bind(&c.first_name)
    .bind(&c.last_name)
    .bind(&c.identity_number)
    .bind(&c.gender)
    .bind(&c.nationality)
    .bind(&c.boarding)
    .bind(&c.destination)
    .bind(&c.ticket_serial_no)
    .bind(&c.ticket_issue_date)
    .bind(&c.amount)
    .bind(&c.seat_no)
    .bind(&c.phone)
    .bind(&c.baggage)
    .bind(by)
    .fetch_all(tx)
    .await
}

/// A baggage barcode two passengers of the journey carry, with the passengers' ids (one tag
/// is on one bag, and U-ETDS knows a bag by it).
pub async fn shared_barcode(tx: &mut PgConnection, journey: JourneyId) -> sqlx::Result<Option<(String, Vec<i64>)>> {
    sqlx::query_as(
        "SELECT b, array_agg(id ORDER BY id) FROM passengers, jsonb_array_elements_text(baggage) AS b
          WHERE journey_id = $1 GROUP BY b HAVING count(*) > 1 ORDER BY b LIMIT 1",
    )
    .bind(journey)
    .fetch_optional(tx)
    .await
}

pub async fn count(tx: &mut PgConnection, journey: JourneyId) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT count(*) FROM passengers WHERE journey_id = $1").bind(journey).fetch_one(tx).await
}

pub async fn get(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    journey: JourneyId,
    id: PassengerId,
) -> sqlx::Result<Option<Passenger>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM passengers WHERE org_id = $1 AND journey_id = $2 AND id = $3"))
        .bind(org)
        .bind(journey)
        .bind(id)
        .fetch_optional(db)
        .await
}

pub async fn update(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    journey: JourneyId,
    id: PassengerId,
    p: &NewPassenger,
    by: &str,
) -> sqlx::Result<Option<Passenger>> {
    sqlx::query_as(&format!(
        "UPDATE passengers SET first_name = $4, last_name = $5, identity_number = $6, gender = $7, nationality = $8,
                boarding_place_code = $9, destination_place_code = $10, ticket_serial_no = $11, ticket_issue_date = $12,
                amount = $13, seat_no = $14, phone = $15, baggage = $17, updated_at = now(), changed_by = $16
          WHERE org_id = $1 AND journey_id = $2 AND id = $3 RETURNING {COLUMNS}"
    ))
    .bind(org)
    .bind(journey)
    .bind(id)
    .bind(&p.who.first_name)
    .bind(&p.who.last_name)
    .bind(p.who.identity.number())
    .bind(p.who.gender)
    .bind(p.who.identity.nationality())
    .bind(p.boarding_place_code)
    .bind(p.destination_place_code)
    .bind(&p.ticket_serial_no)
    .bind(p.ticket_issue_date)
    .bind(p.amount)
    .bind(&p.seat_no)
    .bind(&p.phone)
    .bind(by)
    .bind(Json(&p.baggage))
    .fetch_optional(db)
    .await
}

pub async fn delete(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    journey: JourneyId,
    id: PassengerId,
) -> sqlx::Result<bool> {
    let r = sqlx::query("DELETE FROM passengers WHERE org_id = $1 AND journey_id = $2 AND id = $3")
        .bind(org)
        .bind(journey)
        .bind(id)
        .execute(db)
        .await?;
    Ok(r.rows_affected() == 1)
}

pub async fn list(db: &PgPool, org: OrgId, journey: JourneyId, page: &Page) -> sqlx::Result<Vec<Passenger>> {
    let mut qb = QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM passengers WHERE org_id = "));
    qb.push_bind(org).push(" AND journey_id = ").push_bind(journey);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}

/// Erase the personal data of every passenger of `journeys` (past retention, locked by the
/// caller): identity number, names, phone, ticket serial number and baggage tags. What was
/// counted stays: the passengers themselves, places, seats, amounts, gender and nationality.
pub async fn erase_of(tx: &mut PgConnection, journeys: &[JourneyId]) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "UPDATE passengers SET identity_number = '[erased:' || id::text || ']', first_name = $2, last_name = $2,
                phone = NULL, ticket_serial_no = NULL, baggage = '[]', updated_at = now()
          WHERE journey_id = ANY($1)",
    )
    .bind(journeys)
    .bind(tns_core::domain::personal::ERASED)
    .execute(tx)
    .await?;
    Ok(r.rows_affected())
}

/// Every passenger of a journey, oldest first (what a submission sends).
pub async fn all_of(db: &mut PgConnection, org: OrgId, journey: JourneyId) -> sqlx::Result<Vec<Passenger>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM passengers WHERE org_id = $1 AND journey_id = $2 ORDER BY id"))
        .bind(org)
        .bind(journey)
        .fetch_all(db)
        .await
}
