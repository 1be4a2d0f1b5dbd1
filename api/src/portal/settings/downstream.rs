//! Where submissions go: one of the loaded adapters, with the credentials it describes (a form
//! field each), which the API checks with the downstream before saving. A secret is never
//! shown back, only that one is set.

use tns_adapter::Description;

use super::prelude::*;
use crate::v1::endpoints::downstream::{self as api, Downstream, DownstreamIn};

const PATH: &str = "/settings/downstream";

/// What the form sends: `target` (an adapter's name) and each adapter's credential fields as
/// `<adapter>.<field>`, so two adapters' fields of one name do not meet.
pub(crate) type DownstreamForm = Vec<(String, String)>;

fn typed<'a>(form: &'a DownstreamForm, name: &str) -> Option<&'a str> {
    form.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn input_name(adapter: &str, field: &str) -> String {
    format!("{adapter}.{field}")
}

fn input_id(adapter: &str, field: &str) -> String {
    format!("{adapter}-{field}")
}

fn title_of(lang: Lang, d: &Description) -> String {
    match d.title.get(lang.code()) {
        "" => d.name.clone(),
        t => t.to_string(),
    }
}

fn render(
    lang: Lang,
    signed_in: &SignedIn,
    adapters: &[Description],
    current: &Downstream,
    form: Option<&DownstreamForm>,
    error: Option<&ApiError>,
    saved: bool,
) -> String {
    let csrf = &signed_in.csrf;
    let may_change = signed_in.principal.scopes.allows(Scope::AccountWrite);
    let chosen = form.and_then(|f| typed(f, "target")).map(str::to_string).or_else(|| current.adapter.clone());
    // The form's field an API error names: a credential field of the chosen adapter, or the target.
    let named: Option<(String, String)> = match error {
        Some(ApiError::Validation { field, reason }) if field == "adapter" => Some(("target".into(), reason.clone())),
        Some(ApiError::Validation { field, reason }) => chosen.as_deref().map(|a| (input_id(a, field), reason.clone())),
        _ => None,
    };
    let err = |id: &str| named.as_ref().filter(|(n, _)| n == id).map(|(_, r)| r.clone());
    let lang_code = lang.code();
    let current_d = adapters.iter().find(|d| Some(&d.name) == current.adapter.as_ref());
    let body = html! {
        @if saved { (flash(lang.t(Msg::Saved), "ok")) }
        @if current.updated_at.is_none() {
            div.flash.callout role="note" { p { strong { (lang.t(Msg::DownstreamStart)) } } }
        }
        p { (lang.t(Msg::DownstreamIntro)) }
        section.card aria-labelledby="now-h" {
            h2 #now-h { (lang.t(Msg::SubmissionsGoTo)) }
            dl.facts {
                dt { (lang.t(Msg::Target)) }
                dd #current-target {
                    @match current_d { Some(d) => (title_of(lang, d)), None => (current.adapter.clone().unwrap_or_default()) }
                }
                @if let Some(d) = current_d {
                    @for f in &d.credentials {
                        @if f.secret {
                            @if current.secrets_set.contains(&f.name) {
                                dt { (f.title.get(lang_code)) } dd { (lang.t(Msg::PasswordSet)) }
                            }
                        } @else if let Some(v) = current.fields.get(&f.name) {
                            dt { (f.title.get(lang_code)) } dd { (v) }
                        }
                    }
                }
                dt { (lang.t(Msg::LastChanged)) }
                dd { @match current.updated_at { Some(t) => (format::datetime(lang, t)), None => (lang.t(Msg::NotChosenYet)) } }
            }
            // Some downstreams take calls only from the addresses each firm registered there.
            @if !current.secrets_set.is_empty() {
                p { a href=(super::addresses::PATH) { (lang.t(Msg::AllowedAddresses)) } }
            }
            p { a href=(super::preflight::PATH) { (lang.t(Msg::Preflight)) } }
        }
        @if may_change {
            form.record #downstream method="post" action=(PATH) novalidate {
                input type="hidden" name="_csrf" value=(csrf);
                (form_alert(lang, error, named.is_some()))
                @let target_err = err("target");
                fieldset.field aria-invalid=[target_err.as_ref().map(|_| "true")] aria-describedby=[target_err.as_ref().map(|_| "target-error")] {
                    legend { (lang.t(Msg::Target)) }
                    @for d in adapters {
                        @let id = format!("target-{}", d.name);
                        div.choice {
                            input #(id) type="radio" name="target" value=(d.name) checked[chosen.as_deref() == Some(d.name.as_str())] required;
                            " " label for=(id) { (title_of(lang, d)) }
                            @let summary = d.summary.get(lang_code);
                            @if !summary.is_empty() { p.hint { (summary) } }
                        }
                    }
                    (field_error("target", target_err.as_deref()))
                }
                @for d in adapters.iter().filter(|d| !d.credentials.is_empty()) {
                    fieldset.field.credentials data-adapter=(d.name) {
                        legend { (title_of(lang, d)) }
                        @for f in &d.credentials {
                            @let id = input_id(&d.name, &f.name);
                            @let name = input_name(&d.name, &f.name);
                            @let e = err(&id);
                            @let hint_id = format!("{id}-hint");
                            @let described = if e.is_some() { format!("{hint_id} {id}-error") } else { hint_id.clone() };
                            // What was typed, else what is stored; a secret is never filled in.
                            @let value = (!f.secret).then(|| {
                                form.and_then(|t| typed(t, &name)).map(str::to_string).or_else(|| {
                                    (current.adapter.as_deref() == Some(d.name.as_str()))
                                        .then(|| current.fields.get(&f.name).cloned())
                                        .flatten()
                                })
                            }).flatten().unwrap_or_default();
                            div.field {
                                label for=(id) { (f.title.get(lang_code)) }
                                @if !f.choices.is_empty() {
                                    select #(id) name=(name) aria-invalid=[e.as_ref().map(|_| "true")] aria-describedby=(described) {
                                        @for c in &f.choices { option value=(c) selected[&value == c] { (c) } }
                                    }
                                } @else if f.secret {
                                    input #(id) type="password" name=(name) autocomplete="new-password" maxlength=(f.max_len)
                                        aria-invalid=[e.as_ref().map(|_| "true")] aria-describedby=(described);
                                } @else {
                                    input #(id) type="text" name=(name) value=(value) autocomplete="off" maxlength=(f.max_len)
                                        aria-invalid=[e.as_ref().map(|_| "true")] aria-describedby=(described);
                                }
                                p.hint #(hint_id) { (f.hint.get(lang_code)) }
                                (field_error(&id, e.as_deref()))
                            }
                        }
                    }
                }
                div { button type="submit" { (lang.t(Msg::Save)) } }
            }
        }
    };
    settings_page(lang, signed_in, PATH, lang.t(Msg::Downstream), body)
}

/// `GET /settings/downstream`.
pub(crate) async fn show(Viewing { st, m, query: q }: Viewing<AccountRead>) -> Result<Html<String>, PortalError> {
    let current = api::current(&st, m.org()).await?;
    let saved = done_is(&q, "saved");
    let adapters = st.downstreams.registry().descriptions();
    Ok(Html(render(m.lang, &m.signed_in, &adapters, &current, None, None, saved)))
}

/// `POST /settings/downstream`: as `PUT /api/v1/portal/downstream` (the credentials checked
/// with U-ETDS before anything is saved).
pub(crate) async fn save(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<DownstreamForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::PUT, "/portal/downstream").await?;
    let adapters = st.downstreams.registry().descriptions();
    let adapter = typed(&f, "target").unwrap_or_default().to_string();
    let mut body = json!({ "adapter": adapter });
    // Only the chosen adapter's fields: what was typed for another is not sent.
    if let Some(d) = adapters.iter().find(|d| d.name == adapter) {
        for field in &d.credentials {
            match typed(&f, &input_name(&d.name, &field.name)) {
                Some(v) if !v.is_empty() => body[&field.name] = json!(v),
                _ => {}
            }
        }
    }
    let outcome = match parse_value::<DownstreamIn>(body) {
        Ok(input) => api::set(&st, m.principal(), input).await,
        Err(e) => Err(e),
    };
    changed(outcome, &format!("{PATH}?done=saved"), &headers, async |e| {
        let current = api::current(&st, m.org()).await?;
        Ok(render(m.lang, &m.signed_in, &adapters, &current, Some(&f), Some(e), false))
    })
    .await
}
