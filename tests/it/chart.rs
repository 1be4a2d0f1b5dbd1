//! The Helm chart, checked against the very binary Cargo built: `charts/tns/ci/check.sh` lints
//! and renders the chart with every value set, validates each object strictly against a current
//! Kubernetes, asserts what the chart promises (the environment it sets is exactly variables
//! `tns env` lists), and renders deliberately wrong value sets that must be refused. It installs
//! helm, kubernetes-validate and the ServiceMonitor schema from the registries under /tmp.

use std::{path::PathBuf, process::Stdio};

use crate::helpers::tns_binary;

#[tokio::test]
async fn the_chart_lints_renders_validates_and_keeps_its_promises() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("charts/tns/ci/check.sh");
    let out = tokio::process::Command::new(&script)
        .arg(tns_binary())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{} runs: {e}", script.display()));
    assert!(
        out.status.success(),
        "chart check failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
