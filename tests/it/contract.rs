//! The contract, from the outside, against the real binary: schemathesis fuzzes the served
//! OpenAPI document (every check, every phase), and a client generated from the document by a
//! mainstream generator drives a whole flow. Both are Python tools from PyPI; their scripts in
//! `tests/contract/` install them into virtual environments of their own.

use std::{path::PathBuf, process::Stdio};

use tns_uetds_fake::FakeUetds;

use crate::helpers::{Env, Proc};

/// `tns dev` (API and scheduler with the adapters) on a database of its own, with the per-IP
/// limit out of the way (the fuzzer sends tens of thousands of unauthenticated probes) and U-ETDS
/// played by the fake. The fake lives as long as the server.
async fn server() -> (Proc, FakeUetds) {
    let fake = FakeUetds::start_background();
    fake.set_validate_xsd(false);
    // Any credentials are a firm's here: a downstream's refusal of schema-valid credentials is
    // not the document's to say (the U-ETDS tests cover refusals).
    fake.set_open_accounts(true);
    let base = fake.base_url();
    let env = Env::new()
        .await
        .with_scheduler()
        .with(&[("TNS_AUTH_RATE_LIMIT", "1000000000"), ("TNS_UETDS_BASE_URL", base.as_str())]);
    (Proc::start("dev", &env).await, fake)
}

/// Run a script of `tests/contract/` with the server's root URL; its output is the test's.
async fn run(script: &str, root: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/contract");
    let status = tokio::process::Command::new(dir.join(script))
        .arg(root)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .status()
        .await
        .unwrap_or_else(|e| panic!("{script} runs: {e}"));
    assert!(status.success(), "{script} against {root}: {status}");
}

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let (server, _fake) = server().await;
    run("fuzz.sh", &server.api.root).await;
}

#[tokio::test]
async fn a_client_generated_from_the_document_drives_a_whole_flow() {
    let (server, _fake) = server().await;
    run("client.sh", &server.api.root).await;
}
