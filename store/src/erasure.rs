//! Personal data retention: the personal data of journeys and shipments that ended longer ago
//! than the retention period, and of retired people no longer named by any record that keeps
//! its own, is erased (README, "Personal data retention"). Which records are due is decided
//! here; each owning module erases its part (`passengers::erase_of`, `cargo::erase_parties`,
//! `submissions::erasure::erase_of`, `personnel::erase_retired`), one transaction per batch, so
//! a record is never left half erased. Every step skips what is erased already: running twice,
//! or on two replicas at once, erases nothing twice.

use sqlx::PgPool;
use tns_core::{
    domain::kinds::TargetType,
    ids::{CargoId, JourneyId},
};

use crate::{cargo, journeys, passengers, personnel, records, submissions};

/// Journeys past retention: their passengers and submissions erased, the journeys marked; how
/// many journeys (at most `batch`).
pub async fn journeys(db: &PgPool, days: u32, batch: i64) -> sqlx::Result<u64> {
    let mut tx = db.begin().await?;
    let due = records::past_retention(&mut tx, TargetType::Journey, days, batch).await?;
    if due.is_empty() {
        return Ok(0);
    }
    let ids: Vec<JourneyId> = due.iter().map(|(id, _)| JourneyId(*id)).collect();
    passengers::erase_of(&mut tx, &ids).await?;
    submissions::erasure::erase_of(&mut tx, TargetType::Journey, &due).await?;
    let n = journeys::mark_erased(&mut tx, &ids).await?;
    tx.commit().await?;
    Ok(n)
}

/// Shipments past retention: their parties and submissions erased, the shipments marked; how
/// many (at most `batch`).
pub async fn shipments(db: &PgPool, days: u32, batch: i64) -> sqlx::Result<u64> {
    let mut tx = db.begin().await?;
    let due = records::past_retention(&mut tx, TargetType::Cargo, days, batch).await?;
    if due.is_empty() {
        return Ok(0);
    }
    let ids: Vec<CargoId> = due.iter().map(|(id, _)| CargoId(*id)).collect();
    submissions::erasure::erase_of(&mut tx, TargetType::Cargo, &due).await?;
    let n = cargo::erase_parties(&mut tx, &ids).await?;
    tx.commit().await?;
    Ok(n)
}

/// Retired people whose every journey and shipment is erased (or who have none left): erased;
/// how many (at most `batch`).
pub async fn people(db: &PgPool, batch: i64) -> sqlx::Result<u64> {
    let mut tx = db.begin().await?;
    let n = personnel::erase_retired(&mut tx, batch).await?;
    tx.commit().await?;
    Ok(n)
}
