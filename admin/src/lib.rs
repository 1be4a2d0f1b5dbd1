//! `tns admin`: the operators' commands, for platform staff (not tenants). They act on the
//! database directly, with the deployment's own configuration, so only whoever can run the
//! binary with it (a shell in a pod, a CI job) can use them. Every change is written to the
//! audit log with the operator's name, in the change's own transaction; a change of standing
//! is published to every API process at once.
//!
//! ```text
//! tns admin orgs [--search TEXT] [--status trial|active|suspended] [--limit N]
//! tns admin set-status ORG trial|active|suspended --reason TEXT [--operator NAME]
//! tns admin plan ORG PLAN_CODE --reason TEXT [--operator NAME]
//! tns admin submission ORG ID --reason TEXT [--operator NAME]
//! tns admin invoice ID paid|void --reason TEXT [--operator NAME]
//! tns admin audit [--org ORG] [--limit N]
//! ```
//!
//! Output is one JSON object per line.

use std::io::Write;

use anyhow::{anyhow, bail, Context};
use sqlx::PgPool;
use tns_core::{
    domain::kinds::{InvoiceStatus, OrgStatus},
    env::RedisSettings,
};
use tns_store::{audit::Actor, standing::Settled};

pub const USAGE: &str = "usage: tns admin <command>\n\
  orgs [--search TEXT] [--status trial|active|suspended] [--limit N]\n\
      organizations (name, tax number or owner's e-mail containing TEXT), newest first, with plan,\n\
      status, this month's calls and queued submissions\n\
  set-status ORG trial|active|suspended --reason TEXT [--operator NAME]\n\
      change an organization's status (effective at once on every API process)\n\
  plan ORG PLAN_CODE --reason TEXT [--operator NAME]\n\
      move an organization to a plan (its quota changes at once; a trial ends)\n\
  submission ORG ID --reason TEXT [--operator NAME]\n\
      a submission as it was sent (personal data unmasked; the look is audited), with its attempts\n\
  invoice ID paid|void --reason TEXT [--operator NAME]\n\
      record an open invoice as paid (or void it); an organization suspended for overdue\n\
      invoices is reactivated when none is left\n\
  audit [--org ORG] [--limit N]\n\
      the audit log, newest first\n\
the operator is --operator, else $USER";

/// Most rows one listing prints.
const MAX_LIMIT: i64 = 1000;

/// A parsed command line.
#[derive(Debug, PartialEq)]
pub enum Command {
    Orgs { search: Option<String>, status: Option<OrgStatus>, limit: i64 },
    SetStatus { org: i64, to: OrgStatus, reason: String, operator: String },
    Plan { org: i64, code: String, reason: String, operator: String },
    Submission { org: i64, id: i64, reason: String, operator: String },
    Invoice { id: i64, to: InvoiceStatus, reason: String, operator: String },
    Audit { org: Option<i64>, limit: i64 },
}

impl Command {
    /// `user` is `$USER`, the operator when `--operator` is not given.
    pub fn parse(args: &[String], user: Option<String>) -> anyhow::Result<Command> {
        let (name, rest) = args.split_first().ok_or_else(|| anyhow!("a command is needed"))?;
        let mut positional = vec![];
        let mut flags = std::collections::HashMap::new();
        let mut it = rest.iter();
        while let Some(a) = it.next() {
            if let Some(flag) = a.strip_prefix("--") {
                let v = it.next().ok_or_else(|| anyhow!("--{flag} needs a value"))?;
                if flags.insert(flag.to_string(), v.clone()).is_some() {
                    bail!("--{flag} given twice");
                }
            } else {
                positional.push(a.clone());
            }
        }
        let mut take = |flag: &str| flags.remove(flag);
        let limit = |v: Option<String>| -> anyhow::Result<i64> {
            match v {
                None => Ok(100),
                Some(v) => match v.parse::<i64>() {
                    Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
                    _ => bail!("--limit must be a whole number from 1 to {MAX_LIMIT}"),
                },
            }
        };
        let status = |v: &str| {
            OrgStatus::parse(v).ok_or_else(|| anyhow!("status must be one of trial, active, suspended; got `{v}`"))
        };
        let org = |v: &str| v.parse::<i64>().map_err(|_| anyhow!("ORG must be an organization id; got `{v}`"));
        let command = match name.as_str() {
            "orgs" => Command::Orgs {
                search: take("search"),
                status: take("status").as_deref().map(status).transpose()?,
                limit: limit(take("limit"))?,
            },
            "set-status" | "plan" | "submission" | "invoice" => {
                let (first, second) = match name.as_str() {
                    "plan" => ("ORG", "PLAN_CODE"),
                    "submission" => ("ORG", "ID"),
                    "invoice" => ("ID", "paid|void"),
                    _ => ("ORG", "STATUS"),
                };
                let [o, x] = std::mem::take(&mut positional)
                    .try_into()
                    .map_err(|_| anyhow!("{name} takes {first} and {second}"))?;
                let reason = take("reason").filter(|r| !r.trim().is_empty());
                let reason = reason.ok_or_else(|| anyhow!("--reason is required: say why (the audit log keeps it)"))?;
                if reason.chars().count() > 500 {
                    bail!("--reason must be at most 500 characters");
                }
                let operator = take("operator").or(user).filter(|o| !o.trim().is_empty());
                let operator = operator.ok_or_else(|| anyhow!("say who you are: --operator NAME"))?;
                if name == "invoice" {
                    let id = o.parse().map_err(|_| anyhow!("ID must be an invoice id; got `{o}`"))?;
                    let to = match x.as_str() {
                        "paid" => InvoiceStatus::Paid,
                        "void" => InvoiceStatus::Void,
                        _ => bail!("an invoice is settled as `paid` or `void`; got `{x}`"),
                    };
                    return finish(Command::Invoice { id, to, reason, operator }, name, flags, positional);
                }
                let org = org(&o)?;
                match name.as_str() {
                    "set-status" => Command::SetStatus { org, to: status(&x)?, reason, operator },
                    "plan" => Command::Plan { org, code: x, reason, operator },
                    _ => {
                        let id = x.parse().map_err(|_| anyhow!("ID must be a submission id; got `{x}`"))?;
                        Command::Submission { org, id, reason, operator }
                    }
                }
            }
            "audit" => {
                Command::Audit { org: take("org").as_deref().map(org).transpose()?, limit: limit(take("limit"))? }
            }
            other => bail!("unknown command `{other}`"),
        };
        finish(command, name, flags, positional)
    }
}

/// `command` unless options or arguments were left over.
fn finish(
    command: Command,
    name: &str,
    flags: std::collections::HashMap<String, String>,
    positional: Vec<String>,
) -> anyhow::Result<Command> {
    if let Some(flag) = flags.keys().next() {
        bail!("unknown option --{flag} for {name}");
    }
    if let Some(extra) = positional.first() {
        bail!("unexpected argument `{extra}`");
    }
    Ok(command)
}

/// Run `command`, printing its result to `out`.
pub async fn run(command: Command, db: &PgPool, redis: &RedisSettings, out: &mut impl Write) -> anyhow::Result<()> {
    match command {
        Command::Orgs { search, status, limit } => {
            for org in tns_store::accounts::search(db, search.as_deref(), status, limit).await? {
                writeln!(out, "{}", serde_json::to_string(&org)?)?;
            }
        }
        Command::SetStatus { org, to, reason, operator } => {
            let actor = Actor::Operator(operator);
            let (before, after) = tns_store::standing::change(db, &actor, org, to, Some(&reason))
                .await?
                .ok_or_else(|| anyhow!("no organization {org}"))?;
            changed(out, redis, org, serde_json::json!({"before": before, "after": after})).await?;
        }
        Command::Plan { org, code, reason, operator } => {
            if !tns_store::plans::exists(db, &code).await? {
                bail!("no plan `{code}`");
            }
            let actor = Actor::Operator(operator);
            let (before, after) = tns_store::standing::change_plan(db, &actor, org, &code, &reason)
                .await?
                .ok_or_else(|| anyhow!("no organization {org}"))?;
            changed(out, redis, org, serde_json::json!({"before": before, "after": after})).await?;
        }
        Command::Submission { org, id, reason, operator } => {
            let found = tns_store::submissions::detail(db, org, id).await?;
            let found = found.ok_or_else(|| anyhow!("organization {org} has no submission {id}"))?;
            tns_store::standing::viewed_submission(db, &Actor::Operator(operator), org, id, &reason).await?;
            let attempts = tns_store::submissions::attempts(db, org, id).await?;
            let shown = serde_json::json!({
                "submission": found.submission,
                "sent": found.snapshot.0,
                "passenger_results": found.passenger_results.map(|r| r.0),
                "attempts": attempts,
            });
            writeln!(out, "{shown}")?;
        }
        Command::Invoice { id, to, reason, operator } => {
            let actor = Actor::Operator(operator);
            let today = chrono::Utc::now().date_naive();
            match tns_store::standing::settle_invoice(db, &actor, id, to, &reason, today).await? {
                Settled::NoSuchInvoice => bail!("no invoice {id}"),
                Settled::NotOpen(status) => bail!("invoice {id} is {status}: only an open invoice is paid or voided"),
                Settled::Done { org, reactivated } => {
                    let change = serde_json::json!({"invoice": id, "status": to, "reactivated": reactivated});
                    changed(out, redis, org, change).await?;
                }
            }
        }
        Command::Audit { org, limit } => {
            for entry in tns_store::audit::list(db, org, limit).await? {
                writeln!(out, "{}", serde_json::to_string(&entry)?)?;
            }
        }
    }
    Ok(())
}

/// Print a change of `org` and tell every API process (they read an organization's plan and
/// standing from what is published in Redis).
async fn changed(
    out: &mut impl Write,
    redis: &RedisSettings,
    org: i64,
    mut change: serde_json::Value,
) -> anyhow::Result<()> {
    change["organization"] = org.into();
    writeln!(out, "{change}")?;
    tns_store::published::forget_limits(redis, &[org]).await.context(
        "the change is made, but the API processes could not be told at once (Redis): they apply it within an hour",
    )
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
            parse("invoice 12 void --reason duplicate", Some("ayse")).unwrap(),
            Command::Invoice { id: 12, to: InvoiceStatus::Void, reason: "duplicate".into(), operator: "ayse".into() }
        );
        assert_eq!(
            parse("orgs --status trial --limit 5", None).unwrap(),
            Command::Orgs { search: None, status: Some(OrgStatus::Trial), limit: 5 }
        );
        for (bad, says) in [
            ("set-status 7 suspended", "--reason"),
            ("set-status 7 suspended --reason x", "--operator"),
            ("set-status x suspended --reason x --operator a", "ORG"),
            ("set-status 7 gone --reason x --operator a", "status"),
            ("orgs --limit 0", "--limit"),
            ("orgs --colour red", "--colour"),
            ("audit --org", "--org needs a value"),
            ("invoice 7 refunded --reason x --operator a", "`paid` or `void`"),
            ("invoice x paid --reason x --operator a", "invoice id"),
            ("invoice 7 paid --operator a", "--reason"),
            ("invoice 7 paid --reason x --operator a --limit 3", "--limit"),
            ("nope", "unknown command"),
        ] {
            let e = parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
