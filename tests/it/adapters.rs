//! The adapter contract through the real C ABI: the sandbox `.so` and an ABI-mismatch fixture
//! loaded with libloading, every sandbox scenario, panics contained, records shared between
//! instances, what each plugin describes of itself (the U-ETDS one against a fake), a minimal
//! downstream TNS knows nothing of outside its own crate, and `tns adapters` listing what loaded.

use std::time::Instant;

use base64::Engine;
use serde_json::json;
use tns_adapter::{
    host::{library_file, load_dir, LoadError, Plugin},
    Account, Adapter, AdapterError, AdapterResult, Amendment, Cancellation, Cargo, Credentials, CredentialsCheck,
    Description, InspectRequest, Journey, Kind, Notification, Party, Passenger, Person, PluginConfig, Problem, Receipt,
    Records, ReportRequest, Step, Stop, Work,
};
use tns_uetds_fake::{FakeUetds, TEST_PASSWORD, TEST_USER};

use crate::helpers::{plugin_dir, sandbox_records, state_dir, tns_command};

/// What the host creates plugin `name` with: these of its settings, by suffix
/// (`TNS_ADAPTER_<NAME>_<suffix>`).
fn plugin_config(name: &str, vars: &[(&str, &str)]) -> PluginConfig {
    PluginConfig {
        vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        prefix: Description::settings_prefix(name),
        dev: false,
        call_timeout_ms: 60_000,
    }
}

fn load(crate_name: &str, config: PluginConfig) -> Result<Plugin, LoadError> {
    Plugin::load(&plugin_dir().join(library_file(crate_name)), &serde_json::to_value(config).unwrap())
}

fn sandbox(state: &std::path::Path) -> Plugin {
    load("tns-adapter-sandbox", plugin_config("sandbox", &[("STATE_DIR", state.to_str().unwrap())])).unwrap()
}

/// The U-ETDS plugin against a simulator at `base_url` (plain http, allowed for it).
fn uetds(base_url: &str) -> Plugin {
    load("tns-adapter-uetds", plugin_config("uetds", &[("BASE_URL", base_url), ("ALLOW_HTTP", "true")])).unwrap()
}

/// An organization's credentials: these fields, secret ones included.
fn credentials(fields: &[(&str, &str)]) -> Credentials {
    Credentials { fields: fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() }
}

/// An organization's U-ETDS account on the test environment.
fn uetds_credentials(user: &str, password: &str) -> Credentials {
    credentials(&[("environment", "test"), ("ws_username", user), ("ws_password", password)])
}

fn person(id: &str) -> Person {
    Person::new("passenger", id, "Ali", "Kaya", "E")
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

/// A road shipment of 10 `unit`.
fn cargo(unit: &str) -> Cargo {
    Cargo {
        dangerous: None,
        plate: "34ABC123".into(),
        driver: Some(person("10000000146")),
        second_driver: None,
        trailer_plate: None,
        transport_type: 1,
        cargo_type: 7,
        transport_mode: 1,
        amount: 10.0,
        unit: unit.into(),
        sender: Party { tax_number: "4540536920".into(), name: "A".into() },
        receiver: Party { tax_number: "1234567890".into(), name: "B".into() },
        loading: stop("2026-12-02"),
        unloading: stop("2026-12-03"),
        items: vec![],
    }
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
    // Where organizations that chose no downstream submit; it needs no account, one setting.
    let d = sb.describe();
    assert_eq!((d.name.as_str(), d.default), ("sandbox", true));
    assert!(d.accepts(Records::Journeys) && d.accepts(Records::Cargo), "{d:?}");
    assert!(d.credentials.is_empty(), "{d:?}");
    assert_eq!(d.settings, ["STATE_DIR"]);
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
    let cargo = cargo("KG");
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
    // A setting the plugin does not read is refused, named in full (a typo must not pass).
    match load("tns-adapter-sandbox", plugin_config("sandbox", &[("NO_SUCH", "1")])) {
        Err(e @ LoadError::Create { error: AdapterError::Configuration(_), .. }) => {
            assert!(e.is_configuration());
            assert!(e.to_string().contains("TNS_ADAPTER_SANDBOX_NO_SUCH"), "{e}")
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

    // Two libraries claiming one adapter name (the name is what follows the last
    // `tns_adapter_`): the second is refused, named. A library whose file promises another
    // adapter than the one it describes is refused too.
    let twice = state_dir();
    let sandbox = plugin_dir().join(library_file("tns-adapter-sandbox"));
    std::fs::copy(&sandbox, twice.join(library_file("tns-adapter-sandbox"))).unwrap();
    std::fs::copy(&sandbox, twice.join(library_file("x-tns-adapter-sandbox"))).unwrap();
    std::fs::copy(&sandbox, twice.join(library_file("tns-adapter-sandbox-copy"))).unwrap();
    let out =
        tns_command("adapters", &env.with(&[("TNS_ADAPTER_DIR", twice.to_str().unwrap())])).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1, "one sandbox");
    assert!(stderr.contains("already is the adapter `sandbox`"), "{stderr}");
    assert!(stderr.contains("the file promises adapter `sandbox_copy`"), "{stderr}");

    // A downstream TNS knows nothing of: its library in the directory is all it takes, and its
    // settings are its own (one it does not read stops the process, named).
    let minimal = minimal_dir();
    let dir = ("TNS_ADAPTER_DIR", minimal.to_str().unwrap());
    let out =
        tns_command("adapters", &env.with(&[dir, ("TNS_ADAPTER_MINIMAL_GREETING", "merhaba")])).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with(&format!("minimal\t{}\t", env!("CARGO_PKG_VERSION"))), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let out = tns_command("adapters", &env.with(&[dir, ("TNS_ADAPTER_MINIMAL_NOPE", "1")])).output().await.unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("TNS_ADAPTER_MINIMAL_NOPE"));

    let empty = state_dir();
    let out =
        tns_command("adapters", &env.with(&[("TNS_ADAPTER_DIR", empty.to_str().unwrap())])).output().await.unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no adapter loaded"));
}

#[test]
fn uetds_describes_its_account_and_screens_what_it_cannot_take() {
    let fake = FakeUetds::start_background();
    let u = uetds(&fake.base_url());
    let d = u.describe();
    assert_eq!((d.name.as_str(), d.default), ("uetds", false));
    assert!(d.accepts(Records::Journeys) && d.accepts(Records::Cargo), "{d:?}");
    let fields: Vec<(&str, bool)> = d.credentials.iter().map(|f| (f.name.as_str(), f.secret)).collect();
    assert_eq!(fields, [("environment", false), ("ws_username", false), ("ws_password", true)]);
    assert!(d.settings.iter().any(|s| s == "BASE_URL"), "{:?}", d.settings);

    // The credentials, checked with U-ETDS; a missing field is said without calling it.
    let verify = |c: Credentials| u.verify_credentials(&CredentialsCheck { credentials: c });
    assert_eq!(verify(uetds_credentials(TEST_USER, TEST_PASSWORD)).unwrap().username, TEST_USER);
    match verify(uetds_credentials(TEST_USER, "nope")) {
        Err(AdapterError::Configuration(m)) => assert!(m.contains("KULLANICI ADI YADA SIFRE HATALI"), "{m}"),
        other => panic!("expected U-ETDS's refusal, got {other:?}"),
    }
    let calls = fake.requests().len();
    match verify(credentials(&[("environment", "test"), ("ws_username", TEST_USER)])) {
        Err(AdapterError::Configuration(m)) => assert!(m.contains("ws_password"), "{m}"),
        other => panic!("expected the missing password named, got {other:?}"),
    }
    assert_eq!(fake.requests().len(), calls, "not asked");

    // Goods U-ETDS has no unit for are found before anything is queued, named as the API's fields.
    let problems = u.screen(&Work::Cargo(cargo("M3"))).unwrap();
    assert_eq!(problems.iter().map(|p| p.field.as_str()).collect::<Vec<_>>(), ["cargo_unit"], "{problems:?}");
    assert!(u.screen(&Work::Cargo(cargo("KG"))).unwrap().is_empty());
    assert!(u.screen(&journey("j", "34ABC123", &["17291716060"]).work).unwrap().is_empty());
    assert_eq!(fake.requests().len(), calls, "screening calls nothing");
}

/// The minimal fixture (`adapters/fixtures/minimal`) in a directory of its own, under the file
/// name an adapter named `minimal` has: its crate's library is not named like an adapter, so
/// nothing loads it from next to the binary.
fn minimal_dir() -> std::path::PathBuf {
    let dir = state_dir();
    let built = plugin_dir().join(library_file("minimal-adapter-fixture"));
    std::fs::copy(&built, dir.join(library_file("tns-adapter-minimal")))
        .unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    dir
}

#[test]
fn a_downstream_tns_knows_nothing_of_works_through_its_description_alone() {
    let dir = minimal_dir();
    let (mut loaded, failed) = load_dir(&dir, |name| plugin_config(name, &[("GREETING", "merhaba")])).unwrap();
    assert!(failed.is_empty(), "{:?}", failed.iter().map(ToString::to_string).collect::<Vec<_>>());
    assert_eq!(loaded.len(), 1);
    let m = loaded.remove(0);
    let d = m.describe();
    assert_eq!((d.name.as_str(), d.title.en.as_str(), d.default), ("minimal", "Minimal", false));
    assert_eq!(d.accepts, [Records::Journeys]);
    let fields: Vec<(&str, bool, usize)> =
        d.credentials.iter().map(|f| (f.name.as_str(), f.secret, f.max_len)).collect();
    assert_eq!(fields, [("account", false, 12), ("token", true, 64)]);
    assert_eq!(d.credentials[0].pattern.as_deref(), Some("[a-z]{3,12}"));
    assert_eq!(d.settings, ["GREETING"]);

    // Delivered in one call, its reference made from ours, with the organization's credentials only.
    let mut n = journey("tns-1", "34ABC123", &["17291716060"]);
    assert_eq!(m.advance(&n), Err(AdapterError::Configuration("no credentials".into())));
    n.credentials = Some(credentials(&[("account", "abc"), ("token", "t0k3n")]));
    let receipt = done(m.advance(&n)).unwrap();
    assert_eq!((receipt.downstream_reference.as_str(), receipt.message.as_deref()), ("MIN-tns-1", Some("merhaba")));
    assert!(!receipt.is_partial());
    assert_eq!(done(m.reconcile(&n)).unwrap(), receipt, "stateless: the same answer again");

    let verify = |token: &str| {
        m.verify_credentials(&CredentialsCheck { credentials: credentials(&[("account", "abc"), ("token", token)]) })
    };
    assert_eq!(
        verify("t0k3n").unwrap(),
        Account { username: "abc".into(), name: Some("MINIMAL".into()), message: None }
    );
    // The plugin echoes the refused token; the host masks what its description calls secret.
    assert_eq!(verify("wrong"), Err(AdapterError::Permanent("token refused: *** is not known here".into())));

    assert_eq!(
        m.screen(&journey("tns-2", "34NOPE1", &[]).work).unwrap(),
        [Problem { field: "plate".into(), detail: "the minimal downstream refuses this plate".into() }]
    );
    assert!(m.screen(&n.work).unwrap().is_empty());
    // What it does not do, the contract's defaults answer for it.
    let ask = InspectRequest {
        credentials: None,
        kind: Kind::NonScheduled,
        downstream_reference: receipt.downstream_reference.clone(),
        downstream_state: serde_json::Value::Null,
        references: vec![],
    };
    assert_eq!(m.inspect(&ask), Ok(None));

    // Its greeting defaults; a setting it does not read is refused, named in full.
    let (loaded, _) = load_dir(&dir, |name| plugin_config(name, &[])).unwrap();
    assert_eq!(done(loaded[0].advance(&n)).unwrap().message.as_deref(), Some("ok"));
    let (loaded, failed) = load_dir(&dir, |name| plugin_config(name, &[("NOPE", "1")])).unwrap();
    assert!(loaded.is_empty());
    assert!(
        failed[0].is_configuration() && failed[0].to_string().contains("TNS_ADAPTER_MINIMAL_NOPE"),
        "{}",
        failed[0]
    );
}

/// The proof that a downstream needs nothing outside its own crate: the minimal fixture (a
/// crate no other code names), put beside the sandbox, is offered by the API, described in the
/// OpenAPI document, chosen with the credentials it describes, screens what it cannot take,
/// refuses the records it does not accept, and is delivered to by the scheduler.
#[tokio::test]
async fn a_third_downstream_is_offered_chosen_and_delivered_to_by_its_description_alone() {
    use crate::{
        fixtures::{cargo, journey, Fleet},
        helpers::{error_body, json_of, Env, InProcessScheduler, TestApp},
    };
    use reqwest::Method;

    let dir = minimal_dir();
    let sandbox = library_file("tns-adapter-sandbox");
    std::fs::copy(plugin_dir().join(&sandbox), dir.join(&sandbox)).unwrap();
    let env = Env::new()
        .await
        .with_scheduler()
        .with(&[("TNS_ADAPTER_DIR", dir.to_str().unwrap()), ("TNS_ADAPTER_MINIMAL_GREETING", "merhaba")]);
    let app = TestApp::start(env.clone()).await;
    let scheduler = InProcessScheduler::start(&env).await;
    let fleet = Fleet::new(&app).await;

    // Offered, as it describes itself; the sandbox stays the default until one is chosen.
    let d = app.get_ok("/portal/downstream", fleet.key()).await;
    assert_eq!(d["available"], json!(["minimal", "sandbox"]), "{d}");
    assert_eq!(d["adapter"], "sandbox", "{d}");
    let minimal = d["adapters"].as_array().unwrap().iter().find(|a| a["name"] == "minimal").unwrap().clone();
    assert_eq!(minimal["accepts"], json!(["journeys"]));
    let fields: Vec<(&str, bool)> = minimal["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["secret"].as_bool().unwrap()))
        .collect();
    assert_eq!(fields, [("account", false), ("token", true)]);

    // The OpenAPI document: a branch of `PUT /portal/downstream`'s body with its fields.
    let doc: serde_json::Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let branches = doc["components"]["schemas"]["DownstreamIn"]["oneOf"].as_array().unwrap().clone();
    let branch = branches.iter().find(|b| b["properties"]["adapter"]["const"] == "minimal").expect("a branch");
    assert_eq!(branch["required"], json!(["adapter", "account", "token"]));
    assert_eq!(branch["properties"]["token"]["writeOnly"], true);
    assert_eq!(branch["additionalProperties"], false);
    assert_eq!(branches.len(), 2, "the minimal adapter and the sandbox");

    // Chosen: its fields' rules from its description, its own check of the credentials.
    let put =
        |body: serde_json::Value| app.req(Method::PUT, "/portal/downstream", Some(fleet.key())).json(&body).send();
    let e = error_body(put(json!({"adapter": "minimal", "account": "AB", "token": "t"})).await.unwrap(), 422).await;
    assert!(e["detail"].as_str().unwrap().starts_with("account"), "{e}");
    let e = error_body(put(json!({"adapter": "minimal", "account": "acme"})).await.unwrap(), 422).await;
    assert!(
        e["detail"].as_str().unwrap().contains("token") && e["detail"].as_str().unwrap().contains("required"),
        "{e}"
    );
    let other = json!({"adapter": "minimal", "account": "acme", "token": "t", "ws_username": "1"});
    let e = error_body(put(other).await.unwrap(), 422).await;
    assert!(e["detail"].as_str().unwrap().contains("not a field of the `minimal` adapter"), "{e}");
    let e =
        error_body(put(json!({"adapter": "minimal", "account": "acme", "token": "wrong"})).await.unwrap(), 422).await;
    assert!(e["detail"].as_str().unwrap().contains("token refused: *** is"), "{e}");
    let e = error_body(put(json!({"adapter": "nowhere"})).await.unwrap(), 422).await;
    assert!(e["detail"].as_str().unwrap().contains("minimal, sandbox"), "{e}");
    let chosen =
        json_of(put(json!({"adapter": "minimal", "account": "acme", "token": "s3cret-token"})).await.unwrap(), 200)
            .await;
    assert_eq!((chosen["adapter"].as_str(), chosen["account"].as_str()), (Some("minimal"), Some("acme")), "{chosen}");
    assert_eq!(chosen["secrets_set"], json!(["token"]));
    assert!(!chosen.to_string().contains("s3cret-token"), "a secret is never shown back");
    let stored: String =
        sqlx::query_scalar("SELECT fields::text || secrets::text FROM downstream_settings WHERE org_id = $1")
            .bind(fleet.org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(stored.contains("acme") && !stored.contains("s3cret-token"), "the secret is sealed at rest: {stored}");

    // What it does not accept, and what it screens out, are refused before anything is queued.
    let shipment = app.post_ok("/portal/cargo", fleet.key(), cargo(fleet.vehicle_id), 201).await;
    let submit = |path: String| app.req(Method::POST, &path, Some(fleet.key())).send();
    let e = error_body(submit(format!("/portal/cargo/{}/submit", shipment["id"])).await.unwrap(), 409).await;
    assert!(e["detail"].as_str().unwrap().contains("takes no cargo shipments"), "{e}");
    let nope = app.post_ok("/portal/journeys", fleet.key(), journey(json!("34NOPE99")), 201).await;
    let e = error_body(submit(format!("/portal/journeys/{}/submit", nope["id"])).await.unwrap(), 409).await;
    assert!(e["detail"].as_str().unwrap().starts_with("plate: "), "{e}");
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM submissions WHERE org_id = $1")
        .bind(fleet.org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(queued, 0, "nothing was queued");

    // Delivered by the scheduler, with the credentials opened for the call.
    let id = fleet.journey(&app).await;
    let req = app.req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(fleet.key()));
    let answer = json_of(req.header("Prefer", "wait=30").send().await.unwrap(), 202).await;
    let sub = &answer["submission"];
    assert_eq!(sub["state"], "delivered", "{answer}");
    assert_eq!(sub["adapter"], "minimal", "{sub}");
    assert!(sub["downstream_reference"].as_str().unwrap().starts_with("MIN-tns-"), "{sub}");
    scheduler.stop().await;
}
