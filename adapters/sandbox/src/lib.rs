//! The sandbox adapter: behaves like U-ETDS without a network, deterministically, driven by
//! magic values (see README.md in this directory for the table QA teams use).
//!
//! It remembers what it was sent, by our submission reference: a repeated submission is
//! answered from memory, never recorded twice. With `state_dir` configured, the record is an
//! append-only JSON-lines file (`sandbox-records.jsonl`), shared by every process that loads
//! the sandbox with that directory and surviving restarts, so an attempt whose outcome was
//! lost (a crash) is found again by `lookup`.

use std::{
    collections::HashMap,
    fs::OpenOptions,
    io::{BufRead, BufReader, Read, Seek, SeekFrom, Write},
    path::PathBuf,
    sync::Mutex,
    time::Duration,
};

use base64::Engine;
use serde::{Deserialize, Serialize};
use tns_adapter::{
    export_adapter, Account, Adapter, AdapterError, AdapterResult, Check, CheckRequest, CredentialsCheck, Description,
    Document, Finding, Notification, Passenger, PassengerResult, PluginConfig, Receipt, Records, ReportRequest, Step,
    Text, Work,
};

export_adapter!(Sandbox::from_config);

/// The longest `SLOW<ms>` delay honoured.
const MAX_DELAY_MS: u64 = 5_000;

/// Its one setting (`TNS_ADAPTER_SANDBOX_STATE_DIR`): where records are kept across
/// processes and restarts; memory only when unset.
const STATE_DIR: &str = "STATE_DIR";

/// One thing the sandbox accepted, as written to the records file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub reference: String,
    /// The operation: `journey`, `amendment`, `cargo` or `cancel`.
    pub kind: String,
    pub receipt: Receipt,
}

/// Records one process keeps in memory, the newest: a sandbox serving QA teams for months must
/// not grow with every notification. One forgotten is harmless: its receipt is made again the
/// same (references are deterministic), at worst recorded a second time in the file.
const MAX_REMEMBERED: usize = 10_000;

#[derive(Default)]
struct State {
    by_reference: HashMap<String, Record>,
    /// `by_reference`'s keys, oldest first: what goes once there are [`MAX_REMEMBERED`].
    order: std::collections::VecDeque<String>,
    /// How far the records file has been read.
    offset: u64,
    /// Calls per reference, for the "succeeds on the Nth try" scenario.
    attempts: HashMap<String, u32>,
}

impl State {
    /// Remember `record` (a reference already known keeps its first), forgetting the oldest
    /// beyond [`MAX_REMEMBERED`].
    fn keep(&mut self, record: Record) {
        if self.by_reference.contains_key(&record.reference) {
            return;
        }
        self.order.push_back(record.reference.clone());
        self.by_reference.insert(record.reference.clone(), record);
        while self.order.len() > MAX_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.by_reference.remove(&old);
            }
        }
    }
}

pub struct Sandbox {
    file: Option<PathBuf>,
    state: Mutex<State>,
}

/// The number after `tag` in `plate` (`34FLAKY3` → 3), if the plate carries the tag.
fn magic(plate: &str, tag: &str) -> Option<u64> {
    let at = plate.find(tag)? + tag.len();
    let digits: String = plate[at..].chars().take_while(|c| c.is_ascii_digit()).collect();
    Some(digits.parse().unwrap_or(0))
}

/// FNV-1a: a stable hash, so references are the same on every run.
fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// A reference in U-ETDS's shape: `YYMMDD` of the date plus 8 digits (`18073000016130`).
fn trip_reference(date: &str, reference: &str) -> String {
    let ymd: String = date.chars().filter(|c| c.is_ascii_digit()).skip(2).take(6).collect();
    format!("{ymd:0>6}{:08}", fnv(&[reference]) % 100_000_000)
}

fn passenger_results(reference: &str, passengers: &[Passenger]) -> Vec<PassengerResult> {
    passengers
        .iter()
        .map(|p| {
            if p.person.identity_number.starts_with("FAIL") {
                PassengerResult {
                    key: p.key.clone(),
                    downstream_reference: None,
                    error: Some("88: yolcu kaydedilemedi (sandbox: identity number starts with FAIL)".into()),
                }
            } else {
                PassengerResult {
                    key: p.key.clone(),
                    downstream_reference: Some(format!("{:012}", fnv(&[reference, &p.key]) % 1_000_000_000_000)),
                    error: None,
                }
            }
        })
        .collect()
}

impl Sandbox {
    pub fn from_config(raw: &[u8]) -> Result<Sandbox, AdapterError> {
        let cfg = PluginConfig::from_json(raw)?;
        cfg.unknown(&[STATE_DIR])?;
        let file = match cfg.get(STATE_DIR).map(PathBuf::from) {
            Some(dir) => {
                std::fs::create_dir_all(&dir).map_err(|e| cfg.bad(STATE_DIR, &format!("{}: {e}", dir.display())))?;
                Some(dir.join("sandbox-records.jsonl"))
            }
            None => None,
        };
        // Sized once for good. Forgetting leaves tombstones in the table; at most half full,
        // it clears them in place when they use up its room, but sized for MAX_REMEMBERED
        // alone it doubles once instead, some 35 000 receipts in (a 3 MB step in a soak).
        let state = State {
            by_reference: HashMap::with_capacity(2 * MAX_REMEMBERED),
            order: std::collections::VecDeque::with_capacity(MAX_REMEMBERED + 1),
            ..State::default()
        };
        let sandbox = Sandbox { file, state: Mutex::new(state) };
        sandbox.catch_up(&mut sandbox.state.lock().unwrap_or_else(|p| p.into_inner()))?;
        Ok(sandbox)
    }

    /// Read records other processes appended since we last looked.
    fn catch_up(&self, st: &mut State) -> AdapterResult<()> {
        let Some(path) = &self.file else { return Ok(()) };
        let Ok(mut f) = std::fs::File::open(path) else { return Ok(()) };
        let io = |e: std::io::Error| AdapterError::Transient(format!("sandbox records: {e}"));
        f.seek(SeekFrom::Start(st.offset)).map_err(io)?;
        let mut reader = BufReader::new(f);
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader.read_line(&mut line).map_err(io)?;
            // A line without its newline is still being written: read it next time.
            if n == 0 || !line.ends_with('\n') {
                break;
            }
            st.offset += n as u64;
            if let Ok(r) = serde_json::from_str::<Record>(&line) {
                st.keep(r);
            }
        }
        Ok(())
    }

    /// The first record of the records file `matches` (none without a file): what memory no
    /// longer keeps, read for the rare look-ups that need it (a report, a reconciliation).
    fn in_file(&self, matches: impl Fn(&Record) -> bool) -> AdapterResult<Option<Record>> {
        let Some(path) = &self.file else { return Ok(None) };
        let Ok(f) = std::fs::File::open(path) else { return Ok(None) };
        let io = |e: std::io::Error| AdapterError::Transient(format!("sandbox records: {e}"));
        for line in BufReader::new(f).lines() {
            if let Ok(r) = serde_json::from_str::<Record>(&line.map_err(io)?) {
                if matches(&r) {
                    return Ok(Some(r));
                }
            }
        }
        Ok(None)
    }

    /// The receipt for `reference`: the remembered one, or `make()` recorded now.
    fn remember(&self, reference: &str, kind: &str, make: impl FnOnce() -> Receipt) -> AdapterResult<Receipt> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.catch_up(&mut st)?;
        if let Some(r) = st.by_reference.get(reference) {
            return Ok(r.receipt.clone());
        }
        let record = Record { reference: reference.to_string(), kind: kind.to_string(), receipt: make() };
        if let Some(path) = &self.file {
            let mut line = serde_json::to_vec(&record).map_err(|e| AdapterError::Permanent(e.to_string()))?;
            line.push(b'\n');
            let io = |e: std::io::Error| AdapterError::Transient(format!("sandbox records: {e}"));
            let mut f = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io)?;
            // A process killed mid-write leaves a line without its newline; end it, so this
            // record starts a line of its own instead of being glued to the torn one.
            let len = f.metadata().map_err(io)?.len();
            if len > 0 {
                let mut last = [0u8; 1];
                f.seek(SeekFrom::Start(len - 1)).map_err(io)?;
                f.read_exact(&mut last).map_err(io)?;
                if last[0] != b'\n' {
                    line.insert(0, b'\n');
                }
            }
            f.write_all(&line).map_err(io)?;
        }
        let receipt = record.receipt.clone();
        st.keep(record);
        Ok(receipt)
    }

    /// The magic plate scenarios, in the order the README table lists them.
    fn scenario(&self, reference: &str, plate: &str) -> AdapterResult<()> {
        if let Some(ms) = magic(plate, "SLOW") {
            // Capped, so one tenant's test data cannot hold the adapter's slots for long.
            std::thread::sleep(Duration::from_millis(ms.min(MAX_DELAY_MS)));
        }
        if plate.contains("PANIC") {
            panic!("sandbox: plate {plate} asks for a panic");
        }
        if plate.contains("CONFIG") {
            return Err(AdapterError::Configuration("KULLANICI ADI YADA SIFRE HATALI (sandbox)".into()));
        }
        if plate.contains("REJECT") {
            return Err(AdapterError::Permanent(
                "34: Girilen plaka Bakanlık kayıtlarında herhangi bir yetki belgesine kayıtlı değil! (sandbox)".into(),
            ));
        }
        if let Some(n) = magic(plate, "FLAKY") {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if st.attempts.len() >= MAX_REMEMBERED && !st.attempts.contains_key(reference) {
                // Bounded too: a scenario's count starting again is harmless.
                st.attempts.clear();
            }
            let tries = st.attempts.entry(reference.to_string()).or_insert(0);
            *tries += 1;
            if u64::from(*tries) < n {
                return Err(AdapterError::Transient(format!(
                    "sandbox: try {tries} of {n} fails (service unavailable)"
                )));
            }
        }
        Ok(())
    }
}

impl Sandbox {
    fn journey(&self, reference: &str, j: &tns_adapter::Journey) -> AdapterResult<Receipt> {
        self.scenario(reference, &j.plate)?;
        self.remember(reference, "journey", || {
            let passengers = passenger_results(reference, &j.passengers);
            let partial = passengers.iter().any(|p| p.error.is_some());
            Receipt {
                downstream_reference: trip_reference(&j.departure.date, reference),
                message: Some(if partial { "88: kısmi başarı".into() } else { "İŞLEM BAŞARILI".into() }),
                passengers,
                state: serde_json::Value::Null,
            }
        })
    }

    fn amendment(&self, reference: &str, a: &tns_adapter::Amendment) -> AdapterResult<Receipt> {
        if let Some(trip) = &a.trip {
            self.scenario(reference, &trip.plate)?;
        }
        if let Some(g) = &a.goods {
            self.scenario(reference, &g.now.plate)?;
        }
        self.remember(reference, "amendment", || {
            let now: Vec<Passenger> =
                a.added.iter().cloned().chain(a.changed.iter().map(|c| c.passenger.clone())).collect();
            Receipt {
                downstream_reference: a.downstream_reference.clone(),
                passengers: passenger_results(reference, &now),
                message: Some("İŞLEM BAŞARILI".into()),
                state: a.downstream_state.clone(),
            }
        })
    }

    fn cargo(&self, reference: &str, c: &tns_adapter::Cargo) -> AdapterResult<Receipt> {
        self.scenario(reference, &c.plate)?;
        self.remember(reference, "cargo", || Receipt {
            downstream_reference: trip_reference(&c.loading.date, reference),
            passengers: vec![],
            message: Some("İŞLEM BAŞARILI".into()),
            state: serde_json::Value::Null,
        })
    }

    fn cancel(&self, reference: &str, c: &tns_adapter::Cancellation) -> AdapterResult<Receipt> {
        self.remember(reference, "cancel", || state_changed(c))
    }

    fn reactivate(&self, reference: &str, c: &tns_adapter::Reactivation) -> AdapterResult<Receipt> {
        self.remember(reference, "reactivate", || state_changed(c))
    }
}

/// The receipt of a cancellation or re-activation: the notification as it was, its state kept.
fn state_changed(c: &tns_adapter::Cancellation) -> Receipt {
    Receipt {
        downstream_reference: c.downstream_reference.clone(),
        passengers: vec![],
        message: Some("İŞLEM BAŞARILI".into()),
        state: c.downstream_state.clone(),
    }
}

impl Adapter for Sandbox {
    fn describe(&self) -> Description {
        Description {
            name: "sandbox".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: Text::new("Sandbox (trial; nothing reaches the Ministry)", "Sandbox (deneme; Bakanlığa gitmez)"),
            summary: Text::new(
                "A stand-in for trying TNS and for QA: accepts every notification at once and notifies no one.",
                "TNS'yi denemek ve test için: her bildirimi hemen kabul eder, kimseye bildirmez.",
            ),
            // Organizations try TNS here before they give their U-ETDS account.
            default: true,
            accepts: vec![Records::Journeys, Records::Cargo],
            credentials: vec![],
            settings: vec![STATE_DIR.into()],
        }
    }

    /// Every notification is one call here: the sandbox answers with the whole receipt.
    fn advance(&self, n: &Notification) -> AdapterResult<Step> {
        let receipt = match &n.work {
            Work::Journey(j) => self.journey(&n.reference, j)?,
            Work::Amendment(a) => self.amendment(&n.reference, a)?,
            Work::Cargo(c) => self.cargo(&n.reference, c)?,
            Work::Cancel(c) => self.cancel(&n.reference, c)?,
            Work::Reactivate(c) => self.reactivate(&n.reference, c)?,
            Work::NoShow(x) => self.remember(&n.reference, "no_show", || Receipt {
                downstream_reference: x.downstream_reference.clone(),
                passengers: vec![],
                message: Some("İŞLEM BAŞARILI".into()),
                state: x.downstream_state.clone(),
            })?,
        };
        Ok(Step::Done { receipt })
    }

    fn reconcile(&self, n: &Notification) -> AdapterResult<Step> {
        let kept = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            self.catch_up(&mut st)?;
            st.by_reference.get(&n.reference).cloned()
        };
        let found = match kept {
            Some(r) => Some(r),
            None => self.in_file(|r| r.reference == n.reference)?,
        };
        Ok(match found {
            Some(r) => Step::Done { receipt: r.receipt },
            None => Step::Continue { progress: n.progress.clone(), downstream_reference: None },
        })
    }

    /// The sandbox needs no credentials and takes any.
    fn verify_credentials(&self, req: &CredentialsCheck) -> AdapterResult<Account> {
        Ok(Account {
            username: req.credentials.fields.values().next().cloned().unwrap_or_default(),
            name: Some("SANDBOX".into()),
            message: Some("İŞLEM BAŞARILI".into()),
        })
    }

    /// Pre-flight checks pass, but for a plate containing `EXPIRED` (its inspection) or
    /// `UNAUTH` (its authorisation), and a person whose last name is `MISMATCH` (identity).
    fn check(&self, req: &CheckRequest) -> AdapterResult<Option<Finding>> {
        let failed = |why: &str| Finding { passed: false, detail: Some(format!("{why} (sandbox)")) };
        let finding = match &req.check {
            Check::VehicleInspection { plate, .. } if plate.contains("EXPIRED") => failed("the inspection has expired"),
            Check::Authorisation { plate, .. } if plate.contains("UNAUTH") => {
                failed("the plate is on no authorisation certificate")
            }
            Check::Identity { last_name, .. } if last_name.eq_ignore_ascii_case("MISMATCH") => {
                failed("the identity number does not belong to the person of that name")
            }
            Check::Qualification { .. } | Check::Identity { .. } | Check::TravelPermit { .. } => {
                Finding { passed: true, detail: None }
            }
            Check::VehicleInspection { .. } | Check::Authorisation { .. } => Finding { passed: true, detail: None },
        };
        Ok(Some(finding))
    }

    fn report(&self, req: &ReportRequest) -> AdapterResult<Document> {
        let known = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            self.catch_up(&mut st)?;
            st.by_reference.values().any(|r| r.receipt.downstream_reference == req.downstream_reference)
        };
        let known = known || self.in_file(|r| r.receipt.downstream_reference == req.downstream_reference)?.is_some();
        if !known {
            return Err(AdapterError::Permanent(format!(
                "no notification {} in the sandbox",
                req.downstream_reference
            )));
        }
        Ok(Document {
            content_type: "application/pdf".into(),
            base64: base64::engine::general_purpose::STANDARD.encode(pdf(&req.downstream_reference)),
        })
    }
}

/// A small, valid one-page PDF naming the notification (the cross-reference offsets are
/// computed, so strict readers open it too).
fn pdf(reference: &str) -> Vec<u8> {
    let text = format!("TNS sandbox report {reference}");
    let stream = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = vec![];
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_values_and_references() {
        assert_eq!(magic("34FLAKY3", "FLAKY"), Some(3));
        assert_eq!(magic("34SLOW250", "SLOW"), Some(250));
        assert_eq!(magic("34ABC12", "SLOW"), None);
        let r = trip_reference("2026-12-01", "sub-1");
        assert_eq!(r.len(), 14);
        assert!(r.starts_with("261201"));
        assert_eq!(r, trip_reference("2026-12-01", "sub-1"), "deterministic");
        assert_ne!(r, trip_reference("2026-12-01", "sub-2"));
    }

    #[test]
    fn memory_keeps_the_newest_records_only() {
        let sandbox = Sandbox::from_config(b"").unwrap();
        let receipt = |n: usize| Receipt {
            downstream_reference: format!("ref-{n}"),
            passengers: vec![],
            message: None,
            state: serde_json::Value::Null,
        };
        let first = sandbox.remember("sub-0", "journey", || receipt(0)).unwrap();
        for n in 1..=MAX_REMEMBERED + 5 {
            sandbox.remember(&format!("sub-{n}"), "journey", || receipt(n)).unwrap();
        }
        let st = sandbox.state.lock().unwrap();
        assert_eq!((st.by_reference.len(), st.order.len()), (MAX_REMEMBERED, MAX_REMEMBERED));
        assert!(
            !st.by_reference.contains_key("sub-0")
                && st.by_reference.contains_key(&format!("sub-{}", MAX_REMEMBERED + 5))
        );
        drop(st);
        // Remembered while kept: the first receipt, not a new one.
        let again = sandbox.remember(&format!("sub-{}", MAX_REMEMBERED + 5), "journey", || receipt(0)).unwrap();
        assert_eq!(again.downstream_reference, format!("ref-{}", MAX_REMEMBERED + 5));
        assert_eq!(first.downstream_reference, "ref-0");
    }
}
