//! Vehicle rows, scoped by organization.

use serde::Serialize;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;

use crate::pagination::{Keyed, Page};
use tns_core::domain::kinds::{RegistryStatus, VehicleType};

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct Vehicle {
    pub id: i64,
    pub plate: String,
    pub vehicle_type: VehicleType,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub model_year: Option<i32>,
    pub capacity: Option<i32>,
    pub phone: Option<String>,
    /// `inactive` once deleted while journeys or cargo refer to it (it then leaves the list).
    pub status: RegistryStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Vehicle {
    fn key(&self) -> i64 {
        self.id
    }
}

/// Validated vehicle fields.
pub struct VehicleFields {
    pub plate: String,
    pub vehicle_type: VehicleType,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub model_year: Option<i32>,
    pub capacity: Option<i32>,
    pub phone: Option<String>,
}

const COLUMNS: &str =
    "id, plate, vehicle_type, brand, model, model_year, capacity, phone, status, created_at, updated_at";
pub const PLATE_KEY: &str = "vehicles_org_plate_key";

pub async fn insert(db: &PgPool, org: i64, v: &VehicleFields) -> sqlx::Result<Vehicle> {
    sqlx::query_as(&format!(
        "INSERT INTO vehicles (org_id, plate, vehicle_type, brand, model, model_year, capacity, phone)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {COLUMNS}"
    ))
    .bind(org)
    .bind(&v.plate)
    .bind(v.vehicle_type)
    .bind(&v.brand)
    .bind(&v.model)
    .bind(v.model_year)
    .bind(v.capacity)
    .bind(&v.phone)
    .fetch_one(db)
    .await
}

/// Replace the fields of an active vehicle; `None` when there is none with that id.
pub async fn update(db: &PgPool, org: i64, id: i64, v: &VehicleFields) -> sqlx::Result<Option<Vehicle>> {
    sqlx::query_as(&format!(
        "UPDATE vehicles SET plate = $3, vehicle_type = $4, brand = $5, model = $6, model_year = $7, capacity = $8,
                phone = $9, updated_at = now()
          WHERE org_id = $1 AND id = $2 AND status = 'active' RETURNING {COLUMNS}"
    ))
    .bind(org)
    .bind(id)
    .bind(&v.plate)
    .bind(v.vehicle_type)
    .bind(&v.brand)
    .bind(&v.model)
    .bind(v.model_year)
    .bind(v.capacity)
    .bind(&v.phone)
    .fetch_optional(db)
    .await
}

/// One vehicle, active or retired (journeys may still show a retired one).
pub async fn get(db: impl sqlx::PgExecutor<'_>, org: i64, id: i64) -> sqlx::Result<Option<Vehicle>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM vehicles WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// The active vehicle with this plate.
pub async fn by_plate(db: &PgPool, org: i64, plate: &str) -> sqlx::Result<Option<Vehicle>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM vehicles WHERE org_id = $1 AND plate = $2 AND status = 'active'"))
        .bind(org)
        .bind(plate)
        .fetch_optional(db)
        .await
}

pub async fn list(db: &PgPool, org: i64, page: &Page) -> sqlx::Result<Vec<Vehicle>> {
    let mut qb =
        QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM vehicles WHERE status = 'active' AND org_id = "));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}
