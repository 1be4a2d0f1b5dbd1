//! The form flow of the records a member drafts before submitting them, journeys and cargo
//! shipments: the empty form, the form of a stored one, creating and changing one (as the API's
//! create and whole-record update, each admitted as that call), the form again with what was
//! typed and the API's reason when the member can put it right, and deleting a draft. One set
//! of handlers; what differs by kind (the form's fields, how its values become the API's body,
//! the service functions) is each kind's [`Drafted`].

use std::future::Future;

use axum::{
    extract::State,
    http::{HeaderMap, Method},
    response::{Html, Response},
    Form,
};
use maud::Markup;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tns_core::{
    ids::{OrgId, Target},
    scopes::need::JourneysWrite,
};

use super::{
    forms::Typed,
    member::{admit, Acting, Member},
    page::{go, PortalError},
    records::FormPage,
};
use crate::{auth::Principal, error::ApiError, state::AppState, v1::resource::delete_draft};

/// What the form flow needs to know of one kind of drafted record.
pub(super) trait Drafted: Send + Sync + 'static {
    /// The record's id, from the page's path.
    type Id: Copy + Into<i64> + Into<Target> + DeserializeOwned + Send + Sync + 'static;
    /// Its form's page (where its pages are, and their titles).
    const FORM: FormPage;
    /// The API's collection route and one record's route, whose calls the actions mirror.
    const API: &'static str;
    const API_ONE: &'static str;

    /// What an empty form starts with.
    fn blank() -> Typed {
        Typed::new()
    }
    /// The stored record `id`'s values as its form shows them.
    fn stored(st: &AppState, org: OrgId, id: Self::Id) -> impl Future<Output = Result<Typed, ApiError>> + Send;
    /// The form's fields around what was `typed`, for record `id` (none: a new one), with the
    /// API's `error` beside the field it names or above the form.
    fn form(
        st: &AppState,
        m: &Member<JourneysWrite>,
        id: Option<i64>,
        typed: &Typed,
        error: Option<&ApiError>,
    ) -> impl Future<Output = Result<Markup, PortalError>> + Send;
    /// What was typed, from the posted pairs.
    fn typed(pairs: Vec<(String, String)>) -> Typed;
    /// What was typed as the API's request body; with `clear` (a whole-form update) an
    /// optional field left empty is `null`, so it is removed.
    fn body(typed: &Typed, clear: bool) -> Value;
    /// Create from the body, as the API's create does; the new record's id.
    fn create(st: &AppState, p: &Principal, body: Value) -> impl Future<Output = Result<i64, ApiError>> + Send;
    /// Change record `id` by the body, as the API's update does.
    fn update(
        st: &AppState,
        p: &Principal,
        id: Self::Id,
        body: &Value,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;
    /// Whether an API error is the member's to put right in the form (a field, a rule across
    /// fields, a reference the organization does not have).
    fn correctable(e: &ApiError) -> bool;
}

/// `GET …/new`.
pub(super) async fn new<D: Drafted>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
) -> Result<Html<String>, PortalError> {
    let form = D::form(&st, &m, None, &D::blank(), None).await?;
    Ok(Html(D::FORM.page(&m, None, form)))
}

/// `GET …/{id}/edit`: the form with the record's values.
pub(super) async fn edit<D: Drafted>(a: Acting<JourneysWrite, D::Id>) -> Result<Html<String>, PortalError> {
    let typed = D::stored(&a.st, a.m.org(), a.id).await?;
    let id = Some(a.id.into());
    let form = D::form(&a.st, &a.m, id, &typed, None).await?;
    Ok(Html(D::FORM.page(&a.m, id, form)))
}

/// `POST …`: create, as the API's `POST` of the collection.
pub(super) async fn create<D: Drafted>(
    State(st): State<AppState>,
    m: Member<JourneysWrite>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, D::API).await?;
    let typed = D::typed(pairs);
    let outcome = D::create(&st, m.principal(), D::body(&typed, false)).await;
    answer::<D>(&st, &m, &headers, None, &typed, outcome).await
}

/// `POST …/{id}`: change, as the API's `PUT` of the record with the whole form.
pub(super) async fn update<D: Drafted>(
    a: Acting<JourneysWrite, D::Id>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, PortalError> {
    admit(&a.st, a.m.principal(), Method::PUT, D::API_ONE).await?;
    let typed = D::typed(pairs);
    let outcome = D::update(&a.st, a.m.principal(), a.id, &D::body(&typed, true)).await.map(|()| a.id.into());
    answer::<D>(&a.st, &a.m, &a.headers, Some(a.id.into()), &typed, outcome).await
}

/// `POST …/{id}/delete`: a draft deleted, as the API's `DELETE` of the record.
pub(super) async fn delete<D: Drafted>(a: Acting<JourneysWrite, D::Id>) -> Result<Response, PortalError> {
    admit(&a.st, a.m.principal(), Method::DELETE, D::API_ONE).await?;
    delete_draft(&a.st.db, a.id.into(), a.m.principal()).await?;
    Ok(go(&format!("{}?done=deleted", D::FORM.path), &a.headers))
}

/// Saved: the record's page; or the form again with what was typed and why it was refused.
async fn answer<D: Drafted>(
    st: &AppState,
    m: &Member<JourneysWrite>,
    headers: &HeaderMap,
    id: Option<i64>,
    typed: &Typed,
    outcome: Result<i64, ApiError>,
) -> Result<Response, PortalError> {
    match outcome {
        Ok(saved) => Ok(go(&format!("{}/{saved}?done=saved", D::FORM.path), headers)),
        Err(e) if D::correctable(&e) => {
            let form = D::form(st, m, id, typed, Some(&e)).await?;
            Ok(D::FORM.refused(m, headers, id, e.status(), form))
        }
        Err(e) => Err(e.into()),
    }
}
