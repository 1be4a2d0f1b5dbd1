//! Pre-flight checks at submit (see `tns_core::domain::preflight`): the record is read as the
//! downstream would be sent it, each check the organization chose is asked of its adapter
//! (answers kept for the day, so a check is asked once a day), and the findings become
//! warnings on the submission or, under the `refuse` policy, a 422 naming the first field
//! whose check did not pass.
//!
//! The checks run before the submit's transaction, never inside it: they wait on a remote
//! service, and the record's lock must not. A record changed between the checks and the lock
//! is submitted as it is then, checked as it was a moment before.

use futures::{stream, StreamExt};
use sha2::{Digest, Sha256};
use tns_adapter::{Check, CheckRequest, Finding, Person};
use tns_core::domain::{
    kinds::{RecordStatus, RoleType},
    preflight::{CheckKind, PreflightMode, MAX_CHECKS},
    warnings::{turkey, Warning, WarningCode},
};
use tns_store::{self as db, submissions::Target};

use crate::{
    error::{ApiError, ApiResult},
    snapshot,
    state::AppState,
    submit::{cargo_work, DEFAULT_ADAPTER},
    v1::endpoints::reports::credentials,
};

/// Checks asked of the downstream at once for one submit.
const CONCURRENCY: usize = 4;

/// One check, with the field a warning about it names.
struct Planned {
    field: String,
    check: Check,
}

/// What came of one check.
enum Outcome {
    Answered(Finding),
    /// The downstream cannot make this check at all.
    NotOffered,
    /// It could not be made this time.
    NotMade(String),
}

/// The warnings of the organization's pre-flight checks of `target` (none when its policy is
/// `off`), or the 422 of its `refuse` policy.
pub async fn run(st: &AppState, org: i64, target: Target) -> ApiResult<Vec<Warning>> {
    let Some(policy) = db::preflight::policy(&st.db, org).await? else { return Ok(vec![]) };
    if policy.mode == PreflightMode::Off || policy.checks.is_empty() {
        return Ok(vec![]);
    }
    let Some(mut planned) = plan(st, org, target, &policy.checks).await? else { return Ok(vec![]) };
    let beyond = planned.len().saturating_sub(MAX_CHECKS);
    planned.truncate(MAX_CHECKS);
    let outcomes = ask(st, org, &planned).await?;
    let mut warnings = vec![];
    let mut failed = vec![];
    for (p, outcome) in planned.iter().zip(outcomes) {
        match outcome {
            Outcome::Answered(f) if f.passed => {}
            Outcome::Answered(f) => {
                let why = format!("{}: {}", label(&p.check), f.detail.as_deref().unwrap_or("did not pass"));
                failed.push(Warning::new(WarningCode::CheckFailed, p.field.clone(), &why));
            }
            Outcome::NotOffered => {}
            Outcome::NotMade(why) => warnings.push(Warning::new(
                WarningCode::CheckNotMade,
                p.field.clone(),
                &format!("{} could not be made ({why})", label(&p.check)),
            )),
        }
    }
    if beyond > 0 {
        warnings.push(Warning::new(
            WarningCode::CheckNotMade,
            "passengers",
            &format!("{beyond} checks beyond the {MAX_CHECKS} a submit makes were not made"),
        ));
    }
    if policy.mode == PreflightMode::Refuse {
        if let Some(first) = failed.first() {
            let also = match failed.len() {
                1 => String::new(),
                n => format!(
                    " (and {} more: {})",
                    n - 1,
                    failed[1..].iter().map(|w| w.detail.as_str()).collect::<Vec<_>>().join("; ")
                ),
            };
            return Err(ApiError::validation(
                &first.field,
                format!(
                    "{}{also}; the organization's pre-flight policy refuses the submit",
                    strip(&first.detail, &first.field)
                ),
            ));
        }
    }
    failed.extend(warnings);
    Ok(failed)
}

/// A warning's detail without its leading `field: ` (the 422 names the field itself).
fn strip<'a>(detail: &'a str, field: &str) -> &'a str {
    detail.strip_prefix(field).and_then(|d| d.strip_prefix(": ")).unwrap_or(detail)
}

fn label(c: &Check) -> &'static str {
    match c {
        Check::VehicleInspection { .. } => "the vehicle inspection check",
        Check::Authorisation { .. } => "the authorisation certificate check",
        Check::Qualification { .. } => "the professional qualification check",
        Check::Identity { .. } => "the identity check",
        Check::TravelPermit { .. } => "the travel permit check",
    }
}

/// The checks `chosen` of the record as it would be sent; `None` when nothing would be sent
/// (a delivered shipment, a cancelled record, one with a submission pending).
async fn plan(st: &AppState, org: i64, target: Target, chosen: &[CheckKind]) -> ApiResult<Option<Vec<Planned>>> {
    let mut conn = st.db.acquire().await?;
    if db::submissions::pending_for(&mut conn, org, target).await?.is_some() {
        return Ok(None);
    }
    let mut out = vec![];
    let wants = |k: CheckKind| chosen.contains(&k);
    let vehicle = |plate: &str, date: &str, out: &mut Vec<Planned>| {
        let field = || "vehicle_id".to_string();
        if wants(CheckKind::VehicleInspection) {
            out.push(Planned {
                field: field(),
                check: Check::VehicleInspection { plate: plate.into(), date: date.into() },
            });
        }
        if wants(CheckKind::Authorisation) {
            out.push(Planned {
                field: field(),
                check: Check::Authorisation { plate: plate.into(), date: date.into() },
            });
        }
    };
    let person = |field: String, p: &Person, driver: bool, passenger: bool, out: &mut Vec<Planned>| {
        let turkish = p.country() == "TR";
        let id = || p.identity_number.clone();
        if driver && wants(CheckKind::Qualification) {
            out.push(Planned { field: field.clone(), check: Check::Qualification { identity_number: id() } });
        }
        if turkish && wants(CheckKind::Identity) {
            let check = Check::Identity {
                identity_number: id(),
                first_name: p.first_name.clone(),
                last_name: p.last_name.clone(),
            };
            out.push(Planned { field: field.clone(), check });
        }
        if turkish && passenger && wants(CheckKind::TravelPermit) {
            out.push(Planned { field, check: Check::TravelPermit { identity_number: id() } });
        }
    };
    match target {
        Target::Journey(id) => {
            let Some(journey) = db::journeys::get(&mut conn, org, id).await? else { return Ok(None) };
            if journey.status == RecordStatus::Cancelled {
                return Ok(None);
            }
            let passengers = db::passengers::all_of(&mut conn, org, id).await?;
            let crew = db::personnel::crew_of(&mut conn, org, id).await?;
            let j = snapshot::journey(st.refdata, &journey, &crew, &passengers);
            vehicle(&j.plate, &j.departure.date, &mut out);
            for (i, c) in j.crew.iter().enumerate() {
                let driver = crew[i].role_type == RoleType::Driver;
                person(format!("personnel_ids[{i}]"), c, driver, false, &mut out);
            }
            for (i, p) in j.passengers.iter().enumerate() {
                person(format!("passengers[{i}]"), &p.person, false, true, &mut out);
            }
        }
        Target::Cargo(id) => {
            let Some(c) = db::cargo::get(&mut *conn, org, id).await? else { return Ok(None) };
            if c.status != RecordStatus::Draft {
                return Ok(None);
            }
            let (work, roles) = cargo_work(st, &mut conn, org, &c).await?;
            vehicle(&work.plate, &work.loading.date, &mut out);
            for (field, p, role) in
                [("driver_id", &work.driver, roles[0]), ("second_driver_id", &work.second_driver, roles[1])]
            {
                if let Some(p) = p {
                    person(field.to_string(), p, role == Some(RoleType::Driver), false, &mut out);
                }
            }
        }
    }
    Ok(Some(out))
}

/// The outcome of each check, in order: today's kept answer, or the adapter's (kept when it
/// answered).
async fn ask(st: &AppState, org: i64, planned: &[Planned]) -> ApiResult<Vec<Outcome>> {
    let day = chrono::Utc::now().with_timezone(&turkey()).date_naive();
    let subjects: Vec<Vec<u8>> = planned.iter().map(|p| subject(&p.check)).collect();
    let kept = db::preflight::answers(&st.db, org, day, &subjects).await?;
    let adapter = db::downstream::get(&st.db, org).await?.map_or_else(|| DEFAULT_ADAPTER.to_string(), |s| s.adapter);
    let credentials = credentials(st, org).await?;
    // Owned requests, so the stream borrows nothing across its awaits.
    let requests: Vec<(usize, CheckRequest)> = planned
        .iter()
        .enumerate()
        .filter(|(i, _)| !kept.iter().any(|k| k.subject == subjects[*i]))
        .map(|(i, p)| (i, CheckRequest { credentials: credentials.clone(), check: p.check.clone() }))
        .collect();
    let asked: Vec<(usize, Outcome)> = stream::iter(requests)
        .map(|(i, req)| {
            let (st, adapter) = (st.clone(), adapter.clone());
            async move {
                let outcome = match st.downstreams.check(&adapter, req).await {
                    Ok(Some(f)) => Outcome::Answered(f),
                    Ok(None) => Outcome::NotOffered,
                    Err(e) => Outcome::NotMade(e.to_string()),
                };
                (i, outcome)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let new: Vec<db::preflight::Answer> = asked
        .iter()
        .filter_map(|(i, o)| match o {
            Outcome::Answered(f) => Some(db::preflight::Answer {
                subject: subjects[*i].clone(),
                passed: f.passed,
                detail: f.detail.clone(),
            }),
            _ => None,
        })
        .collect();
    if !new.is_empty() {
        db::preflight::keep(&st.db, org, day, &new).await?;
    }
    let mut out: Vec<Option<Outcome>> = subjects
        .iter()
        .map(|s| {
            kept.iter()
                .find(|k| &k.subject == s)
                .map(|k| Outcome::Answered(Finding { passed: k.passed, detail: k.detail.clone() }))
        })
        .collect();
    for (i, o) in asked {
        out[i] = Some(o);
    }
    Ok(out.into_iter().map(|o| o.unwrap_or(Outcome::NotOffered)).collect())
}

/// What a check asked, hashed: the key of its kept answer (an identity number and a name are
/// never kept).
fn subject(c: &Check) -> Vec<u8> {
    Sha256::digest(serde_json::to_vec(c).unwrap_or_default()).to_vec()
}
