//! Submitting a journey or a cargo shipment: one transaction that locks the record, returns
//! its pending submission if it has one, and otherwise freezes a snapshot of what will be sent,
//! with the warnings of what the downstream will want but the record lacks, and queues it.
//! Cancelling a delivered one queues its cancellation the same way.
//!
//! Submitting needs only a record that exists: U-ETDS takes a trip first and its crew and
//! passengers in later calls, so nothing it lacks refuses the submission. A delivered record
//! whose content has not changed since has nothing new to send: its delivering submission is
//! the answer.

use tns_adapter::{Amendment, Cancellation, GoodsChange, Kind, NoShow, Reactivation, Records, Work};
use tns_core::ids::{JourneyId, OrgId, PassengerId, PersonId};

use crate::{
    error::{ApiError, ApiResult, Code},
    snapshot,
    state::AppState,
    v1::resource::refuse_erased,
};
use tns_core::domain::{
    kinds::{Operation, RecordStatus, RoleType, TripKind},
    warnings::{self, JourneyFacts, Warning},
};
use tns_store::{
    self as db,
    submissions::{delivery::Delivery, Queued, Submission, Target},
};

/// What a new submission sends and where, or the submission that already answers it.
enum Submitting {
    Send { operation: Operation, adapter: String, snapshot: serde_json::Value, warnings: Vec<Warning> },
    Existing(Submission),
}

/// Queue a submission of `target` for credential `by` (`Principal::credential_id`), or return
/// the pending one, or the delivering one when nothing changed since.
pub async fn submit(st: &AppState, org: OrgId, target: Target, by: &str) -> ApiResult<Submission> {
    // Nothing to ask the downstream about an erased record's people (checked again under the lock).
    refuse_erased(&st.db, target, org).await?;
    // Before the transaction: the checks wait on the downstream, the record's lock must not.
    let checked = crate::preflight::run(st, org, target).await?;
    let mut tx = st.db.begin().await?;
    // Locking the record serializes concurrent submits of it: the second sees the first's
    // pending submission.
    let plan = match target {
        Target::Journey(id) => {
            let status =
                db::journeys::lock(&mut tx, org, id).await?.ok_or_else(|| ApiError::not_found("journey", id))?;
            if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
                return Ok(pending);
            }
            refuse_cancelled(target, status)?;
            refuse_erased(&mut *tx, Target::Journey(id), org).await?;
            journey_submitting(st, &mut tx, org, id).await?
        }
        Target::Cargo(id) => {
            let cargo = db::cargo::get_for_update(&mut tx, org, id)
                .await?
                .ok_or_else(|| ApiError::not_found("cargo shipment", id))?;
            if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
                return Ok(pending);
            }
            refuse_cancelled(target, cargo.status)?;
            refuse_erased(&mut *tx, Target::Cargo(id), org).await?;
            cargo_submitting(st, &mut tx, org, &cargo).await?
        }
    };
    let sub = match plan {
        Submitting::Existing(sub) => sub,
        Submitting::Send { operation, adapter, snapshot, mut warnings } => {
            let work = Work::from_parts(operation.as_str(), snapshot.clone()).map_err(anyhow::Error::from)?;
            st.downstreams.screen(&adapter, work).await?;
            warnings.extend(checked);
            db::submissions::enqueue(
                &mut tx,
                org,
                target,
                Queued { operation, adapter: &adapter, snapshot: &snapshot, warnings: &warnings, by },
            )
            .await?
        }
    };
    tx.commit().await?;
    Ok(sub)
}

fn what(target: Target) -> &'static str {
    match target {
        Target::Journey(_) => "journey",
        Target::Cargo(_) => "cargo shipment",
    }
}

fn refuse_cancelled(target: Target, status: RecordStatus) -> ApiResult<()> {
    if status == RecordStatus::Cancelled {
        return Err(ApiError::Conflict(
            Code::Cancelled,
            format!("{} {} was cancelled downstream; it takes no more submissions", what(target), target.id()),
        ));
    }
    Ok(())
}

/// Queue the cancellation of a delivered journey or shipment (or return the pending one, or the
/// delivering cancellation when it is already cancelled). A record the downstream does not hold
/// has nothing to cancel (409: delete a draft instead); one with a submission of another kind
/// pending waits for it (409).
pub async fn cancel(
    st: &AppState,
    org: OrgId,
    target: Target,
    reason: &str,
    cancel_kind: Option<String>,
    by: &str,
) -> ApiResult<Submission> {
    let mut tx = st.db.begin().await?;
    let (status, reference, kind) = locked(&mut tx, org, target).await?;
    if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
        if pending.operation == Operation::Cancel {
            return Ok(pending);
        }
        return Err(ApiError::Conflict(
            Code::PendingSubmission,
            format!(
                "{} {} has a pending submission ({}); cancel it once that has finished",
                what(target),
                target.id(),
                pending.id
            ),
        ));
    }
    if status == RecordStatus::Cancelled {
        return unchanged(&mut tx, org, target).await.map(|p| match p {
            Submitting::Existing(sub) => sub,
            Submitting::Send { .. } => unreachable!("unchanged answers an existing submission"),
        });
    }
    let (adapter, downstream_reference, state) = match reference {
        Some(r) => {
            let (adapter, state) = db::submissions::delivered_state(&mut tx, org, target)
                .await?
                .ok_or_else(|| anyhow::anyhow!("{target:?} has a downstream reference but no delivered submission"))?;
            (adapter, r, state.0)
        }
        // Never delivered, but a failed submission left part of it downstream (a trip whose
        // crew was refused, say): that is what is cancelled.
        None => match db::submissions::failed_but_held(&mut tx, org, target).await? {
            Some((adapter, r)) => (adapter, r, serde_json::Value::Null),
            None => {
                return Err(ApiError::Conflict(
                    Code::NotDelivered,
                    format!(
                        "{} {} was never delivered downstream, so there is nothing to cancel{}",
                        what(target),
                        target.id(),
                        if status == RecordStatus::Draft { "; delete the draft instead" } else { "" }
                    ),
                ))
            }
        },
    };
    let snapshot =
        Cancellation { kind, downstream_reference, downstream_state: state, reason: reason.to_string(), cancel_kind };
    queue_and_commit(tx, org, target, Operation::Cancel, &adapter, &snapshot, by).await
}

/// Queue the re-activation of a journey or shipment cancelled downstream (or return the
/// pending one). A record that is not cancelled has nothing to re-activate (409); one with a
/// submission of another kind pending waits for it (409).
pub async fn reactivate(st: &AppState, org: OrgId, target: Target, reason: &str, by: &str) -> ApiResult<Submission> {
    let mut tx = st.db.begin().await?;
    let (status, reference, kind) = locked(&mut tx, org, target).await?;
    if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
        if pending.operation == Operation::Reactivate {
            return Ok(pending);
        }
        return Err(ApiError::Conflict(
            Code::PendingSubmission,
            format!(
                "{} {} has a pending submission ({}); re-activate it once that has finished",
                what(target),
                target.id(),
                pending.id
            ),
        ));
    }
    let (RecordStatus::Cancelled, Some(reference)) = (status, reference) else {
        return Err(ApiError::Conflict(
            Code::NotCancelled,
            format!(
                "{} {} is {}, not cancelled downstream: only a cancelled one is re-activated",
                what(target),
                target.id(),
                status.as_str()
            ),
        ));
    };
    // Cancelled after a submission failed halfway (the downstream held part of it): there
    // is no delivery to bring back, only the record to submit again.
    let Some((adapter, state)) = db::submissions::delivered_state(&mut tx, org, target).await? else {
        return Err(ApiError::Conflict(
            Code::NotDelivered,
            format!(
                "{} {} was cancelled before it was ever delivered, so there is nothing to re-activate; submit it again",
                what(target),
                target.id()
            ),
        ));
    };
    let snapshot = Reactivation {
        kind,
        downstream_reference: reference,
        downstream_state: state.0,
        reason: reason.to_string(),
        cancel_kind: None,
    };
    queue_and_commit(tx, org, target, Operation::Reactivate, &adapter, &snapshot, by).await
}

/// The record locked until the transaction ends (submissions serialize on it): its status,
/// downstream reference and the kind of notification it is.
async fn locked(
    tx: &mut sqlx::PgConnection,
    org: OrgId,
    target: Target,
) -> ApiResult<(RecordStatus, Option<String>, Kind)> {
    Ok(match target {
        Target::Journey(id) => {
            let j = locked_journey(tx, org, id).await?;
            (j.status, j.downstream_reference.clone(), journey_kind(&j))
        }
        Target::Cargo(id) => {
            let c = db::cargo::get_for_update(tx, org, id)
                .await?
                .ok_or_else(|| ApiError::not_found("cargo shipment", id))?;
            (c.status, c.downstream_reference.clone(), Kind::Goods)
        }
    })
}

/// Queue the report that passenger `passenger` of delivered journey `id` did not come. The
/// journey must be delivered and the passenger have a seat number (the downstream knows a
/// passenger by seat and identity number); a pending submission of the journey (another
/// no-show included) waits (409).
pub async fn no_show(
    st: &AppState,
    org: OrgId,
    id: JourneyId,
    passenger: PassengerId,
    note: Option<String>,
    by: &str,
) -> ApiResult<Submission> {
    let target = Target::Journey(id);
    let mut tx = st.db.begin().await?;
    let j = locked_journey(&mut tx, org, id).await?;
    refuse_erased(&mut *tx, Target::Journey(id), org).await?;
    let p = db::passengers::get(&mut *tx, org, id, passenger)
        .await?
        .ok_or_else(|| ApiError::not_found("passenger", passenger))?;
    let key = p.id.to_string();
    if let Some(pending) = db::submissions::pending_for(&mut tx, org, target).await? {
        return Err(ApiError::Conflict(
            Code::PendingSubmission,
            format!(
                "journey {id} has a pending submission ({}); report the no-show once that has finished",
                pending.id
            ),
        ));
    }
    let (RecordStatus::Delivered, Some(reference)) = (j.status, j.downstream_reference.clone()) else {
        return Err(ApiError::Conflict(
            Code::NotDelivered,
            format!(
                "journey {id} is {}: a no-show is reported for a passenger of a delivered journey",
                j.status.as_str()
            ),
        ));
    };
    let seat_no = p.passenger.seat_no.clone().filter(|s| !s.trim().is_empty()).ok_or_else(|| {
        ApiError::validation(
            "seat_no",
            format!("passenger {passenger} has no seat number; U-ETDS knows a no-show by seat and identity number"),
        )
    })?;
    let (adapter, state) = db::submissions::delivered_state(&mut tx, org, target)
        .await?
        .ok_or_else(|| anyhow::anyhow!("journey {id} is delivered but has no delivered submission"))?;
    let snapshot = NoShow {
        kind: journey_kind(&j),
        downstream_reference: reference,
        downstream_state: state.0,
        key,
        identity_number: p.passenger.who.identity.number().to_owned(),
        seat_no,
        note,
    };
    queue_and_commit(tx, org, target, Operation::NoShow, &adapter, &snapshot, by).await
}

/// The journey `id` of `org`, locked for the transaction (a concurrent submit of it waits).
async fn locked_journey(tx: &mut sqlx::PgConnection, org: OrgId, id: JourneyId) -> ApiResult<db::journeys::Journey> {
    db::journeys::lock(&mut *tx, org, id).await?.ok_or_else(|| ApiError::not_found("journey", id))?;
    db::journeys::get(&mut *tx, org, id).await?.ok_or_else(|| ApiError::not_found("journey", id))
}

/// The kind of trip a journey is, as adapters know it.
fn journey_kind(j: &db::journeys::Journey) -> Kind {
    if j.journey.trip_kind == TripKind::Tarifeli {
        Kind::Scheduled
    } else {
        Kind::NonScheduled
    }
}

/// Queue `snapshot` as the record's `operation` on `adapter`, and commit.
async fn queue_and_commit(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    org: OrgId,
    target: Target,
    operation: Operation,
    adapter: &str,
    snapshot: &impl serde::Serialize,
    by: &str,
) -> ApiResult<Submission> {
    let snapshot = serde_json::to_value(snapshot).map_err(anyhow::Error::from)?;
    let queued = Queued { operation, adapter, snapshot: &snapshot, warnings: &[], by };
    let sub = db::submissions::enqueue(&mut tx, org, target, queued).await?;
    tx.commit().await?;
    Ok(sub)
}

/// The delivering submission of a record that has nothing new to send (for a cancelled one, its
/// cancellation).
async fn unchanged(tx: &mut sqlx::PgConnection, org: OrgId, target: Target) -> ApiResult<Submitting> {
    let sub = db::submissions::last_delivered(tx, org, target)
        .await?
        .ok_or_else(|| anyhow::anyhow!("{target:?} has a downstream reference but no delivered submission"))?;
    Ok(Submitting::Existing(sub))
}

/// A journey not yet delivered goes out whole; a delivered one as the difference since (trip
/// fields, crew, passengers), to the adapter that holds it.
async fn journey_submitting(
    st: &AppState,
    tx: &mut sqlx::PgConnection,
    org: OrgId,
    id: JourneyId,
) -> ApiResult<Submitting> {
    let journey = db::journeys::get(tx, org, id).await?.ok_or_else(|| ApiError::not_found("journey", id))?;
    let passengers = db::passengers::all_of(tx, org, id).await?;
    let crew = db::personnel::crew_of(tx, org, id).await?;
    let roles: Vec<_> = crew.iter().map(|p| p.person.role_type).collect();
    let warnings = warnings::journey(&JourneyFacts {
        trip_kind: journey.journey.trip_kind,
        departure: journey.journey.departure.date.0.and_time(journey.journey.departure.time.0),
        crew: &roles,
        passengers: passengers.len(),
    });
    let to_json = |v: serde_json::Result<serde_json::Value>| v.map_err(anyhow::Error::from);
    if let Some(reference) = &journey.downstream_reference {
        let history = db::submissions::delivered_history(tx, org, id).await?;
        let delivery = Delivery::replay(&history)?
            .ok_or_else(|| anyhow::anyhow!("journey {id} has a downstream reference but no delivered submission"))?;
        let now = snapshot::journey(st.refdata, &journey, &crew, &passengers);
        let amendment = delivery.diff(reference, now.trip(), now.crew, now.passengers);
        if amendment.is_empty() {
            return unchanged(tx, org, Target::Journey(id)).await;
        }
        return Ok(Submitting::Send {
            operation: Operation::Amendment,
            adapter: delivery.adapter,
            snapshot: to_json(serde_json::to_value(&amendment))?,
            warnings,
        });
    }
    Ok(Submitting::Send {
        operation: Operation::Journey,
        adapter: st.downstreams.adapter_for(tx, org, Records::Journeys).await?,
        snapshot: to_json(serde_json::to_value(snapshot::journey(st.refdata, &journey, &crew, &passengers)))?,
        warnings,
    })
}

/// A personnel record named by a shipment, whatever its status now.
async fn person(
    tx: &mut sqlx::PgConnection,
    org: OrgId,
    id: Option<PersonId>,
) -> ApiResult<Option<db::personnel::Person>> {
    Ok(match id {
        Some(id) => db::personnel::get(&mut *tx, org, id).await?,
        None => None,
    })
}

/// A shipment as the downstream is sent it, with its drivers' roles.
pub(crate) async fn cargo_work(
    st: &AppState,
    tx: &mut sqlx::PgConnection,
    org: OrgId,
    row: &db::cargo::Cargo,
) -> ApiResult<(tns_adapter::Cargo, [Option<RoleType>; 2])> {
    let c = &row.shipment;
    // Retired vehicles and drivers still went on the trip: read them whatever their status.
    let plate = db::vehicles::get(&mut *tx, org, c.vehicle_id)
        .await?
        .map(|v| v.vehicle.plate)
        .ok_or_else(|| anyhow::anyhow!("cargo {} names vehicle {} that is gone", row.id, c.vehicle_id))?;
    let (driver, second_driver) = (person(tx, org, c.driver_id).await?, person(tx, org, c.second_driver_id).await?);
    let crew = snapshot::CargoCrew { driver: driver.as_ref(), second_driver: second_driver.as_ref() };
    let roles = [driver.as_ref().map(|d| d.person.role_type), second_driver.as_ref().map(|d| d.person.role_type)];
    Ok((snapshot::cargo(st.refdata, c, plate, crew), roles))
}

/// A shipment not yet delivered goes out whole; a delivered one, when it changed since, as an
/// amendment (the shipment as held and as it is now) to the adapter that holds it.
async fn cargo_submitting(
    st: &AppState,
    tx: &mut sqlx::PgConnection,
    org: OrgId,
    c: &db::cargo::Cargo,
) -> ApiResult<Submitting> {
    let (work, [driver, second_driver]) = cargo_work(st, tx, org, c).await?;
    if let Some(reference) = &c.downstream_reference {
        let d = db::submissions::delivered_cargo(tx, org, c.id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("cargo {} has a downstream reference but no delivered submission", c.id))?;
        let amendment = Amendment {
            downstream_reference: reference.clone(),
            downstream_state: d.downstream_state,
            kind: Kind::Goods,
            trip: None,
            previous_trip: None,
            crew_added: vec![],
            crew_removed: vec![],
            added: vec![],
            changed: vec![],
            removed: vec![],
            baggage_held: vec![],
            baggage: vec![],
            goods: Some(Box::new(GoodsChange { held: d.held, now: work })),
        };
        if amendment.is_empty() {
            return unchanged(tx, org, Target::Cargo(c.id)).await;
        }
        return Ok(Submitting::Send {
            operation: Operation::Amendment,
            adapter: d.adapter,
            snapshot: serde_json::to_value(&amendment).map_err(anyhow::Error::from)?,
            warnings: warnings::cargo(driver, second_driver),
        });
    }
    Ok(Submitting::Send {
        operation: Operation::Cargo,
        adapter: st.downstreams.adapter_for(tx, org, Records::Cargo).await?,
        snapshot: serde_json::to_value(work).map_err(anyhow::Error::from)?,
        warnings: warnings::cargo(driver, second_driver),
    })
}
