//! Pre-flight checks at submit (see `tns_core::domain::preflight`): the record is read as the
//! downstream would be sent it, each check the organization chose is asked of its adapter
//! (answers kept for the day, so a check is asked once a day), and the findings become
//! warnings on the submission or, under the `refuse` policy, a 422 naming the first field
//! whose check did not pass.
//!
//! The checks run before the submit's transaction, never inside it: they wait on a remote
//! service, and the record's lock must not. A record changed between the checks and the lock
//! is submitted as it is then, checked as it was a moment before.

use std::time::Duration;
use tns_core::ids::OrgId;

use futures::{stream, StreamExt};
use tns_adapter::{Check, CheckRequest, Credentials, Finding, Person};
use tns_core::domain::{
    kinds::{RecordStatus, RoleType},
    personal::mask_numbers,
    preflight::{CheckKind, PreflightMode, MAX_CHECKS},
    warnings::{turkey, Warning, WarningCode},
};
use tns_store::{self as db, submissions::Target};

use crate::{
    error::{ApiError, ApiResult},
    snapshot,
    state::AppState,
    submit::cargo_work,
    v1::endpoints::reports::credentials,
};

/// Checks asked of the downstream at once for one submit.
const CONCURRENCY: usize = 4;

/// How long a submit's checks may take in all: those not answered by then are not made (a
/// warning), and the submit goes on.
const DEADLINE: Duration = Duration::from_secs(20);

/// The longest text of a check kept and shown.
const DETAIL_MAX: usize = 300;

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
pub async fn run(st: &AppState, org: OrgId, target: Target) -> ApiResult<Vec<Warning>> {
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
                let why = format!("{}: {}", label(&p.check), clean(f.detail.as_deref().unwrap_or("did not pass")));
                failed.push(Warning::new(WarningCode::CheckFailed, p.field.clone(), &why));
            }
            Outcome::NotOffered => {}
            Outcome::NotMade(why) => warnings.push(Warning::new(
                WarningCode::CheckNotMade,
                p.field.clone(),
                &format!("{} could not be made ({})", label(&p.check), clean(&why)),
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

/// A downstream's text fit to keep and show: numbers it may quote (an identity number)
/// masked, at most [`DETAIL_MAX`] characters.
fn clean(text: &str) -> String {
    let out = mask_numbers(text);
    match out.char_indices().nth(DETAIL_MAX) {
        Some((at, _)) => format!("{}…", &out[..at]),
        None => out,
    }
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
/// (a cancelled record, one with a submission pending).
async fn plan(st: &AppState, org: OrgId, target: Target, chosen: &[CheckKind]) -> ApiResult<Option<Vec<Planned>>> {
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
                let driver = crew[i].person.role_type == RoleType::Driver;
                person(format!("personnel_ids[{i}]"), c, driver, false, &mut out);
            }
            for (i, p) in j.passengers.iter().enumerate() {
                person(format!("passengers[{i}]"), &p.person, false, true, &mut out);
            }
        }
        Target::Cargo(id) => {
            let Some(c) = db::cargo::get(&mut *conn, org, id).await? else { return Ok(None) };
            if c.status == RecordStatus::Cancelled {
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

/// The outcome of each check, in order: today's kept pass, or the adapter's answer (a pass
/// kept for the day; a failure asked again next time, since what failed may be put right the
/// same day).
async fn ask(st: &AppState, org: OrgId, planned: &[Planned]) -> ApiResult<Vec<Outcome>> {
    let day = chrono::Utc::now().with_timezone(&turkey()).date_naive();
    let Some(adapter) = crate::v1::endpoints::downstream::current(st, org).await?.adapter else {
        return Ok(planned.iter().map(|_| Outcome::NotOffered).collect());
    };
    let credentials = credentials(st, org, &adapter).await?;
    let subjects: Vec<Vec<u8>> =
        planned.iter().map(|p| subject(st, org, &adapter, credentials.as_ref(), &p.check)).collect();
    let kept = db::preflight::passes(&st.db, org, day, &subjects).await?;
    // Owned requests, so the stream borrows nothing across its awaits.
    let requests: Vec<(usize, CheckRequest)> = planned
        .iter()
        .enumerate()
        .filter(|(i, _)| !kept.iter().any(|k| k.subject == subjects[*i]))
        .map(|(i, p)| (i, CheckRequest { credentials: credentials.clone(), check: p.check.clone() }))
        .collect();
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let asked: Vec<(usize, Outcome)> = stream::iter(requests)
        .map(|(i, req)| {
            let (st, adapter) = (st.clone(), adapter.clone());
            async move {
                let outcome = match tokio::time::timeout_at(deadline, st.downstreams.check(&adapter, req)).await {
                    Err(_) => {
                        Outcome::NotMade(format!("the submit's checks ran out of their {} s", DEADLINE.as_secs()))
                    }
                    Ok(Ok(Some(f))) => Outcome::Answered(f),
                    Ok(Ok(None)) => Outcome::NotOffered,
                    Ok(Err(e)) => Outcome::NotMade(e.to_string()),
                };
                (i, outcome)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let passes: Vec<db::preflight::Pass> = asked
        .iter()
        .filter_map(|(i, o)| match o {
            Outcome::Answered(f) if f.passed => {
                Some(db::preflight::Pass { subject: subjects[*i].clone(), detail: f.detail.as_deref().map(clean) })
            }
            _ => None,
        })
        .collect();
    // Keeping is a saving, not a need: a failure to keep costs a question tomorrow.
    if !passes.is_empty() {
        if let Err(e) = db::preflight::keep(&st.db, org, day, &passes).await {
            tracing::warn!(org = org.get(), error = %e, "pre-flight answers not kept");
        }
    }
    let mut out: Vec<Option<Outcome>> = subjects
        .iter()
        .map(|s| {
            kept.iter()
                .find(|k| &k.subject == s)
                .map(|k| Outcome::Answered(Finding { passed: true, detail: k.detail.clone() }))
        })
        .collect();
    for (i, o) in asked {
        out[i] = Some(o);
    }
    Ok(out.into_iter().map(|o| o.unwrap_or(Outcome::NotOffered)).collect())
}

/// The key of a check's kept answer: what was asked, of which downstream and environment,
/// digested under the data key for the organization (an identity number and a name are never
/// kept, nor can they be found again by trying every number).
fn subject(st: &AppState, org: OrgId, adapter: &str, credentials: Option<&Credentials>, c: &Check) -> Vec<u8> {
    // The account asked with (U-ETDS: its environment and user name), never a secret.
    let description = st.downstreams.registry().description(adapter);
    let account: Option<std::collections::BTreeMap<&String, &String>> = credentials.map(|c| {
        c.fields
            .iter()
            .filter(|(name, _)| {
                description.as_ref().is_some_and(|d| d.credentials.iter().any(|f| &f.name == *name && !f.secret))
            })
            .collect()
    });
    let asked = serde_json::json!({
        "adapter": adapter,
        "account": account,
        "check": c,
    });
    st.cfg.data_key.digest("preflight", org, asked.to_string().as_bytes())
}
