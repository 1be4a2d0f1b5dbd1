//! E-mail to members (invitations, password resets): over SMTP when `TNS_SMTP_URL` is set
//! (lettre, rustls on ring), written to the log in `tns dev` (a laptop has no mail server), and
//! otherwise not at all: a message carrying a link that signs someone in must never land in a
//! production log.

use std::time::Duration;

use lettre::{
    message::{header::ContentType, Mailbox},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use tns_core::env::{ConfigError, Profile, Vars};

/// Where messages go.
#[derive(Clone)]
pub enum Mailer {
    Smtp {
        transport: Box<AsyncSmtpTransport<Tokio1Executor>>,
        from: Box<Mailbox>,
    },
    /// `tns dev`: the message in the log.
    Log,
    /// No way to send: what needs a message says so.
    None,
}

impl std::fmt::Debug for Mailer {
    // The SMTP URL holds a password: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mailer::Smtp { .. } => "Mailer::Smtp",
            Mailer::Log => "Mailer::Log",
            Mailer::None => "Mailer::None",
        })
    }
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum NotSent {
    #[error("this platform sends no e-mail (ask its operators to set TNS_SMTP_URL)")]
    NoMailer,
    #[error("the mail server did not take the message; retry shortly")]
    Refused,
}

impl Mailer {
    /// `TNS_SMTP_URL` (`smtps://user:password@host:465`, or `smtp://…:587?tls=required`;
    /// plain `smtp://host:port` only where `TNS_SMTP_ALLOW_PLAIN` says so) and `TNS_MAIL_FROM`.
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<Mailer, ConfigError> {
        let Some(url) = vars.get("TNS_SMTP_URL") else {
            return Ok(if profile.is_dev() { Mailer::Log } else { Mailer::None });
        };
        let plain = !url.starts_with("smtps://") && !url.contains("tls=required");
        if plain && !vars.parse_bool("TNS_SMTP_ALLOW_PLAIN", profile.is_dev())? {
            return Err(vars.bad(
                "TNS_SMTP_URL",
                "must use TLS (`smtps://…` or `smtp://…?tls=required`): passwords and sign-in links travel in it \
                 (TNS_SMTP_ALLOW_PLAIN=true for a local relay)",
            ));
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&url)
            .map_err(|_| vars.bad("TNS_SMTP_URL", "is not an SMTP URL (`smtps://user:password@host:port`)"))?
            .timeout(Some(Duration::from_secs(10)))
            .build();
        let from = vars
            .get("TNS_MAIL_FROM")
            .unwrap_or_else(|| "TNS <no-reply@localhost>".into())
            .parse::<Mailbox>()
            .map_err(|_| vars.bad("TNS_MAIL_FROM", "is not an address (`TNS <no-reply@example.com>`)"))?;
        Ok(Mailer::Smtp { transport: Box::new(transport), from: Box::new(from) })
    }

    /// Whether messages can be sent at all.
    pub fn sends(&self) -> bool {
        !matches!(self, Mailer::None)
    }

    /// Send `body` (plain text) to `to` under `subject`.
    pub async fn send(&self, to: &str, subject: &str, body: String) -> Result<(), NotSent> {
        match self {
            Mailer::None => Err(NotSent::NoMailer),
            Mailer::Log => {
                tracing::info!(to, subject, body, "e-mail (tns dev writes messages to the log)");
                Ok(())
            }
            Mailer::Smtp { transport, from } => {
                let to: Mailbox = to.parse().map_err(|_| NotSent::Refused)?;
                let message = Message::builder()
                    .from(Mailbox::clone(from))
                    .to(to)
                    .subject(subject)
                    .header(ContentType::TEXT_PLAIN)
                    .body(body)
                    .map_err(|_| NotSent::Refused)?;
                transport.send(message).await.map(|_| ()).map_err(|e| {
                    // The error names the server, never the message (it carries a link).
                    tracing::warn!(error = %e, "the mail server did not take a message");
                    NotSent::Refused
                })
            }
        }
    }
}
