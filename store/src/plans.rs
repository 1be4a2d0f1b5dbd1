//! Plans and subscriptions.

use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use tns_core::domain::{
    kinds::{BillingCycle, OrgStatus},
    money::Money,
};
use utoipa::ToSchema;

/// A plan as the plan list shows it. `monthly_quota` is -1 for unlimited.
#[derive(Debug, Serialize, ToSchema, sqlx::FromRow)]
pub struct Plan {
    pub code: String,
    pub name: String,
    /// Calls per month; -1 means unlimited.
    pub monthly_quota: i64,
    /// For one billing period, tax (KDV) not included.
    pub price_try: Money,
    /// The period `price_try` pays for.
    pub billing_period: BillingCycle,
    /// Price per call beyond the quota; `null` for plans that answer 429 instead.
    pub overage_unit_try: Option<Money>,
}

/// The organization's current subscription (its plan).
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(as = PlanSubscription)]
pub struct Subscription {
    pub code: String,
    pub name: String,
    /// Calls per month; -1 means unlimited.
    pub monthly_quota: i64,
    pub price_try: Money,
    pub billing_period: BillingCycle,
    /// `active`.
    pub status: String,
    pub started_at: chrono::DateTime<chrono::Utc>,
}

pub async fn list(db: &PgPool) -> sqlx::Result<Vec<Plan>> {
    sqlx::query_as(
        "SELECT code, name, COALESCE(monthly_quota, -1)::int8 AS monthly_quota, price_try,
                billing_period, overage_unit_try
           FROM plans ORDER BY sort_order, code",
    )
    .fetch_all(db)
    .await
}

pub async fn exists(db: &PgPool, code: &str) -> sqlx::Result<bool> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM plans WHERE code = $1)").bind(code).fetch_one(db).await
}

/// Columns of [`Subscription`] over `subscriptions s JOIN plans p`.
pub const SUBSCRIPTION_COLUMNS: &str = "p.code, p.name, COALESCE(p.monthly_quota, -1)::int8 AS monthly_quota,
    p.price_try, p.billing_period, s.status, s.started_at";

pub async fn subscription(db: &PgPool, org: i64) -> sqlx::Result<Option<Subscription>> {
    sqlx::query_as(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM subscriptions s JOIN plans p ON p.code = s.plan_code WHERE s.org_id = $1"
    ))
    .bind(org)
    .fetch_optional(db)
    .await
}

/// Move `org` to plan `code`. Choosing a plan ends a trial, and lifts a suspension that only
/// the trial's end caused (an operator's suspension stays). Billing follows: the old plan's
/// term ends today and the new one's begins.
pub async fn change(db: &PgPool, org: i64, code: &str) -> sqlx::Result<()> {
    let mut tx = db.begin().await?;
    switch(&mut tx, org, code).await?;
    tx.commit().await
}

/// [`change`] inside the caller's transaction; the plan before, `None` for no such
/// organization.
pub async fn switch(tx: &mut PgConnection, org: i64, code: &str) -> sqlx::Result<Option<String>> {
    let before: Option<String> = sqlx::query_scalar("SELECT plan_code FROM subscriptions WHERE org_id = $1 FOR UPDATE")
        .bind(org)
        .fetch_optional(&mut *tx)
        .await?;
    if before.is_none() {
        return Ok(None);
    }
    sqlx::query(
        "UPDATE subscriptions SET plan_code = $2, started_at = now()
          WHERE org_id = $1 AND plan_code IS DISTINCT FROM $2",
    )
    .bind(org)
    .bind(code)
    .execute(&mut *tx)
    .await?;
    crate::accounts::activate_on_plan_choice(tx, org, crate::standing::TRIAL_ENDED).await?;
    crate::terms::follow(tx, org).await?;
    Ok(before)
}

/// What admission needs of an organization: its plan's quota (`None` = unlimited), whether
/// calls beyond it are billed (soft) rather than refused, and its status.
pub async fn limit(db: &PgPool, org: i64) -> sqlx::Result<Option<(Option<i32>, bool, OrgStatus)>> {
    sqlx::query_as(
        "SELECT p.monthly_quota, p.overage_unit_try IS NOT NULL, o.status
           FROM subscriptions s JOIN plans p ON p.code = s.plan_code JOIN organizations o ON o.id = s.org_id
          WHERE s.org_id = $1",
    )
    .bind(org)
    .fetch_optional(db)
    .await
}
