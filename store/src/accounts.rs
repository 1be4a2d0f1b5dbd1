//! Organizations and users.

use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use tns_core::ids::{OrgId, UserId};

use crate::billing::plans::{Subscription, SUBSCRIPTION_COLUMNS};
use tns_core::domain::{kinds::OrgStatus, Email, TaxNumber};

/// A user of an organization (its owner: one per organization).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct User {
    pub user_id: UserId,
    pub organization_id: OrgId,
    pub email: String,
    pub full_name: String,
    pub role: String,
}

/// An organization: one tenant.
#[derive(Debug, Clone)]
pub struct Organization {
    pub id: OrgId,
    pub name: String,
    pub tax_number: String,
    pub status: String,
    pub status_reason: Option<String>,
    pub trial_ends_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Of the current plan; -1 means unlimited.
    pub monthly_quota: i64,
    pub ws_username: Option<String>,
}

const USER_COLUMNS: &str = "id AS user_id, org_id AS organization_id, email, full_name, role";

/// Organization number `id`, if there is one: how a number from outside (an operator's path, a
/// test) becomes an [`OrgId`]. Closed organizations are found too; what may be done to them is
/// the caller's to decide.
pub async fn org_id(db: &PgPool, id: i64) -> sqlx::Result<Option<OrgId>> {
    sqlx::query_scalar("SELECT id FROM organizations WHERE id = $1").bind(id).fetch_optional(db).await
}

/// The index that keeps one organization per tax number.
pub const TAX_NUMBER_KEY: &str = "organizations_tax_number_key";

/// A new organization, on trial for `trial_days`. Fails with a unique violation of
/// [`TAX_NUMBER_KEY`] when an organization holds the tax number.
pub async fn insert_organization(
    tx: &mut PgConnection,
    name: &str,
    tax: &TaxNumber,
    trial_days: u32,
) -> sqlx::Result<OrgId> {
    sqlx::query_scalar(
        "INSERT INTO organizations (name, tax_number, trial_ends_at)
         VALUES ($1, $2, now() + make_interval(days => $3)) RETURNING id",
    )
    .bind(name)
    .bind(tax.as_str())
    .bind(trial_days as i32)
    .fetch_one(tx)
    .await
}

/// An organization's standing (serialized as the audit log records a change of it).
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct Standing {
    pub status: OrgStatus,
    pub status_reason: Option<String>,
    pub trial_ends_at: Option<chrono::DateTime<chrono::Utc>>,
}

pub async fn standing(conn: impl sqlx::PgExecutor<'_>, org: OrgId) -> sqlx::Result<Option<Standing>> {
    sqlx::query_as("SELECT status, status_reason, trial_ends_at FROM organizations WHERE id = $1")
        .bind(org)
        .fetch_optional(conn)
        .await
}

/// Why the jobs suspend an ended trial (shown to the organization); choosing a plan lifts it.
pub const TRIAL_ENDED: &str = "the trial period has ended: choose a plan (POST /portal/billing/subscription/change)";

impl Standing {
    /// The status once a plan is chosen.
    pub fn after_plan_choice(&self) -> OrgStatus {
        self.status.after_plan_choice(self.status_reason.as_deref() == Some(TRIAL_ENDED))
    }
}

/// The tax number of organization `org` (not erased).
pub async fn tax_number(db: &PgPool, org: OrgId) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT tax_number FROM organizations WHERE id = $1 AND erased_at IS NULL")
        .bind(org)
        .fetch_optional(db)
        .await
}

/// One organization as operators list them.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OrgSummary {
    pub id: OrgId,
    pub name: String,
    pub tax_number: String,
    pub status: OrgStatus,
    pub status_reason: Option<String>,
    pub plan_code: String,
    /// As last persisted (the API processes persist every few seconds).
    pub calls_this_month: i64,
    pub queued: i64,
    pub shares_tax_number: bool,
}

/// Organizations whose name, tax number or owner's e-mail contains `text` (any, when `None`),
/// in `status` (any, when `None`), newest first, at most `limit`.
pub async fn search(
    db: &PgPool,
    text: Option<&str>,
    status: Option<OrgStatus>,
    limit: i64,
) -> sqlx::Result<Vec<OrgSummary>> {
    sqlx::query_as(
        "SELECT o.id, o.name, o.tax_number, o.status, o.status_reason, s.plan_code,
                COALESCE((SELECT sum(u.total_calls) FROM usage_monthly u
                           WHERE u.org_id = o.id AND u.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)::int8
                    AS calls_this_month,
                (SELECT count(*) FROM submissions q WHERE q.org_id = o.id AND q.state IN ('pending', 'unknown')) AS queued,
                EXISTS (SELECT 1 FROM organizations t
                         WHERE t.tax_number = o.tax_number AND t.id <> o.id AND t.erased_at IS NULL)
                    AS shares_tax_number
           FROM organizations o JOIN subscriptions s ON s.org_id = o.id
          WHERE ($1::text IS NULL OR o.name ILIKE '%' || $1 || '%' OR o.tax_number = $1
                 OR EXISTS (SELECT 1 FROM users us WHERE us.org_id = o.id AND us.email ILIKE '%' || $1 || '%'))
            AND ($2::text IS NULL OR o.status = $2)
          ORDER BY o.id DESC
          LIMIT $3",
    )
    .bind(text)
    .bind(status)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Fails with a unique violation of `users_email_key` when the address is taken.
pub async fn insert_owner(
    tx: &mut PgConnection,
    org: OrgId,
    email: &Email,
    full_name: &str,
    password_hash: &str,
) -> sqlx::Result<User> {
    sqlx::query_as(&format!(
        "INSERT INTO users (org_id, email, full_name, password_hash, role) VALUES ($1, $2, $3, $4, 'owner')
         RETURNING {USER_COLUMNS}"
    ))
    .bind(org)
    .bind(email.as_str())
    .bind(full_name)
    .bind(password_hash)
    .fetch_one(tx)
    .await
}

pub async fn insert_subscription(tx: &mut PgConnection, org: OrgId, plan: &str) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO subscriptions (org_id, plan_code) VALUES ($1, $2)")
        .bind(org)
        .bind(plan)
        .execute(tx)
        .await?;
    Ok(())
}

/// The user and their password hash, for login.
pub async fn by_email(db: &PgPool, email: &str) -> sqlx::Result<Option<(User, String)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: User,
        password_hash: String,
    }
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT {USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1) AND removed_at IS NULL"
    ))
    .bind(email)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|r| (r.user, r.password_hash)))
}

/// Who a credential acts for: its user, organization and subscription, read in one round trip
/// (`GET /portal/me`).
#[derive(Debug, Clone)]
pub struct Profile {
    pub user: User,
    pub organization: Organization,
    pub subscription: Subscription,
}

pub async fn profile(db: &PgPool, org: OrgId, user_id: UserId) -> sqlx::Result<Option<Profile>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: User,
        org_name: String,
        tax_number: String,
        org_status: String,
        status_reason: Option<String>,
        trial_ends_at: Option<chrono::DateTime<chrono::Utc>>,
        ws_username: Option<String>,
        #[sqlx(flatten)]
        subscription: Subscription,
    }
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT u.id AS user_id, u.org_id AS organization_id, u.email, u.full_name, u.role,
                o.name AS org_name, o.tax_number, o.status AS org_status, o.status_reason,
                o.trial_ends_at, d.fields->>'ws_username' AS ws_username,
                {SUBSCRIPTION_COLUMNS}
           FROM users u
           JOIN organizations o ON o.id = u.org_id
           LEFT JOIN downstream_settings d ON d.org_id = o.id
           JOIN subscriptions s ON s.org_id = o.id
           JOIN plans p ON p.code = s.plan_code
          WHERE u.org_id = $1 AND u.id = $2"
    ))
    .bind(org)
    .bind(user_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|r| {
        let organization = Organization {
            id: r.user.organization_id,
            name: r.org_name,
            tax_number: r.tax_number,
            status: r.org_status,
            status_reason: r.status_reason,
            trial_ends_at: r.trial_ends_at,
            monthly_quota: r.subscription.monthly_quota,
            ws_username: r.ws_username,
        };
        Profile { user: r.user, organization, subscription: r.subscription }
    }))
}
