//! Vehicle rows, scoped by organization.

use sqlx::{PgPool, Postgres, QueryBuilder};
use tns_core::ids::{OrgId, VehicleId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::{
    fields::{Int, Text},
    kinds::RegistryStatus,
    national::{Phone, Plate},
    stamp::Stamp,
    vehicle::{NewVehicle, VehicleIn},
};

/// A vehicle row: its fields as a request set them, its standing and its stamp.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Vehicle {
    pub id: VehicleId,
    #[sqlx(flatten)]
    pub vehicle: NewVehicle,
    /// `inactive` once deleted while journeys or cargo refer to it (it then leaves the list).
    pub status: RegistryStatus,
    #[sqlx(flatten)]
    pub stamp: Stamp,
}

impl Keyed for Vehicle {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

/// The stored vehicle as its input, which a partial update is merged into.
impl From<&Vehicle> for VehicleIn {
    fn from(r: &Vehicle) -> Self {
        let v = &r.vehicle;
        VehicleIn {
            plate: Plate::stored(v.plate.clone()),
            vehicle_type: v.vehicle_type,
            brand: v.brand.clone().map(Text::stored),
            model: v.model.clone().map(Text::stored),
            model_year: v.model_year.map(|y| Int::stored(y.into())),
            capacity: v.capacity.map(|c| Int::stored(c.into())),
            phone: v.phone.clone().map(Phone::stored),
        }
    }
}

const COLUMNS: &str =
    "id, plate, vehicle_type, brand, model, model_year, capacity, phone, status, created_at, updated_at, created_by, changed_by";
pub const PLATE_KEY: &str = "vehicles_org_plate_key";

/// The vehicle's fields, in the order of the insert's and the update's parameters.
fn bind_fields<'q>(q: crate::RowQuery<'q, Vehicle>, v: &'q NewVehicle) -> crate::RowQuery<'q, Vehicle> {
    q.bind(&v.plate)
        .bind(v.vehicle_type)
        .bind(&v.brand)
        .bind(&v.model)
        .bind(v.model_year)
        .bind(v.capacity)
        .bind(&v.phone)
}

pub async fn insert(db: &PgPool, org: OrgId, v: &NewVehicle, by: &str) -> sqlx::Result<Vehicle> {
    let sql = format!(
        "INSERT INTO vehicles (org_id, created_by, changed_by, plate, vehicle_type, brand, model, model_year, capacity,
                               phone)
         VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {COLUMNS}"
    );
    let q = sqlx::query_as(&sql).bind(org).bind(by);
    bind_fields(q, v).fetch_one(db).await
}

/// Replace the fields of an active vehicle; `None` when there is none with that id.
pub async fn update(db: &PgPool, org: OrgId, id: VehicleId, v: &NewVehicle, by: &str) -> sqlx::Result<Option<Vehicle>> {
    let sql = format!(
        "UPDATE vehicles SET changed_by = $3, plate = $4, vehicle_type = $5, brand = $6, model = $7, model_year = $8,
                capacity = $9, phone = $10, updated_at = now()
          WHERE org_id = $1 AND id = $2 AND status = 'active' RETURNING {COLUMNS}"
    );
    let q = sqlx::query_as(&sql).bind(org).bind(id).bind(by);
    bind_fields(q, v).fetch_optional(db).await
}

/// One vehicle, active or retired (journeys may still show a retired one).
pub async fn get(db: impl sqlx::PgExecutor<'_>, org: OrgId, id: VehicleId) -> sqlx::Result<Option<Vehicle>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM vehicles WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// The active vehicle with this plate.
pub async fn by_plate(db: &PgPool, org: OrgId, plate: &str) -> sqlx::Result<Option<Vehicle>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM vehicles WHERE org_id = $1 AND plate = $2 AND status = 'active'"))
        .bind(org)
        .bind(plate)
        .fetch_optional(db)
        .await
}

pub async fn list(db: &PgPool, org: OrgId, page: &Page) -> sqlx::Result<Vec<Vehicle>> {
    let mut qb =
        QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM vehicles WHERE status = 'active' AND org_id = "));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}
