//! `/organizations`: find them; change their status or plan; look at what a submission sent;
//! queue their failed submissions again; settle a submission whose outcome is unknown.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use tns_core::{
    domain::{
        fields::{Opaque64, Text100, Text500},
        kinds::OrgStatus,
    },
    scopes::operator::need::{PersonalData, Read, Write},
};
use tns_store::submissions::resolve::{NotResolved, Resolution};
use utoipa::ToSchema;

use super::{
    auth::Operator,
    error::{AdminError, AdminResult, Code},
    extract::{ApiJson, ApiPath, Params},
    AdminState,
};
use crate::{
    answers::OrgSummaryOut,
    ops::{self, Changed, RequeuedAll, ResolvedOut, Sent},
};

#[derive(Serialize, ToSchema)]
pub struct OrganizationList {
    data: Vec<OrgSummaryOut>,
}

/// Longest search text.
const MAX_SEARCH: usize = 200;

/// Organizations whose name, tax number or owner's e-mail contains `search`, newest first, with
/// their plan, status, this month's calls (as last persisted) and queued submissions.
#[utoipa::path(get, path = "/organizations", operation_id = "list_organizations", tag = "organizations",
    params(
        ("search" = Option<String>, Query, max_length = 200, description = "Text in the name, the tax number (whole) or the owner's e-mail."),
        ("status" = Option<OrgStatus>, Query),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "At most this many (default 100)."),
    ),
    responses((status = 200, body = OrganizationList)),
    security(("operator_token" = ["read"])))]
pub async fn list(
    State(st): State<AdminState>,
    _: Operator<Read>,
    mut q: Params,
) -> AdminResult<Json<OrganizationList>> {
    let search = q.take("search", |v| {
        (v.chars().count() <= MAX_SEARCH)
            .then(|| v.to_string())
            .ok_or(format!("must be at most {MAX_SEARCH} characters"))
    })?;
    let status =
        q.take("status", |v| OrgStatus::parse(v).ok_or("must be trial, active, suspended or closed".into()))?;
    let limit = q.take("limit", crate::parse_limit)?.unwrap_or(crate::DEFAULT_LIMIT);
    q.done()?;
    let found = tns_store::accounts::search(&st.db, search.as_deref(), status, limit).await?;
    Ok(Json(OrganizationList { data: found.into_iter().map(OrgSummaryOut::from).collect() }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusIn {
    status: OrgStatus,
    /// Why (the audit log keeps it; a suspended organization is shown it).
    reason: Text500,
}

/// Set an organization's status: it holds at once on every API process (a suspended one's
/// calls are refused from its next one; its queued submissions wait).
#[utoipa::path(post, path = "/organizations/{id}/status", operation_id = "set_organization_status", tag = "organizations",
    params(("id" = i64, Path, description = "The organization.")), request_body = StatusIn,
    responses((status = 200, body = Changed)),
    security(("operator_token" = ["write"])))]
pub async fn set_status(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath(org): ApiPath<i64>,
    ApiJson(input): ApiJson<StatusIn>,
) -> AdminResult<Json<Changed>> {
    if input.status == OrgStatus::Closed {
        return Err(AdminError::validation("status", crate::CLOSING_IS_THE_OWNERS));
    }
    let changed = ops::set_status(&st.db, &st.redis, &op.actor(), org, input.status, input.reason.as_str()).await?;
    changed.map(Json).ok_or_else(|| no_organization(org))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanIn {
    /// A plan's code.
    plan_code: Opaque64,
    /// Why (the audit log keeps it).
    reason: Text500,
}

/// Move an organization to a plan: its quota changes at once on every API process; a trial
/// ends.
#[utoipa::path(post, path = "/organizations/{id}/plan", operation_id = "change_organization_plan", tag = "organizations",
    params(("id" = i64, Path, description = "The organization.")), request_body = PlanIn,
    responses((status = 200, body = Changed), (status = 404, description = "No such organization, or `plan_code` names no plan")),
    security(("operator_token" = ["write"])))]
pub async fn change_plan(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath(org): ApiPath<i64>,
    ApiJson(input): ApiJson<PlanIn>,
) -> AdminResult<Json<Changed>> {
    let code = input.plan_code.as_str().trim();
    if !tns_store::billing::plans::exists(&st.db, code).await? {
        return Err(AdminError::NotFound(format!("plan_code: no plan `{code}`")));
    }
    let changed = ops::change_plan(&st.db, &st.redis, &op.actor(), org, code, input.reason.as_str()).await?;
    changed.map(Json).ok_or_else(|| no_organization(org))
}

/// A submission as it was sent, personal data unmasked, with its attempts. The look is
/// written to the audit log with its `reason`.
#[utoipa::path(get, path = "/organizations/{id}/submissions/{submission_id}", operation_id = "get_sent_submission",
    tag = "organizations",
    params(
        ("id" = i64, Path, description = "The organization."),
        ("submission_id" = i64, Path, description = "One of its submissions."),
        ("reason" = String, Query, max_length = 500, description = "Why you look (required; the audit log keeps it)."),
    ),
    responses((status = 200, body = Sent)),
    security(("operator_token" = ["personal-data"])))]
pub async fn submission(
    State(st): State<AdminState>,
    op: Operator<PersonalData>,
    ApiPath((org, id)): ApiPath<(i64, i64)>,
    mut q: Params,
) -> AdminResult<Json<Sent>> {
    let reason = q.take("reason", Text500::parse)?.ok_or_else(|| AdminError::validation("reason", "is required"))?;
    q.done()?;
    let sent = ops::submission_sent(&st.db, &op.actor(), org, id, reason.as_str()).await?;
    sent.map(Json).ok_or_else(|| AdminError::NotFound(format!("organization {org} has no submission {id}")))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequeueIn {
    /// Why (the audit log keeps it).
    reason: Text500,
}

/// Queue the organization's failed submissions again: each journey or shipment whose latest
/// submission failed gets a new one sending exactly what that one sent (same operation,
/// adapter and snapshot). All in one transaction, with one audit entry.
#[utoipa::path(post, path = "/organizations/{id}/requeue", operation_id = "requeue_failed_submissions",
    tag = "organizations", params(("id" = i64, Path, description = "The organization.")), request_body = RequeueIn,
    responses((status = 200, body = RequeuedAll)),
    security(("operator_token" = ["write"])))]
pub async fn requeue(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath(org): ApiPath<i64>,
    ApiJson(input): ApiJson<RequeueIn>,
) -> AdminResult<Json<RequeuedAll>> {
    let requeued = ops::requeue(&st.db, &op.actor(), org, input.reason.as_str()).await?;
    requeued.map(Json).ok_or_else(|| no_organization(org))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveIn {
    /// `found` (held downstream under `downstream_reference`) or `absent` (nothing held).
    resolution: ResolutionKind,
    /// With `found`: the downstream's reference the operator found it under.
    downstream_reference: Option<Text100>,
    /// Why (the audit log keeps it).
    reason: Text500,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum ResolutionKind {
    Found,
    Absent,
}

/// Settle a submission whose outcome downstream is `unknown` (an earlier call may have reached
/// the downstream and the look-up could not tell): `found` puts it back in the queue with the
/// reference, which the adapter confirms as this submission's before carrying on from it;
/// `absent` puts it back as new (no progress, no look-up), to be sent. 409 when it is not
/// `unknown`, or is being looked up at this moment. Audited.
#[utoipa::path(post, path = "/organizations/{id}/submissions/{submission_id}/resolve",
    operation_id = "resolve_unknown_submission", tag = "organizations",
    params(("id" = i64, Path, description = "The organization."), ("submission_id" = i64, Path, description = "The submission.")),
    request_body = ResolveIn, responses((status = 200, body = ResolvedOut)),
    security(("operator_token" = ["write"])))]
pub async fn resolve(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath((org, id)): ApiPath<(i64, i64)>,
    ApiJson(input): ApiJson<ResolveIn>,
) -> AdminResult<Json<ResolvedOut>> {
    let resolution = match (input.resolution, input.downstream_reference) {
        (ResolutionKind::Found, Some(r)) => Resolution::Found(r.into_inner()),
        (ResolutionKind::Found, None) => {
            return Err(AdminError::validation("downstream_reference", "is required with `found`"))
        }
        (ResolutionKind::Absent, None) => Resolution::Absent,
        (ResolutionKind::Absent, Some(_)) => {
            return Err(AdminError::validation("downstream_reference", "is given only with `found`"))
        }
    };
    match ops::resolve(&st.db, &op.actor(), org, id, &resolution, input.reason.as_str()).await? {
        Ok(r) => Ok(Json(r)),
        Err(e) => {
            let code = match e {
                NotResolved::NoSuchSubmission { .. } => return Err(AdminError::NotFound(e.to_string())),
                NotResolved::NotUnknown { .. } => Code::OutcomeKnown,
                NotResolved::Busy { .. } => Code::Busy,
                NotResolved::NotAReference { .. } | NotResolved::Held { .. } => Code::NotResolvable,
            };
            Err(AdminError::Conflict(code, e.to_string()))
        }
    }
}

pub(super) fn no_organization(org: i64) -> AdminError {
    AdminError::NotFound(format!("no organization with id {org}"))
}
