//! The operators' surfaces, for platform staff (not tenants): the commands of `tns admin`, and
//! the admin HTTP API ([`http`], `/admin/v1` on a listener of its own, authenticated by
//! hashed, scoped operator tokens). The commands act on the database directly, with the
//! deployment's own configuration, so only whoever can run the binary with it (a shell in a
//! pod, a CI job) can use them. Every change is written to the audit log with the operator's
//! name, in the change's own transaction; a change of standing is published to every API
//! process at once. Both surfaces share what they do ([`ops`]).
//!
//! ```text
//! tns admin orgs [--search TEXT] [--status trial|active|suspended|closed] [--limit N]
//! tns admin set-status ORG trial|active|suspended --reason TEXT [--operator NAME]
//! tns admin plan ORG PLAN_CODE --reason TEXT [--operator NAME]
//! tns admin submission ORG ID --reason TEXT [--operator NAME]
//! tns admin requeue ORG --reason TEXT [--operator NAME]
//! tns admin resolve ORG ID found REFERENCE|absent --reason TEXT [--operator NAME]
//! tns admin invoice ID paid|void --reason TEXT [--operator NAME]
//! tns admin audit [--org ORG] [--limit N]
//! tns admin token create NAME --scope read,write[,personal-data] [--operator NAME]
//! tns admin token list
//! tns admin token revoke ID [--operator NAME]
//! ```
//!
//! Output is one JSON object per line.

pub mod answers;
pub mod http;
pub mod ops;

use std::io::Write;

use anyhow::{anyhow, bail};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use sqlx::PgPool;
use tns_core::{
    domain::{
        fields::{Text100, Text500},
        kinds::{InvoiceStatus, OrgStatus},
    },
    env::RedisSettings,
    ids::{InvoiceId, OperatorTokenId},
    scopes::operator::OperatorScope,
};
use tns_store::{audit::Actor, submissions::resolve::Resolution};

use answers::{LoggedOut, OperatorTokenOut, OrgSummaryOut};

/// Why operators may not close an organization: closing starts its erasure, which is the
/// owner's decision (an operator suspends instead; setting another status reopens a closed one).
pub const CLOSING_IS_THE_OWNERS: &str =
    "closing an organization is its owner's decision (POST /api/v1/portal/closure): suspend it instead";

/// Most rows one listing prints.
pub const MAX_LIMIT: i64 = 1000;

/// Rows a listing prints unless told.
pub const DEFAULT_LIMIT: i64 = 100;

/// Rows a listing gives: the rule of `--limit` and of the admin API's `limit`.
pub fn parse_limit(v: &str) -> Result<i64, String> {
    v.parse()
        .ok()
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .ok_or_else(|| format!("must be a whole number from 1 to {MAX_LIMIT}"))
}

/// A parsed command line.
#[derive(Debug, PartialEq)]
pub enum Command {
    Orgs {
        search: Option<String>,
        status: Option<OrgStatus>,
        limit: i64,
    },
    SetStatus {
        org: i64,
        to: OrgStatus,
        reason: String,
        operator: String,
    },
    Plan {
        org: i64,
        code: String,
        reason: String,
        operator: String,
    },
    Submission {
        org: i64,
        id: i64,
        reason: String,
        operator: String,
    },
    Requeue {
        org: i64,
        reason: String,
        operator: String,
    },
    Resolve {
        org: i64,
        id: i64,
        resolution: Resolution,
        reason: String,
        operator: String,
    },
    Invoice {
        id: InvoiceId,
        to: InvoiceStatus,
        reason: String,
        operator: String,
    },
    Audit {
        org: Option<i64>,
        limit: i64,
    },
    TokenCreate {
        name: String,
        scopes: Vec<OperatorScope>,
        operator: String,
    },
    TokenList,
    TokenRevoke {
        id: OperatorTokenId,
        operator: String,
    },
    /// `--help` for a command: its help, printed.
    Help(String),
}

/// `tns admin`'s command line, as clap parses it; [`Command::parse`] turns it into a
/// [`Command`]. Its help is the commands' documentation (`tns admin --help`).
#[derive(Debug, Parser)]
#[command(
    name = "tns admin",
    about = "The operators' commands: each change is audited as --operator (else $USER) with --reason.",
    disable_help_subcommand = true
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// Who acts and why: every change is audited with both.
#[derive(Debug, Args)]
struct Why {
    /// Why (the audit log keeps it; at most 500 characters).
    #[arg(long, value_parser = reason, allow_hyphen_values = true)]
    reason: String,
    /// Who you are, as the audit log names you (default: $USER).
    #[arg(long)]
    operator: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Organizations (name, tax number or owner's e-mail containing TEXT), newest first, with
    /// plan, status, this month's calls, queued submissions and whether another organization
    /// shares its tax number (registered before one organization per tax number was the rule).
    Orgs {
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        search: Option<String>,
        /// trial, active, suspended or closed.
        #[arg(long, value_parser = status)]
        status: Option<OrgStatus>,
        #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT, value_parser = limit)]
        limit: i64,
    },
    /// Change an organization's status (effective at once on every API process): trial, active
    /// or suspended (closing is its owner's).
    SetStatus {
        org: i64,
        #[arg(value_parser = settable_status)]
        status: OrgStatus,
        #[command(flatten)]
        why: Why,
    },
    /// Move an organization to a plan (its quota changes at once; a trial ends).
    Plan {
        org: i64,
        plan_code: String,
        #[command(flatten)]
        why: Why,
    },
    /// A submission as it was sent (personal data unmasked; the look is audited), with its
    /// attempts.
    Submission {
        org: i64,
        id: i64,
        #[command(flatten)]
        why: Why,
    },
    /// Queue again, as they were sent, the organization's failed submissions (each record's
    /// latest).
    Requeue {
        org: i64,
        #[command(flatten)]
        why: Why,
    },
    /// Settle a submission whose outcome downstream is unknown: `found REFERENCE`, held there
    /// under REFERENCE (it carries on from it once confirmed), or `absent` (it is sent as new).
    Resolve {
        org: i64,
        id: i64,
        #[arg(value_enum)]
        outcome: Outcome,
        #[arg(allow_hyphen_values = true)]
        reference: Option<String>,
        #[command(flatten)]
        why: Why,
    },
    /// Record an open invoice as paid (or void it); an organization suspended for overdue
    /// invoices is reactivated when none is left.
    Invoice {
        id: i64,
        #[arg(value_enum)]
        to: Settle,
        #[command(flatten)]
        why: Why,
    },
    /// The audit log, newest first.
    Audit {
        #[arg(long)]
        org: Option<i64>,
        #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT, value_parser = limit)]
        limit: i64,
    },
    /// The admin API's operator tokens.
    #[command(subcommand)]
    Token(TokenCmd),
}

#[derive(Debug, Subcommand)]
enum TokenCmd {
    /// A token of the admin API for operator NAME (printed once: only its hash is kept).
    Create {
        #[arg(value_parser = token_name)]
        name: String,
        /// read, write and personal-data, comma-separated.
        #[arg(long, value_parser = operator_scopes)]
        scope: Scopes,
        #[arg(long)]
        operator: Option<String>,
    },
    /// The tokens (never the tokens themselves).
    List,
    /// Refuse a token from its next request on.
    Revoke {
        id: i64,
        #[arg(long)]
        operator: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Outcome {
    Found,
    Absent,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Settle {
    Paid,
    Void,
}

/// Operator scopes, each once.
#[derive(Debug, Clone)]
struct Scopes(Vec<OperatorScope>);

/// `tns admin --help`.
pub fn usage() -> String {
    Cli::command().render_help().to_string()
}

fn limit(v: &str) -> Result<i64, String> {
    parse_limit(v)
}

fn status(v: &str) -> Result<OrgStatus, String> {
    OrgStatus::parse(v).ok_or_else(|| "status must be one of trial, active, suspended, closed".into())
}

fn settable_status(v: &str) -> Result<OrgStatus, String> {
    match status(v)? {
        OrgStatus::Closed => Err(CLOSING_IS_THE_OWNERS.into()),
        s => Ok(s),
    }
}

/// The admin API's rule, so a reason is stored alike whichever surface took it.
fn reason(v: &str) -> Result<String, String> {
    if v.trim().is_empty() {
        return Err("say why (the audit log keeps it)".into());
    }
    Text500::parse(v).map(Text500::into_inner).map_err(|e| e.to_string())
}

/// A token's name stands in the audit log as `operator:<name>`.
fn token_name(v: &str) -> Result<String, String> {
    Text100::parse(v).map(Text100::into_inner).map_err(|e| format!("NAME {e}"))
}

/// `read,write`: the scopes named, each once.
fn operator_scopes(list: &str) -> Result<Scopes, String> {
    let mut scopes = vec![];
    for name in list.split(',').map(str::trim) {
        let scope = OperatorScope::parse(name)
            .ok_or_else(|| format!("--scope takes read, write and personal-data, comma-separated; got `{name}`"))?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    Ok(Scopes(scopes))
}

impl Command {
    /// Parse `tns admin`'s arguments (after `admin`); `user` is `$USER`, the operator when
    /// `--operator` is not given. The error says what is wrong, with the usage line.
    pub fn parse(args: &[String], user: Option<String>) -> anyhow::Result<Command> {
        let cli = match Cli::try_parse_from(std::iter::once("tns admin").chain(args.iter().map(String::as_str))) {
            Ok(cli) => cli,
            Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
                return Ok(Command::Help(e.render().to_string()))
            }
            Err(e) => bail!("{}", e.render().to_string().trim_end()),
        };
        let operator = |given: Option<String>| -> anyhow::Result<String> {
            let operator = given.or(user.clone()).filter(|o| !o.trim().is_empty());
            operator.ok_or_else(|| anyhow!("say who you are: --operator NAME"))
        };
        Ok(match cli.command {
            Cmd::Orgs { search, status, limit } => Command::Orgs { search, status, limit },
            Cmd::SetStatus { org, status, why } => {
                Command::SetStatus { org, to: status, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Plan { org, plan_code, why } => {
                Command::Plan { org, code: plan_code, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Submission { org, id, why } => {
                Command::Submission { org, id, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Requeue { org, why } => {
                Command::Requeue { org, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Resolve { org, id, outcome, reference, why } => {
                let resolution = match (outcome, reference) {
                    (Outcome::Found, Some(r)) => {
                        Resolution::Found(Text100::parse(&r).map_err(|e| anyhow!("REFERENCE {e}"))?.into_inner())
                    }
                    (Outcome::Absent, None) => Resolution::Absent,
                    _ => bail!("resolve takes ORG ID found REFERENCE, or ORG ID absent"),
                };
                Command::Resolve { org, id, resolution, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Invoice { id, to, why } => {
                let to = match to {
                    Settle::Paid => InvoiceStatus::Paid,
                    Settle::Void => InvoiceStatus::Void,
                };
                Command::Invoice { id: InvoiceId(id), to, operator: operator(why.operator)?, reason: why.reason }
            }
            Cmd::Audit { org, limit } => Command::Audit { org, limit },
            Cmd::Token(TokenCmd::Create { name, scope, operator: given }) => {
                Command::TokenCreate { name, scopes: scope.0, operator: operator(given)? }
            }
            Cmd::Token(TokenCmd::List) => Command::TokenList,
            Cmd::Token(TokenCmd::Revoke { id, operator: given }) => {
                Command::TokenRevoke { id: OperatorTokenId(id), operator: operator(given)? }
            }
        })
    }
}

/// Run `command`, printing its result to `out`.
pub async fn run(command: Command, db: &PgPool, redis: &RedisSettings, out: &mut impl Write) -> anyhow::Result<()> {
    let no_org = |org: i64| anyhow!("no organization {org}");
    match command {
        Command::Help(text) => write!(out, "{text}")?,
        Command::Orgs { search, status, limit } => {
            for org in tns_store::accounts::search(db, search.as_deref(), status, limit).await? {
                writeln!(out, "{}", serde_json::to_string(&OrgSummaryOut::from(org))?)?;
            }
        }
        Command::SetStatus { org, to, reason, operator } => {
            let changed = ops::set_status(db, redis, &Actor::Operator(operator), org, to, &reason).await?;
            print_change(out, changed.ok_or_else(|| no_org(org))?)?;
        }
        Command::Plan { org, code, reason, operator } => {
            if !tns_store::billing::plans::exists(db, &code).await? {
                bail!("no plan `{code}`");
            }
            let changed = ops::change_plan(db, redis, &Actor::Operator(operator), org, &code, &reason).await?;
            print_change(out, changed.ok_or_else(|| no_org(org))?)?;
        }
        Command::Submission { org, id, reason, operator } => {
            let sent = ops::submission_sent(db, &Actor::Operator(operator), org, id, &reason).await?;
            let sent = sent.ok_or_else(|| anyhow!("organization {org} has no submission {id}"))?;
            writeln!(out, "{}", serde_json::to_string(&sent)?)?;
        }
        Command::Requeue { org, reason, operator } => {
            let requeued = ops::requeue(db, &Actor::Operator(operator), org, &reason).await?;
            writeln!(out, "{}", serde_json::to_string(&requeued.ok_or_else(|| no_org(org))?)?)?;
        }
        Command::Resolve { org, id, resolution, reason, operator } => {
            match ops::resolve(db, &Actor::Operator(operator), org, id, &resolution, &reason).await? {
                Ok(resolved) => writeln!(out, "{}", serde_json::to_string(&resolved)?)?,
                Err(e) => bail!("{e}"),
            }
        }
        Command::Invoice { id, to, reason, operator } => {
            match ops::settle_invoice(db, redis, &Actor::Operator(operator), id, to, &reason).await? {
                Ok(settled) => {
                    writeln!(out, "{}", serde_json::to_string(&settled)?)?;
                    if !settled.published {
                        bail!(ops::UNPUBLISHED);
                    }
                }
                Err(ops::NotSettled::NoSuchInvoice) => bail!("no invoice {id}"),
                Err(e) => bail!("invoice {id}: {e}"),
            }
        }
        Command::Audit { org, limit } => {
            for entry in tns_store::audit::list(db, org, limit).await? {
                writeln!(out, "{}", serde_json::to_string(&LoggedOut::from(entry))?)?;
            }
        }
        Command::TokenCreate { name, scopes, operator } => {
            let (token, secret) =
                tns_store::operator_tokens::create(db, &Actor::Operator(operator), &name, &scopes).await?;
            let mut shown = serde_json::to_value(OperatorTokenOut::from(token))?;
            // The only time the token is shown: nothing keeps it.
            shown["token"] = secret.into();
            writeln!(out, "{shown}")?;
        }
        Command::TokenList => {
            for token in tns_store::operator_tokens::list(db).await? {
                writeln!(out, "{}", serde_json::to_string(&OperatorTokenOut::from(token))?)?;
            }
        }
        Command::TokenRevoke { id, operator } => {
            let token = tns_store::operator_tokens::revoke(db, &Actor::Operator(operator), id).await?;
            let token = token.ok_or_else(|| anyhow!("no operator token {id}"))?;
            writeln!(out, "{}", serde_json::to_string(&OperatorTokenOut::from(token))?)?;
        }
    }
    Ok(())
}

/// Print a change; one the API processes could not be told of at once fails the command after.
fn print_change(out: &mut impl Write, changed: ops::Changed) -> anyhow::Result<()> {
    writeln!(out, "{}", serde_json::to_string(&changed)?)?;
    if !changed.published {
        bail!(ops::UNPUBLISHED);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &str, user: Option<&str>) -> anyhow::Result<Command> {
        let args: Vec<String> = args.split(' ').map(String::from).collect();
        Command::parse(&args, user.map(String::from))
    }

    #[test]
    fn commands_parse_and_bad_ones_say_what_is_wrong() {
        assert_eq!(
            parse("set-status 7 suspended --reason abuse", Some("ayse")).unwrap(),
            Command::SetStatus { org: 7, to: OrgStatus::Suspended, reason: "abuse".into(), operator: "ayse".into() }
        );
        let c = parse("set-status 7 active --reason paid --operator mehmet", Some("ayse")).unwrap();
        assert!(matches!(c, Command::SetStatus { operator, .. } if operator == "mehmet"));
        assert_eq!(
            parse("orgs --status trial --limit 5", None).unwrap(),
            Command::Orgs { search: None, status: Some(OrgStatus::Trial), limit: 5 }
        );
        assert_eq!(
            parse("requeue 7 --reason outage", Some("ayse")).unwrap(),
            Command::Requeue { org: 7, reason: "outage".into(), operator: "ayse".into() }
        );
        assert_eq!(
            parse("resolve 7 12 found 26120146388434 --reason checked", Some("ayse")).unwrap(),
            Command::Resolve {
                org: 7,
                id: 12,
                resolution: Resolution::Found("26120146388434".into()),
                reason: "checked".into(),
                operator: "ayse".into()
            }
        );
        assert!(matches!(
            parse("resolve 7 12 absent --reason checked", Some("ayse")).unwrap(),
            Command::Resolve { resolution: Resolution::Absent, .. }
        ));
        assert_eq!(
            parse("token create deniz --scope write,read,write --operator ayse", None).unwrap(),
            Command::TokenCreate {
                name: "deniz".into(),
                scopes: vec![OperatorScope::Write, OperatorScope::Read],
                operator: "ayse".into()
            }
        );
        assert_eq!(parse("token list", None).unwrap(), Command::TokenList);
        assert!(matches!(parse("orgs --help", None).unwrap(), Command::Help(h) if h.contains("--search <TEXT>")));
        assert_eq!(
            parse("token revoke 3", Some("ayse")).unwrap(),
            Command::TokenRevoke { id: OperatorTokenId(3), operator: "ayse".into() }
        );
        for (bad, says) in [
            ("set-status 7 suspended", "--reason"),
            ("set-status 7 suspended --reason x", "--operator"),
            ("set-status x suspended --reason x --operator a", "<ORG>"),
            ("set-status 7 gone --reason x --operator a", "status must be one of"),
            ("set-status 7 closed --reason x --operator a", "owner's decision"),
            ("orgs --limit 0", "--limit"),
            ("orgs --colour red", "--colour"),
            ("audit --org", "--org"),
            ("nope", "nope"),
            ("invoice 7 refunded --reason x --operator a", "possible values: paid, void"),
            ("invoice x paid --reason x --operator a", "<ID>"),
            ("invoice 7 paid --operator a", "--reason"),
            ("invoice 7 paid --reason x --operator a --limit 3", "--limit"),
            ("requeue 7 --operator a", "--reason"),
            ("requeue --reason x --operator a", "<ORG>"),
            ("resolve 7 12 found --reason x --operator a", "resolve takes"),
            ("resolve 7 12 absent 123 --reason x --operator a", "resolve takes"),
            ("resolve 7 12 maybe --reason x --operator a", "possible values: found, absent"),
            ("resolve 7 x absent --reason x --operator a", "<ID>"),
            ("resolve 7 12 absent --operator a", "--reason"),
            ("token create ayse --operator a", "--scope"),
            ("token create ayse --scope read,root --operator a", "--scope takes"),
            ("token create ayse --scope read", "--operator"),
            ("token revoke x --operator a", "<ID>"),
            ("token list extra", "extra"),
            ("token create \u{7} --scope read --operator a", "NAME must be"),
            ("token", "tns admin token <COMMAND>"),
        ] {
            let e = parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
