//! `GET /portal/me`: who is calling.

use axum::{extract::State, Json};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{
    auth::Auth,
    db::{self, accounts::Organization, accounts::User, plans::Subscription},
    error::{ApiError, ApiResult, ErrorBody},
    state::AppState,
};

#[derive(Serialize, ToSchema)]
pub struct MeOut {
    user: User,
    organization: Organization,
    subscription: Subscription,
}

/// The caller's user, organization and subscription. Needs no particular scope.
#[utoipa::path(get, path = "/portal/me", tag = "account",
    responses((status = 200, body = MeOut), (status = 401, body = ErrorBody)), security(("bearer" = []), ("session" = [])))]
pub async fn me(State(st): State<AppState>, Auth(p): Auth) -> ApiResult<Json<MeOut>> {
    let gone =
        || ApiError::Unauthorized("the account behind these credentials no longer exists".into());
    let (user, organization, subscription) = tokio::try_join!(
        db::accounts::user(&st.db, p.org_id, p.user_id),
        db::accounts::organization(&st.db, p.org_id),
        db::plans::subscription(&st.db, p.org_id),
    )?;
    Ok(Json(MeOut {
        user: user.ok_or_else(gone)?,
        organization: organization.ok_or_else(gone)?,
        subscription: subscription.ok_or_else(gone)?,
    }))
}
