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

pub mod http;
pub mod ops;

use std::io::Write;

use anyhow::{anyhow, bail};
use sqlx::PgPool;
use tns_core::{
    domain::{
        fields::{Text100, Text500},
        kinds::{InvoiceStatus, OrgStatus},
    },
    env::RedisSettings,
    scopes::operator::OperatorScope,
};
use tns_store::{
    audit::Actor,
    submissions::resolve::{resolve, Resolution},
};

/// Why operators may not close an organization: closing starts its erasure, which is the
/// owner's decision (an operator suspends instead; setting another status reopens a closed one).
pub const CLOSING_IS_THE_OWNERS: &str =
    "closing an organization is its owner's decision (POST /api/v1/portal/closure): suspend it instead";

pub const USAGE: &str = "usage: tns admin <command>\n\
  orgs [--search TEXT] [--status trial|active|suspended|closed] [--limit N]\n\
      organizations (name, tax number or owner's e-mail containing TEXT), newest first, with plan,\n\
      status, this month's calls, queued submissions and whether another organization shares its\n\
      tax number (registered before one organization per tax number was the rule)\n\
  set-status ORG trial|active|suspended --reason TEXT [--operator NAME]\n\
      change an organization's status (effective at once on every API process)\n\
  plan ORG PLAN_CODE --reason TEXT [--operator NAME]\n\
      move an organization to a plan (its quota changes at once; a trial ends)\n\
  submission ORG ID --reason TEXT [--operator NAME]\n\
      a submission as it was sent (personal data unmasked; the look is audited), with its attempts\n\
  requeue ORG --reason TEXT [--operator NAME]\n\
      queue again, as they were sent, the organization's failed submissions (each record's latest)\n\
  resolve ORG ID found REFERENCE|absent --reason TEXT [--operator NAME]\n\
      settle a submission whose outcome downstream is unknown: held there under REFERENCE (it\n\
      carries on from it once confirmed), or absent (it is sent as new)\n\
  invoice ID paid|void --reason TEXT [--operator NAME]\n\
      record an open invoice as paid (or void it); an organization suspended for overdue\n\
      invoices is reactivated when none is left\n\
  audit [--org ORG] [--limit N]\n\
      the audit log, newest first\n\
  token create NAME --scope read,write,personal-data [--operator NAME]\n\
      an operator token of the admin API for operator NAME (printed once: only its hash is kept)\n\
  token list\n\
      the operator tokens (never the tokens themselves)\n\
  token revoke ID [--operator NAME]\n\
      refuse a token from its next request on\n\
the operator is --operator, else $USER";

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
    Orgs { search: Option<String>, status: Option<OrgStatus>, limit: i64 },
    SetStatus { org: i64, to: OrgStatus, reason: String, operator: String },
    Plan { org: i64, code: String, reason: String, operator: String },
    Submission { org: i64, id: i64, reason: String, operator: String },
    Requeue { org: i64, reason: String, operator: String },
    Resolve { org: i64, id: i64, resolution: Resolution, reason: String, operator: String },
    Invoice { id: i64, to: InvoiceStatus, reason: String, operator: String },
    Audit { org: Option<i64>, limit: i64 },
    TokenCreate { name: String, scopes: Vec<OperatorScope>, operator: String },
    TokenList,
    TokenRevoke { id: i64, operator: String },
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
            v.map_or(Ok(DEFAULT_LIMIT), |v| parse_limit(&v).map_err(|e| anyhow!("--limit {e}")))
        };
        let status = |v: &str| {
            OrgStatus::parse(v)
                .ok_or_else(|| anyhow!("status must be one of trial, active, suspended, closed; got `{v}`"))
        };
        let org = |v: &str| v.parse::<i64>().map_err(|_| anyhow!("ORG must be an organization id; got `{v}`"));
        let operator = |take: &mut dyn FnMut(&str) -> Option<String>| {
            let operator = take("operator").or(user.clone()).filter(|o| !o.trim().is_empty());
            operator.ok_or_else(|| anyhow!("say who you are: --operator NAME"))
        };
        let reason = |take: &mut dyn FnMut(&str) -> Option<String>| -> anyhow::Result<String> {
            let reason = take("reason").filter(|r| !r.trim().is_empty());
            let reason = reason.ok_or_else(|| anyhow!("--reason is required: say why (the audit log keeps it)"))?;
            // The admin API's rule, so a reason is stored alike whichever surface took it.
            Ok(Text500::parse(&reason).map_err(|e| anyhow!("--reason {e}"))?.into_inner())
        };
        let command = match name.as_str() {
            "orgs" => Command::Orgs {
                search: take("search"),
                status: take("status").as_deref().map(status).transpose()?,
                limit: limit(take("limit"))?,
            },
            "set-status" | "plan" | "submission" => {
                let second = match name.as_str() {
                    "plan" => "PLAN_CODE",
                    "submission" => "ID",
                    _ => "STATUS",
                };
                let [o, x] =
                    std::mem::take(&mut positional).try_into().map_err(|_| anyhow!("{name} takes ORG and {second}"))?;
                let (reason, operator) = (reason(&mut take)?, operator(&mut take)?);
                let org = org(&o)?;
                match name.as_str() {
                    "set-status" => {
                        let to = status(&x)?;
                        if to == OrgStatus::Closed {
                            return Err(anyhow!("{CLOSING_IS_THE_OWNERS}"));
                        }
                        Command::SetStatus { org, to, reason, operator }
                    }
                    "plan" => Command::Plan { org, code: x, reason, operator },
                    _ => {
                        let id = x.parse().map_err(|_| anyhow!("ID must be a submission id; got `{x}`"))?;
                        Command::Submission { org, id, reason, operator }
                    }
                }
            }
            "requeue" => {
                let [o] = std::mem::take(&mut positional).try_into().map_err(|_| anyhow!("requeue takes ORG"))?;
                Command::Requeue { org: org(&o)?, reason: reason(&mut take)?, operator: operator(&mut take)? }
            }
            "resolve" => {
                let usage = || anyhow!("resolve takes ORG ID found REFERENCE, or ORG ID absent");
                let args = std::mem::take(&mut positional);
                let (o, id, resolution) = match &args[..] {
                    [o, id, found, r] if found == "found" => {
                        let r = Text100::parse(r).map_err(|e| anyhow!("REFERENCE {e}"))?.into_inner();
                        (o, id, Resolution::Found(r))
                    }
                    [o, id, absent] if absent == "absent" => (o, id, Resolution::Absent),
                    _ => return Err(usage()),
                };
                let id = id.parse().map_err(|_| anyhow!("ID must be a submission id; got `{id}`"))?;
                Command::Resolve {
                    org: org(o)?,
                    id,
                    resolution,
                    reason: reason(&mut take)?,
                    operator: operator(&mut take)?,
                }
            }
            "invoice" => {
                let [id, to] = std::mem::take(&mut positional)
                    .try_into()
                    .map_err(|_| anyhow!("invoice takes ID and paid|void"))?;
                let id = id.parse().map_err(|_| anyhow!("ID must be an invoice id; got `{id}`"))?;
                let to = match to.as_str() {
                    "paid" => InvoiceStatus::Paid,
                    "void" => InvoiceStatus::Void,
                    _ => bail!("an invoice is settled as `paid` or `void`; got `{to}`"),
                };
                Command::Invoice { id, to, reason: reason(&mut take)?, operator: operator(&mut take)? }
            }
            "audit" => {
                Command::Audit { org: take("org").as_deref().map(org).transpose()?, limit: limit(take("limit"))? }
            }
            "token" => {
                let what = if positional.is_empty() { String::new() } else { positional.remove(0) };
                match (what.as_str(), positional.len()) {
                    ("create", 1) => {
                        let name = positional.remove(0);
                        // It stands in the audit log as `operator:<name>`.
                        let name = Text100::parse(&name).map_err(|e| anyhow!("NAME {e}"))?.into_inner();
                        let scopes =
                            take("scope").ok_or_else(|| anyhow!("--scope is required (read, write, personal-data)"))?;
                        Command::TokenCreate { name, scopes: operator_scopes(&scopes)?, operator: operator(&mut take)? }
                    }
                    ("list", 0) => Command::TokenList,
                    ("revoke", 1) => {
                        let id = positional.remove(0);
                        let id = id.parse().map_err(|_| anyhow!("ID must be a token id; got `{id}`"))?;
                        Command::TokenRevoke { id, operator: operator(&mut take)? }
                    }
                    _ => bail!("token takes `create NAME --scope …`, `list` or `revoke ID`"),
                }
            }
            other => bail!("unknown command `{other}`"),
        };
        if let Some(flag) = flags.keys().next() {
            bail!("unknown option --{flag} for {name}");
        }
        if !positional.is_empty() {
            bail!("unexpected argument `{}`", positional[0]);
        }
        Ok(command)
    }
}

/// `read,write`: the scopes named, each once.
fn operator_scopes(list: &str) -> anyhow::Result<Vec<OperatorScope>> {
    let mut scopes = vec![];
    for name in list.split(',').map(str::trim) {
        let scope = OperatorScope::parse(name)
            .ok_or_else(|| anyhow!("--scope takes read, write and personal-data, comma-separated; got `{name}`"))?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    Ok(scopes)
}

/// Run `command`, printing its result to `out`.
pub async fn run(command: Command, db: &PgPool, redis: &RedisSettings, out: &mut impl Write) -> anyhow::Result<()> {
    let no_org = |org: i64| anyhow!("no organization {org}");
    match command {
        Command::Orgs { search, status, limit } => {
            for org in tns_store::accounts::search(db, search.as_deref(), status, limit).await? {
                writeln!(out, "{}", serde_json::to_string(&org)?)?;
            }
        }
        Command::SetStatus { org, to, reason, operator } => {
            let changed = ops::set_status(db, redis, &Actor::Operator(operator), org, to, &reason).await?;
            print_change(out, changed.ok_or_else(|| no_org(org))?)?;
        }
        Command::Plan { org, code, reason, operator } => {
            if !tns_store::plans::exists(db, &code).await? {
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
            match resolve(db, &Actor::Operator(operator), org, id, &resolution, &reason).await? {
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
                writeln!(out, "{}", serde_json::to_string(&entry)?)?;
            }
        }
        Command::TokenCreate { name, scopes, operator } => {
            let (token, secret) =
                tns_store::operator_tokens::create(db, &Actor::Operator(operator), &name, &scopes).await?;
            let mut shown = serde_json::to_value(&token)?;
            // The only time the token is shown: nothing keeps it.
            shown["token"] = secret.into();
            writeln!(out, "{shown}")?;
        }
        Command::TokenList => {
            for token in tns_store::operator_tokens::list(db).await? {
                writeln!(out, "{}", serde_json::to_string(&token)?)?;
            }
        }
        Command::TokenRevoke { id, operator } => {
            let token = tns_store::operator_tokens::revoke(db, &Actor::Operator(operator), id).await?;
            let token = token.ok_or_else(|| anyhow!("no operator token {id}"))?;
            writeln!(out, "{}", serde_json::to_string(&token)?)?;
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
        assert_eq!(
            parse("token revoke 3", Some("ayse")).unwrap(),
            Command::TokenRevoke { id: 3, operator: "ayse".into() }
        );
        for (bad, says) in [
            ("set-status 7 suspended", "--reason"),
            ("set-status 7 suspended --reason x", "--operator"),
            ("set-status x suspended --reason x --operator a", "ORG"),
            ("set-status 7 gone --reason x --operator a", "status"),
            ("orgs --limit 0", "--limit"),
            ("orgs --colour red", "--colour"),
            ("audit --org", "--org needs a value"),
            ("nope", "unknown command"),
            ("invoice 7 refunded --reason x --operator a", "`paid` or `void`"),
            ("invoice x paid --reason x --operator a", "invoice id"),
            ("invoice 7 paid --operator a", "--reason"),
            ("invoice 7 paid --reason x --operator a --limit 3", "--limit"),
            ("requeue 7 --operator a", "--reason"),
            ("requeue --reason x --operator a", "requeue takes ORG"),
            ("resolve 7 12 found --reason x --operator a", "resolve takes"),
            ("resolve 7 12 maybe --reason x --operator a", "resolve takes"),
            ("resolve 7 x absent --reason x --operator a", "submission id"),
            ("resolve 7 12 absent --operator a", "--reason"),
            ("token create ayse --operator a", "--scope is required"),
            ("token create ayse --scope read,root --operator a", "--scope takes"),
            ("token create ayse --scope read", "--operator"),
            ("token revoke x --operator a", "ID must be a token id"),
            ("token list extra", "token takes"),
            ("token create \u{7} --scope read --operator a", "NAME must be"),
            ("token", "token takes"),
        ] {
            let e = parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
