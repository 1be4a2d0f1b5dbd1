//! Organizations and users.

use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use utoipa::ToSchema;

use super::plans::{Subscription, SUBSCRIPTION_COLUMNS};
use tns_core::domain::{Email, TaxNumber};

/// A user of an organization (its owner: one per organization).
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct User {
    pub user_id: i64,
    pub organization_id: i64,
    pub email: String,
    pub full_name: String,
    /// `owner` for the registering user.
    pub role: String,
}

/// An organization: one tenant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Organization {
    pub id: i64,
    pub name: String,
    pub tax_number: String,
    /// `trial`, `active` or `suspended`.
    pub status: String,
    /// Calls per month of the current plan; -1 means unlimited.
    pub monthly_quota: i64,
    pub ws_username: Option<String>,
}

const USER_COLUMNS: &str = "id AS user_id, org_id AS organization_id, email, full_name, role";

pub async fn insert_organization(tx: &mut PgConnection, name: &str, tax: &TaxNumber) -> sqlx::Result<i64> {
    sqlx::query_scalar("INSERT INTO organizations (name, tax_number) VALUES ($1, $2) RETURNING id")
        .bind(name)
        .bind(tax.as_str())
        .fetch_one(tx)
        .await
}

/// Fails with a unique violation of `users_email_key` when the address is taken.
pub async fn insert_owner(
    tx: &mut PgConnection,
    org: i64,
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

pub async fn insert_subscription(tx: &mut PgConnection, org: i64, plan: &str) -> sqlx::Result<()> {
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
    let row: Option<Row> =
        sqlx::query_as(&format!("SELECT {USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)"))
            .bind(email)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|r| (r.user, r.password_hash)))
}

/// The caller's user, organization and subscription in one round trip (`GET /portal/me`).
/// Who a credential acts for: its user, organization and subscription (`GET /portal/me`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = MeOut)]
pub struct Profile {
    pub user: User,
    pub organization: Organization,
    pub subscription: Subscription,
}

pub async fn profile(db: &PgPool, org: i64, user_id: i64) -> sqlx::Result<Option<Profile>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: User,
        org_name: String,
        tax_number: String,
        org_status: String,
        ws_username: Option<String>,
        #[sqlx(flatten)]
        subscription: Subscription,
    }
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT u.id AS user_id, u.org_id AS organization_id, u.email, u.full_name, u.role,
                o.name AS org_name, o.tax_number, o.status AS org_status, d.ws_username,
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
            monthly_quota: r.subscription.monthly_quota,
            ws_username: r.ws_username,
        };
        Profile { user: r.user, organization, subscription: r.subscription }
    }))
}
