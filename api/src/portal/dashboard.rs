//! The dashboard: this month's usage against the quota, the last 30 days of submissions by
//! state, and the failed ones first, each with the downstream's message and a retry.

use std::collections::BTreeMap;

use axum::{extract::State, response::Html};
use chrono::{Days, Utc};
use maud::{html, Markup};
use tns_core::{domain::kinds::SubmissionState, scopes::need::SubmissionsRead};
use tns_store::{pagination::Page, submissions as store};

use super::{
    format,
    i18n::{Lang, Msg},
    member::Member,
    page::{page, PortalError, Shell},
};
use crate::{quota::Month, state::AppState};

const DAYS: i32 = 30;

pub(super) fn state_label(lang: Lang, s: SubmissionState) -> &'static str {
    lang.t(match s {
        SubmissionState::Pending => Msg::StatePending,
        SubmissionState::Unknown => Msg::StateUnknown,
        SubmissionState::Delivered => Msg::StateDelivered,
        SubmissionState::Failed => Msg::StateFailed,
    })
}

/// `GET /dashboard`.
pub(super) async fn show(State(st): State<AppState>, m: Member<SubmissionsRead>) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let org = m.org();
    let month = Month::now();
    let used: i64 = st.quota.usage(org, month).await?.iter().map(|r| r.total_calls).sum();
    let quota = st.quota.load_limit(org).await?.quota;
    let daily = store::daily_states(&st.db, org, DAYS).await?;
    let failed_filter = store::Filter { state: Some(SubmissionState::Failed), ..Default::default() };
    let failed = store::list(&st.db, org, &failed_filter, &Page { limit: 10, before: None }).await?;

    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/dashboard" };
    let body = html! {
        h1 { (lang.t(Msg::Dashboard)) }
        div.grid {
            section.card aria-labelledby="usage-h" {
                h2 #usage-h { (lang.t(Msg::UsageThisMonth)) }
                (usage(lang, used, quota))
            }
            section.card aria-labelledby="days-h" {
                h2 #days-h { (lang.t(Msg::SubmissionsLast30)) }
                (days(lang, &daily))
            }
        }
        section.card aria-labelledby="failed-h" {
            h2 #failed-h { (lang.t(Msg::FailedSubmissions)) }
            (failures(lang, &failed))
        }
    };
    Ok(Html(page(&shell, lang.t(Msg::Dashboard), body).into_string()))
}

fn usage(lang: Lang, used: i64, quota: Option<i64>) -> Markup {
    html! {
        @match quota {
            Some(q) => {
                @let pct = if q > 0 { (used * 100 / q).min(100) } else { 100 };
                p { strong { (format::int(lang, used)) } " " (lang.t(Msg::CallsOf)) " " (format::int(lang, q)) }
                progress.meter max=(q.max(1)) value=(used.min(q)) aria-label=(lang.t(Msg::UsageThisMonth)) { (pct) "%" }
            }
            None => p { strong { (format::int(lang, used)) } " (" (lang.t(Msg::Unlimited)) ")" }
        }
    }
}

/// A bar per day (its height the day's submissions) and the same figures as a table, which is
/// what assistive technology reads.
fn days(lang: Lang, daily: &[(chrono::NaiveDate, SubmissionState, i64)]) -> Markup {
    let today = Utc::now().with_timezone(&format::istanbul()).date_naive();
    let first = today - Days::new(DAYS as u64 - 1);
    let mut per_day: BTreeMap<chrono::NaiveDate, [i64; 4]> =
        first.iter_days().take(DAYS as usize).map(|d| (d, [0; 4])).collect();
    let mut totals = [0i64; 4];
    for (day, state, n) in daily {
        let i = slot(*state);
        if let Some(counts) = per_day.get_mut(day) {
            counts[i] += n;
        }
        totals[i] += n;
    }
    let peak = per_day.values().map(|c| c.iter().sum::<i64>()).max().unwrap_or(0).max(1);
    html! {
        // Drawn in SVG attributes, which the pages' style policy (no inline styles) allows.
        svg.bars viewBox=(format!("0 0 {DAYS} 100")) preserveAspectRatio="none" aria-hidden="true" focusable="false" {
            @for (i, counts) in per_day.values().enumerate() {
                @let h = counts.iter().sum::<i64>() * 100 / peak;
                rect x=(format!("{}.1", i)) y=(100 - h) width="0.8" height=(h) {}
            }
        }
        table {
            caption.muted { (format::date(lang, first)) " – " (format::date(lang, today)) }
            tbody {
                @for s in [SubmissionState::Delivered, SubmissionState::Pending, SubmissionState::Unknown, SubmissionState::Failed] {
                    tr {
                        th scope="row" { span class=(format!("badge state-{}", s.as_str())) { (state_label(lang, s)) } }
                        td.num { (format::int(lang, totals[slot(s)])) }
                    }
                }
            }
        }
    }
}

fn slot(s: SubmissionState) -> usize {
    match s {
        SubmissionState::Pending => 0,
        SubmissionState::Delivered => 1,
        SubmissionState::Failed => 2,
        SubmissionState::Unknown => 3,
    }
}

fn failures(lang: Lang, failed: &[store::Submission]) -> Markup {
    html! {
        @if failed.is_empty() {
            p.muted { (lang.t(Msg::NoFailures)) }
        } @else {
            div.table-wrap {
                table {
                    thead { tr { th { (lang.t(Msg::When)) } th { (lang.t(Msg::Record)) } th { (lang.t(Msg::Message)) } th { span.sr-only { (lang.t(Msg::Actions)) } } } }
                    tbody {
                        @for s in failed {
                            tr #(format!("failed-{}", s.id)) {
                                td { (format::datetime(lang, s.created_at)) }
                                td { (s.target_type.as_str()) " #" (s.target_id) }
                                td { (s.error_message.as_deref().unwrap_or("—")) }
                                td {
                                    button type="button" hx-post=(format!("/submissions/{}/retry", s.id))
                                        hx-target=(format!("#failed-{}", s.id)) hx-swap="outerHTML" {
                                        (lang.t(Msg::Retry))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
