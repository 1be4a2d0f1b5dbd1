//! Team members: the owner and admins invite people by e-mail address with a role (the link
//! shown once, and e-mailed where the platform sends mail), change a member's role and remove
//! members; the one invited accepts with a name and a password and is signed in. What a role
//! may do is a set of the API's scopes (`Scopes::of_role`), which their sessions carry.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
    Form,
};
use chrono::Duration;
use maud::{html, Markup};
use serde::Deserialize;
use tns_core::{
    domain::{kinds::Role, Email, Password},
    ids::UserId,
    scopes::need::AccountWrite,
};
use tns_store::members::{self, NotAccepted, NotChanged, NotInvited};

use super::{
    format,
    i18n::{Lang, Msg},
    member::Member,
    page::{flash, page, PortalError, Shell},
};
use crate::{
    auth::password,
    error::{ApiError, Code},
    state::AppState,
};

/// How long an invitation may be accepted.
const INVITATION_DAYS: i64 = 7;

const ROLES: [Role; 3] = [Role::Admin, Role::Dispatcher, Role::Viewer];

pub(super) fn role_label(lang: Lang, r: Role) -> &'static str {
    lang.t(match r {
        Role::Owner => Msg::RoleOwner,
        Role::Admin => Msg::RoleAdmin,
        Role::Dispatcher => Msg::RoleDispatcher,
        Role::Viewer => Msg::RoleViewer,
    })
}

/// The caller's own role (the page shows only what it may do).
async fn my_role(st: &AppState, m: &Member<AccountWrite>) -> Result<Role, PortalError> {
    let me = st.keys.member_of(&st.db, m.org(), m.principal().user_id).await?.ok_or(PortalError::SignIn)?;
    Ok(me.role)
}

/// `GET /settings/team`.
pub(super) async fn show(State(st): State<AppState>, m: Member<AccountWrite>) -> Result<Html<String>, PortalError> {
    Ok(Html(render(&st, &m, None).await?))
}

async fn render(st: &AppState, m: &Member<AccountWrite>, notice: Option<Markup>) -> Result<String, PortalError> {
    let lang = m.lang;
    let mine = my_role(st, m).await?;
    let people = members::list(&st.db, m.org()).await?;
    let invited = members::open_invitations(&st.db, m.org()).await?;
    let csrf = &m.signed_in.csrf;
    let shell = Shell { lang, signed_in: Some(&m.signed_in), path: "/settings/team" };
    let body = html! {
        (super::settings::nav(lang, m.principal().scopes, "/settings/team"))
        h1 { (lang.t(Msg::Team)) }
        @if let Some(n) = notice { (n) }
        div.table-wrap {
            table {
                caption.sr-only { (lang.t(Msg::Team)) }
                thead { tr { th scope="col" { (lang.t(Msg::Name)) } th scope="col" { (lang.t(Msg::Email)) } th scope="col" { (lang.t(Msg::Role)) } th scope="col" { (lang.t(Msg::Actions)) } } }
                tbody {
                    @for p in &people {
                        tr {
                            td { (p.full_name) }
                            td { (p.email) }
                            td { (role_label(lang, p.role)) }
                            td {
                                @if p.user_id != m.principal().user_id && mine.manages(p.role) {
                                    form.inline method="post" action=(format!("/settings/team/{}/role", p.user_id)) {
                                        input type="hidden" name="_csrf" value=(csrf);
                                        label.sr-only for=(format!("role-{}", p.user_id)) { (lang.t(Msg::Role)) " — " (p.full_name) }
                                        select #(format!("role-{}", p.user_id)) name="role" {
                                            @for r in ROLES.iter().filter(|r| mine.manages(**r)) {
                                                option value=(r.as_str()) selected[*r == p.role] { (role_label(lang, *r)) }
                                            }
                                        }
                                        " " button.secondary type="submit" { (lang.t(Msg::Save)) }
                                    }
                                    " "
                                    form.inline method="post" action=(format!("/settings/team/{}/remove", p.user_id)) hx-confirm=(lang.t(Msg::ConfirmRemove)) {
                                        input type="hidden" name="_csrf" value=(csrf);
                                        button.danger type="submit" { (lang.t(Msg::Remove)) span.sr-only { " " (p.full_name) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !invited.is_empty() {
            h2 { (lang.t(Msg::OpenInvitations)) }
            ul {
                @for i in &invited {
                    li {
                        (i.email) " — " (role_label(lang, i.role)) " — " (lang.t(Msg::Until)) " " (format::datetime(lang, i.expires_at))
                        @if mine.manages(i.role) {
                            " "
                            form.inline method="post" action=(format!("/settings/team/invitations/{}/revoke", i.id)) {
                                input type="hidden" name="_csrf" value=(csrf);
                                button.secondary type="submit" { (lang.t(Msg::Revoke)) span.sr-only { " " (i.email) } }
                            }
                        }
                    }
                }
            }
        }
        h2 #invite-h { (lang.t(Msg::Invite)) }
        form.record method="post" action="/settings/team/invite" aria-labelledby="invite-h" {
            input type="hidden" name="_csrf" value=(csrf);
            div.field {
                label for="invite-email" { (lang.t(Msg::Email)) }
                input #invite-email type="email" name="email" required autocomplete="off";
            }
            div.field {
                label for="invite-role" { (lang.t(Msg::Role)) }
                select #invite-role name="role" {
                    @for r in ROLES.iter().filter(|r| mine.manages(**r)) { option value=(r.as_str()) { (role_label(lang, *r)) } }
                }
                p.hint { (lang.t(Msg::RolesExplained)) }
            }
            div { button type="submit" { (lang.t(Msg::Invite)) } }
        }
    };
    Ok(page(&shell, lang.t(Msg::Team), body).into_string())
}

#[derive(Deserialize)]
pub(super) struct InviteForm {
    email: String,
    role: String,
}

fn parse_role(s: &str) -> Result<Role, PortalError> {
    Role::parse(s).ok_or_else(|| PortalError::Api(ApiError::validation("role", "is not a role")))
}

/// `POST /settings/team/invite`: the link shown once (and e-mailed where mail is sent).
pub(super) async fn invite(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    Form(f): Form<InviteForm>,
) -> Result<Response, PortalError> {
    let lang = m.lang;
    st.quota.refuse_if_suspended(m.org()).await?;
    let role = parse_role(&f.role)?;
    if !my_role(&st, &m).await?.manages(role) {
        return Err(PortalError::Api(ApiError::Forbidden(Code::Forbidden, "your role cannot invite that role".into())));
    }
    let email = Email::parse(f.email.trim()).map_err(|r| PortalError::Api(ApiError::validation("email", r)))?;
    let made =
        members::invite(&st.db, m.org(), m.principal().user_id, &email, role, Duration::days(INVITATION_DAYS)).await?;
    let (_, token) = match made {
        Ok(made) => made,
        Err(NotInvited::HasAccount) => {
            let notice = flash(lang.t(Msg::AlreadyHasAccount), "error");
            return Ok((StatusCode::CONFLICT, Html(render(&st, &m, Some(notice)).await?)).into_response());
        }
    };
    let path = format!("/invite/{token}");
    let link = match &st.cfg.public_url {
        Some(base) => format!("{base}{path}"),
        None => path,
    };
    let mailed = if st.cfg.mailer.sends() && st.cfg.public_url.is_some() {
        let body =
            format!("{}\n\n{link}\n\n{} {INVITATION_DAYS}.", lang.t(Msg::InvitationMail), lang.t(Msg::LinkValidDays));
        st.cfg.mailer.send(email.as_str(), lang.t(Msg::InvitationSubject), body).await.is_ok()
    } else {
        false
    };
    let notice = html! {
        div.flash.ok role="status" {
            p { (lang.t(Msg::InvitationMade)) @if mailed { " " (lang.t(Msg::InvitationMailed)) } }
            p { (lang.t(Msg::ShownOnce)) }
            p { code { (link) } }
        }
    };
    Ok(Html(render(&st, &m, Some(notice)).await?).into_response())
}

#[derive(Deserialize)]
pub(super) struct RoleForm {
    role: String,
}

fn not_changed(e: NotChanged) -> PortalError {
    PortalError::Api(match e {
        NotChanged::NoSuchMember => ApiError::NotFound("no such member".into()),
        NotChanged::NotYours => ApiError::Forbidden(Code::Forbidden, "your role cannot change that member".into()),
    })
}

/// `POST /settings/team/{user}/role`.
pub(super) async fn set_role(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    Path(user): Path<UserId>,
    Form(f): Form<RoleForm>,
) -> Result<Response, PortalError> {
    st.quota.refuse_if_suspended(m.org()).await?;
    let role = parse_role(&f.role)?;
    members::set_role(&st.db, m.org(), m.principal().user_id, user, role).await?.map_err(not_changed)?;
    st.keys.forget_member(user);
    Ok(Redirect::to("/settings/team").into_response())
}

/// `POST /settings/team/{user}/remove`: signed out everywhere, their API keys revoked.
pub(super) async fn remove(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    Path(user): Path<UserId>,
) -> Result<Response, PortalError> {
    let revoked = members::remove(&st.db, m.org(), m.principal().user_id, user, chrono::Utc::now())
        .await?
        .map_err(not_changed)?;
    st.keys.forget_member(user);
    for key in revoked {
        st.keys.forget(key);
    }
    Ok(Redirect::to("/settings/team").into_response())
}

/// `POST /settings/team/invitations/{id}/revoke`.
pub(super) async fn revoke(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    Path(id): Path<i64>,
) -> Result<Response, PortalError> {
    if !members::revoke_invitation(&st.db, m.org(), m.principal().user_id, id).await? {
        return Err(ApiError::not_found("invitation", id).into());
    }
    Ok(Redirect::to("/settings/team").into_response())
}

/// `GET /invite/{token}`: who invites, and a form for a name and a password.
pub(super) async fn welcome(
    State(st): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, PortalError> {
    let lang = Lang::of(&headers);
    let Some(w) = members::welcome(&st.db, &token).await? else {
        return Ok(gone(lang));
    };
    Ok(Html(welcome_page(lang, &token, &w, "", None)).into_response())
}

fn gone(lang: Lang) -> Response {
    let shell = Shell { lang, signed_in: None, path: "/invite" };
    let body = html! { h1 { (lang.t(Msg::InvitationGone)) } p { a href="/login" { (lang.t(Msg::SignIn)) } } };
    (StatusCode::NOT_FOUND, Html(page(&shell, lang.t(Msg::InvitationGone), body).into_string())).into_response()
}

fn welcome_page(lang: Lang, token: &str, w: &members::Welcome, name: &str, error: Option<(&str, &str)>) -> String {
    let shell = Shell { lang, signed_in: None, path: "/invite" };
    let err = |field: &str| error.filter(|(f, _)| *f == field).map(|(_, r)| r.to_string());
    let body = html! {
        div.signin.card {
            h1 { (lang.t(Msg::JoinTitle)) " " (w.organization) }
            p { (w.email) " — " (role_label(lang, w.role)) }
            form.record method="post" action=(format!("/invite/{token}")) {
                div.field {
                    label for="full_name" { (lang.t(Msg::Name)) }
                    input #full_name type="text" name="full_name" value=(name) required autocomplete="name" maxlength="200"
                        aria-invalid=[err("full_name").map(|_| "true")] aria-describedby=[err("full_name").map(|_| "full_name-error")];
                    @if let Some(e) = err("full_name") { p.error-text #full_name-error { (e) } }
                }
                div.field {
                    label for="password" { (lang.t(Msg::NewPassword)) }
                    input #password type="password" name="password" required autocomplete="new-password" minlength="8"
                        aria-invalid=[err("password").map(|_| "true")] aria-describedby=[err("password").map(|_| "password-error")];
                    @if let Some(e) = err("password") { p.error-text #password-error { (e) } }
                }
                div { button type="submit" { (lang.t(Msg::Join)) } }
            }
        }
    };
    page(&shell, lang.t(Msg::JoinTitle), body).into_string()
}

#[derive(Deserialize)]
pub(super) struct JoinForm {
    full_name: String,
    password: String,
}

/// `POST /invite/{token}`: a member, signed in.
pub(super) async fn accept(
    State(st): State<AppState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    Form(f): Form<JoinForm>,
) -> Result<Response, PortalError> {
    let lang = Lang::of(&headers);
    let Some(w) = members::welcome(&st.db, &token).await? else { return Ok(gone(lang)) };
    let name = f.full_name.trim();
    let refused = |field: &str, reason: &str| {
        (StatusCode::UNPROCESSABLE_ENTITY, Html(welcome_page(lang, &token, &w, name, Some((field, reason)))))
            .into_response()
    };
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Ok(refused("full_name", "must be 1 to 200 characters, without control characters"));
    }
    let password = match Password::parse(f.password) {
        Ok(p) => p,
        Err(reason) => return Ok(refused("password", &reason)),
    };
    let hash = password::hash(password).await?;
    let (org, user) = match members::accept(&st.db, &token, name, &hash).await? {
        Ok(made) => made,
        Err(NotAccepted::Gone) => return Ok(gone(lang)),
        Err(NotAccepted::HasAccount) => return Ok(refused("full_name", lang.t(Msg::AlreadyHasAccount))),
    };
    super::signin::open_session(&st, user, org, Redirect::to("/dashboard").into_response()).await
}
