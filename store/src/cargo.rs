//! Cargo shipment rows, scoped by organization.

use sqlx::{types::Json, PgConnection, PgPool};
use tns_core::ids::{CargoId, OrgId};

use crate::pagination::{close_ids_then_rows, ids_then_rows, Keyed, Page};
use tns_core::domain::{cargo::CargoFields, kinds::RecordStatus, stamp::Stamp};

/// A shipment's row: its fields as a request set them, its state and its stamp.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Cargo {
    pub id: CargoId,
    #[sqlx(flatten)]
    pub shipment: CargoFields,
    /// Mirrors the latest submission: `draft` until submitted.
    pub status: RecordStatus,
    /// The downstream's reference, once a submission of it was delivered.
    pub downstream_reference: Option<String>,
    #[sqlx(flatten)]
    pub stamp: Stamp,
}

impl Keyed for Cargo {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

const COLUMNS: &str =
    "id, vehicle_id, driver_id, second_driver_id, trailer_plate, transport_type, cargo_type, transport_mode, cargo_amount::float8 AS cargo_amount, \
     cargo_unit, sender_tax_number, sender_name, receiver_tax_number, receiver_name, loading_date, loading_time, \
     loading_city_id, loading_district_id, loading_country, unloading_date, unloading_time, unloading_city_id, \
     unloading_district_id, unloading_country, un_number, dangerous_packaging, dangerous_exemption, items, \
     status, downstream_reference, created_at, updated_at, created_by, changed_by";

/// The columns both writes set, bound in this order by [`bind_fields`].
const FIELDS: [&str; 27] = [
    "vehicle_id",
    "driver_id",
    "second_driver_id",
    "trailer_plate",
    "transport_type",
    "cargo_type",
    "transport_mode",
    "cargo_amount",
    "cargo_unit",
    "sender_tax_number",
    "sender_name",
    "receiver_tax_number",
    "receiver_name",
    "loading_date",
    "loading_time",
    "loading_city_id",
    "loading_district_id",
    "loading_country",
    "unloading_date",
    "unloading_time",
    "unloading_city_id",
    "unloading_district_id",
    "unloading_country",
    "un_number",
    "dangerous_packaging",
    "dangerous_exemption",
    "items",
];

fn bind_fields<'q>(q: crate::RowQuery<'q, Cargo>, c: &'q CargoFields) -> crate::RowQuery<'q, Cargo> {
    q.bind(c.vehicle_id)
        .bind(c.driver_id)
        .bind(c.second_driver_id)
        .bind(c.trailer_plate.as_deref())
        .bind(c.transport_type)
        .bind(c.cargo_type)
        .bind(c.transport_mode)
        .bind(c.cargo_amount)
        .bind(c.cargo_unit)
        .bind(&c.sender_tax_number)
        .bind(&c.sender_name)
        .bind(&c.receiver_tax_number)
        .bind(&c.receiver_name)
        .bind(c.loading_date.0)
        .bind(c.loading_time.0)
        .bind(c.loading_city_id)
        .bind(c.loading_district_id)
        .bind(c.loading_country.as_deref())
        .bind(c.unloading_date.0)
        .bind(c.unloading_time.0)
        .bind(c.unloading_city_id)
        .bind(c.unloading_district_id)
        .bind(c.unloading_country.as_deref())
        .bind(c.un_number.as_deref())
        .bind(c.dangerous_packaging)
        .bind(c.dangerous_exemption.as_deref())
        .bind(Json(&c.items))
}

pub async fn insert(db: &mut PgConnection, org: OrgId, c: &CargoFields, by: &str) -> sqlx::Result<Cargo> {
    let placeholders: Vec<String> = (3..3 + FIELDS.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO cargo (org_id, created_by, changed_by, {}) VALUES ($1, $2, $2, {}) RETURNING {COLUMNS}",
        FIELDS.join(", "),
        placeholders.join(", ")
    );
    bind_fields(sqlx::query_as(&sql).bind(org).bind(by), c).fetch_one(db).await
}

/// Replace an editable shipment's fields (see `RecordStatus::is_editable`: a delivered one's
/// change goes downstream as an amendment when it is submitted again); `None` when it is not
/// editable (any more).
pub async fn update_editable(
    db: &mut PgConnection,
    org: OrgId,
    id: CargoId,
    c: &CargoFields,
    by: &str,
) -> sqlx::Result<Option<Cargo>> {
    let sets: Vec<String> = FIELDS.iter().enumerate().map(|(i, f)| format!("{f} = ${}", i + 4)).collect();
    let sql = format!(
        "UPDATE cargo SET {}, updated_at = now(), changed_by = $3
          WHERE org_id = $1 AND id = $2 AND status IN ('draft', 'delivered', 'failed')
            AND personal_data_erased_at IS NULL RETURNING {COLUMNS}",
        sets.join(", ")
    );
    bind_fields(sqlx::query_as(&sql).bind(org).bind(id).bind(by), c).fetch_optional(db).await
}

/// Erase the senders and receivers (a tax number may be a person's T.C. number, a name a
/// person's) of shipments `ids` and of each of their further loads, and mark them erased. The
/// drivers are people of the register, erased once retired.
pub async fn erase_parties(tx: &mut PgConnection, ids: &[CargoId]) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "UPDATE cargo SET sender_tax_number = $2, sender_name = $2, receiver_tax_number = $2, receiver_name = $2,
                items = (SELECT COALESCE(jsonb_agg(i || jsonb_build_object('sender_tax_number', $2::text,
                                                       'sender_name', $2::text, 'receiver_tax_number', $2::text,
                                                       'receiver_name', $2::text) ORDER BY n), '[]')
                           FROM jsonb_array_elements(items) WITH ORDINALITY AS e(i, n)),
                personal_data_erased_at = now(), updated_at = now()
          WHERE id = ANY($1)",
    )
    .bind(ids)
    .bind(tns_core::domain::personal::ERASED)
    .execute(tx)
    .await?;
    Ok(r.rows_affected())
}

pub async fn get(db: impl sqlx::PgExecutor<'_>, org: OrgId, id: CargoId) -> sqlx::Result<Option<Cargo>> {
    get_locking(db, org, id, "").await
}

/// The shipment, its row locked until the transaction ends (submissions serialize on it).
pub async fn get_for_update(tx: &mut PgConnection, org: OrgId, id: CargoId) -> sqlx::Result<Option<Cargo>> {
    get_locking(tx, org, id, " FOR UPDATE").await
}

async fn get_locking(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    id: CargoId,
    lock: &str,
) -> sqlx::Result<Option<Cargo>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM cargo WHERE org_id = $1 AND id = $2{lock}"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

pub async fn list(db: &PgPool, org: OrgId, status: Option<RecordStatus>, page: &Page) -> sqlx::Result<Vec<Cargo>> {
    let mut qb = ids_then_rows(&format!("SELECT {COLUMNS} FROM cargo c"), "c", "cargo");
    qb.push_bind(org);
    if let Some(s) = status {
        qb.push(" AND status = ").push_bind(s);
    }
    close_ids_then_rows(&mut qb, page, "c");
    qb.build_query_as().fetch_all(db).await
}
