//! Cargo shipment rows, scoped by organization.

use chrono::{NaiveDate, NaiveTime};
use serde::Serialize;
use sqlx::{types::Json, PgConnection, PgPool};
use tns_core::ids::OrgId;
use utoipa::ToSchema;

use crate::pagination::{close_ids_then_rows, ids_then_rows, Keyed, Page};
use tns_core::domain::{
    cargo::{CargoIn, CargoItemIn, CargoShipment, Handover, Site},
    fields::{Amount, Day, Int, Text, Time},
    kinds::{CargoUnit, DangerousPackaging, RecordStatus},
    national::{CityId, ExemptionCode, Nationality, PlaceId, Plate, TaxId, UnNumber},
};

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct Cargo {
    pub id: i64,
    pub vehicle_id: i64,
    pub driver_id: Option<i64>,
    /// A second driver (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_driver_id: Option<i64>,
    /// The trailer's plate (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailer_plate: Option<String>,
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub cargo_amount: f64,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: String,
    pub sender_name: String,
    pub receiver_tax_number: String,
    pub receiver_name: String,
    #[schema(value_type = tns_core::domain::fields::Day)]
    pub loading_date: NaiveDate,
    #[serde(serialize_with = "hh_mm")]
    #[schema(value_type = tns_core::domain::fields::Time)]
    pub loading_time: NaiveTime,
    /// Absent when loading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_city_id: Option<i32>,
    /// Absent when loading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_district_id: Option<i32>,
    /// The country when loading abroad; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading_country: Option<String>,
    #[schema(value_type = tns_core::domain::fields::Day)]
    pub unloading_date: NaiveDate,
    #[serde(serialize_with = "hh_mm")]
    #[schema(value_type = tns_core::domain::fields::Time)]
    pub unloading_time: NaiveTime,
    /// Absent when unloading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_city_id: Option<i32>,
    /// Absent when unloading abroad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_district_id: Option<i32>,
    /// The country when unloading abroad; absent in Türkiye.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unloading_country: Option<String>,
    /// Dangerous goods' UN number (absent for other goods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub un_number: Option<String>,
    /// How dangerous goods are carried (absent for other goods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    /// The exemption dangerous goods travel under (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<String>,
    /// The loads besides the shipment's own (absent when none).
    #[serde(skip_serializing_if = "no_items")]
    #[schema(value_type = Vec<CargoItem>)]
    pub items: Json<Vec<CargoItem>>,
    /// Mirrors the latest submission: `draft` until submitted.
    pub status: RecordStatus,
    /// The downstream's reference, once a submission of it was delivered.
    pub downstream_reference: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// Who created it: `user:<id>` (a member) or `key:<id>` (an API key); `null` for records
    /// older than this field.
    pub created_by: Option<String>,
    /// Who changed it last (created or edited it), named the same way.
    pub changed_by: Option<String>,
}

fn no_items(items: &Json<Vec<CargoItem>>) -> bool {
    items.0.is_empty()
}

/// A further load as stored: plain values, read back without the input's rules (which may
/// grow stricter than what was stored under them).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ToSchema)]
pub struct CargoItem {
    pub cargo_type: i32,
    pub cargo_amount: f64,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: String,
    pub sender_name: String,
    pub receiver_tax_number: String,
    pub receiver_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub un_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_packaging: Option<DangerousPackaging>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous_exemption: Option<String>,
}

impl From<&CargoItemIn> for CargoItem {
    fn from(i: &CargoItemIn) -> CargoItem {
        CargoItem {
            // The bounds of the field's type fit the column's.
            cargo_type: i.cargo_type.get() as i32,
            cargo_amount: i.cargo_amount.get(),
            cargo_unit: i.cargo_unit,
            sender_tax_number: i.sender_tax_number.as_str().to_string(),
            sender_name: i.sender_name.as_str().to_string(),
            receiver_tax_number: i.receiver_tax_number.as_str().to_string(),
            receiver_name: i.receiver_name.as_str().to_string(),
            un_number: i.un_number.as_ref().map(|u| u.as_str().to_string()),
            dangerous_packaging: i.dangerous_packaging,
            dangerous_exemption: i.dangerous_exemption.as_ref().map(|e| e.as_str().to_string()),
        }
    }
}

impl From<&CargoItem> for CargoItemIn {
    fn from(i: &CargoItem) -> CargoItemIn {
        CargoItemIn {
            cargo_type: Int::stored(i.cargo_type.into()),
            cargo_amount: Amount::stored(i.cargo_amount),
            cargo_unit: i.cargo_unit,
            sender_tax_number: TaxId::stored(i.sender_tax_number.clone()),
            sender_name: Text::stored(i.sender_name.clone()),
            receiver_tax_number: TaxId::stored(i.receiver_tax_number.clone()),
            receiver_name: Text::stored(i.receiver_name.clone()),
            un_number: i.un_number.clone().map(UnNumber::stored),
            dangerous_packaging: i.dangerous_packaging,
            dangerous_exemption: i.dangerous_exemption.clone().map(ExemptionCode::stored),
        }
    }
}

fn hh_mm<S: serde::Serializer>(t: &NaiveTime, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&t.format("%H:%M"))
}

impl Keyed for Cargo {
    fn key(&self) -> i64 {
        self.id
    }
}

/// Where and when goods are loaded or unloaded, as columns: a province and district, or a
/// country abroad.
pub struct HandoverFields {
    pub date: NaiveDate,
    pub time: NaiveTime,
    pub city_id: Option<i32>,
    pub district_id: Option<i32>,
    pub country: Option<String>,
}

impl From<&Handover> for HandoverFields {
    fn from(h: &Handover) -> HandoverFields {
        let (city_id, district_id, country) = match &h.place {
            Site::Province { city_id, district_id } => (Some(*city_id), Some(*district_id), None),
            Site::Abroad { country } => (None, None, Some(country.clone())),
        };
        HandoverFields { date: h.date, time: h.time, city_id, district_id, country }
    }
}

/// A shipment's columns, as written.
pub struct CargoFields {
    pub vehicle_id: i64,
    pub driver_id: Option<i64>,
    pub second_driver_id: Option<i64>,
    pub trailer_plate: Option<String>,
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub cargo_amount: f64,
    pub cargo_unit: CargoUnit,
    pub sender_tax_number: String,
    pub sender_name: String,
    pub receiver_tax_number: String,
    pub receiver_name: String,
    pub loading: HandoverFields,
    pub unloading: HandoverFields,
    pub un_number: Option<String>,
    pub dangerous_packaging: Option<DangerousPackaging>,
    pub dangerous_exemption: Option<String>,
    pub items: Vec<CargoItem>,
}

impl From<&CargoShipment> for CargoFields {
    fn from(c: &CargoShipment) -> CargoFields {
        let (goods, l, u) = (c.goods(), c.loading(), c.unloading());
        CargoFields {
            vehicle_id: c.vehicle_id(),
            driver_id: c.driver_id(),
            second_driver_id: c.second_driver_id(),
            trailer_plate: c.trailer_plate().map(str::to_string),
            transport_type: goods.transport_type,
            cargo_type: goods.cargo_type,
            transport_mode: goods.transport_mode,
            cargo_amount: goods.amount,
            cargo_unit: goods.unit,
            sender_tax_number: c.sender().tax_number.clone(),
            sender_name: c.sender().name.clone(),
            receiver_tax_number: c.receiver().tax_number.clone(),
            receiver_name: c.receiver().name.clone(),
            loading: HandoverFields::from(l),
            unloading: HandoverFields::from(u),
            un_number: c.dangerous().map(|d| d.un_number.clone()),
            dangerous_packaging: c.dangerous().map(|d| d.packaging),
            dangerous_exemption: c.dangerous().and_then(|d| d.exemption.clone()),
            items: c.items().iter().map(CargoItem::from).collect(),
        }
    }
}

/// The stored shipment as its input, which a partial update is merged into.
impl From<&Cargo> for CargoIn {
    fn from(c: &Cargo) -> Self {
        CargoIn {
            vehicle_id: Int::stored(c.vehicle_id),
            driver_id: c.driver_id.map(Int::stored),
            second_driver_id: c.second_driver_id.map(Int::stored),
            trailer_plate: c.trailer_plate.clone().map(Plate::stored),
            transport_type: Int::stored(c.transport_type.into()),
            cargo_type: Int::stored(c.cargo_type.into()),
            transport_mode: Int::stored(c.transport_mode.into()),
            cargo_amount: Amount::stored(c.cargo_amount),
            cargo_unit: c.cargo_unit,
            sender_tax_number: TaxId::stored(c.sender_tax_number.clone()),
            sender_name: Text::stored(c.sender_name.clone()),
            receiver_tax_number: TaxId::stored(c.receiver_tax_number.clone()),
            receiver_name: Text::stored(c.receiver_name.clone()),
            loading_date: Day(c.loading_date),
            loading_time: Time(c.loading_time),
            loading_city_id: c.loading_city_id.map(CityId),
            loading_district_id: c.loading_district_id.map(PlaceId),
            loading_country: c.loading_country.clone().map(Nationality::stored),
            unloading_date: Day(c.unloading_date),
            unloading_time: Time(c.unloading_time),
            unloading_city_id: c.unloading_city_id.map(CityId),
            unloading_district_id: c.unloading_district_id.map(PlaceId),
            unloading_country: c.unloading_country.clone().map(Nationality::stored),
            un_number: c.un_number.clone().map(UnNumber::stored),
            dangerous_packaging: c.dangerous_packaging,
            dangerous_exemption: c.dangerous_exemption.clone().map(ExemptionCode::stored),
            items: (!c.items.0.is_empty()).then(|| c.items.0.iter().map(CargoItemIn::from).collect()),
        }
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
        .bind(c.loading.date)
        .bind(c.loading.time)
        .bind(c.loading.city_id)
        .bind(c.loading.district_id)
        .bind(c.loading.country.as_deref())
        .bind(c.unloading.date)
        .bind(c.unloading.time)
        .bind(c.unloading.city_id)
        .bind(c.unloading.district_id)
        .bind(c.unloading.country.as_deref())
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
    id: i64,
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
pub async fn erase_parties(tx: &mut PgConnection, ids: &[i64]) -> sqlx::Result<u64> {
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

pub async fn get(db: impl sqlx::PgExecutor<'_>, org: OrgId, id: i64) -> sqlx::Result<Option<Cargo>> {
    get_locking(db, org, id, "").await
}

/// The shipment, its row locked until the transaction ends (submissions serialize on it).
pub async fn get_for_update(tx: &mut PgConnection, org: OrgId, id: i64) -> sqlx::Result<Option<Cargo>> {
    get_locking(tx, org, id, " FOR UPDATE").await
}

async fn get_locking(db: impl sqlx::PgExecutor<'_>, org: OrgId, id: i64, lock: &str) -> sqlx::Result<Option<Cargo>> {
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
