//! The contract, from the outside, against the real binary: schemathesis fuzzes the served
//! OpenAPI document (every check, every phase), and a client generated from the document by a
//! mainstream generator drives a whole flow. Both are Python tools from PyPI; their scripts in
//! `tests/contract/` install them into virtual environments of their own.

use std::{path::PathBuf, process::Stdio};

use crate::helpers::{Env, Proc};

/// `tns dev` (API and scheduler with the sandbox) on a database of its own, with the per-IP limit
/// out of the way: the fuzzer sends tens of thousands of unauthenticated probes.
async fn server() -> Proc {
    let env = Env::new().await.with_scheduler().with(&[("TNS_AUTH_RATE_LIMIT", "1000000000")]);
    Proc::start("dev", &env).await
}

/// Run a script of `tests/contract/` with the server's root URL; its output is the test's.
async fn run(script: &str, root: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contract");
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
    let server = server().await;
    run("fuzz.sh", &server.api.root).await;
}

#[tokio::test]
async fn a_client_generated_from_the_document_drives_a_whole_flow() {
    let server = server().await;
    run("client.sh", &server.api.root).await;
}
