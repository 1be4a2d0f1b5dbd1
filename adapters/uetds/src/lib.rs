//! The U-ETDS adapter: notifies the Ministry of Transport's U-ETDS over SOAP, with each
//! organization's own web-service credentials.
//!
//! - [`wire`]: the SOAP messages, envelopes, reply parsing and the one pooled HTTP client.
//! - `trips`: passenger trips step by step (journey, amendment, cancellation), over the calls
//!   of `arizi` (non-scheduled trips) or `tarifeli` (scheduled trips, provisional: the
//!   service's WSDL is not public).
//! - `esya`: goods — trip and load, cancellation, report.
//!
//! A notification is several SOAP calls. [`Adapter::advance`] makes the next one and returns
//! the progress so far, which the host records before it calls again; so a notification that
//! fails halfway resumes from the first missing step. [`Adapter::reconcile`] finds out, with
//! read-only calls, what U-ETDS holds when the outcome of the last call is unknown: a write is
//! never repeated on a guess. Our reference (`tns-<submission>`) goes into U-ETDS's own fields
//! for the sender's reference (`firmaSeferNo`, `firmaYukNo`, the group's name), which is how
//! reconciling recognizes what we sent.

mod arizi;
mod baggage;
mod checks;
mod codes;
mod config;
mod esya;
mod loads;
mod login;
mod lookup;
mod outcome;
mod progress;
mod tarifeli;
mod trips;
pub mod wire;

use serde_json::Value;
use tns_adapter::{
    export_adapter, Account, Adapter, AdapterError, AdapterResult, AllowList, AllowListRequest, CheckRequest, CodeList,
    CodeListsRequest, Credentials, CredentialsCheck, Description, Document, Environment, Finding, InspectRequest, Kind,
    Notification, Observed, Problem, Records, ReportRequest, Step, Text, Work,
};

use crate::{
    arizi::Arizi,
    config::{Config, Service},
    login::Login,
    tarifeli::Tarifeli,
    wire::{Operation, Secrets, Transport, TransportSettings, WsUser},
};

/// At most this many characters of an error's text reach the host.
const ERROR_CHARS: usize = 600;

export_adapter!(Uetds::from_config);

pub struct Uetds {
    cfg: Config,
    /// One pooled HTTPS client for every call of this process.
    transport: Transport,
    /// What look-ups learnt of trips' tags (see [`lookup`]).
    lookups: lookup::Lookups,
}

impl Uetds {
    pub fn from_config(raw: &[u8]) -> Result<Uetds, AdapterError> {
        let cfg = Config::parse(&tns_adapter::PluginConfig::from_json(raw)?)?;
        let transport = Transport::new(&TransportSettings {
            connect_timeout: cfg.connect_timeout,
            call_timeout: cfg.call_timeout,
            extra_ca_pem: cfg.ca_file.clone(),
        })
        .map_err(|e| AdapterError::Configuration(format!("uetds: {e}")))?;
        Ok(Uetds { cfg, transport, lookups: lookup::Lookups::default() })
    }

    fn session<'a>(
        &'a self,
        credentials: Option<&Credentials>,
        reference: &'a str,
        earlier: &'a [String],
    ) -> AdapterResult<Session<'a>> {
        let c = credentials.ok_or_else(|| {
            AdapterError::Configuration(
                "no U-ETDS credentials are set for this organization: set them with PUT /portal/downstream".into(),
            )
        })?;
        let login = Login::of(c)?;
        let user = WsUser::new(login.username, login.password);
        Ok(Session {
            transport: &self.transport,
            cfg: &self.cfg,
            secrets: Secrets::of(&user),
            user,
            env: login.environment,
            reference,
            earlier,
            lookups: &self.lookups,
            since: None,
            known: None,
        })
    }

    /// The session of a notification's calls.
    fn session_for<'a>(&'a self, n: &'a Notification) -> AdapterResult<Session<'a>> {
        let mut s = self.session(n.credentials.as_ref(), &n.reference, &n.earlier_references)?;
        s.since = n.since.as_deref().and_then(|d| d.parse().ok());
        s.known = n.downstream_reference.as_deref();
        Ok(s)
    }
}

/// One organization's calls to one environment of U-ETDS, for one submission.
pub struct Session<'a> {
    transport: &'a Transport,
    cfg: &'a Config,
    user: WsUser,
    /// What no text from U-ETDS may carry out (see [`wire::redact`]).
    secrets: Secrets,
    env: Environment,
    /// Our reference of the submission (`tns-<id>`).
    reference: &'a str,
    /// Earlier submissions' references whose progress this one continues.
    earlier: &'a [String],
    /// What look-ups learnt, shared by every call of the process.
    lookups: &'a lookup::Lookups,
    /// The day the notification's first attempt was made (see [`Notification::since`]).
    since: Option<chrono::NaiveDate>,
    /// The downstream reference the submission already has, if any.
    known: Option<&'a str>,
}

impl Session<'_> {
    /// True when U-ETDS holds `reference` as one of this notification's.
    fn is_ours(&self, reference: &str) -> bool {
        self.reference == reference || self.earlier.iter().any(|r| r == reference)
    }

    /// A scheduled trip reaches the production environment only once the operator has
    /// confirmed the scheduled service's shapes (its WSDL is not public; see `tarifeli`):
    /// a configuration error until then, before any call.
    fn scheduled_service_confirmed(&self, work: &Work) -> AdapterResult<()> {
        // New declarations only: what was delivered there (before the confirmation was
        // withdrawn, say) can still be changed, cancelled and told about.
        let declares = matches!(work, Work::Journey(_));
        if !declares
            || work.kind() != Kind::Scheduled
            || self.env != Environment::Production
            || self.cfg.tarifeli.confirmed
        {
            return Ok(());
        }
        Err(AdapterError::Configuration(
            "scheduled (tarifeli) trips are not sent to U-ETDS's production environment until the operator confirms \
             the scheduled service's names with the Ministry (TNS_ADAPTER_UETDS_TARIFELI_CONFIRMED=true; see adapters/README.md); \
             the test environment takes them"
                .into(),
        ))
    }

    /// An amendment or cancellation goes to the environment that holds the notification.
    fn keeps_environment(&self, work: &Work) -> AdapterResult<()> {
        match work {
            Work::Amendment(a) => self.same_environment(&a.downstream_state),
            Work::Cancel(c) | Work::Reactivate(c) => self.same_environment(&c.downstream_state),
            Work::NoShow(x) => self.same_environment(&x.downstream_state),
            Work::Journey(_) | Work::Cargo(_) => Ok(()),
        }
    }

    /// Refuse to change a notification through another environment than the one that holds it
    /// (credentials switched from test to production after the delivery, say).
    fn same_environment(&self, state: &Value) -> AdapterResult<()> {
        let held: Option<Environment> = state.get("environment").and_then(|e| serde_json::from_value(e.clone()).ok());
        match held {
            Some(env) if env != self.env => Err(AdapterError::Configuration(format!(
                "this was notified to U-ETDS's {} environment, and the organization's credentials are now for {}: \
                 set the {} credentials to change it",
                env.as_str(),
                self.env.as_str(),
                env.as_str()
            ))),
            _ => Ok(()),
        }
    }

    fn wsuser(&self) -> WsUser {
        self.user.clone()
    }

    /// One SOAP call to `service`; transport and gateway failures classified.
    fn call<O: Operation>(&self, service: Service, op: &O) -> AdapterResult<O::Return> {
        self.transport
            .call(&self.cfg.url(service, self.env), &self.user, op)
            .map_err(|e| outcome::transport(service.label(), e))
    }
}

impl Adapter for Uetds {
    fn describe(&self) -> Description {
        Description {
            name: "uetds".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: Text::new("U-ETDS", "U-ETDS"),
            summary: Text::new(
                "The Ministry of Transport's U-ETDS, with the organization's own web-service account: every notification is a legal one.",
                "Ulaştırma Bakanlığı'nın U-ETDS'si, kuruluşun kendi web servis hesabıyla: her bildirim yasal bildirimdir.",
            ),
            default: false,
            accepts: vec![Records::Journeys, Records::Cargo],
            credentials: login::fields(),
            settings: config::SETTINGS.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn advance(&self, n: &Notification) -> AdapterResult<Step> {
        scrubbed(n.credentials.as_ref(), self.advance_unscrubbed(n))
    }

    fn reconcile(&self, n: &Notification) -> AdapterResult<Step> {
        scrubbed(n.credentials.as_ref(), self.reconcile_unscrubbed(n))
    }

    fn verify_credentials(&self, req: &CredentialsCheck) -> AdapterResult<Account> {
        let (user, password) = Login::secrets(Some(&req.credentials));
        let secrets = Secrets::new(user, password);
        let account = Login::of(&req.credentials)
            .and_then(|login| arizi::verify(&self.transport, &self.cfg, &login))
            .map_err(|e| scrub(&secrets, e))?;
        let clean = |t: Option<String>| t.map(|t| secrets.excerpt(&t, ERROR_CHARS));
        Ok(Account { name: clean(account.name), message: clean(account.message), ..account })
    }

    fn report(&self, req: &ReportRequest) -> AdapterResult<Document> {
        scrubbed(req.credentials.as_ref(), self.report_unscrubbed(req))
    }

    fn allow_list(&self, req: &AllowListRequest) -> AdapterResult<AllowList> {
        let s = self.session(Some(&req.credentials), "", &[])?;
        scrubbed(Some(&req.credentials), arizi::allow_list(&s, req.change.as_ref()))
    }

    fn inspect(&self, req: &InspectRequest) -> AdapterResult<Option<Observed>> {
        scrubbed(req.credentials.as_ref(), self.inspect_unscrubbed(req))
    }

    fn check(&self, req: &CheckRequest) -> AdapterResult<Option<Finding>> {
        let s = self.session(req.credentials.as_ref(), "", &[])?;
        scrubbed(req.credentials.as_ref(), checks::check(&s, &req.check).map(Some))
    }

    fn screen(&self, work: &Work) -> AdapterResult<Vec<Problem>> {
        Ok(match work {
            Work::Cargo(c) => esya::screen(c),
            Work::Amendment(a) => a.goods.as_ref().map(|g| esya::screen(&g.now)).unwrap_or_default(),
            _ => Vec::new(),
        })
    }

    fn code_lists(&self, req: &CodeListsRequest) -> AdapterResult<Vec<CodeList>> {
        let s = self.session(req.credentials.as_ref(), "", &[])?;
        scrubbed(req.credentials.as_ref(), codes::code_lists(&s))
    }
}

/// A call's error with the credentials masked in its text and cut to [`ERROR_CHARS`]: the last
/// guard, whichever way a text of U-ETDS's reached it (a `sonucMesaji`, a fault, a gateway's
/// page), before the host logs, stores or shows it.
fn scrubbed<T>(credentials: Option<&Credentials>, result: AdapterResult<T>) -> AdapterResult<T> {
    let (user, password) = Login::secrets(credentials);
    result.map_err(|e| scrub(&Secrets::new(user, password), e))
}

fn scrub(secrets: &Secrets, e: AdapterError) -> AdapterError {
    e.map_message(|m| secrets.excerpt(&m, ERROR_CHARS))
}

impl Uetds {
    fn advance_unscrubbed(&self, n: &Notification) -> AdapterResult<Step> {
        let s = self.session_for(n)?;
        s.keeps_environment(&n.work)?;
        s.scheduled_service_confirmed(&n.work)?;
        let (arizi, tarifeli) = (Arizi(&s), Tarifeli(&s));
        match &n.work {
            Work::Journey(j) if j.tarifeli.is_some() => trips::advance_journey(&tarifeli, j, &n.progress),
            Work::Journey(j) => trips::advance_journey(&arizi, j, &n.progress),
            Work::Amendment(a) => match a.kind {
                Kind::Scheduled => trips::advance_amendment(&tarifeli, a, &n.progress),
                Kind::NonScheduled => trips::advance_amendment(&arizi, a, &n.progress),
                Kind::Goods => esya::advance_amendment(&s, a, &n.progress),
            },
            Work::Cargo(c) => esya::advance(&s, c, &n.progress),
            Work::Cancel(c) => match c.kind {
                Kind::Scheduled => trips::cancel(&tarifeli, c),
                Kind::NonScheduled => trips::cancel(&arizi, c),
                Kind::Goods => esya::cancel(&s, c),
            },
            Work::Reactivate(r) => match r.kind {
                Kind::Scheduled => trips::reactivate(&tarifeli, r),
                Kind::NonScheduled => trips::reactivate(&arizi, r),
                Kind::Goods => esya::reactivate(&s, r, &n.progress),
            },
            Work::NoShow(x) => match x.kind {
                Kind::Scheduled => trips::no_show(&tarifeli, x),
                Kind::NonScheduled => trips::no_show(&arizi, x),
                Kind::Goods => Err(AdapterError::Permanent("goods shipments have no passengers".into())),
            },
        }
    }

    fn reconcile_unscrubbed(&self, n: &Notification) -> AdapterResult<Step> {
        let s = self.session_for(n)?;
        s.keeps_environment(&n.work)?;
        let (arizi, tarifeli) = (Arizi(&s), Tarifeli(&s));
        match &n.work {
            Work::Journey(j) if j.tarifeli.is_some() => trips::reconcile_journey(&tarifeli, j, &n.progress),
            Work::Journey(j) => trips::reconcile_journey(&arizi, j, &n.progress),
            Work::Amendment(a) => match a.kind {
                Kind::Scheduled => trips::reconcile_amendment(&tarifeli, a, &n.progress),
                Kind::NonScheduled => trips::reconcile_amendment(&arizi, a, &n.progress),
                Kind::Goods => esya::reconcile_amendment(&s, a, &n.progress),
            },
            Work::Cargo(c) => esya::reconcile(&s, c, &n.progress),
            Work::Cancel(c) => match c.kind {
                Kind::Scheduled => trips::reconcile_cancel(&tarifeli, c, &n.progress),
                Kind::NonScheduled => trips::reconcile_cancel(&arizi, c, &n.progress),
                Kind::Goods => esya::reconcile_cancel(&s, c, &n.progress),
            },
            Work::Reactivate(r) => match r.kind {
                Kind::Scheduled => trips::reconcile_reactivate(&tarifeli, r, &n.progress),
                Kind::NonScheduled => trips::reconcile_reactivate(&arizi, r, &n.progress),
                Kind::Goods => esya::reconcile_reactivate(&s, r, &n.progress),
            },
            // The summary does not show a no-show: it is told again (U-ETDS refuses a second
            // report of the same passenger, which is taken as done).
            Work::NoShow(_) => Ok(Step::Continue { progress: n.progress.clone(), downstream_reference: None }),
        }
    }

    fn inspect_unscrubbed(&self, req: &InspectRequest) -> AdapterResult<Option<Observed>> {
        let s = self.session(req.credentials.as_ref(), "", &req.references)?;
        s.same_environment(&req.downstream_state)?;
        let (observed, tag) = match req.kind {
            Kind::NonScheduled => trips::inspect(&Arizi(&s), &req.downstream_reference)?,
            // The scheduled service's summary is read in the non-scheduled shape, which no
            // public source confirms: asked only once the operator confirmed the service, and
            // its counts (tickets, not passengers) never compared.
            Kind::Scheduled if !self.cfg.tarifeli.confirmed => return Ok(None),
            Kind::Scheduled => {
                let (o, tag) = trips::inspect(&Tarifeli(&s), &req.downstream_reference)?;
                (Observed { passengers: None, crew: None, ..o }, tag)
            }
            Kind::Goods => esya::inspect(&s, &req.downstream_reference)?,
        };
        // The trip held under the reference must be the one we sent (a wrong reference given
        // by hand would compare another firm's trip, or another of ours).
        if let Some(tag) = tag.filter(|t| !t.is_empty()) {
            if !req.references.contains(&tag) {
                return Err(AdapterError::Permanent(format!(
                    "U-ETDS holds trip {} under the sender's reference {tag}, not one of this record's",
                    req.downstream_reference
                )));
            }
        }
        Ok(Some(observed))
    }

    fn report_unscrubbed(&self, req: &ReportRequest) -> AdapterResult<Document> {
        let s = self.session(req.credentials.as_ref(), "", &[])?;
        s.same_environment(&req.downstream_state)?;
        match req.kind {
            Kind::NonScheduled => arizi::report(&s, number(&req.downstream_reference, "the trip reference")?),
            Kind::Goods => esya::report(&s, number(&req.downstream_reference, "the goods trip reference")?),
            Kind::Scheduled => Err(AdapterError::Permanent(
                "the report of a scheduled trip is not available through TNS yet (the scheduled service's report \
                 operation is not published)"
                    .into(),
            )),
        }
    }
}

/// A reference U-ETDS gave as a number, read back from our own text.
fn number(reference: &str, what: &str) -> AdapterResult<i64> {
    reference
        .trim()
        .parse()
        .map_err(|_| AdapterError::Permanent(format!("{what} `{reference}` is not a U-ETDS reference")))
}

/// The calendar day (`YYYY-MM-DD`) of a date U-ETDS wrote as an `xs:dateTime` or as
/// `dd/MM/yyyy` (with or without a time after it).
fn iso_day(text: &str) -> Option<String> {
    let t = text.trim();
    // A moment with its offset is a day in Türkiye (midnight there is the evening before in UTC).
    let turkey = chrono::FixedOffset::east_opt(3 * 3600)?;
    let zoned = || chrono::DateTime::parse_from_rfc3339(t).ok().map(|d| d.with_timezone(&turkey).date_naive());
    let iso = || t.get(..10).and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
    let dmy = || t.get(..10).and_then(|d| chrono::NaiveDate::parse_from_str(d, "%d/%m/%Y").ok());
    zoned().or_else(iso).or_else(dmy).map(|d| d.format("%Y-%m-%d").to_string())
}

/// `YYYY-MM-DD` → `dd/MM/yyyy`, U-ETDS's date text outside `xs:dateTime` fields.
fn dmy(date: &str) -> String {
    let mut parts = date.splitn(3, '-');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(y), Some(m), Some(d)) => format!("{d}/{m}/{y}"),
        _ => date.to_string(),
    }
}

/// `YYYY-MM-DD` → an `xs:dateTime` at midnight Türkiye time, so the service's own time zone
/// cannot move the day.
fn midnight(date: &str) -> String {
    format!("{date}T00:00:00+03:00")
}

/// The step that records progress `p`, with U-ETDS's reference of the trip once it gave one.
fn continue_with<P: serde::Serialize>(p: &P, trip: Option<i64>) -> AdapterResult<Step> {
    let progress: Value = serde_json::to_value(p).map_err(|e| AdapterError::Permanent(format!("progress: {e}")))?;
    Ok(Step::Continue { progress, downstream_reference: trip.map(|t| t.to_string()) })
}

/// A stable fingerprint of what was sent for one item (FNV-1a of its JSON): a carried-over
/// item whose fingerprint differs was changed since, and goes again.
fn fingerprint<T: serde::Serialize>(item: &T) -> String {
    let bytes = serde_json::to_vec(item).unwrap_or_default();
    let h = bytes.iter().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100000001b3));
    format!("{h:016x}")
}

impl Service {
    fn label(self) -> &'static str {
        match self {
            Service::Arizi => "non-scheduled service",
            Service::Esya => "goods service",
            Service::Tarifeli => "scheduled service",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(dmy("2026-12-01"), "01/12/2026");
        assert_eq!(midnight("2026-12-01"), "2026-12-01T00:00:00+03:00");
        assert!(number("18073000016130", "trip").is_ok() && number("x", "trip").is_err());
        assert_eq!(iso_day("2026-12-01T00:00:00+03:00").as_deref(), Some("2026-12-01"));
        assert_eq!(iso_day("2026-11-30T21:00:00Z").as_deref(), Some("2026-12-01"), "midnight in Türkiye, in UTC");
        assert_eq!(iso_day("2026-12-01T00:00:00").as_deref(), Some("2026-12-01"));
        assert_eq!(iso_day("01/12/2026").as_deref(), Some("2026-12-01"));
        assert_eq!(iso_day("01/12/2026 08:00:00").as_deref(), Some("2026-12-01"));
        assert_eq!(iso_day("yesterday"), None);
    }
}
