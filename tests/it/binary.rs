//! Tests that run the real `tns` binary.

use std::{collections::HashSet, time::Duration};

use futures::{stream, StreamExt};
use serde_json::Value;

use crate::helpers::*;

async fn run_to_end(role: &str, env: &Env) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), tns_command(role, env).output())
        .await
        .expect("tns exits")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[tokio::test]
async fn bad_configuration_stops_start_up_with_one_clear_line() {
    let env = Env::new().await;
    let mut no_secret = env.clone();
    no_secret.0.remove("TNS_SIGNING_SECRET");
    let (code, _, err) = run_to_end("api", &no_secret).await;
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.starts_with("tns: configuration error: TNS_SIGNING_SECRET: "), "{err}");

    let (code, _, err) = run_to_end("api", &env.with(&[("TNS_SIGNING_SECRET", "too-short")])).await;
    assert_eq!(code, 2);
    assert!(err.contains("TNS_SIGNING_SECRET") && err.contains("32"), "{err}");

    let (code, _, err) = run_to_end("api", &env.with(&[("TNS_DB_MAX_CONNECTIONS", "lots")])).await;
    assert_eq!(
        (code, err.trim()),
        (2, "tns: configuration error: TNS_DB_MAX_CONNECTIONS: `lots` is not a whole number")
    );

    // Webhook secrets are sealed by the API and unsealed by the scheduler: both need the key.
    let mut no_key = env.clone();
    no_key.0.remove("TNS_DATA_KEY");
    for role in ["api", "scheduler"] {
        let (code, _, err) = run_to_end(role, &no_key).await;
        assert_eq!(code, 2, "{role}");
        assert!(err.starts_with("tns: configuration error: TNS_DATA_KEY: "), "{role}: {err}");
    }

    let (code, _, err) = run_to_end("fly", &env).await;
    assert_eq!(code, 64);
    assert!(err.contains("usage: tns"));
}

#[tokio::test]
async fn u_etds_over_plain_http_stops_start_up_unless_allowed() {
    // The plugin parses its own settings: a refusal stops the process once it loads the plugin
    // (exit 1), its last line naming the variable.
    let env = Env::new().await.with(&[("TNS_ADAPTER_DIR", plugin_dir().to_str().unwrap())]);
    let without_opt_in = |vars: &[(&str, &str)]| {
        let mut e = env.with(vars);
        e.0.remove("TNS_ADAPTER_UETDS_ALLOW_HTTP");
        e
    };
    let refused = |err: &str, var: &str| {
        let last = err.trim().lines().last().unwrap_or_default().to_string();
        last.starts_with("tns: configuration error: ") && last.contains(&format!("configuration: {var}: "))
    };
    let plain = without_opt_in(&[("TNS_ADAPTER_UETDS_BASE_URL", "http://127.0.0.1:8099")]);
    for role in ["adapters", "scheduler", "api"] {
        let (code, _, err) = run_to_end(role, &plain).await;
        assert_eq!(code, 2, "{role}: {err}");
        assert!(
            refused(&err, "TNS_ADAPTER_UETDS_BASE_URL")
                && err.contains("must be an https:// URL")
                && err.contains("TNS_ADAPTER_UETDS_ALLOW_HTTP"),
            "{role}: {err}"
        );
    }
    let (code, _, err) = run_to_end("adapters", &plain.with(&[("TNS_ADAPTER_UETDS_ALLOW_HTTP", "maybe")])).await;
    assert_eq!(code, 2);
    assert!(refused(&err, "TNS_ADAPTER_UETDS_ALLOW_HTTP"), "{err}");
    // An endpoint override is held to the same rule.
    let plain_endpoint =
        without_opt_in(&[("TNS_ADAPTER_UETDS_ENDPOINTS", "arizi.production=http://proxy.example/uetdsarizi")]);
    let (code, _, err) = run_to_end("adapters", &plain_endpoint).await;
    assert_eq!(code, 2);
    assert!(refused(&err, "TNS_ADAPTER_UETDS_ENDPOINTS") && err.contains("must be an https:// URL"), "{err}");
    // A setting under its old name is not ignored (the default gateway would be used instead):
    // refused, naming the new one.
    let (code, _, err) =
        run_to_end("adapters", &env.with(&[("TNS_UETDS_BASE_URL", "https://egress.example:8443")])).await;
    assert_eq!(code, 2);
    assert!(err.contains("TNS_UETDS_BASE_URL") && err.contains("TNS_ADAPTER_UETDS_BASE_URL"), "{err}");

    // Allowed explicitly (a simulator), or https: the plugin loads.
    for allowed in [
        plain.with(&[("TNS_ADAPTER_UETDS_ALLOW_HTTP", "true")]),
        plain_endpoint.with(&[("TNS_ADAPTER_UETDS_ALLOW_HTTP", "true")]),
        without_opt_in(&[("TNS_ADAPTER_UETDS_BASE_URL", "https://egress.example:8443")]),
    ] {
        let (code, out, err) = run_to_end("adapters", &allowed).await;
        assert_eq!(code, 0, "{err}");
        assert!(out.lines().any(|l| l.starts_with("uetds\t")), "{out}");
    }
}

#[tokio::test]
async fn scheduler_without_adapters_refuses_to_start_and_migrate_is_idempotent() {
    let env = Env::new().await;
    let empty = state_dir();
    let (code, _, err) = run_to_end("scheduler", &env.with(&[("TNS_ADAPTER_DIR", empty.to_str().unwrap())])).await;
    assert_eq!(code, 1);
    assert!(err.contains("no adapter plugin loaded from"), "{err}");

    for _ in 0..2 {
        let (code, out, err) = run_to_end("migrate", &env).await;
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("migrations applied"));
    }
    let plans: i64 = sqlx::query_scalar("SELECT count(*) FROM plans").fetch_one(&env.pool().await).await.unwrap();
    assert_eq!(plans, 7);
}

#[tokio::test]
async fn dev_creates_its_database_and_serves() {
    let env = Env::new().await;
    let name = format!("tns_it_{}_dev{}", chrono::Utc::now().timestamp(), std::process::id());
    let dev_env = env.with(&[("TNS_DATABASE_URL", &format!("{PG}/{name}"))]);
    let mut dev_env = dev_env;
    dev_env.0.remove("TNS_SIGNING_SECRET");
    let p = Proc::start("dev", &dev_env).await;
    let org = p.register().await;
    assert_eq!(p.get("/portal/me", &org.key).await.status(), 200);

    // The whole product in one process: a submission goes through the scheduler and the
    // sandbox plugin it loaded from next to the binary.
    let driver = p.post_ok("/portal/personnel", &org.key, crate::fixtures::person(7, "driver"), 201).await;
    let mut journey = crate::fixtures::journey(serde_json::json!("34DEV001"));
    journey["personnel_ids"] = serde_json::json!([driver["id"]]);
    let j = p.post_ok("/portal/journeys", &org.key, journey, 201).await["id"].as_i64().unwrap();
    let res = p
        .req(reqwest::Method::POST, &format!("/portal/journeys/{j}/submit"), Some(&org.key))
        .header("Prefer", "wait=20")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["preference-applied"], "wait=20");
    let s = json_of(res, 202).await;
    assert_eq!(s["status"], "delivered", "{s}");
    // The scheduler counts the outcome just after recording it, which is when the answer above
    // could come: give the counter a moment.
    let delivered = r#"tns_submissions_finished_total{adapter="sandbox",state="delivered"} 1"#;
    let mut metrics = p.metrics().await;
    for _ in 0..100 {
        if metrics.contains(delivered) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        metrics = p.metrics().await;
    }
    assert!(metrics.contains(delivered), "{metrics}");
    assert!(metrics.contains("tns_adapter_call_duration_seconds_bucket"));
}

#[tokio::test]
async fn revoked_key_and_its_tokens_die_on_every_process_within_five_seconds() {
    let env = Env::new().await;
    let (a, b) = tokio::join!(Proc::start("api", &env), Proc::start("api", &env));
    let org = a.register().await;
    let (key_id, key) = a.create_key(&org.key, &["journeys:read", "account:read"]).await;
    let token = a.token(&key).await;
    // B has both credentials cached as valid.
    assert_eq!(b.get("/portal/me", &key).await.status(), 200);
    assert_eq!(b.get("/portal/me", &token).await.status(), 200);

    assert_eq!(a.delete(&format!("/portal/api-keys/{key_id}"), &org.key).await.status(), 200);
    let revoked_at = tokio::time::Instant::now();
    let dead = eventually(Duration::from_secs(5), || async {
        let k = b.get("/portal/me", &key).await.status();
        let t = b.get("/portal/me", &token).await.status();
        (k == 401 && t == 401).then_some(revoked_at.elapsed())
    })
    .await;
    assert!(dead.is_some(), "key and token still accepted by the second process 5 s after revocation");
    // And they stay dead; the owner key is unaffected.
    error_body(b.get("/portal/me", &token).await, 401).await;
    assert_eq!(b.get("/portal/me", &org.key).await.status(), 200);
}

/// `calls` calls of one organization with a hard quota of `quota`, alternating between two API
/// processes of `env`, 64 in flight: exactly the quota is admitted, each `X-RateLimit-Remaining`
/// once, the usage read at once on either process is exact, and so is the ledger. Returns the
/// two processes.
async fn quota_exact_across(env: &Env, quota: i32, calls: usize) -> (Proc, Proc) {
    let (a, b) = tokio::join!(Proc::start("api", env), Proc::start("api", env));
    let org = a.register().await;
    set_custom_plan(&env.pool().await, org.id, "it-quota", Some(quota), None).await;

    let outcomes: Vec<(u16, Option<i64>)> = stream::iter(0..calls)
        .map(|i| {
            let api = if i % 2 == 0 { &a.api } else { &b.api };
            let key = org.key.clone();
            async move {
                let res = api.get("/portal/me", &key).await;
                let status = res.status().as_u16();
                (status, (status == 200).then(|| header_i64(&res, "x-ratelimit-remaining")))
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;

    let quota_calls = quota as usize;
    let admitted: Vec<i64> = outcomes.iter().filter_map(|(_, r)| *r).collect();
    assert_eq!(admitted.len(), quota_calls, "exactly the quota is admitted");
    assert_eq!(outcomes.iter().filter(|(s, _)| *s == 429).count(), calls - quota_calls);
    let unique: HashSet<i64> = admitted.iter().copied().collect();
    assert_eq!(unique.len(), quota_calls, "no Remaining value handed out twice");
    assert_eq!(unique, (0..quota as i64).collect::<HashSet<i64>>());

    let usage: Value = b.usage(&org.key).await;
    let me = usage["by_endpoint"].as_array().unwrap().iter().find(|e| e["endpoint"] == "GET /portal/me").unwrap();
    assert_eq!(me["total_calls"], quota);
    assert_eq!(usage["monthly_total"], quota + 1, "the calls admitted plus this usage call");

    // The persisted copy converges to the same count.
    let db = env.pool().await;
    let persisted = eventually(Duration::from_secs(10), || async {
        let n: Option<i64> = sqlx::query_scalar(
            "SELECT total_calls FROM usage_monthly WHERE org_id = $1 AND endpoint = 'GET /portal/me'",
        )
        .bind(org.id)
        .fetch_optional(&db)
        .await
        .unwrap();
        n.filter(|n| *n == quota as i64)
    })
    .await;
    assert_eq!(persisted, Some(quota as i64), "the ledger counts each call once");
    (a, b)
}

#[tokio::test]
async fn quota_is_exact_across_two_processes() {
    let env = Env::new().await.with(&[("TNS_USAGE_FLUSH_SECS", "1")]);
    quota_exact_across(&env, 300, 400).await;
}

/// The calls a process admitted from leases, from its metrics.
async fn leased_calls(p: &Proc) -> i64 {
    let metrics = p.metrics().await;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("tns_quota_leased_calls_total "))
        .map(|n| n.trim().parse().unwrap())
        .unwrap_or(0)
}

#[tokio::test]
async fn quota_stays_exact_when_processes_admit_from_leases() {
    // Small leases, so both processes lease many times before the quota's margin (2 × 16).
    let env = Env::new().await.with(&[("TNS_USAGE_FLUSH_SECS", "1"), ("TNS_QUOTA_LEASE_MAX", "16")]);
    let (a, b) = quota_exact_across(&env, 1000, 1300).await;
    let (leased_a, leased_b) = (leased_calls(&a).await, leased_calls(&b).await);
    assert!(leased_a > 0 && leased_b > 0, "both processes admitted from leases: {leased_a}, {leased_b}");
}

/// Keeps both processes busy with `org`'s calls until each admits from a lease, then runs
/// `change` while they are still busy, and answers what it answered (None: no lease in 20 s).
async fn while_leasing<T, F: std::future::Future<Output = T>>(a: &Proc, b: &Proc, key: &str, change: F) -> Option<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let busy = AtomicBool::new(true);
    let load = stream::iter(0..).take_while(|_| std::future::ready(busy.load(Ordering::Relaxed))).for_each_concurrent(
        16,
        |i| async move {
            (if i % 2 == 0 { a } else { b }).get("/portal/me", key).await;
        },
    );
    let changed = async {
        let leasing = eventually(Duration::from_secs(20), || async {
            (leased_calls(a).await > 0 && leased_calls(b).await > 0).then_some(())
        })
        .await;
        let out = match leasing {
            Some(()) => Some(change.await),
            None => None,
        };
        busy.store(false, Ordering::Relaxed);
        out
    };
    tokio::join!(changed, load).0
}

/// Two API processes of `env` and an organization on an unlimited plan (leases far from any
/// quota).
async fn unlimited_on_two(env: &Env) -> (Proc, Proc, Org) {
    let (a, b) = tokio::join!(Proc::start("api", env), Proc::start("api", env));
    let org = a.register().await;
    set_custom_plan(&env.pool().await, org.id, "it-unlimited", None, None).await;
    (a, b, org)
}

#[tokio::test]
async fn a_suspension_holds_at_once_on_processes_holding_leases() {
    let env = Env::new().await;
    let (a, b, org) = unlimited_on_two(&env).await;

    let refused = while_leasing(&a, &b, &org.key, async {
        let id = org.id.to_string();
        tns_admin(&env, &["set-status", &id, "suspended", "--reason", "abuse", "--operator", "deniz"]).await.unwrap();
        // The command has returned: no process admits a change from a lease any more.
        let mut refused = Vec::new();
        for (i, p) in [&a, &b].into_iter().enumerate() {
            let res =
                p.post("/portal/vehicles", Some(&org.key), crate::fixtures::vehicle(&format!("34SUS{i:03}"))).await;
            refused.push(res.status().as_u16());
        }
        refused
    })
    .await
    .expect("both processes leased under load");
    assert_eq!(refused, [403, 403], "the suspension held at once on both processes");
}

#[tokio::test]
async fn a_plan_change_holds_at_once_on_processes_holding_leases() {
    let env = Env::new().await;
    let (a, b, org) = unlimited_on_two(&env).await;

    let limits = while_leasing(&a, &b, &org.key, async {
        let change = serde_json::json!({"plan_code": "Y-25"});
        let res = a.post("/portal/billing/subscription/change", Some(&org.key), change).await;
        assert_eq!(res.status(), 200);
        let mut limits = Vec::new();
        for p in [&b, &a] {
            limits.push(header_i64(&p.get("/portal/me", &org.key).await, "x-ratelimit-limit"));
        }
        limits
    })
    .await
    .expect("both processes leased under load");
    assert_eq!(limits, [2500, 2500], "the new quota held at once on both processes");
}

#[tokio::test]
async fn usage_read_at_once_counts_what_leases_admitted() {
    let env = Env::new().await;
    let (a, b, org) = unlimited_on_two(&env).await;
    let statuses: Vec<u16> = stream::iter(0..2000)
        .map(|i| {
            let (api, key) = (if i % 2 == 0 { &a.api } else { &b.api }, org.key.clone());
            async move { api.get("/portal/me", &key).await.status().as_u16() }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    assert!(statuses.iter().all(|s| *s == 200));
    let (leased_a, leased_b) = (leased_calls(&a).await, leased_calls(&b).await);
    assert!(leased_a > 0 && leased_b > 0, "both processes admitted from leases: {leased_a}, {leased_b}");
    // Far from any quota, the leases are still held when usage is read, on either process.
    let usage: Value = b.usage(&org.key).await;
    let me = usage["by_endpoint"].as_array().unwrap().iter().find(|e| e["endpoint"] == "GET /portal/me").unwrap();
    assert_eq!(me["total_calls"], 2000, "{usage}");
    assert_eq!(usage["monthly_total"], 2001);
}
