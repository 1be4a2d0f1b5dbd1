//! Deleting a vehicle or person: removed outright when nothing refers to it, otherwise kept
//! as `inactive` (history such as journeys and cargo still points at it) and hidden from lists.

use sqlx::PgPool;
use tns_core::ids::{OrgId, PersonId, VehicleId};

use crate::audit::{self, Actor};

/// A registry record to retire.
#[derive(Debug, Clone, Copy)]
pub enum Retirable {
    Vehicle(VehicleId),
    Person(PersonId),
}

impl Retirable {
    fn table(self) -> &'static str {
        match self {
            Retirable::Vehicle(_) => "vehicles",
            Retirable::Person(_) => "personnel",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Retirable::Vehicle(_) => "vehicle",
            Retirable::Person(_) => "person",
        }
    }

    fn id(self) -> i64 {
        match self {
            Retirable::Vehicle(id) => id.get(),
            Retirable::Person(id) => id.get(),
        }
    }

    /// Rows that refer to `$1`.
    fn references(self) -> &'static str {
        match self {
            Retirable::Vehicle(_) => {
                "EXISTS (SELECT 1 FROM journeys WHERE vehicle_record_id = $1) OR EXISTS (SELECT 1 FROM cargo WHERE vehicle_id = $1)"
            }
            Retirable::Person(_) => {
                "EXISTS (SELECT 1 FROM journey_crew WHERE personnel_id = $1) OR EXISTS (SELECT 1 FROM cargo WHERE driver_id = $1 OR second_driver_id = $1)"
            }
        }
    }
}

/// False when the organization has no such active record. In the audit log as `by`.
pub async fn retire(db: &PgPool, what: Retirable, org: OrgId, by: &Actor) -> sqlx::Result<bool> {
    let (table, id) = (what.table(), what.id());
    let mut tx = db.begin().await?;
    let hit = sqlx::query(&format!(
        "UPDATE {table} SET status = 'inactive', updated_at = now(), changed_by = $3
          WHERE org_id = $1 AND id = $2 AND status = 'active'"
    ))
    .bind(org)
    .bind(id)
    .bind(by.credential())
    .execute(&mut *tx)
    .await?;
    if hit.rows_affected() == 0 {
        return Ok(false);
    }
    // A reference committed concurrently makes the DELETE fail its foreign key: then the row
    // simply stays inactive, hence the savepoint.
    let mut sp = sqlx::Connection::begin(&mut *tx).await?;
    let deleted = sqlx::query(&format!("DELETE FROM {table} WHERE id = $1 AND NOT ({})", what.references()))
        .bind(id)
        .execute(&mut *sp)
        .await;
    let gone = match deleted {
        Ok(r) => {
            sp.commit().await?;
            r.rows_affected() == 1
        }
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("23503") => {
            sp.rollback().await?;
            false
        }
        Err(e) => return Err(e),
    };
    audit::record(&mut tx, by.deleted(org, what.noun(), id, !gone)).await?;
    tx.commit().await?;
    Ok(true)
}
