//! The adapter contract through the real C ABI: the sandbox `.so` and an ABI-mismatch fixture
//! loaded with libloading, every sandbox scenario, panics contained, records shared between
//! instances, and `tns adapters` listing what loaded.

use std::time::Instant;

use base64::Engine;
use serde_json::json;
use tns_adapter::{
    host::{library_file, LoadError, Plugin},
    Adapter, AdapterError, AdapterResult, Amendment, Cancellation, Cargo, Journey, Kind, Notification, Party,
    Passenger, Person, Receipt, ReportRequest, Step, Stop, Work,
};

use crate::helpers::{plugin_dir, sandbox_records, state_dir, tns_command};

fn sandbox(state: &std::path::Path) -> Plugin {
    Plugin::load(&plugin_dir().join(library_file("tns-adapter-sandbox")), &json!({"state_dir": state})).unwrap()
}

fn person(id: &str) -> Person {
    Person {
        role: "passenger".into(),
        identity_number: id.into(),
        first_name: "Ali".into(),
        last_name: "Kaya".into(),
        gender: "E".into(),
        nationality: None,
        phone: None,
    }
}

fn stop(date: &str) -> Stop {
    Stop {
        date: date.into(),
        time: "08:30".into(),
        city_id: 34,
        district_id: 1421,
        place: Some("Kadıköy".into()),
        country: None,
    }
}

/// `work` as the scheduler hands it over for the first time.
fn notification(reference: &str, work: Work) -> Notification {
    Notification {
        reference: reference.into(),
        credentials: None,
        work,
        progress: serde_json::Value::Null,
        earlier_references: vec![],
        since: None,
        downstream_reference: None,
    }
}

/// The receipt of a notification the sandbox completes in one call.
fn done(step: AdapterResult<Step>) -> AdapterResult<Receipt> {
    match step? {
        Step::Done { receipt } => Ok(receipt),
        Step::Continue { progress, .. } => panic!("the sandbox completes in one call, got progress {progress}"),
    }
}

fn journey(reference: &str, plate: &str, ids: &[&str]) -> Notification {
    let mut crew = person("10000000146");
    crew.role = "driver".into();
    notification(
        reference,
        Work::Journey(Journey {
            plate: plate.into(),
            departure: stop("2026-12-01"),
            arrival: stop("2026-12-01"),
            tarifeli: None,
            crew: vec![crew],
            passengers: ids
                .iter()
                .enumerate()
                .map(|(i, id)| Passenger {
                    key: format!("p{i}"),
                    person: person(id),
                    boarding_place_code: 1421,
                    destination_place_code: 1219,
                    seat_no: Some(format!("{i}")),
                    ticket_serial_no: None,
                    amount: Some(100.0),
                    baggage: vec![],
                })
                .collect(),
        }),
    )
}

fn passengers_of(n: Notification) -> Vec<Passenger> {
    match n.work {
        Work::Journey(j) => j.passengers,
        _ => unreachable!(),
    }
}

fn records(state: &std::path::Path, reference: &str) -> usize {
    sandbox_records(state).iter().filter(|r| r["reference"] == reference).count()
}

#[test]
fn sandbox_scenarios_through_the_c_abi() {
    let state = state_dir();
    let sb = sandbox(&state);
    assert_eq!(sb.describe().name, "sandbox");
    let send = |n: &Notification| done(sb.advance(n));

    // Accepted, in U-ETDS's shape, remembered: a repeat is answered from the record, and
    // reconciling finds it, never recording it again.
    let ok = send(&journey("sub-1", "34ABC123", &["17291716060", "10000000146"])).unwrap();
    assert_eq!(ok.downstream_reference.len(), 14);
    assert!(ok.downstream_reference.starts_with("261201"));
    assert!(!ok.is_partial());
    assert!(ok.passengers.iter().all(|p| p.downstream_reference.as_ref().is_some_and(|r| r.len() == 12)));
    assert_eq!(send(&journey("sub-1", "34ABC123", &["17291716060", "10000000146"])).unwrap(), ok);
    assert_eq!(records(&state, "sub-1"), 1);
    let reconcile = |r: &str| sb.reconcile(&journey(r, "34ABC123", &[])).unwrap();
    assert_eq!(reconcile("sub-1"), Step::Done { receipt: ok.clone() });
    assert!(matches!(reconcile("never-sent"), Step::Continue { .. }));

    // Partial passenger failure (U-ETDS code 88): only the FAIL… passenger is refused.
    let partial = send(&journey("sub-2", "34ABC123", &["17291716060", "FAIL0001"])).unwrap();
    assert!(partial.is_partial());
    assert!(partial.passengers[0].error.is_none());
    assert!(partial.passengers[1].error.as_deref().unwrap().starts_with("88"));

    // Permanent and configuration errors are classified and never recorded.
    assert!(matches!(send(&journey("sub-3", "34REJECT1", &[])), Err(AdapterError::Permanent(_))));
    assert!(matches!(send(&journey("sub-4", "34CONFIG1", &[])), Err(AdapterError::Configuration(_))));
    assert_eq!(records(&state, "sub-3") + records(&state, "sub-4"), 0);

    // A transient failure that succeeds on the 3rd try.
    let flaky = journey("sub-5", "34FLAKY3", &[]);
    assert!(matches!(send(&flaky), Err(AdapterError::Transient(_))));
    assert!(matches!(send(&flaky), Err(AdapterError::Transient(_))));
    assert!(send(&flaky).is_ok());
    assert_eq!(records(&state, "sub-5"), 1);

    // A slow answer, and the cap on how slow (a few seconds, not the minute asked for).
    let t = Instant::now();
    send(&journey("sub-6", "34SLOW300", &[])).unwrap();
    assert!(t.elapsed().as_millis() >= 300);
    let t = Instant::now();
    send(&journey("sub-6b", "34SLOW60000", &[])).unwrap();
    assert!(t.elapsed().as_secs() < 10, "the delay is capped: {:?}", t.elapsed());

    // A panic inside the plugin comes back as a transient error; the plugin keeps working.
    match send(&journey("sub-7", "34PANIC1", &[])) {
        Err(AdapterError::Transient(m)) => assert!(m.contains("panicked"), "{m}"),
        other => panic!("expected a contained panic, got {other:?}"),
    }
    assert!(send(&journey("sub-8", "34ABC123", &[])).is_ok());

    // Report, amendment, cargo, cancel.
    let report = |reference: &str| {
        sb.report(&ReportRequest {
            credentials: None,
            kind: Kind::NonScheduled,
            downstream_reference: reference.into(),
            downstream_state: serde_json::Value::Null,
        })
    };
    let pdf =
        base64::engine::general_purpose::STANDARD.decode(report(&ok.downstream_reference).unwrap().base64).unwrap();
    assert!(pdf.starts_with(b"%PDF") && pdf.ends_with(b"%%EOF\n"));
    let amendment = Amendment {
        downstream_reference: ok.downstream_reference.clone(),
        downstream_state: serde_json::json!({"group": 1}),
        kind: Kind::NonScheduled,
        trip: None,
        previous_trip: None,
        crew_added: vec![],
        crew_removed: vec![],
        added: passengers_of(journey("x", "x", &["23695921030"])),
        changed: vec![],
        removed: vec![],
        baggage_held: vec![],
        baggage: vec![],
        goods: None,
    };
    let amended = send(&notification("sub-1-amend-1", Work::Amendment(amendment))).unwrap();
    assert_eq!(amended.downstream_reference, ok.downstream_reference);
    assert_eq!(amended.passengers.len(), 1);
    assert_eq!(amended.state, serde_json::json!({"group": 1}), "the kept state travels on");
    let cargo = Cargo {
        dangerous: None,
        plate: "34ABC123".into(),
        driver: Some(person("10000000146")),
        second_driver: None,
        trailer_plate: None,
        transport_type: 1,
        cargo_type: 7,
        transport_mode: 1,
        amount: 10.0,
        unit: "KG".into(),
        sender: Party { tax_number: "4540536920".into(), name: "A".into() },
        receiver: Party { tax_number: "1234567890".into(), name: "B".into() },
        loading: stop("2026-12-02"),
        unloading: stop("2026-12-03"),
        items: vec![],
    };
    assert!(send(&notification("cargo-1", Work::Cargo(cargo))).unwrap().downstream_reference.starts_with("261202"));
    let cancel = Cancellation {
        kind: Kind::NonScheduled,
        downstream_reference: ok.downstream_reference.clone(),
        downstream_state: serde_json::Value::Null,
        reason: "test".into(),
        cancel_kind: None,
    };
    assert_eq!(
        send(&notification("cancel-1", Work::Cancel(cancel))).unwrap().downstream_reference,
        ok.downstream_reference
    );

    // Another instance on the same records (another scheduler process) sees all of it.
    let other = sandbox(&state);
    assert_eq!(other.reconcile(&journey("sub-1", "34ABC123", &[])).unwrap(), Step::Done { receipt: ok });
    assert!(matches!(other.reconcile(&journey("cargo-1", "34ABC123", &[])).unwrap(), Step::Done { .. }));
}

#[test]
fn concurrent_calls_on_one_instance() {
    let state = state_dir();
    let sb = std::sync::Arc::new(sandbox(&state));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let sb = sb.clone();
            std::thread::spawn(move || {
                done(sb.advance(&journey(&format!("c-{i}"), "34ABC123", &["17291716060"]))).unwrap()
            })
        })
        .collect();
    let refs: std::collections::HashSet<String> =
        handles.into_iter().map(|h| h.join().unwrap().downstream_reference).collect();
    assert_eq!(refs.len(), 8);
    let lines = std::fs::read_to_string(state.join("sandbox-records.jsonl")).unwrap().lines().count();
    assert_eq!(lines, 8);
}

#[test]
fn bad_plugins_are_refused_with_a_clear_error() {
    let path = plugin_dir().join(library_file("abi-mismatch-fixture"));
    match Plugin::load(&path, &json!(null)) {
        Err(e @ LoadError::AbiMismatch { found: 999, .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("ABI version 999") && msg.contains("rebuild"), "{msg}");
        }
        Err(other) => panic!("expected an ABI mismatch, got {other}"),
        Ok(_) => panic!("a plugin of another ABI version loaded"),
    }
    let sb = plugin_dir().join(library_file("tns-adapter-sandbox"));
    match Plugin::load(&sb, &json!({"no_such_setting": 1})) {
        Err(LoadError::Create { error: AdapterError::Configuration(m), .. }) => {
            assert!(m.contains("no_such_setting"), "{m}")
        }
        Err(other) => panic!("expected a configuration error, got {other}"),
        Ok(_) => panic!("a bad configuration was accepted"),
    }
    assert!(matches!(Plugin::load(&plugin_dir().join("libnope.so"), &json!(null)), Err(LoadError::Open { .. })));
    // An answer claiming more bytes than it holds is not read (its describe call fails).
    match Plugin::load(&plugin_dir().join(library_file("lying-buffer-fixture")), &json!(null)) {
        Err(LoadError::Describe { error: AdapterError::Transient(m), .. }) => {
            assert!(m.contains("longer than it allocated"), "{m}")
        }
        Err(other) => panic!("expected the lying buffer to be refused, got {other}"),
        Ok(_) => panic!("a buffer longer than its allocation was read"),
    }
}

#[tokio::test]
async fn tns_adapters_lists_what_loaded() {
    let env = crate::helpers::Env::new().await;
    let out = tns_command("adapters", &env.with(&[("TNS_ADAPTER_DIR", plugin_dir().to_str().unwrap())]))
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("sandbox\t{}\t", env!("CARGO_PKG_VERSION"))), "{stdout}");
    assert!(stdout.contains(&format!("uetds\t{}\t", env!("CARGO_PKG_VERSION"))), "{stdout}");
    // The ABI fixture is not named like an adapter, so it is not picked up.
    assert_eq!(stdout.lines().count(), 2, "{stdout}");

    // Two libraries claiming one adapter name: the second is refused, named.
    let twice = state_dir();
    let sandbox = plugin_dir().join(library_file("tns-adapter-sandbox"));
    std::fs::copy(&sandbox, twice.join(library_file("tns-adapter-sandbox"))).unwrap();
    std::fs::copy(&sandbox, twice.join(library_file("tns-adapter-sandbox-copy"))).unwrap();
    let out =
        tns_command("adapters", &env.with(&[("TNS_ADAPTER_DIR", twice.to_str().unwrap())])).output().await.unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "one sandbox");
    assert!(String::from_utf8_lossy(&out.stderr).contains("already is the adapter `sandbox`"));

    let empty = state_dir();
    let out =
        tns_command("adapters", &env.with(&[("TNS_ADAPTER_DIR", empty.to_str().unwrap())])).output().await.unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no adapter loaded"));
}
