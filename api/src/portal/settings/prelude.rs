//! What every settings page imports: the axum extractors and answers, maud, the member and
//! page helpers and the settings' own error helpers, brought in with `use super::prelude::*;`
//! so each page names only what is its own.

pub(super) use std::collections::HashMap;

pub(super) use axum::{
    extract::{Path, Query, State},
    http::{HeaderMap, Method},
    response::{Html, IntoResponse, Response},
    Form,
};
pub(super) use maud::{html, Markup};
pub(super) use serde::Deserialize;
pub(super) use serde_json::json;
pub(super) use tns_core::scopes::{
    need::{AccountRead, AccountWrite},
    Scope,
};

pub(super) use super::{
    alert, changed, correctable, done_is, field_error, form_alert, new_entry_form, settings_page, shown_again,
};
pub(super) use crate::{
    error::ApiError,
    extract::parse_value,
    portal::{
        format,
        i18n::{Lang, Msg},
        member::{admit, Member, SignedIn, Viewing},
        page::{flash, go, table, PortalError},
    },
    state::AppState,
};
