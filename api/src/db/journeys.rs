//! Journey rows with their crew, scoped by organization.

use chrono::{NaiveDate, NaiveTime};
use serde::{Deserialize, Serialize};
use sqlx::{types::Json, PgConnection, PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;

use crate::pagination::{Keyed, Page};

/// Context of a scheduled (tarifeli) trip. A journey without it is a non-scheduled
/// (tarifesiz / arızi) trip.
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

/// Where and when a journey leaves or arrives.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Stop {
    /// `YYYY-MM-DD`
    pub date: String,
    /// `HH:MM`
    pub time: String,
    /// District (or airport) id of the reference data.
    pub district_id: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Journey {
    pub id: i64,
    /// As given on create: a vehicle record id or a plate.
    pub vehicle_id: String,
    /// The plate the journey runs under.
    pub plate: String,
    /// The vehicle record, when the journey names one (by id or by a registered plate).
    pub vehicle_record_id: Option<i64>,
    pub departure: Stop,
    pub arrival: Stop,
    pub tarifeli_context: Option<TarifeliContext>,
    /// `tarifeli` (scheduled, has `tarifeli_context`) or `tarifesiz` (non-scheduled).
    pub trip_kind: &'static str,
    /// Crew, in the order given.
    pub personnel_ids: Vec<i64>,
    /// `draft`, `submitted`, `delivered` or `failed`.
    pub status: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Journey {
    fn key(&self) -> i64 {
        self.id
    }
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    vehicle_ref: String,
    plate: String,
    vehicle_record_id: Option<i64>,
    departure_date: NaiveDate,
    departure_time: NaiveTime,
    departure_district_id: i32,
    arrival_date: NaiveDate,
    arrival_time: NaiveTime,
    arrival_district_id: i32,
    tarifeli_context: Option<Json<TarifeliContext>>,
    personnel_ids: Vec<i64>,
    status: String,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

fn stop(date: NaiveDate, time: NaiveTime, district: i32) -> Stop {
    Stop { date: date.to_string(), time: time.format("%H:%M").to_string(), district_id: district.to_string() }
}

impl From<Row> for Journey {
    fn from(r: Row) -> Journey {
        let tarifeli_context = r.tarifeli_context.map(|j| j.0);
        Journey {
            id: r.id,
            vehicle_id: r.vehicle_ref,
            plate: r.plate,
            vehicle_record_id: r.vehicle_record_id,
            departure: stop(r.departure_date, r.departure_time, r.departure_district_id),
            arrival: stop(r.arrival_date, r.arrival_time, r.arrival_district_id),
            trip_kind: if tarifeli_context.is_some() { "tarifeli" } else { "tarifesiz" },
            tarifeli_context,
            personnel_ids: r.personnel_ids,
            status: r.status,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Validated journey fields.
pub struct JourneyFields {
    pub vehicle_ref: String,
    pub plate: String,
    pub vehicle_record_id: Option<i64>,
    pub departure: (NaiveDate, NaiveTime, i32),
    pub arrival: (NaiveDate, NaiveTime, i32),
    pub tarifeli_context: Option<TarifeliContext>,
    pub personnel_ids: Vec<i64>,
}

const SELECT: &str = "SELECT j.id, j.vehicle_ref, j.plate, j.vehicle_record_id, j.departure_date, j.departure_time,
       j.departure_district_id, j.arrival_date, j.arrival_time, j.arrival_district_id, j.tarifeli_context, j.status,
       j.created_at, j.updated_at,
       ARRAY(SELECT c.personnel_id FROM journey_crew c WHERE c.journey_id = j.id ORDER BY c.position) AS personnel_ids
  FROM journeys j";

#[derive(Debug, Default)]
pub struct Filter {
    pub status: Option<String>,
    pub departure_from: Option<NaiveDate>,
    pub departure_to: Option<NaiveDate>,
}

pub async fn get(db: &mut PgConnection, org: i64, id: i64) -> sqlx::Result<Option<Journey>> {
    let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE j.org_id = $1 AND j.id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(row.map(Journey::from))
}

pub async fn list(db: &PgPool, org: i64, filter: &Filter, page: &Page) -> sqlx::Result<Vec<Journey>> {
    let mut qb = QueryBuilder::<Postgres>::new(format!("{SELECT} WHERE j.org_id = "));
    qb.push_bind(org);
    if let Some(s) = &filter.status {
        qb.push(" AND j.status = ").push_bind(s.clone());
    }
    if let Some(d) = filter.departure_from {
        qb.push(" AND j.departure_date >= ").push_bind(d);
    }
    if let Some(d) = filter.departure_to {
        qb.push(" AND j.departure_date <= ").push_bind(d);
    }
    page.push(&mut qb, "j.id");
    let rows: Vec<Row> = qb.build_query_as().fetch_all(db).await?;
    Ok(rows.into_iter().map(Journey::from).collect())
}

pub async fn insert(tx: &mut PgConnection, org: i64, f: &JourneyFields) -> sqlx::Result<i64> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO journeys (org_id, vehicle_ref, plate, vehicle_record_id, departure_date, departure_time,
                               departure_district_id, arrival_date, arrival_time, arrival_district_id, tarifeli_context)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
    )
    .bind(org)
    .bind(&f.vehicle_ref)
    .bind(&f.plate)
    .bind(f.vehicle_record_id)
    .bind(f.departure.0)
    .bind(f.departure.1)
    .bind(f.departure.2)
    .bind(f.arrival.0)
    .bind(f.arrival.1)
    .bind(f.arrival.2)
    .bind(f.tarifeli_context.as_ref().map(Json))
    .fetch_one(&mut *tx)
    .await?;
    set_crew(tx, org, id, &f.personnel_ids).await?;
    Ok(id)
}

/// Replace a draft journey's fields; false when it is no longer a draft.
pub async fn update_draft(tx: &mut PgConnection, org: i64, id: i64, f: &JourneyFields) -> sqlx::Result<bool> {
    let r = sqlx::query(
        "UPDATE journeys SET vehicle_ref = $3, plate = $4, vehicle_record_id = $5, departure_date = $6,
                departure_time = $7, departure_district_id = $8, arrival_date = $9, arrival_time = $10,
                arrival_district_id = $11, tarifeli_context = $12, updated_at = now()
          WHERE org_id = $1 AND id = $2 AND status = 'draft'",
    )
    .bind(org)
    .bind(id)
    .bind(&f.vehicle_ref)
    .bind(&f.plate)
    .bind(f.vehicle_record_id)
    .bind(f.departure.0)
    .bind(f.departure.1)
    .bind(f.departure.2)
    .bind(f.arrival.0)
    .bind(f.arrival.1)
    .bind(f.arrival.2)
    .bind(f.tarifeli_context.as_ref().map(Json))
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM journey_crew WHERE journey_id = $1").bind(id).execute(&mut *tx).await?;
    set_crew(tx, org, id, &f.personnel_ids).await?;
    Ok(true)
}

async fn set_crew(tx: &mut PgConnection, org: i64, journey: i64, crew: &[i64]) -> sqlx::Result<()> {
    if crew.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO journey_crew (journey_id, personnel_id, org_id, position)
         SELECT $1, p, $2, (n - 1)::smallint FROM unnest($3::bigint[]) WITH ORDINALITY AS c(p, n)",
    )
    .bind(journey)
    .bind(org)
    .bind(crew)
    .execute(tx)
    .await
    .map(|_| ())
}

/// Delete a draft journey with its crew and passengers; false when there is no such draft.
pub async fn delete_draft(db: &PgPool, org: i64, id: i64) -> sqlx::Result<bool> {
    let r = sqlx::query("DELETE FROM journeys WHERE org_id = $1 AND id = $2 AND status = 'draft'")
        .bind(org)
        .bind(id)
        .execute(db)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// The journey's status, locking the row so passenger changes serialize with each other.
pub async fn lock(tx: &mut PgConnection, org: i64, id: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT status FROM journeys WHERE org_id = $1 AND id = $2 FOR UPDATE")
        .bind(org)
        .bind(id)
        .fetch_optional(tx)
        .await
}

/// The journey's status, if the organization has it.
pub async fn status(db: &PgPool, org: i64, id: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT status FROM journeys WHERE org_id = $1 AND id = $2")
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}
