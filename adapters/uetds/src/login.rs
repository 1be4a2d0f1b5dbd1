//! The organization's U-ETDS login, from the credential fields this plugin describes: the
//! environment its account is for, the firm's UNET number and its web-service password.

use tns_adapter::{AdapterError, AdapterResult, CredentialField, Credentials, Environment, Text};

pub(crate) const ENVIRONMENT: &str = "environment";
pub(crate) const USERNAME: &str = "ws_username";
pub(crate) const PASSWORD: &str = "ws_password";
const PASSWORD_PATTERN: &str = "[^\\u0000-\\u001F\\u007F\\uFFFE\\uFFFF]{1,100}";

/// What `PUT /portal/downstream` takes for U-ETDS.
pub(crate) fn fields() -> Vec<CredentialField> {
    vec![
        CredentialField {
            name: ENVIRONMENT.into(),
            title: Text::new("U-ETDS environment", "U-ETDS ortamı"),
            hint: Text::new("test or production", "test ya da production"),
            secret: false,
            choices: vec!["test".into(), "production".into()],
            pattern: None,
            max_len: 10,
        },
        CredentialField {
            name: USERNAME.into(),
            title: Text::new(
                "U-ETDS web-service user name (UNET number)",
                "U-ETDS web servis kullanıcı adı (UNET numarası)",
            ),
            hint: Text::new("must be the firm's UNET number (1–20 digits)", "firmanın UNET numarası (1–20 rakam)"),
            secret: false,
            choices: vec![],
            pattern: Some("[0-9]{1,20}".into()),
            max_len: 20,
        },
        CredentialField {
            name: PASSWORD.into(),
            title: Text::new("U-ETDS web-service password", "U-ETDS web servis parolası"),
            hint: Text::new(
                "1–100 characters without control characters or U+FFFE/U+FFFF; checked with U-ETDS before it is saved, never shown back.",
                "Denetim karakteri ya da U+FFFE/U+FFFF içermeyen 1–100 karakter; kaydetmeden önce U-ETDS'ye sorularak denetlenir, hiçbir zaman geri gösterilmez.",
            ),
            secret: true,
            choices: vec![],
            // What XML (the SOAP body carries it) can: no C0 controls, no U+FFFE/U+FFFF; C1
            // characters pass, U-ETDS may have issued one. Written in the dialect JSON Schema
            // readers share (`\uXXXX`), since the OpenAPI document states it too.
            pattern: Some(PASSWORD_PATTERN.into()),
            max_len: 100,
        },
    ]
}

pub(crate) struct Login<'a> {
    pub(crate) username: &'a str,
    pub(crate) password: &'a str,
    pub(crate) environment: Environment,
}

impl<'a> Login<'a> {
    pub(crate) fn of(c: &'a Credentials) -> AdapterResult<Login<'a>> {
        let missing = |f: &str| AdapterError::Configuration(format!("the U-ETDS credentials lack `{f}`"));
        let environment = match c.get(ENVIRONMENT).ok_or_else(|| missing(ENVIRONMENT))? {
            "test" => Environment::Test,
            "production" => Environment::Production,
            other => return Err(AdapterError::Configuration(format!("`{other}` is not a U-ETDS environment"))),
        };
        Ok(Login {
            username: c.get(USERNAME).ok_or_else(|| missing(USERNAME))?,
            password: c.get(PASSWORD).ok_or_else(|| missing(PASSWORD))?,
            environment,
        })
    }

    /// The user name and password, to mask in any text that leaves the plugin; empty for
    /// credentials that are not a login.
    pub(crate) fn secrets(c: Option<&Credentials>) -> (&str, &str) {
        let get = |f| c.and_then(|c| c.get(f)).unwrap_or("");
        (get(USERNAME), get(PASSWORD))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_carry_only_what_xml_can() {
        let whole = regex::Regex::new(&format!("^(?:{PASSWORD_PATTERN})$")).unwrap();
        assert!(whole.is_match("Şifre-\u{85}-ü"), "XML carries C1 characters; U-ETDS may have issued one");
        for bad in ["pa\u{FFFE}ss", "\u{FFFF}", "tab\there", "nul\u{0}", "del\u{7F}", ""] {
            assert!(!whole.is_match(bad), "{bad:?}");
        }
        assert!(!whole.is_match(&"a".repeat(101)));
        let d = fields();
        assert!(d.iter().all(|f| f.pattern.as_deref().is_none_or(|p| !p.contains("\\x"))), "the shared dialect");
    }
}
