//! Journey rows with their crew, scoped by organization.

use chrono::{NaiveDate, NaiveTime};
use sqlx::{types::Json, PgConnection, PgPool};
use tns_core::ids::{JourneyId, OrgId, PersonId, Target, VehicleId};

use crate::pagination::{close_ids_then_rows, ids_then_rows, Keyed, Page};
use tns_core::domain::{
    fields::{Day, Int, Text, Time},
    journey::{JourneyIn, NewJourney, StopIn, StoredJourney, TarifeliIn},
    kinds::{RecordStatus, TripKind},
    national::{Crew, Nationality, PlaceId, VehicleRef},
    stamp::Stamp,
};

pub use tns_core::domain::journey::{StoredStop as Stop, TarifeliContext};

/// A journey as read: its fields as a request set them, its state and its stamp.
#[derive(Debug, Clone)]
pub struct Journey {
    pub id: JourneyId,
    pub journey: StoredJourney,
    /// Mirrors the latest submission: `draft` until submitted.
    pub status: RecordStatus,
    /// The downstream's reference, once a submission of it was delivered.
    pub downstream_reference: Option<String>,
    pub stamp: Stamp,
}

impl Keyed for Journey {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

#[derive(sqlx::FromRow)]
struct Row {
    id: JourneyId,
    vehicle_ref: String,
    plate: String,
    vehicle_record_id: Option<VehicleId>,
    departure_date: NaiveDate,
    departure_time: NaiveTime,
    departure_district_id: Option<i32>,
    departure_country: Option<String>,
    departure_place: Option<String>,
    arrival_date: NaiveDate,
    arrival_time: NaiveTime,
    arrival_district_id: Option<i32>,
    arrival_country: Option<String>,
    arrival_place: Option<String>,
    tarifeli_context: Option<Json<TarifeliContext>>,
    trip_kind: TripKind,
    personnel_ids: Vec<PersonId>,
    status: RecordStatus,
    downstream_reference: Option<String>,
    #[sqlx(flatten)]
    stamp: Stamp,
}

impl From<Row> for Journey {
    fn from(r: Row) -> Journey {
        let journey = StoredJourney {
            vehicle_id: r.vehicle_ref,
            plate: r.plate,
            vehicle_record_id: r.vehicle_record_id,
            departure: Stop {
                date: Day(r.departure_date),
                time: Time(r.departure_time),
                district_id: r.departure_district_id,
                country: r.departure_country,
                place: r.departure_place,
            },
            arrival: Stop {
                date: Day(r.arrival_date),
                time: Time(r.arrival_time),
                district_id: r.arrival_district_id,
                country: r.arrival_country,
                place: r.arrival_place,
            },
            trip_kind: r.trip_kind,
            tarifeli_context: r.tarifeli_context.map(|j| j.0),
            personnel_ids: r.personnel_ids,
        };
        Journey { id: r.id, journey, status: r.status, downstream_reference: r.downstream_reference, stamp: r.stamp }
    }
}

/// How a journey names its vehicle.
#[derive(Debug, Clone)]
pub enum VehicleChoice {
    /// A vehicle record of the organization, which must be active.
    Record(VehicleId),
    /// A plate (normalized); linked to the active vehicle holding it, if any.
    Plate(String),
}

impl VehicleChoice {
    /// What `vehicle_id` shows: the caller's own words, normalized.
    pub fn as_ref_text(&self) -> String {
        match self {
            VehicleChoice::Record(id) => id.to_string(),
            VehicleChoice::Plate(p) => p.clone(),
        }
    }

    fn record(&self) -> Option<VehicleId> {
        match self {
            VehicleChoice::Record(id) => Some(*id),
            VehicleChoice::Plate(_) => None,
        }
    }

    fn plate(&self) -> Option<&str> {
        match self {
            VehicleChoice::Record(_) => None,
            VehicleChoice::Plate(p) => Some(p),
        }
    }
}

/// A journey's columns, as written.
pub struct JourneyFields {
    pub vehicle: VehicleChoice,
    pub departure: Stop,
    pub arrival: Stop,
    pub trip_kind: TripKind,
    pub tarifeli_context: Option<TarifeliContext>,
    pub personnel_ids: Vec<PersonId>,
}

impl From<&NewJourney> for JourneyFields {
    fn from(j: &NewJourney) -> JourneyFields {
        JourneyFields {
            vehicle: match j.vehicle() {
                VehicleRef::Record(id) => VehicleChoice::Record(*id),
                VehicleRef::Plate(p) => VehicleChoice::Plate(p.as_str().to_string()),
            },
            departure: Stop::from(j.departure()),
            arrival: Stop::from(j.arrival()),
            trip_kind: j.trip().kind(),
            tarifeli_context: j.trip().context().map(TarifeliContext::from),
            personnel_ids: j.crew().to_vec(),
        }
    }
}

/// The stored journey as its input, which a partial update is merged into.
impl From<&Journey> for JourneyIn {
    fn from(row: &Journey) -> Self {
        let j = &row.journey;
        let stop = |s: &Stop| StopIn {
            date: s.date,
            time: s.time,
            district_id: s.district_id.map(PlaceId),
            country: s.country.clone().map(Nationality::stored),
            place: s.place.clone().map(Text::stored),
        };
        JourneyIn {
            vehicle_id: VehicleRef::stored(&j.vehicle_id),
            departure: stop(&j.departure),
            arrival: stop(&j.arrival),
            trip_kind: Some(j.trip_kind),
            tarifeli_context: j.tarifeli_context.as_ref().map(|t| TarifeliIn {
                firma_id: Int::stored(t.firma_id),
                unet_guzergah_kodu: Int::stored(t.unet_guzergah_kodu),
                kalkis_yer_id: PlaceId(t.kalkis_yer_id as i32),
                varis_yer_id: PlaceId(t.varis_yer_id as i32),
                seyahat_suresi_saat: Int::stored(t.seyahat_suresi_saat),
            }),
            personnel_ids: Some(Crew(j.personnel_ids.iter().map(|p| p.get()).collect())).filter(|c| !c.0.is_empty()),
        }
    }
}

const SELECT: &str = "SELECT j.id, j.vehicle_ref, j.plate, j.vehicle_record_id, j.departure_date, j.departure_time,
       j.departure_district_id, j.departure_country, j.departure_place, j.arrival_date, j.arrival_time,
       j.arrival_district_id, j.arrival_country, j.arrival_place, j.tarifeli_context, j.trip_kind,
       j.status,
       j.downstream_reference, j.created_at, j.updated_at, j.created_by, j.changed_by,
       ARRAY(SELECT c.personnel_id FROM journey_crew c WHERE c.journey_id = j.id ORDER BY c.position) AS personnel_ids
  FROM journeys j";

#[derive(Debug, Default)]
pub struct Filter {
    pub status: Option<RecordStatus>,
    pub departure_from: Option<NaiveDate>,
    pub departure_to: Option<NaiveDate>,
    /// Journeys naming this vehicle record.
    pub vehicle_record_id: Option<VehicleId>,
}

pub async fn get(db: &mut PgConnection, org: OrgId, id: JourneyId) -> sqlx::Result<Option<Journey>> {
    let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE j.org_id = $1 AND j.id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(row.map(Journey::from))
}

pub async fn list(db: &PgPool, org: OrgId, filter: &Filter, page: &Page) -> sqlx::Result<Vec<Journey>> {
    let mut qb = ids_then_rows(SELECT, "j", "journeys");
    qb.push_bind(org);
    if let Some(s) = &filter.status {
        qb.push(" AND status = ").push_bind(*s);
    }
    if let Some(d) = filter.departure_from {
        qb.push(" AND departure_date >= ").push_bind(d);
    }
    if let Some(d) = filter.departure_to {
        qb.push(" AND departure_date <= ").push_bind(d);
    }
    if let Some(v) = filter.vehicle_record_id {
        qb.push(" AND vehicle_record_id = ").push_bind(v);
    }
    close_ids_then_rows(&mut qb, page, "j");
    let rows: Vec<Row> = qb.build_query_as().fetch_all(db).await?;
    Ok(rows.into_iter().map(Journey::from).collect())
}

/// Resolves the vehicle inside the write statement, so creating a journey is one round trip
/// (it is the hottest write of the API). `$1` org, `$2` record id or NULL, `$3` plate or NULL;
/// no row when a named record is not an active vehicle of the organization.
const VEHICLE_CTE: &str = "WITH v AS (
    SELECT COALESCE(rec.plate, $3::text) AS plate, rec.id
      FROM (SELECT 1) AS one
      LEFT JOIN vehicles rec ON rec.org_id = $1 AND rec.status = 'active'
           AND CASE WHEN $2::bigint IS NULL THEN rec.plate = $3::text ELSE rec.id = $2::bigint END
     WHERE $2::bigint IS NULL OR rec.id IS NOT NULL)";

/// Bind `$2` to `$12`: the vehicle, the reference text, the stops' days, times and districts,
/// the context and the kind (the stops abroad are bound by [`bind_abroad`]).
fn bind_fields<'q, O>(q: crate::RowQuery<'q, O>, f: &'q JourneyFields) -> crate::RowQuery<'q, O> {
    q.bind(f.vehicle.record())
        .bind(f.vehicle.plate())
        .bind(f.vehicle.as_ref_text())
        .bind(f.departure.date.0)
        .bind(f.departure.time.0)
        .bind(f.departure.district_id)
        .bind(f.arrival.date.0)
        .bind(f.arrival.time.0)
        .bind(f.arrival.district_id)
        .bind(f.tarifeli_context.as_ref().map(Json))
        .bind(f.trip_kind)
}

/// Bind the departure's and the arrival's country and place, in that order.
fn bind_abroad<'q, O>(q: crate::RowQuery<'q, O>, f: &'q JourneyFields) -> crate::RowQuery<'q, O> {
    q.bind(f.departure.country.as_deref())
        .bind(f.departure.place.as_deref())
        .bind(f.arrival.country.as_deref())
        .bind(f.arrival.place.as_deref())
}

/// A journey to create: its organization, its fields and who creates it.
pub struct ToCreate<'a> {
    pub org: OrgId,
    pub fields: &'a JourneyFields,
    pub by: &'a str,
}

/// A journey row with the position of its input in a batch.
#[derive(sqlx::FromRow)]
struct Numbered {
    ordinal: i64,
    #[sqlx(flatten)]
    row: Row,
}

/// Insert journeys with their crews, of any organizations, in one statement (atomic without
/// a transaction; one round trip and one commit for the whole batch). The answer lines up
/// with `batch`: `None` where the named vehicle record is not an active vehicle of that
/// organization. Journey ids are drawn first so crew rows can name them.
pub async fn insert_many(db: &PgPool, batch: &[ToCreate<'_>]) -> sqlx::Result<Vec<Option<Journey>>> {
    fn col<T>(batch: &[ToCreate<'_>], f: impl Fn(&JourneyFields) -> T) -> Vec<T> {
        batch.iter().map(|n| f(n.fields)).collect()
    }
    let orgs: Vec<i64> = batch.iter().map(|n| n.org.get()).collect();
    let by: Vec<&str> = batch.iter().map(|n| n.by).collect();
    let (mut crew_n, mut crew_id, mut crew_pos) = (vec![], vec![], vec![]);
    for (n, j) in batch.iter().map(|n| n.fields).enumerate() {
        for (pos, id) in j.personnel_ids.iter().enumerate() {
            crew_n.push(n as i64 + 1);
            crew_id.push(*id);
            crew_pos.push(pos as i16);
        }
    }
    let rows: Vec<Numbered> = sqlx::query_as(
        "WITH input AS (
            SELECT i.*, nextval(pg_get_serial_sequence('journeys', 'id')) AS new_id
              FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::date[], $6::time[], $7::int[],
                          $8::date[], $9::time[], $10::int[], $11::jsonb[], $15::text[], $16::text[], $17::text[],
                          $18::text[], $19::text[], $20::text[])
                   WITH ORDINALITY AS i(org, rec, plate, ref, dep_date, dep_time, dep_d, arr_date, arr_time, arr_d, ctx,
                                        kind, by, dep_c, dep_p, arr_c, arr_p, n)
         ), v AS (
            SELECT i.*, COALESCE(rec.plate, i.plate) AS v_plate, rec.id AS v_id
              FROM input i
              LEFT JOIN vehicles rec ON rec.org_id = i.org AND rec.status = 'active'
                   AND CASE WHEN i.rec IS NULL THEN rec.plate = i.plate ELSE rec.id = i.rec END
             WHERE i.rec IS NULL OR rec.id IS NOT NULL
         ), crew AS (
            SELECT * FROM unnest($12::bigint[], $13::bigint[], $14::smallint[]) AS c(n, personnel_id, position)
         ), j AS (
            INSERT INTO journeys (id, org_id, vehicle_ref, plate, vehicle_record_id, departure_date, departure_time,
                                  departure_district_id, arrival_date, arrival_time, arrival_district_id, tarifeli_context,
                                  trip_kind, created_by, changed_by, departure_country, departure_place,
                                  arrival_country, arrival_place)
            SELECT new_id, org, ref, v_plate, v_id, dep_date, dep_time, dep_d, arr_date, arr_time, arr_d, ctx, kind,
                   by, by, dep_c, dep_p, arr_c, arr_p
              FROM v ORDER BY n
            RETURNING *
         ), crew_rows AS (
            INSERT INTO journey_crew (journey_id, personnel_id, org_id, position)
            SELECT v.new_id, c.personnel_id, v.org, c.position FROM crew c JOIN v ON v.n = c.n
         ), events AS (
            -- journey.created, in the statement that creates the journeys (the outbox). The data is
            -- the journey as GET /portal/journeys/{id} shows it.
            SELECT webhook_emit(array_agg(j.org_id), array_agg('journey.created'::text), array_agg(
                       jsonb_build_object('id', j.id, 'vehicle_id', j.vehicle_ref, 'plate', j.plate,
                                          'vehicle_record_id', j.vehicle_record_id,
                                          'departure', jsonb_strip_nulls(jsonb_build_object('date', j.departure_date,
                                              'time', to_char(j.departure_time, 'HH24:MI'),
                                              'district_id', j.departure_district_id::text,
                                              'country', j.departure_country, 'place', j.departure_place)),
                                          'arrival', jsonb_strip_nulls(jsonb_build_object('date', j.arrival_date,
                                              'time', to_char(j.arrival_time, 'HH24:MI'),
                                              'district_id', j.arrival_district_id::text,
                                              'country', j.arrival_country, 'place', j.arrival_place)),
                                          'tarifeli_context', j.tarifeli_context, 'trip_kind', j.trip_kind,
                                          'personnel_ids', ARRAY(SELECT c.personnel_id FROM crew c JOIN v ON v.n = c.n
                                                                  WHERE v.new_id = j.id ORDER BY c.position),
                                          'status', j.status, 'downstream_reference', j.downstream_reference,
                                          'created_at', json_time(j.created_at), 'updated_at', json_time(j.updated_at),
                                          'created_by', j.created_by, 'changed_by', j.changed_by))) AS deliveries
              FROM j
             -- Only for organizations something receives it from (webhook_emit's own match for
             -- this type): the others' events are not built (webhook_emit then has nothing to
             -- do), which was most of a create's time in PostgreSQL.
             WHERE EXISTS (SELECT 1 FROM webhook_subscriptions s
                            WHERE s.org_id = j.org_id AND s.active AND s.event_type = 'journey.created')
         )
         SELECT v.n AS ordinal, j.id, j.vehicle_ref, j.plate, j.vehicle_record_id, j.departure_date, j.departure_time,
                j.departure_district_id, j.departure_country, j.departure_place, j.arrival_date, j.arrival_time,
                j.arrival_district_id, j.arrival_country, j.arrival_place, j.tarifeli_context,
                j.trip_kind, j.status, j.downstream_reference, j.created_at, j.updated_at, j.created_by, j.changed_by,
                ARRAY(SELECT c.personnel_id FROM crew c WHERE c.n = v.n ORDER BY c.position) AS personnel_ids
           FROM j JOIN v ON v.new_id = j.id CROSS JOIN events",
    )
    .bind(&orgs)
    .bind(col(batch, |j| j.vehicle.record()))
    .bind(col(batch, |j| j.vehicle.plate().map(str::to_string)))
    .bind(col(batch, |j| j.vehicle.as_ref_text()))
    .bind(col(batch, |j| j.departure.date.0))
    .bind(col(batch, |j| j.departure.time.0))
    .bind(col(batch, |j| j.departure.district_id))
    .bind(col(batch, |j| j.arrival.date.0))
    .bind(col(batch, |j| j.arrival.time.0))
    .bind(col(batch, |j| j.arrival.district_id))
    .bind(col(batch, |j| j.tarifeli_context.clone().map(Json)))
    .bind(&crew_n)
    .bind(&crew_id)
    .bind(&crew_pos)
    .bind(col(batch, |j| j.trip_kind))
    .bind(&by)
    .bind(col(batch, |j| j.departure.country.clone()))
    .bind(col(batch, |j| j.departure.place.clone()))
    .bind(col(batch, |j| j.arrival.country.clone()))
    .bind(col(batch, |j| j.arrival.place.clone()))
    .fetch_all(db)
    .await?;
    let mut out: Vec<Option<Journey>> = (0..batch.len()).map(|_| None).collect();
    for r in rows {
        if let Some(slot) = out.get_mut(r.ordinal as usize - 1) {
            *slot = Some(Journey::from(r.row));
        }
    }
    Ok(out)
}

/// Replace an editable journey's fields and crew (see `RecordStatus::is_editable`). False
/// when it is not editable (any more) or the named vehicle record is not an active vehicle of
/// the organization.
pub async fn update_editable(
    tx: &mut PgConnection,
    org: OrgId,
    id: JourneyId,
    f: &JourneyFields,
    by: &str,
) -> sqlx::Result<bool> {
    let sql = format!(
        "{VEHICLE_CTE}
         UPDATE journeys j SET vehicle_ref = $4, plate = v.plate, vehicle_record_id = v.id, departure_date = $5,
                departure_time = $6, departure_district_id = $7, arrival_date = $8, arrival_time = $9,
                arrival_district_id = $10, tarifeli_context = $11, trip_kind = $12, updated_at = now(),
                changed_by = $14, departure_country = $15, departure_place = $16, arrival_country = $17,
                arrival_place = $18
           FROM v
          WHERE j.org_id = $1 AND j.id = $13 AND j.status IN ('draft', 'delivered', 'failed')
         RETURNING j.id"
    );
    let updated: Option<(i64,)> = bind_abroad(bind_fields(sqlx::query_as(&sql).bind(org), f).bind(id).bind(by), f)
        .fetch_optional(&mut *tx)
        .await?;
    if updated.is_none() {
        return Ok(false);
    }
    sqlx::query("DELETE FROM journey_crew WHERE journey_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query(
        "INSERT INTO journey_crew (journey_id, personnel_id, org_id, position)
         SELECT $1, p, $2, (n - 1)::smallint FROM unnest($3::bigint[]) WITH ORDINALITY AS c(p, n)",
    )
    .bind(id)
    .bind(org)
    .bind(&f.personnel_ids)
    .execute(&mut *tx)
    .await?;
    Ok(true)
}

/// Delete a draft journey with its crew and passengers; false when there is no such draft.
/// The journey's status, locking the row so passenger changes serialize with each other.
pub async fn lock(tx: &mut PgConnection, org: OrgId, id: JourneyId) -> sqlx::Result<Option<RecordStatus>> {
    sqlx::query_scalar("SELECT status FROM journeys WHERE org_id = $1 AND id = $2 FOR UPDATE")
        .bind(org)
        .bind(id)
        .fetch_optional(tx)
        .await
}

/// Mark journeys whose passengers and submissions were erased in this transaction.
pub async fn mark_erased(tx: &mut PgConnection, ids: &[JourneyId]) -> sqlx::Result<u64> {
    let r = sqlx::query("UPDATE journeys SET personal_data_erased_at = now() WHERE id = ANY($1)")
        .bind(ids)
        .execute(tx)
        .await?;
    Ok(r.rows_affected())
}

/// The journey's status, if the organization has it.
pub async fn status(db: &PgPool, org: OrgId, id: JourneyId) -> sqlx::Result<Option<RecordStatus>> {
    crate::records::status(db, Target::Journey(id), org).await
}
