//! Personnel rows, scoped by organization.

use sqlx::{PgPool, Postgres, QueryBuilder};
use tns_core::ids::{JourneyId, OrgId, PersonId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::{
    fields::Text,
    kinds::{RegistryStatus, RoleType},
    national::{IdentityNumber, Nationality, Phone},
    person::{NewPerson, PersonIn},
    stamp::Stamp,
};

/// A crew member's row: their fields as a request set them, their standing and the stamp.
/// Personal data, so not `Debug`.
#[derive(Clone, sqlx::FromRow)]
pub struct Person {
    pub id: PersonId,
    #[sqlx(flatten)]
    pub person: NewPerson,
    /// `inactive` once deleted while journeys or cargo refer to them (they then leave the list).
    pub status: RegistryStatus,
    #[sqlx(flatten)]
    pub stamp: Stamp,
}

impl Keyed for Person {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

/// The stored person as their input, which a partial update is merged into.
impl From<&Person> for PersonIn {
    fn from(r: &Person) -> Self {
        let p = &r.person;
        PersonIn {
            identity_number: IdentityNumber::stored(p.who.identity.number().to_owned()),
            first_name: Text::stored(p.who.first_name.clone()),
            last_name: Text::stored(p.who.last_name.clone()),
            gender: p.who.gender,
            nationality: p.who.identity.nationality().map(|n| Nationality::stored(n.to_owned())),
            role_type: p.role_type,
            phone: p.phone.clone().map(Phone::stored),
            address: p.address.clone().map(Text::stored),
            hes_code: p.hes_code.clone().map(Text::stored),
        }
    }
}

const COLUMNS: &str = "id, identity_number, first_name, last_name, gender, nationality, role_type, phone, address, \
                       hes_code, status, created_at, updated_at, created_by, changed_by";
pub const IDENTITY_KEY: &str = "personnel_org_identity_key";

/// The person's fields, in the order of the insert's and the update's parameters.
fn bind_fields<'q>(q: crate::RowQuery<'q, Person>, p: &'q NewPerson) -> crate::RowQuery<'q, Person> {
    q.bind(p.who.identity.number())
        .bind(&p.who.first_name)
        .bind(&p.who.last_name)
        .bind(p.who.gender)
        .bind(p.who.identity.nationality())
        .bind(p.role_type)
        .bind(&p.phone)
        .bind(&p.address)
        .bind(&p.hes_code)
}

pub async fn insert(db: &PgPool, org: OrgId, p: &NewPerson, by: &str) -> sqlx::Result<Person> {
    let sql = format!(
        "INSERT INTO personnel (org_id, created_by, changed_by, identity_number, first_name, last_name, gender,
                                nationality, role_type, phone, address, hes_code)
         VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING {COLUMNS}"
    );
    let q = sqlx::query_as(&sql).bind(org).bind(by);
    bind_fields(q, p).fetch_one(db).await
}

pub async fn update(db: &PgPool, org: OrgId, id: PersonId, p: &NewPerson, by: &str) -> sqlx::Result<Option<Person>> {
    let sql = format!(
        "UPDATE personnel SET changed_by = $3, identity_number = $4, first_name = $5, last_name = $6, gender = $7,
                nationality = $8, role_type = $9, phone = $10, address = $11, hes_code = $12, updated_at = now()
          WHERE org_id = $1 AND id = $2 AND status = 'active' RETURNING {COLUMNS}"
    );
    let q = sqlx::query_as(&sql).bind(org).bind(id).bind(by);
    bind_fields(q, p).fetch_optional(db).await
}

pub async fn get(db: impl sqlx::PgExecutor<'_>, org: OrgId, id: PersonId) -> sqlx::Result<Option<Person>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM personnel WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// A journey's crew, in order (retired people included: they were on board).
pub async fn crew_of(db: &mut sqlx::PgConnection, org: OrgId, journey: JourneyId) -> sqlx::Result<Vec<Person>> {
    let cols: Vec<String> = COLUMNS.split(", ").map(|c| format!("p.{}", c.trim())).collect();
    sqlx::query_as(&format!(
        "SELECT {} FROM journey_crew c JOIN personnel p ON p.id = c.personnel_id
          WHERE c.org_id = $1 AND c.journey_id = $2 ORDER BY c.position",
        cols.join(", ")
    ))
    .bind(org)
    .bind(journey)
    .fetch_all(db)
    .await
}

/// Erase the personal data of retired people that no journey or shipment still keeping its
/// own names (theirs went with it), at most `limit`; how many. An active person is never
/// erased: they are the organization's register, not history.
pub async fn erase_retired(tx: &mut sqlx::PgConnection, limit: i64) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "WITH gone AS (
            SELECT p.id FROM personnel p
             WHERE p.status = 'inactive' AND p.personal_data_erased_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM journey_crew c JOIN journeys j ON j.id = c.journey_id
                                WHERE c.personnel_id = p.id AND j.personal_data_erased_at IS NULL)
               AND NOT EXISTS (SELECT 1 FROM cargo g
                                WHERE (g.driver_id = p.id OR g.second_driver_id = p.id)
                                  AND g.personal_data_erased_at IS NULL)
             ORDER BY p.id
             LIMIT $2
             FOR UPDATE OF p SKIP LOCKED
         )
         UPDATE personnel p SET identity_number = '[erased:' || p.id::text || ']', first_name = $1, last_name = $1,
                phone = NULL, address = NULL, hes_code = NULL, personal_data_erased_at = now(), updated_at = now()
           FROM gone WHERE p.id = gone.id",
    )
    .bind(tns_core::domain::personal::ERASED)
    .bind(limit)
    .execute(tx)
    .await?;
    Ok(r.rows_affected())
}

/// The active people of the organization among `ids`, as (id, role_type).
pub async fn active_roles(db: &PgPool, org: OrgId, ids: &[PersonId]) -> sqlx::Result<Vec<(PersonId, RoleType)>> {
    sqlx::query_as("SELECT id, role_type FROM personnel WHERE org_id = $1 AND id = ANY($2) AND status = 'active'")
        .bind(org)
        .bind(ids)
        .fetch_all(db)
        .await
}

pub async fn list(db: &PgPool, org: OrgId, page: &Page) -> sqlx::Result<Vec<Person>> {
    let mut qb =
        QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM personnel WHERE status = 'active' AND org_id = "));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}
