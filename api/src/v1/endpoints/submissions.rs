//! Submitting journeys and cargo (`POST …/{id}/submit`) and reading submissions
//! (`/portal/submissions`).

use std::time::Duration;
use tns_core::ids::{CargoId, JourneyId, OrgId, PassengerId, SubmissionId};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode},
    Json,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, ErrorBody},
    extract::{optional_json, ApiPath, ApiQuery},
    state::AppState,
    submit::{cancel, no_show, reactivate, submit},
    v1::resource::not_found,
    waiter::MAX_WAIT_SECS,
};
use tns_core::{
    domain::{
        code_lists::CodeListName,
        fields::{Cursor, Day, Int, Limit, RecordId},
        kinds::{SubmissionState, TargetType},
        national::{CancelKind, CancelReason},
        personal::{mask_numbers, mask_personal},
        warnings::Warning,
    },
    scopes::{
        need::{JourneysWrite, SubmissionsRead},
        Scope,
    },
};
use tns_http::{
    answer,
    wire::{each, AttemptOut, Paged, SubmissionOut},
};
use tns_store::{
    self as db,
    pagination::Page,
    submissions::{Attempt, Filter, Of, Submission, Target},
};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The answer of a submit: the submission's id, state and warnings, and the whole record.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmitOut {
    #[schema(value_type = i64)]
    pub submission_id: SubmissionId,
    /// The submission's state: `pending`, or `delivered` / `failed` when `Prefer: wait` saw it
    /// finish (or when the record had nothing new to send since its delivery).
    pub status: SubmissionState,
    /// What the downstream will want but the record lacks (the submission's own warnings).
    pub warnings: Vec<Warning>,
    pub submission: SubmissionOut,
}

/// The `wait` preference of RFC 7240 (`Prefer: wait=N`), capped at 30 s; other preferences
/// and malformed values are ignored, as the RFC asks.
fn prefer_wait(headers: &HeaderMap) -> Option<u64> {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|pref| {
            let token = pref.split(';').next()?.trim();
            let (name, value) = token.split_once('=')?;
            name.trim().eq_ignore_ascii_case("wait").then(|| value.trim().trim_matches('"').parse::<u64>().ok())?
        })
        .next()
        .map(|n| n.min(MAX_WAIT_SECS))
}

async fn submit_and_answer(
    st: &AppState,
    p: &Principal,
    target: Target,
    headers: &HeaderMap,
) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
    let sub = submit(st, p.org_id, target, &p.credential_id()).await?;
    answer(st, p.org_id, sub, headers).await
}

/// 202 with the submission, after waiting for its outcome when `Prefer: wait` asks.
async fn answer(
    st: &AppState,
    org: OrgId,
    mut sub: Submission,
    headers: &HeaderMap,
) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
    let mut out_headers = HeaderMap::new();
    if let Some(wait) = prefer_wait(headers) {
        if sub.state == SubmissionState::Pending && wait > 0 {
            st.waiters.wait(&st.db, sub.id, Duration::from_secs(wait)).await?;
            sub = db::submissions::get(&st.db, org, sub.id).await?.unwrap_or(sub);
        }
        out_headers.insert("preference-applied", HeaderValue::from_str(&format!("wait={wait}")).expect("ascii"));
    }
    Ok((
        StatusCode::ACCEPTED,
        out_headers,
        Json(SubmitOut {
            submission_id: sub.id,
            status: sub.state,
            warnings: sub.warnings.clone(),
            submission: sub.into(),
        }),
    ))
}

/// Writes the journey's and the shipment's handler of one operation: the same parameters,
/// answers and scope, told apart by path, `Target` variant and doc text (the operation id is the
/// function's name). `$handle` answers with the state, the caller, the target and the headers
/// named as given, and the body when the operation reads one.
macro_rules! journey_and_cargo {
    (
        $(#[$journey_doc:meta])* $journey:ident = $journey_path:literal;
        $(#[$cargo_doc:meta])* $cargo:ident = $cargo_path:literal;
        $(request_body($($request:tt)*);)?
        responses($($responses:tt)*);
        |$st:ident, $p:ident, $target:ident, $headers:ident $(, $body:ident)?| $handle:expr
    ) => {
        journey_and_cargo!(@one $(#[$journey_doc])* $journey = $journey_path, Journey(JourneyId);
            [$(request_body($($request)*),)?] [$($responses)*]; |$st, $p, $target, $headers $(, $body)?| $handle);
        journey_and_cargo!(@one $(#[$cargo_doc])* $cargo = $cargo_path, Cargo(CargoId);
            [$(request_body($($request)*),)?] [$($responses)*]; |$st, $p, $target, $headers $(, $body)?| $handle);
    };
    (
        @one $(#[$doc:meta])* $name:ident = $path:literal, $variant:ident($id:ty);
        [$($request:tt)*] [$($responses:tt)*];
        |$st:ident, $p:ident, $target:ident, $headers:ident $(, $body:ident)?| $handle:expr
    ) => {
        $(#[$doc])*
        #[utoipa::path(post, path = $path, tag = "submissions", params(("id" = i64, Path),
                ("Prefer" = Option<String>, Header, description = "`wait=N`: wait up to N (≤ 30) seconds for a final state")),
            $($request)*
            responses((status = 202, body = SubmitOut, headers(("Preference-Applied" = String, description = "`wait=N` when a wait was asked for"))),
                $($responses)*),
            security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
        pub async fn $name(
            State($st): State<AppState>,
            $p: Caller<JourneysWrite>,
            ApiPath(id): ApiPath<$id>,
            $headers: HeaderMap,
            $($body: Bytes,)?
        ) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
            let $target = Target::$variant(id);
            $handle
        }
    };
}

journey_and_cargo! {
    /// Submit a journey to its organization's downstream: any journey that exists. One not yet
    /// delivered goes out whole; a delivered one whose passengers changed goes out as the
    /// difference (added, changed, removed); a delivered one unchanged since answers with its
    /// delivering submission. With a pending submission already, that one is returned. What the
    /// downstream will want but the journey lacks (a driver, passengers, …) comes back as `warnings`,
    /// never as a refusal; so do the organization's pre-flight checks, unless its policy is
    /// `refuse` (then a check that does not pass is a 422 naming the field). `Prefer: wait=N`
    /// (N ≤ 30) waits up to N s for a final state. Scope `journeys:write`.
    submit_journey = "/portal/journeys/{id}/submit";
    /// Submit a cargo shipment: any shipment that exists. With a pending submission already, that
    /// one is returned; a delivered shipment changed since goes out as an amendment, one unchanged
    /// answers with its delivering submission. What the downstream will want but the shipment lacks
    /// (a driver) comes back as `warnings`, and so do pre-flight checks (a 422 under the `refuse`
    /// policy). `Prefer: wait=N` (N ≤ 30) waits up to N s for a final state. Scope
    /// `journeys:write`.
    submit_cargo = "/portal/cargo/{id}/submit";
    responses((status = 409, body = ErrorBody, description = "Cancelled downstream, or its people's data erased past the retention period: it takes no more submissions; or the organization's downstream takes no such records, or would refuse a field (`detail` names each)"),
              (status = 422, body = ErrorBody, description = "A pre-flight check did not pass and the organization's policy is `refuse`"));
    |st, p, target, headers| submit_and_answer(&st, &p, target, &headers).await
}

/// Why a delivered journey or shipment is cancelled (sent downstream with the cancellation).
#[derive(Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelIn {
    /// 1–400 characters; "İptal edildi" when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CancelReason>,
    /// A shipment's only: the downstream's code for why, one of the `trip_cancel_kinds`
    /// code list (`GET /ref/code-lists/trip_cancel_kinds`); the platform's default code when
    /// absent. Checked against the list while it has codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_kind: Option<CancelKind>,
}

/// The reason when none is given.
pub const DEFAULT_REASON: &str = "İptal edildi";

/// Queue the cancellation of `target` for `p`, with the reason of `body` (the default when
/// none).
pub async fn cancel_target(
    st: &AppState,
    p: &Principal,
    target: Target,
    body: Option<CancelIn>,
) -> ApiResult<Submission> {
    let CancelIn { reason, cancel_kind } = body.unwrap_or_default();
    let cancel_kind = cancel_kind.map(CancelKind::into_inner);
    if let Some(code) = &cancel_kind {
        if let Target::Journey(_) = target {
            return Err(ApiError::validation(
                "cancel_kind",
                "only a cargo shipment's cancellation takes a cancel_kind",
            ));
        }
        // Checked while the list has codes (an empty one, shipped so, leaves it to U-ETDS).
        let kinds = tns_store::code_lists::one(&st.db, CodeListName::TripCancelKinds)
            .await?
            .map(|l| l.codes.0.into_iter().map(|c| c.code).collect::<Vec<_>>())
            .unwrap_or_default();
        if !kinds.is_empty() && !kinds.contains(code) {
            return Err(ApiError::validation(
                "cancel_kind",
                format!(
                    "{code:?} is not one of the trip cancel kinds (GET /ref/code-lists/trip_cancel_kinds): {}",
                    kinds.join(", ")
                ),
            ));
        }
    }
    let reason = reason.map(CancelReason::into_inner);
    cancel(st, p.org_id, target, reason.as_deref().unwrap_or(DEFAULT_REASON), cancel_kind, &p.credential_id()).await
}

async fn cancel_and_answer(
    st: &AppState,
    p: &Principal,
    target: Target,
    body: Option<CancelIn>,
    headers: &HeaderMap,
) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
    let sub = cancel_target(st, p, target, body).await?;
    answer(st, p.org_id, sub, headers).await
}

journey_and_cargo! {
    /// Cancel a delivered journey downstream (U-ETDS `seferIptal`): queued as a submission
    /// (operation `cancel`) like a submit, answered 202. Once it is delivered the journey is
    /// `cancelled` and takes no more edits or submits; if it fails, the journey stays delivered.
    /// A journey never delivered has nothing to cancel (409; delete a draft instead), and one
    /// with another submission pending waits for it (409). Cancelling again answers the same
    /// cancellation. `Prefer: wait=N` as for submit. Scope `journeys:write`.
    cancel_journey = "/portal/journeys/{id}/cancel";
    /// Cancel a delivered cargo shipment downstream (U-ETDS `seferIptalEtV3`), as for journeys.
    /// Scope `journeys:write`.
    cancel_cargo = "/portal/cargo/{id}/cancel";
    request_body(content = Option<CancelIn>, description = "Optional: the reason");
    responses((status = 409, body = ErrorBody, description = "Never delivered, or another submission of it is pending"));
    |st, p, target, headers, body| cancel_and_answer(&st, &p, target, optional_json(&body)?, &headers).await
}

/// The reason when a re-activation gives none.
pub const DEFAULT_REACTIVATION_REASON: &str = "Yeniden etkinleştirildi";

journey_and_cargo! {
    /// Re-activate a journey cancelled downstream (U-ETDS `seferAktif`): queued as a submission
    /// (operation `reactivate`) like its cancellation, answered 202. Once it is delivered the
    /// journey is `delivered` again and takes changes; if it fails, it stays `cancelled`. A
    /// journey that is not cancelled has nothing to re-activate (409), and one with another
    /// submission pending waits for it (409). `Prefer: wait=N` as for submit. Scope
    /// `journeys:write`.
    reactivate_journey = "/portal/journeys/{id}/reactivate";
    /// Re-activate a shipment cancelled downstream (U-ETDS `seferAktifEtV3`, and `yukAktifEtV3`
    /// for each of its loads cancelled too), as a journey is. Scope `journeys:write`.
    reactivate_cargo = "/portal/cargo/{id}/reactivate";
    request_body(content = Option<CancelIn>, description = "Optional: the reason (\"Yeniden etkinleştirildi\" when absent)");
    responses((status = 409, body = ErrorBody, description = "Not cancelled, or another submission of it is pending"));
    |st, p, target, headers, body| reactivate_and_answer(&st, &p, target, &body, &headers).await
}

async fn reactivate_and_answer(
    st: &AppState,
    p: &Principal,
    target: Target,
    body: &Bytes,
    headers: &HeaderMap,
) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
    let body: Option<CancelIn> = optional_json(body)?;
    let reason = body.and_then(|b| b.reason).map(CancelReason::into_inner);
    let reason = reason.as_deref().unwrap_or(DEFAULT_REACTIVATION_REASON);
    let sub = reactivate(st, p.org_id, target, reason, &p.credential_id()).await?;
    answer(st, p.org_id, sub, headers).await
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoShowIn {
    /// 1–400 characters, sent downstream as the report's note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<CancelReason>,
}

/// Report that a passenger of a delivered journey did not come (U-ETDS `yolcuGelmeyenBildir`,
/// due within 30 minutes of departure by regulation): queued as a submission (operation
/// `no_show`) like a cancellation, answered 202; the journey's status stays as it is. The
/// passenger must have a seat number (422 naming `seat_no`: the downstream knows a no-show by
/// seat and identity number); a journey that is not delivered has nothing to report on (409),
/// and one with a submission pending (another no-show included) waits for it (409). `Prefer:
/// wait=N` as for submit. Scope `journeys:write`.
#[utoipa::path(post, path = "/portal/journeys/{id}/passengers/{passenger_id}/no-show", operation_id = "report_no_show",
    tag = "submissions", params(("id" = i64, Path), ("passenger_id" = i64, Path),
        ("Prefer" = Option<String>, Header, description = "`wait=N`: wait up to N (≤ 30) seconds for a final state")),
    request_body(content = Option<NoShowIn>, description = "Optional: a note"),
    responses((status = 202, body = SubmitOut, headers(("Preference-Applied" = String, description = "`wait=N` when a wait was asked for"))),
              (status = 409, body = ErrorBody, description = "Not delivered, another submission of it is pending, or its people's data was erased past the retention period"),
              (status = 422, body = ErrorBody, description = "The passenger has no seat number")),
    security(("bearer" = ["journeys:write"]), ("session" = ["journeys:write"])))]
pub async fn report_no_show(
    State(st): State<AppState>,
    p: Caller<JourneysWrite>,
    ApiPath((id, passenger)): ApiPath<(JourneyId, PassengerId)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(StatusCode, HeaderMap, Json<SubmitOut>)> {
    let body: Option<NoShowIn> = optional_json(&body)?;
    let note = body.and_then(|b| b.note).map(CancelReason::into_inner);
    let sub = no_show(&st, p.org_id, id, passenger, note, &p.credential_id()).await?;
    answer(&st, p.org_id, sub, &headers).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmissionsQuery {
    /// Page size, 1–200 (default 50).
    limit: Option<Limit>,
    /// `next_cursor` of the previous page.
    cursor: Option<Cursor>,
    state: Option<SubmissionState>,
    target_type: Option<TargetType>,
    /// The journey or shipment id.
    target_id: Option<RecordId>,
    /// Created on this day or later (Europe/Istanbul's calendar).
    created_from: Option<Day>,
    /// Created on this day or earlier (Europe/Istanbul's calendar).
    created_to: Option<Day>,
    /// `true`: only submissions a drift check found changed outside TNS (with `drift`);
    /// `false`: only the others.
    drifted: Option<bool>,
}

/// What a credential may read of a submission: the downstream's message with any number it
/// quotes masked unless it may see who travels.
fn shown(p: &Principal, mut sub: Submission) -> Submission {
    if !p.scopes.allows(Scope::JourneysRead) {
        sub.mask_messages();
    }
    sub
}

/// A page of `p`'s organization's submissions, newest first, by the filters of `q`.
pub async fn list_page(st: &AppState, p: &Principal, q: &SubmissionsQuery) -> ApiResult<Paged<Submission>> {
    let page = Page::new(q.limit, q.cursor);
    let filter = Filter {
        state: q.state,
        of: Of::from_parts(q.target_type, q.target_id.map(Int::get)),
        created_from: q.created_from.map(|d| d.0),
        created_to: q.created_to.map(|d| d.0),
        drifted: q.drifted,
    };
    let rows = db::submissions::list(&st.db, p.org_id, &filter, &page).await?;
    Ok(Paged::from_rows(rows.into_iter().map(|s| shown(p, s)).collect(), &page))
}

/// One submission as `p` may read it (404 for another organization's).
pub async fn one(st: &AppState, p: &Principal, id: SubmissionId) -> ApiResult<Submission> {
    let sub = db::submissions::get(&st.db, p.org_id, id).await?.ok_or_else(|| not_found("submission", id))?;
    Ok(shown(p, sub))
}

/// Submissions, newest first, with filters. Scope `submissions:read`.
#[utoipa::path(get, path = "/portal/submissions", operation_id = "list_submissions", tag = "submissions", params(SubmissionsQuery),
    responses((status = 200, body = Paged<SubmissionOut>)),
    security(("bearer" = ["submissions:read"]), ("session" = ["submissions:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<SubmissionsRead>,
    ApiQuery(q): ApiQuery<SubmissionsQuery>,
) -> ApiResult<Json<Paged<SubmissionOut>>> {
    Ok(Json(list_page(&st, &p, &q).await?.map(SubmissionOut::from)))
}

/// One passenger's outcome downstream (the adapter contract's `PassengerResult`, described here:
/// the contract crate does not depend on the document's machinery).
#[derive(Debug, Serialize, ToSchema)]
pub struct PassengerOutcome {
    /// The passenger's id.
    pub key: String,
    /// The downstream's reference of the passenger, when it accepted them.
    pub downstream_reference: Option<String>,
    /// Why the downstream refused the passenger; null when accepted.
    pub error: Option<String>,
}

/// A submission with what it sent, each passenger's outcome and every attempt, as a credential
/// may read them (what the portal's page shows, and the API answers as [`SubmissionDetailOut`]).
#[derive(Debug)]
pub struct Detail {
    pub submission: Submission,
    pub history: Vec<Attempt>,
    pub passengers: Vec<tns_adapter::PassengerResult>,
    pub snapshot: serde_json::Value,
}

answer! {
    /// A submission with what it sent, each passenger's outcome and every attempt.
    SubmissionDetailOut as SubmissionDetail from Detail {
        #[serde(flatten)]
        submission: SubmissionOut,
        /// Attempts, oldest first.
        history: Vec<AttemptOut> = each,
        /// Per-passenger outcomes of the delivering attempt (`key` is the passenger id; `error`
        /// set for a passenger the downstream refused).
        #[schema(value_type = Vec<PassengerOutcome>)]
        passengers: Vec<tns_adapter::PassengerResult>,
        /// What was sent, frozen at submit: the journey with crew and passengers, the amendment,
        /// the shipment, or the cancellation. Identity and tax numbers, names and phones are masked
        /// for a credential without `journeys:read`.
        #[schema(value_type = Object)]
        snapshot: serde_json::Value,
    }
}

/// One submission with its attempt history. Scope `submissions:read`.
#[utoipa::path(get, path = "/portal/submissions/{id}", operation_id = "get_submission", tag = "submissions", params(("id" = i64, Path)),
    responses((status = 200, body = SubmissionDetailOut)),
    security(("bearer" = ["submissions:read"]), ("session" = ["submissions:read"])))]
pub async fn get(
    State(st): State<AppState>,
    p: Caller<SubmissionsRead>,
    ApiPath(id): ApiPath<SubmissionId>,
) -> ApiResult<Json<SubmissionDetailOut>> {
    Ok(Json(detail(&st, &p, id).await?.into()))
}

/// One submission with what it sent and its attempts, as `p` may read them.
pub async fn detail(st: &AppState, p: &Principal, id: SubmissionId) -> ApiResult<Detail> {
    // The submission first, then its attempts (recorded in the same statement as its change):
    // read concurrently, a final submission could come with its last attempt missing.
    let d = db::submissions::detail(&st.db, p.org_id, id).await?.ok_or_else(|| not_found("submission", id))?;
    let mut history = db::submissions::attempts(&st.db, p.org_id, id).await?;
    let (mut submission, mut snapshot) = (d.submission, d.snapshot.0);
    let mut passengers = d.passenger_results.map(|p| p.0).unwrap_or_default();
    // What was sent names people; what the downstream answered may quote their numbers.
    if !p.scopes.allows(Scope::JourneysRead) {
        mask_personal(&mut snapshot);
        submission.mask_messages();
        for a in &mut history {
            a.error = a.error.as_deref().map(mask_numbers);
        }
        for r in &mut passengers {
            r.error = r.error.as_deref().map(mask_numbers);
        }
    }
    Ok(Detail { submission, history, passengers, snapshot })
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(submit_journey))
        .routes(routes!(submit_cargo))
        .routes(routes!(cancel_journey))
        .routes(routes!(cancel_cargo))
        .routes(routes!(reactivate_journey))
        .routes(routes!(reactivate_cargo))
        .routes(routes!(report_no_show))
        .routes(routes!(list))
        .routes(routes!(get))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented outcome is the contract's, field for field.
    #[test]
    fn passenger_outcome_describes_the_contracts_result() {
        let contract = tns_adapter::PassengerResult { key: "1".into(), downstream_reference: None, error: None };
        let described = PassengerOutcome { key: "1".into(), downstream_reference: None, error: None };
        assert_eq!(serde_json::to_value(contract).unwrap(), serde_json::to_value(described).unwrap());
    }
}
