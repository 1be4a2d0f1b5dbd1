//! Webhook subscriptions as requests state them: each field's rule, the request shapes, and
//! the admission of an endpoint (its URL against the operator's policy, its host resolved).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{
    fields::{as_given, field_impls, pattern, string_field, Field, RecordId},
    kinds::EventType,
    Invalid,
};
use crate::{guard, signing};

/// A subscription as sent on create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionIn {
    pub event_type: EventType,
    /// Where deliveries are POSTed: not an internal address.
    pub endpoint_url: EndpointUrl,
    /// Signing secret; generated (`whsec_…`) when left out.
    #[serde(default)]
    pub secret: Option<WebhookSecret>,
}

/// A change of a subscription: any of its fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionPatch {
    /// Reactivate (its failure streak starts afresh) or deactivate (waiting deliveries then
    /// fail): `true` or `false`.
    #[serde(default)]
    pub active: Option<Flag>,
    #[serde(default)]
    pub event_type: Option<EventType>,
    #[serde(default)]
    pub endpoint_url: Option<EndpointUrl>,
}

/// The optional body of a secret rotation.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateSecretIn {
    /// The new secret; generated (`whsec_…`) when left out.
    #[serde(default)]
    pub secret: Option<WebhookSecret>,
}

/// The optional body of a test event.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestEventIn {
    /// Send to this subscription only; without it, to every active subscription.
    #[serde(default)]
    pub subscription_id: Option<RecordId>,
}

impl EndpointUrl {
    /// Who may be called: the well-formed URL (this type's rule), https unless the operator
    /// allows http, whose host is not internal now (DNS is checked again at every delivery).
    /// Answers the URL as stored (normalized). `Err` names `endpoint_url`.
    pub async fn admit(&self, policy: guard::Policy) -> Result<String, Invalid> {
        let refused = |e: guard::Refused| Invalid::new("endpoint_url", e.0);
        let url = guard::parse_endpoint(self.as_str(), policy).map_err(refused)?;
        guard::check_resolves(&url, policy).await.map_err(refused)?;
        stored_form(url)
    }
}

impl WebhookSecret {
    /// The secret the subscriber chose, or a generated `whsec_…` one.
    pub fn or_generated(chosen: Option<WebhookSecret>) -> String {
        chosen.map_or_else(signing::generate_secret, WebhookSecret::into_inner)
    }
}

pattern!(
    /// An http(s) URL: a host name of letter-initial last label or a dotted IPv4 address, an
    /// optional port (0–65535), a path and a query of URL characters; no credentials, no
    /// fragment. Whether the host is internal is checked separately (the SSRF guard).
    URL = concat!(
        r"^https?://(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?",
        r"|(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))",
        r"(?::(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?",
        r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\?[A-Za-z0-9._~!$&()*+,;=:@%/?-]*)?$"
    )
);
/// The longest URL stored (the database's bound, and the SSRF guard's).
const STORED_MAX: usize = 2048;
/// The longest URL taken. Stored normalized, a URL keeps its length but for the `/` a URL
/// without a path gains (the pattern admits only characters normalizing leaves as they are:
/// not `'` in a query, which would become `%27`), so every URL taken fits when stored.
const URL_MAX: usize = STORED_MAX - 1;

/// `url` as stored, within the stored bound (which [`URL_MAX`] keeps it in; refused, never
/// stored over it, should normalizing ever lengthen a URL more).
fn stored_form(url: url::Url) -> Result<String, Invalid> {
    let stored = url.to_string();
    if stored.len() > STORED_MAX {
        return Err(Invalid::new("endpoint_url", format!("must be at most {STORED_MAX} characters once normalized")));
    }
    Ok(stored)
}

string_field! {
    /// A webhook endpoint: an http(s) URL of at most 2047 characters.
    pub struct EndpointUrl as "EndpointUrl" {
        pattern: URL,
        max: Some(URL_MAX),
        error: "must be an http(s) URL of at most 2047 characters: host, optional port, path and query (no `'`); \
                no credentials or fragment",
        normalize: as_given,
        schema: {"description": "An https URL (http only where the operator allows it) without credentials or \
                                 fragment, at most 2047 characters (stored normalized: a URL without a path gains `/`). \
                                 A `'` in the query is written `%27`. Hosts that are or resolve to loopback, private, \
                                 link-local or other internal addresses are refused unless the operator allows them.",
                 "examples": ["https://hooks.acme.com.tr/tns"]},
    }
}

pattern!(
    /// Printable ASCII without spaces.
    SECRET = r"^[ -~]{1,128}$"
);

string_field! {
    /// A signing secret the subscriber chose: 1–128 printable ASCII characters. The API lets the
    /// caller choose it, so no strength is imposed; the document recommends a long random one
    /// (or none: a generated `whsec_` secret of 32 random bytes). Standard Webhooks libraries
    /// verify deliveries only with a `whsec_<base64>` secret (see the signing module).
    pub struct WebhookSecret as "WebhookSecret" {
        pattern: SECRET,
        max: None,
        error: "must be 1–128 printable ASCII characters",
        normalize: as_given,
        schema: {"description": "1–128 printable ASCII characters. Prefer 32 or more random ones, or leave the \
                                 secret out to get a generated `whsec_…` one. Standard Webhooks libraries need the form \
                                 `whsec_` + base64 (the key is the decoded bytes); any other secret keys the \
                                 `webhook-signature` with its own UTF-8 bytes."},
    }
}

/// On or off: a JSON boolean, nothing else (one type, so the document and the parser cannot
/// disagree about what else might pass for one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl Field for Flag {
    fn name() -> Cow<'static, str> {
        "Flag".into()
    }
    fn json_schema() -> Value {
        json!({"type": "boolean", "description": "true or false."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        match v {
            Value::Bool(b) => Ok(Flag(b)),
            other => Err(format!("must be true or false, not {other}")),
        }
    }
}
field_impls!(Flag);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for ok in [
            "https://hooks.acme.com.tr/tns",
            "http://127.0.0.1:8080/hook?x=1",
            "https://a.b/c/d.e?f=g&h=i%20j",
            "http://localhost:65535",
        ] {
            assert!(URL.is_match(ok), "{ok}");
        }
        for bad in [
            "ftp://a.b/",
            "https://user:pw@a.b/",
            "https://a.b/#frag",
            "https://a.b:65536/",
            "https://999.1.1.1/",
            "https://a.123/",
            "HTTPS://a.b/",
            "https://[::1]/",
            "https://a b/",
            "https://a.b/\n",
        ] {
            assert!(!URL.is_match(bad), "{bad}");
        }
    }

    /// Every character the pattern admits in a path or a query is one normalizing keeps as it
    /// is, so a URL grows when stored only by the `/` of an empty path: a URL of the longest
    /// length taken fits the stored bound.
    #[test]
    fn every_url_taken_fits_once_stored() {
        use crate::guard::{parse_endpoint, Policy};
        let stored = |raw: &str| stored_form(parse_endpoint(raw, Policy::OPEN).unwrap());
        for c in (' '..='~').filter(|c| !c.is_ascii_alphanumeric()) {
            for base in ["https://a.b/p", "https://a.b/p?q", "https://a.b?q"] {
                let raw = format!("{base}{c}");
                if URL.is_match(&raw) {
                    let grows = usize::from(base == "https://a.b?q");
                    assert_eq!(stored(&raw).unwrap().len(), raw.len() + grows, "{raw}");
                }
            }
        }
        assert!(!URL.is_match("https://a.b/p?q'"), "a query's `'` would be stored as %27");
        let longest = format!("http://a.b?{}", "q".repeat(URL_MAX - 11));
        assert_eq!(EndpointUrl::parse(&longest).map(|u| u.as_str().len()), Ok(URL_MAX));
        assert_eq!(stored(&longest).map(|s| s.len()), Ok(STORED_MAX));
        assert!(EndpointUrl::parse(&format!("{longest}q")).is_err());
    }

    #[test]
    fn a_flag_is_a_boolean_only() {
        assert_eq!(Flag::from_json(json!(true)), Ok(Flag(true)));
        assert_eq!(Flag::from_json(json!(false)), Ok(Flag(false)));
        for bad in [json!(1), json!(0), json!(1.0), json!("true"), json!(null), json!([true])] {
            assert!(Flag::from_json(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_url_the_pattern_admits_is_one_the_guard_parses() {
        use crate::guard::{parse_endpoint, Policy};
        for ok in ["http://0.0.0.0:0", "https://a-b.c-d.e/~x!$&'()*+,;=:@%zz/", "http://x?/?"] {
            assert!(URL.is_match(ok) && parse_endpoint(ok, Policy::OPEN).is_ok(), "{ok}");
        }
    }
}
