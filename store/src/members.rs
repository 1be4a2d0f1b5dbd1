//! An organization's members: the `invitations` and `password_resets` tables, and the members'
//! roles, removal and passwords on `users` (which `accounts` owns with them). Every change of a
//! member is audited, as the member who made it (`tenant:user:<id>`), in its own transaction.
//! Tokens (an invitation's, a reset's) are 32 random bytes shown once; only their SHA-256 is
//! stored.

use chrono::{DateTime, Duration, Utc};
use sqlx::{PgConnection, PgPool};
use tns_core::ids::{KeyId, OrgId, UserId};
use tns_core::{
    domain::{
        kinds::{AuditAction, Role},
        Email,
    },
    keys,
};

use crate::audit::{self, Actor, Entry};

/// A member as the team page lists them.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Member {
    pub user_id: UserId,
    pub email: String,
    pub full_name: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

/// What signing in needs to know of a member, every request (cached briefly by the API).
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Standing {
    /// The organization, as the database knows it: what a session's principal acts for.
    pub org_id: OrgId,
    pub role: Role,
    /// Sessions opened before this are refused; `None` when none was ever ended.
    pub sessions_valid_after: Option<DateTime<Utc>>,
}

/// Member `user`, unless removed, with the organization they belong to: the one place a
/// member is found by their id alone, because a session names its organization only as a
/// number. Whoever acts for an organization matches it against `org_id` (the API's
/// `KeyStore::member_of`).
pub async fn standing(db: &PgPool, user: UserId) -> sqlx::Result<Option<Standing>> {
    sqlx::query_as("SELECT org_id, role, sessions_valid_after FROM users WHERE id = $1 AND removed_at IS NULL")
        .bind(user)
        .fetch_optional(db)
        .await
}

/// `org`'s members (not removed), the owner first, then by name.
pub async fn list(db: &PgPool, org: OrgId) -> sqlx::Result<Vec<Member>> {
    sqlx::query_as(
        "SELECT id AS user_id, email, full_name, role, created_at FROM users
          WHERE org_id = $1 AND removed_at IS NULL
          ORDER BY role = 'owner' DESC, lower(full_name), id",
    )
    .bind(org)
    .fetch_all(db)
    .await
}

/// An invitation not accepted, revoked or expired, as the team page lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Invitation {
    pub id: i64,
    pub email: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub async fn open_invitations(db: &PgPool, org: OrgId) -> sqlx::Result<Vec<Invitation>> {
    sqlx::query_as(
        "SELECT id, email, role, created_at, expires_at FROM invitations
          WHERE org_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
          ORDER BY id DESC",
    )
    .bind(org)
    .fetch_all(db)
    .await
}

/// Why an invitation was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotInvited {
    /// Someone with this address can sign in already (here or elsewhere: one account per address).
    HasAccount,
}

fn member_actor(user: UserId) -> Actor {
    Actor::Tenant { user, key: None }
}

/// Invite `email` to `org` as `role`, by member `by`: the invitation and its token (to put in
/// the link; nothing keeps it). An open invitation to the same address is replaced.
pub async fn invite(
    db: &PgPool,
    org: OrgId,
    by: UserId,
    email: &Email,
    role: Role,
    valid_for: Duration,
) -> sqlx::Result<Result<(Invitation, String), NotInvited>> {
    let (token, hash) = keys::random_token_and_hash();
    let mut tx = db.begin().await?;
    let taken: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1) AND removed_at IS NULL)")
            .bind(email.as_str())
            .fetch_one(&mut *tx)
            .await?;
    if taken {
        return Ok(Err(NotInvited::HasAccount));
    }
    sqlx::query(
        "UPDATE invitations SET revoked_at = now()
          WHERE org_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL AND revoked_at IS NULL",
    )
    .bind(org)
    .bind(email.as_str())
    .execute(&mut *tx)
    .await?;
    let inv: Invitation = sqlx::query_as(
        "INSERT INTO invitations (org_id, email, role, token_hash, invited_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + $6) RETURNING id, email, role, created_at, expires_at",
    )
    .bind(org)
    .bind(email.as_str())
    .bind(role)
    .bind(&hash[..])
    .bind(by)
    .bind(valid_for)
    .fetch_one(&mut *tx)
    .await?;
    let entry = Entry {
        actor: &member_actor(by),
        action: AuditAction::InviteMember,
        org: Some(org),
        before: serde_json::Value::Null,
        after: serde_json::json!({"invitation_id": inv.id, "email": inv.email, "role": role}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Ok((inv, token)))
}

/// Revoke `org`'s open invitation `id`, by member `by`; whether there was one.
pub async fn revoke_invitation(db: &PgPool, org: OrgId, by: UserId, id: i64) -> sqlx::Result<bool> {
    let mut tx = db.begin().await?;
    let email: Option<String> = sqlx::query_scalar(
        "UPDATE invitations SET revoked_at = now()
          WHERE org_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email",
    )
    .bind(org)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(email) = email else { return Ok(false) };
    let entry = Entry {
        actor: &member_actor(by),
        action: AuditAction::RevokeInvitation,
        org: Some(org),
        before: serde_json::json!({"invitation_id": id, "email": email}),
        after: serde_json::Value::Null,
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(true)
}

/// An invitation as the one it is for sees it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Welcome {
    pub id: i64,
    pub org_id: OrgId,
    pub organization: String,
    pub email: String,
    pub role: Role,
}

const WELCOME: &str = "SELECT i.id, i.org_id, o.name AS organization, i.email, i.role
      FROM invitations i JOIN organizations o ON o.id = i.org_id
     WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
       AND o.status <> 'closed'";

/// The open invitation `token` names, if it is still good.
pub async fn welcome(db: &PgPool, token: &str) -> sqlx::Result<Option<Welcome>> {
    sqlx::query_as(WELCOME).bind(&keys::hash(token)[..]).fetch_optional(db).await
}

/// Why an invitation was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAccepted {
    /// Unknown, used, revoked or expired.
    Gone,
    /// Its address got an account meanwhile.
    HasAccount,
}

/// Accept invitation `token`: a member with its address and role, named `full_name`, signing in
/// with the password whose hash is given. The member's user id.
pub async fn accept(
    db: &PgPool,
    token: &str,
    full_name: &str,
    password_hash: &str,
) -> sqlx::Result<Result<(OrgId, UserId), NotAccepted>> {
    let mut tx = db.begin().await?;
    let found: Option<Welcome> = sqlx::query_as(&format!("{WELCOME} FOR UPDATE OF i"))
        .bind(&keys::hash(token)[..])
        .fetch_optional(&mut *tx)
        .await?;
    let Some(w) = found else { return Ok(Err(NotAccepted::Gone)) };
    let inserted: Result<UserId, sqlx::Error> = sqlx::query_scalar(
        "INSERT INTO users (org_id, email, full_name, password_hash, role, invited_by)
         SELECT org_id, email, $2, $3, role, invited_by FROM invitations WHERE id = $1 RETURNING id",
    )
    .bind(w.id)
    .bind(full_name)
    .bind(password_hash)
    .fetch_one(&mut *tx)
    .await;
    let user = match inserted {
        Ok(id) => id,
        Err(sqlx::Error::Database(e)) if e.constraint() == Some("users_email_key") => {
            return Ok(Err(NotAccepted::HasAccount))
        }
        Err(e) => return Err(e),
    };
    sqlx::query("UPDATE invitations SET accepted_at = now() WHERE id = $1").bind(w.id).execute(&mut *tx).await?;
    let entry = Entry {
        actor: &member_actor(user),
        action: AuditAction::AcceptInvitation,
        org: Some(w.org_id),
        before: serde_json::json!({"invitation_id": w.id}),
        after: serde_json::json!({"user_id": user, "email": w.email, "role": w.role}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Ok((w.org_id, user)))
}

/// Why a member was not changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotChanged {
    NoSuchMember,
    /// Their role is not one `by` manages (the owner, an admin for an admin, oneself).
    NotYours,
}

/// Lock `user` of `org` (not removed) and check that member `by` may change them.
async fn managed(
    tx: &mut PgConnection,
    org: OrgId,
    by: UserId,
    user: UserId,
) -> sqlx::Result<Result<Role, NotChanged>> {
    let roles: Vec<(UserId, Role)> = sqlx::query_as(
        "SELECT id, role FROM users WHERE org_id = $1 AND id = ANY($2) AND removed_at IS NULL ORDER BY id FOR UPDATE",
    )
    .bind(org)
    .bind([by, user])
    .fetch_all(&mut *tx)
    .await?;
    let role_of = |id: UserId| roles.iter().find(|(u, _)| *u == id).map(|(_, r)| *r);
    let (Some(mine), Some(theirs)) = (role_of(by), role_of(user)) else { return Ok(Err(NotChanged::NoSuchMember)) };
    Ok(if by != user && mine.manages(theirs) { Ok(theirs) } else { Err(NotChanged::NotYours) })
}

/// Give member `user` of `org` the role `to`, by member `by` (who must manage both the old role
/// and the new one).
pub async fn set_role(
    db: &PgPool,
    org: OrgId,
    by: UserId,
    user: UserId,
    to: Role,
) -> sqlx::Result<Result<(), NotChanged>> {
    let mut tx = db.begin().await?;
    let before = match managed(&mut tx, org, by, user).await? {
        Ok(before) => before,
        Err(e) => return Ok(Err(e)),
    };
    let mine: Role = sqlx::query_scalar("SELECT role FROM users WHERE id = $1").bind(by).fetch_one(&mut *tx).await?;
    if !mine.manages(to) {
        return Ok(Err(NotChanged::NotYours));
    }
    sqlx::query("UPDATE users SET role = $2 WHERE id = $1").bind(user).bind(to).execute(&mut *tx).await?;
    let entry = Entry {
        actor: &member_actor(by),
        action: AuditAction::ChangeMemberRole,
        org: Some(org),
        before: serde_json::json!({"user_id": user, "role": before}),
        after: serde_json::json!({"user_id": user, "role": to}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Ok(()))
}

/// Remove member `user` of `org`, by member `by`: they can no longer sign in, their sessions
/// end, and the API keys they made are revoked (the ids, for the caller's key cache). Kept for
/// the history that names them.
pub async fn remove(
    db: &PgPool,
    org: OrgId,
    by: UserId,
    user: UserId,
    now: DateTime<Utc>,
) -> sqlx::Result<Result<Vec<KeyId>, NotChanged>> {
    let mut tx = db.begin().await?;
    let role = match managed(&mut tx, org, by, user).await? {
        Ok(role) => role,
        Err(e) => return Ok(Err(e)),
    };
    sqlx::query("UPDATE users SET removed_at = $2, sessions_valid_after = $2 WHERE id = $1")
        .bind(user)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let keys = crate::api_keys::revoke_made_by(&mut tx, org, user).await?;
    let entry = Entry {
        actor: &member_actor(by),
        action: AuditAction::RemoveMember,
        org: Some(org),
        before: serde_json::json!({"user_id": user, "role": role}),
        after: serde_json::json!({"user_id": user, "revoked_api_keys": keys}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Ok(keys))
}

/// Set `user`'s password (its hash) and end every session they opened before `now` (the
/// application's clock, which dates sessions).
pub async fn set_password(db: &PgPool, user: UserId, password_hash: &str, now: DateTime<Utc>) -> sqlx::Result<()> {
    sqlx::query("UPDATE users SET password_hash = $2, sessions_valid_after = $3 WHERE id = $1")
        .bind(user)
        .bind(password_hash)
        .bind(now)
        .execute(db)
        .await?;
    Ok(())
}

/// A password reset for the member with address `email` (if one can sign in): the token for
/// the link, with their name and address. Earlier resets of theirs stop working.
pub async fn start_reset(
    db: &PgPool,
    email: &str,
    valid_for: Duration,
) -> sqlx::Result<Option<(String, String, String)>> {
    let mut tx = db.begin().await?;
    let who: Option<(UserId, String, String)> =
        sqlx::query_as("SELECT id, full_name, email FROM users WHERE lower(email) = lower($1) AND removed_at IS NULL")
            .bind(email)
            .fetch_optional(&mut *tx)
            .await?;
    let Some((user, name, address)) = who else { return Ok(None) };
    sqlx::query("UPDATE password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL")
        .bind(user)
        .execute(&mut *tx)
        .await?;
    let (token, hash) = keys::random_token_and_hash();
    sqlx::query("INSERT INTO password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3)")
        .bind(&hash[..])
        .bind(user)
        .bind(valid_for)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some((token, name, address)))
}

/// Whether `token` is a reset still good (not used, not expired, its member not removed).
pub async fn reset_is_open(db: &PgPool, token: &str) -> sqlx::Result<bool> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM password_resets r JOIN users u ON u.id = r.user_id
                         WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now() AND u.removed_at IS NULL)",
    )
    .bind(&keys::hash(token)[..])
    .fetch_one(db)
    .await
}

/// Use reset `token` to set a new password (its hash): the member's user id, `None` when the
/// token is no good. Every session of theirs opened before `now` ends.
pub async fn finish_reset(
    db: &PgPool,
    token: &str,
    password_hash: &str,
    now: DateTime<Utc>,
) -> sqlx::Result<Option<UserId>> {
    let mut tx = db.begin().await?;
    let user: Option<UserId> = sqlx::query_scalar(
        "UPDATE password_resets r SET used_at = now() FROM users u
          WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now()
            AND u.id = r.user_id AND u.removed_at IS NULL
         RETURNING r.user_id",
    )
    .bind(&keys::hash(token)[..])
    .fetch_optional(&mut *tx)
    .await?;
    let Some(user) = user else { return Ok(None) };
    sqlx::query("UPDATE users SET password_hash = $2, sessions_valid_after = $3 WHERE id = $1")
        .bind(user)
        .bind(password_hash)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(user))
}
