//! Submitting a journey or a cargo shipment: one transaction that locks the record, returns
//! its pending submission if it has one, and otherwise freezes a snapshot of what will be sent
//! and queues it (DESIGN.md "Submissions").

use crate::{
    db::{
        self,
        submissions::{Submission, Target},
    },
    error::{ApiError, ApiResult},
    snapshot::{self, Delivery},
    state::AppState,
    v1::resource::not_found,
};

/// The adapters an organization may choose. The real U-ETDS adapter joins with its credentials.
pub const OFFERED_ADAPTERS: &[&str] = &["sandbox"];
/// Where submissions go until the organization chooses otherwise.
pub const DEFAULT_ADAPTER: &str = "sandbox";

/// What a new submission sends and where.
struct Plan {
    operation: &'static str,
    adapter: String,
    snapshot: serde_json::Value,
}

/// Queue a submission of `target` (or return the pending one).
pub async fn submit(st: &AppState, org: i64, target: Target) -> ApiResult<Submission> {
    let mut tx = st.db.begin().await?;
    // Locking the record serializes concurrent submits of it: the second sees the first's
    // pending submission.
    let plan = match target {
        Target::Journey(id) => {
            db::journeys::lock(&mut tx, org, id).await?.ok_or_else(|| not_found("journey", id))?;
            if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
                return Ok(pending);
            }
            journey_plan(st, &mut tx, org, id).await?
        }
        Target::Cargo(id) => {
            let cargo =
                db::cargo::get_for_update(&mut tx, org, id).await?.ok_or_else(|| not_found("cargo shipment", id))?;
            if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
                return Ok(pending);
            }
            if cargo.status == "delivered" {
                return Err(ApiError::Conflict(format!(
                    "cargo shipment {id} is already delivered (reference {})",
                    cargo.downstream_reference.as_deref().unwrap_or("unknown")
                )));
            }
            cargo_plan(st, &mut tx, org, &cargo).await?
        }
    };
    let sub = db::submissions::enqueue(&mut tx, org, target, plan.operation, &plan.adapter, &plan.snapshot).await?;
    tx.commit().await?;
    Ok(sub)
}

async fn org_adapter(tx: &mut sqlx::PgConnection, org: i64) -> ApiResult<String> {
    Ok(db::submissions::adapter_of(tx, org).await?.unwrap_or_else(|| DEFAULT_ADAPTER.to_string()))
}

/// A journey not yet delivered goes out whole; a delivered one as the difference of its
/// passengers since, to the adapter that holds it.
async fn journey_plan(st: &AppState, tx: &mut sqlx::PgConnection, org: i64, id: i64) -> ApiResult<Plan> {
    let journey = db::journeys::get(tx, org, id).await?.ok_or_else(|| not_found("journey", id))?;
    let passengers = db::passengers::all_of(tx, org, id).await?;
    if let Some(reference) = &journey.downstream_reference {
        let history = db::submissions::delivered_history(tx, org, id).await?;
        let delivery = Delivery::replay(&history)?
            .ok_or_else(|| anyhow::anyhow!("journey {id} has a downstream reference but no delivered submission"))?;
        let amendment = delivery.diff(reference, passengers.iter().map(snapshot::passenger).collect());
        if amendment.is_empty() {
            return Err(ApiError::Conflict(format!(
                "journey {id} is delivered (reference {reference}) and its passengers have not changed since"
            )));
        }
        return Ok(Plan {
            operation: "amendment",
            adapter: delivery.adapter,
            snapshot: serde_json::to_value(&amendment).map_err(anyhow::Error::from)?,
        });
    }
    let crew = db::personnel::crew_of(tx, org, id).await?;
    if !crew.iter().any(|p| p.role_type == "driver") {
        return Err(ApiError::validation(
            "personnel_ids",
            "a journey needs at least one crew member with role `driver` before it can be submitted",
        ));
    }
    Ok(Plan {
        operation: "journey",
        adapter: org_adapter(tx, org).await?,
        snapshot: serde_json::to_value(snapshot::journey(&st.refdata, &journey, &crew, &passengers))
            .map_err(anyhow::Error::from)?,
    })
}

async fn cargo_plan(st: &AppState, tx: &mut sqlx::PgConnection, org: i64, c: &db::cargo::Cargo) -> ApiResult<Plan> {
    // Retired vehicles and drivers still went on the trip: read them whatever their status.
    let plate = db::vehicles::get(&mut *tx, org, c.vehicle_id)
        .await?
        .map(|v| v.plate)
        .ok_or_else(|| anyhow::anyhow!("cargo {} names vehicle {} that is gone", c.id, c.vehicle_id))?;
    let driver = match c.driver_id {
        Some(d) => db::personnel::get(&mut *tx, org, d).await?,
        None => None,
    };
    Ok(Plan {
        operation: "cargo",
        adapter: org_adapter(tx, org).await?,
        snapshot: serde_json::to_value(snapshot::cargo(&st.refdata, c, plate, driver.as_ref()))
            .map_err(anyhow::Error::from)?,
    })
}
