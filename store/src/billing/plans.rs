//! Plans and subscriptions.

use sqlx::{PgConnection, PgPool};
use tns_core::domain::{
    billing::Price,
    kinds::{BillingCycle, OrgStatus},
    money::Money,
};
use tns_core::ids::OrgId;

use crate::accounts::Standing;

/// A plan row. `monthly_quota` is -1 for unlimited.
#[derive(Debug, sqlx::FromRow)]
pub struct Plan {
    pub code: String,
    pub name: String,
    pub monthly_quota: i64,
    /// KDV not included.
    pub price_try: Money,
    pub billing_period: BillingCycle,
    /// `None` for plans that refuse calls beyond the quota.
    pub overage_unit_try: Option<Money>,
}

/// The organization's current subscription (its plan).
#[derive(Debug, Clone, sqlx::FromRow)]
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

pub async fn subscription(db: &PgPool, org: OrgId) -> sqlx::Result<Option<Subscription>> {
    sqlx::query_as(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM subscriptions s JOIN plans p ON p.code = s.plan_code WHERE s.org_id = $1"
    ))
    .bind(org)
    .fetch_optional(db)
    .await
}

/// What moving to a plan did.
#[derive(Debug, Clone, PartialEq)]
pub struct Switched {
    /// The plan before.
    pub before: String,
    /// The standing before and after, when choosing the plan changed it (a trial ended).
    pub standing: Option<(Standing, Standing)>,
}

/// Move `org` to plan `code` (inside the caller's transaction, which audits it). Choosing a
/// plan ends a trial, and lifts a suspension that only the trial's end caused (an operator's
/// suspension stays). Billing follows (`terms::follow`). `None` for no such organization.
pub(crate) async fn switch(tx: &mut PgConnection, org: OrgId, code: &str) -> sqlx::Result<Option<Switched>> {
    // The organization first, as every change of its standing or billing locks it.
    if super::lock_org(&mut *tx, org, super::Hold::Change).await?.is_none() {
        return Ok(None);
    }
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
    let standing = super::standing::activate_on_plan_choice(tx, org).await?;
    super::terms::follow(tx, org).await?;
    Ok(before.map(|before| Switched { before, standing }))
}

/// Columns of a plan's prices over `plans p`, as [`price_of`] takes them.
pub(crate) const PRICE_COLUMNS: &str = "p.code, p.name, p.billing_period, p.price_try, p.overage_unit_try";

type PriceRow = (String, String, BillingCycle, Money, Option<Money>);

pub(crate) fn price_of((code, name, cycle, price, overage_unit): PriceRow) -> Price {
    Price { code, name, cycle, price, overage_unit }
}

/// Plan `code`'s prices, `None` for no such plan.
pub async fn price(db: &PgPool, code: &str) -> sqlx::Result<Option<Price>> {
    let row: Option<PriceRow> = sqlx::query_as(&format!("SELECT {PRICE_COLUMNS} FROM plans p WHERE p.code = $1"))
        .bind(code)
        .fetch_optional(db)
        .await?;
    Ok(row.map(price_of))
}

/// What admission needs of an organization: its plan's quota (`None` = unlimited), whether
/// calls beyond it are billed (soft) rather than refused, and its status. A closed organization
/// is billed for nothing, overage included: its quota is hard.
pub async fn limit(db: &PgPool, org: OrgId) -> sqlx::Result<Option<(Option<i32>, bool, OrgStatus)>> {
    sqlx::query_as(
        "SELECT p.monthly_quota, p.overage_unit_try IS NOT NULL AND o.status <> 'closed', o.status
           FROM subscriptions s JOIN plans p ON p.code = s.plan_code JOIN organizations o ON o.id = s.org_id
          WHERE s.org_id = $1",
    )
    .bind(org)
    .fetch_optional(db)
    .await
}
