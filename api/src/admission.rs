//! The `/api/v1` admission layer: authenticate, then meter. Authenticated calls count
//! against the organization's monthly quota; anonymous ones against the per-IP limit.
//! Either way the response carries `X-RateLimit-*` for the limit that applied.

use axum::{
    extract::{MatchedPath, Request, State},
    http::{header, HeaderMap, HeaderValue, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{
    auth::{self, AuthFailure},
    error::{ApiError, Code},
    metrics::RouteTemplate,
    quota::{Decision, Exempt},
    state::AppState,
};

/// Routes that are counted but never refused for quota: a customer over quota must still
/// be able to see usage and change plan.
pub const QUOTA_EXEMPT: &[&str] = &[
    "/portal/usage",
    "/portal/billing/plans",
    "/portal/billing/subscription",
    "/portal/billing/subscription/change",
    "/portal/billing/invoices",
    "/portal/billing/invoices/upcoming",
    "/portal/billing/invoices/{id}",
    "/portal/billing/invoices/{id}/pdf",
];

/// What a suspended (or closed) organization may still do besides reading its own data (every
/// `GET` and `HEAD`: records, exports, reports): billing and support (a prefix: everything under
/// it), so it can see why and put it right; revoking an API key, so a leaked one can be stopped
/// whatever the standing; asking for an export of its data, and closing or reopening (a closed
/// one must be able to take its data and to come back). Creating, changing and submitting wait
/// for reactivation. What it is
/// served is counted, and held to a hard quota, like any call; what it is refused is not counted.
pub const SUSPENSION_EXEMPT: &[&str] = &[
    "/portal/billing/",
    "/portal/support/",
    "DELETE /portal/api-keys/{id}",
    "POST /portal/exports",
    "/portal/closure",
];

/// Whether a suspended organization's call is served. A report read back from the downstream
/// (`/portal/{journeys,cargo}/{id}/report`) is a read too: it fetches, with the organization's
/// own credentials, what was already notified for it, and changes nothing there or here.
pub fn spared_when_suspended(method: &Method, route: &str) -> bool {
    matches!(*method, Method::GET | Method::HEAD)
        || SUSPENSION_EXEMPT.iter().any(|e| match e.split_once(' ') {
            Some((m, r)) => m == method.as_str() && r == route,
            None => route.starts_with(e),
        })
}

pub const API_PREFIX: &str = "/api/v1";

/// The routes that take no credentials (sign-up, sign-in, token exchange): judged as
/// anonymous whatever `Authorization` says, so holding a key buys no unthrottled guessing.
pub const ANONYMOUS: &[&str] = &["/auth/register", "/auth/login", "/auth/token", "/auth/logout"];

pub async fn admission(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str())
        .filter(|m| !m.contains("__private__axum"))
        .map(|m| m.strip_prefix(API_PREFIX).unwrap_or(m).to_string())
        .unwrap_or_else(|| "(unmatched)".into());
    let endpoint = format!("{} {}", req.method(), route);
    let ip = st.throttle.client_ip(&req);

    if ANONYMOUS.contains(&route.as_str()) {
        let decision = st.throttle.hit(&st.redis, ip).await;
        if !decision.admitted {
            return refuse_anonymous(&st, route, decision);
        }
        let res = next.run(req).await;
        return finish(res, route, Some(decision));
    }
    // An invented key costs a database lookup: not for a client that has already had its
    // budget of refused credentials.
    if auth::costs_a_lookup(&st, req.headers()) {
        if let Some(decision) = st.refused.exhausted(&st.redis, ip).await {
            return refuse_anonymous(&st, route, decision);
        }
    }
    let (decision, org) = match auth::authenticate(&st, req.headers()).await {
        Ok(Some(principal)) => {
            let org = principal.org_id;
            tns_http::request_id::record_org(org.get());
            let exempt = Exempt {
                quota: QUOTA_EXEMPT.contains(&route.as_str()),
                suspension: spared_when_suspended(req.method(), &route),
            };
            let decision = match st.quota.admit(org, &endpoint, exempt).await {
                Ok(d) => d,
                Err(e) => return finish(e.into_response(), route, None),
            };
            if !decision.admitted {
                let plan_limit = decision.limit;
                let res = ApiError::TooManyRequests {
                    code: Code::QuotaExceeded,
                    detail: format!("monthly quota of {plan_limit} calls is used up; it resets at the start of next month (UTC) or with a larger plan"),
                    retry_after_secs: (decision.reset - chrono::Utc::now().timestamp()).max(1) as u64,
                }
                .into_response();
                return finish(res, route, Some(decision));
            }
            req.extensions_mut().insert(principal);
            (decision, Some(org))
        }
        Ok(None) => (st.throttle.hit(&st.redis, ip).await, None),
        Err(ApiError::Unauthorized(reason)) => {
            req.extensions_mut().insert(AuthFailure(reason));
            (st.refused.hit(&st.redis, ip).await, None)
        }
        Err(other) => return finish(other.into_response(), route, None),
    };
    if org.is_none() && !decision.admitted {
        return refuse_anonymous(&st, route, decision);
    }

    let res = next.run(req).await;
    if let Some(org) = org.filter(|_| res.status().as_u16() >= 400) {
        let st = st.clone();
        tokio::spawn(async move { st.quota.record_error(org, &endpoint).await });
    }
    finish(res, route, Some(decision))
}

/// 429 for a client over its unauthenticated budget.
fn refuse_anonymous(st: &AppState, route: String, decision: Decision) -> Response {
    st.metrics.quota_rejections.with_label_values(&["client_ip"]).inc();
    let res = ApiError::TooManyRequests {
        code: Code::RateLimited,
        detail: "too many unauthenticated requests from this address; slow down".into(),
        retry_after_secs: (decision.reset - chrono::Utc::now().timestamp()).max(1) as u64,
    }
    .into_response();
    finish(res, route, Some(decision))
}

fn finish(mut res: Response, route: String, decision: Option<Decision>) -> Response {
    if let Some(d) = decision {
        set_rate_headers(res.headers_mut(), &d);
    }
    // Every answer here is one organization's data, and some carry a key, a token or a secret:
    // no shared or browser cache keeps any of them.
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res.extensions_mut().insert(RouteTemplate(route));
    res
}

/// `-1` in Limit and Remaining means unlimited.
pub fn set_rate_headers(h: &mut HeaderMap, d: &Decision) {
    h.insert("x-ratelimit-limit", HeaderValue::from(d.limit));
    h.insert("x-ratelimit-remaining", HeaderValue::from(d.remaining));
    h.insert("x-ratelimit-reset", HeaderValue::from(d.reset));
}
