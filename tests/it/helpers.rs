//! Test harness: a fresh PostgreSQL database and Redis key prefix per test, the API
//! in-process on port 0 (`TestApp`) or as the real `tns` binary (`Proc`), and a TCP proxy
//! that can cut Redis or PostgreSQL off (`ChaosProxy`).

use std::{
    collections::HashMap,
    net::SocketAddr,
    path::PathBuf,
    process::Stdio,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::Duration,
};

use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::{json, Value};
use sqlx::{Connection, PgConnection, PgPool};
use tns::config::{Config, Role};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    net::{TcpListener, TcpStream},
    process::{Child, Command},
};

pub(crate) const PG: &str = "postgres://postgres@127.0.0.1:5432";
pub(crate) const REDIS: &str = "redis://127.0.0.1:6379";
pub(crate) const SECRET: &str = "it-signing-secret-0123456789abcdefghijklmnop";

fn unique() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("{}_{}_{}", chrono::Utc::now().timestamp(), std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Create an empty database for one test; drop those older test runs left behind.
pub(crate) async fn fresh_database() -> String {
    let mut admin = PgConnection::connect(&format!("{PG}/postgres")).await.expect("PostgreSQL on 127.0.0.1:5432");
    let stale: Vec<String> = sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'tns\\_it\\_%'")
        .fetch_all(&mut admin)
        .await
        .unwrap();
    let now = chrono::Utc::now().timestamp();
    for name in stale {
        let born: i64 = name.split('_').nth(2).and_then(|s| s.parse().ok()).unwrap_or(now);
        if now - born > 3 * 3600 {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")).execute(&mut admin).await;
        }
    }
    let name = format!("tns_it_{}", unique());
    sqlx::query(&format!("CREATE DATABASE \"{name}\"")).execute(&mut admin).await.unwrap();
    format!("{PG}/{name}")
}

/// Environment for one test deployment (shared by its processes).
#[derive(Clone)]
pub(crate) struct Env(pub HashMap<String, String>);

impl Env {
    pub(crate) async fn new() -> Env {
        let db = fresh_database().await;
        let mut m = HashMap::new();
        m.insert("TNS_DATABASE_URL".into(), db);
        m.insert("TNS_REDIS_URL".into(), REDIS.into());
        m.insert("TNS_REDIS_PREFIX".into(), format!("it:{}:", unique()));
        m.insert("TNS_SIGNING_SECRET".into(), SECRET.into());
        m.insert("TNS_DATA_KEY".into(), "5e".repeat(32));
        // Tests' receivers listen on loopback; the guard itself is tested with this off.
        m.insert("TNS_WEBHOOK_ALLOW_PRIVATE".into(), "true".into());
        m.insert("TNS_WEBHOOK_ALLOW_HTTP".into(), "true".into());
        // The fake U-ETDS speaks plain http on loopback.
        m.insert("TNS_ADAPTER_UETDS_ALLOW_HTTP".into(), "true".into());
        m.insert("TNS_LISTEN_ADDR".into(), "127.0.0.1:0".into());
        m.insert("TNS_METRICS_ADDR".into(), "127.0.0.1:0".into());
        m.insert("TNS_AUTH_RATE_LIMIT".into(), "100000".into());
        m.insert("TNS_DB_MAX_CONNECTIONS".into(), "8".into());
        Env(m)
    }

    pub(crate) fn with(&self, overrides: &[(&str, &str)]) -> Env {
        let mut e = self.clone();
        for (k, v) in overrides {
            e.0.insert(k.to_string(), v.to_string());
        }
        e
    }

    pub(crate) fn get(&self, k: &str) -> &str {
        &self.0[k]
    }

    /// This deployment with schedulers: the real plugin directory, a sandbox records directory
    /// of its own, and retries and polling fast enough for tests.
    pub(crate) fn with_scheduler(&self) -> Env {
        let state = state_dir();
        self.with(&[
            ("TNS_ADAPTER_DIR", plugin_dir().to_str().unwrap()),
            ("TNS_ADAPTER_SANDBOX_STATE_DIR", state.to_str().unwrap()),
            ("TNS_SCHEDULER_POLL_MS", "50"),
            ("TNS_RETRY_BASE_MS", "20"),
            ("TNS_RETRY_CAP_SECS", "1"),
        ])
    }

    pub(crate) fn sandbox_state(&self) -> PathBuf {
        PathBuf::from(self.get("TNS_ADAPTER_SANDBOX_STATE_DIR"))
    }

    /// As `Config::from_env` would parse this environment: the plugins get their
    /// `TNS_ADAPTER_<NAME>_*` variables too.
    pub(crate) fn config(&self, role: Role) -> Config {
        let mut cfg = Config::from_lookup(role, |k| self.0.get(k).cloned()).expect("valid test configuration");
        cfg.adapters = cfg.adapters.with_vars(self.0.clone());
        cfg
    }

    pub(crate) async fn pool(&self) -> PgPool {
        PgPool::connect(self.get("TNS_DATABASE_URL")).await.unwrap()
    }

    pub(crate) async fn redis(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(REDIS).unwrap().get_multiplexed_async_connection().await.unwrap()
    }

    pub(crate) fn redis_key(&self, rest: &str) -> String {
        format!("{}{}", self.get("TNS_REDIS_PREFIX"), rest)
    }
}

/// A client that keeps cookies (for portal sessions).
pub(crate) fn client() -> Client {
    tns_scheduler::webhooks::send::install_tls_provider();
    Client::builder().cookie_store(true).timeout(Duration::from_secs(30)).build().unwrap()
}

/// Calls against one API process.
#[derive(Clone)]
pub(crate) struct Api {
    pub root: String,
    /// The metrics listener's root.
    pub metrics_root: String,
    pub client: Client,
}

impl Api {
    pub(crate) fn new(addr: &str, metrics_addr: &str) -> Api {
        Api { root: format!("http://{addr}"), metrics_root: format!("http://{metrics_addr}"), client: client() }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        if path.starts_with('/') && !path.starts_with("/api/") && !["/healthz", "/readyz", "/metrics"].contains(&path) {
            format!("{}/api/v1{path}", self.root)
        } else {
            format!("{}{path}", self.root)
        }
    }

    pub(crate) fn req(&self, method: Method, path: &str, bearer: Option<&str>) -> RequestBuilder {
        let r = self.client.request(method, self.url(path));
        match bearer {
            Some(b) => r.bearer_auth(b),
            None => r,
        }
    }

    pub(crate) async fn get(&self, path: &str, bearer: &str) -> Response {
        self.req(Method::GET, path, Some(bearer)).send().await.unwrap()
    }

    pub(crate) async fn post(&self, path: &str, bearer: Option<&str>, body: Value) -> Response {
        self.req(Method::POST, path, bearer).json(&body).send().await.unwrap()
    }

    pub(crate) async fn put(&self, path: &str, bearer: &str, body: Value) -> Response {
        self.req(Method::PUT, path, Some(bearer)).json(&body).send().await.unwrap()
    }

    /// Any method, with an optional JSON body.
    pub(crate) async fn call(&self, method: Method, path: &str, bearer: &str, body: Option<Value>) -> Response {
        let r = self.req(method, path, Some(bearer));
        match body {
            Some(b) => r.json(&b),
            None => r,
        }
        .send()
        .await
        .unwrap()
    }

    /// POST and expect `status`; the body.
    pub(crate) async fn post_ok(&self, path: &str, bearer: &str, body: Value, status: u16) -> Value {
        json_of(self.post(path, Some(bearer), body).await, status).await
    }

    /// POST an action that queues a submission (submit, cancel, …) with `Prefer: wait=20`,
    /// expect 202; the body (the submission as it ended, or still was after the wait).
    pub(crate) async fn act(&self, path: &str, bearer: &str) -> Value {
        let res = self.req(Method::POST, path, Some(bearer)).header("Prefer", "wait=20").send().await.unwrap();
        json_of(res, 202).await
    }

    /// GET and expect 200; the body.
    pub(crate) async fn get_ok(&self, path: &str, bearer: &str) -> Value {
        json_of(self.get(path, bearer).await, 200).await
    }

    pub(crate) async fn delete(&self, path: &str, bearer: &str) -> Response {
        self.req(Method::DELETE, path, Some(bearer)).send().await.unwrap()
    }

    /// An unauthenticated GET (probes, public endpoints).
    pub(crate) async fn get_anon(&self, path: &str) -> Response {
        self.req(Method::GET, path, None).send().await.unwrap()
    }

    /// The Prometheus text of this process.
    /// The metrics listener's `/metrics`.
    pub(crate) async fn metrics(&self) -> String {
        let res = self.client.get(format!("{}/metrics", self.metrics_root)).send().await.unwrap();
        res.text().await.unwrap()
    }

    /// Register a new organization (a tax number of its own: one organization per company);
    /// returns its first key and ids.
    pub(crate) async fn register(&self) -> Org {
        let email = format!("owner-{}@example.com", unique());
        let tax_number = unique_tax_number();
        let res = self
            .post(
                "/auth/register",
                None,
                json!({"organization_name": "Acme Turizm", "tax_number": tax_number, "full_name": "Ayşe Yılmaz",
                       "email": email, "password": "correct horse"}),
            )
            .await;
        assert_eq!(res.status(), 201);
        let body: Value = res.json().await.unwrap();
        Org {
            id: body["organization_id"].as_i64().unwrap(),
            user_id: body["user_id"].as_i64().unwrap(),
            key: body["api_key"].as_str().unwrap().to_string(),
            email,
            password: "correct horse".into(),
            tax_number,
        }
    }

    /// Create a key with the given scopes using `bearer`; returns (id, key).
    pub(crate) async fn create_key(&self, bearer: &str, scopes: &[&str]) -> (i64, String) {
        let res = self.post("/portal/api-keys", Some(bearer), json!({"name": "test key", "scopes": scopes})).await;
        assert_eq!(res.status(), 201);
        let b: Value = res.json().await.unwrap();
        (b["id"].as_i64().unwrap(), b["api_key"].as_str().unwrap().to_string())
    }

    pub(crate) async fn token(&self, key: &str) -> String {
        let res = self.post("/auth/token", None, json!({"client_id": "", "client_secret": key})).await;
        assert_eq!(res.status(), 200);
        let b: Value = res.json().await.unwrap();
        b["access_token"].as_str().unwrap().to_string()
    }

    pub(crate) async fn usage(&self, bearer: &str) -> Value {
        self.usage_month(bearer, "").await
    }

    pub(crate) async fn usage_month(&self, bearer: &str, month: &str) -> Value {
        let path = if month.is_empty() { "/portal/usage".to_string() } else { format!("/portal/usage?month={month}") };
        let res = self.get(&path, bearer).await;
        assert_eq!(res.status(), 200);
        res.json().await.unwrap()
    }
}

pub(crate) struct Org {
    pub id: i64,
    pub user_id: i64,
    pub key: String,
    pub email: String,
    pub password: String,
    pub tax_number: String,
}

impl Org {
    /// The organization as the store's functions take it: asked of the database, as the
    /// operators' surfaces ask of a number.
    pub(crate) async fn tenant(&self, db: &PgPool) -> tns_core::ids::OrgId {
        tns_store::accounts::org_id(db, self.id).await.unwrap().expect("a registered organization")
    }
}

/// A tax number no other organization of this test process has (10 digits, starting with 9).
pub(crate) fn unique_tax_number() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("9{:09}", N.fetch_add(1, Ordering::Relaxed))
}

/// Read a numeric response header.
pub(crate) fn header_i64(res: &Response, name: &str) -> i64 {
    res.headers().get(name).unwrap_or_else(|| panic!("missing header {name}")).to_str().unwrap().parse().unwrap()
}

/// Assert the status and return the JSON body.
pub(crate) async fn json_of(res: Response, status: u16) -> Value {
    let got = res.status().as_u16();
    let body = res.text().await.unwrap();
    assert_eq!(got, status, "unexpected status; body: {body}");
    serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"))
}

/// Assert a 422 naming `field`.
pub(crate) async fn assert_invalid(res: Response, field: &str) {
    let b = json_of(res, 422).await;
    assert_eq!(b["error"], "Validation Error");
    assert_eq!(b["code"], "invalid_field", "{b}");
    assert_eq!(b["field"], field, "422 names the field: {b}");
    assert!(b["detail"].as_str().unwrap().contains(field), "detail names the field: {b}");
}

/// Assert a 404 for a record the body names: the detail starts with the field's name.
pub(crate) async fn assert_missing(res: Response, field: &str) {
    let b = json_of(res, 404).await;
    assert_eq!(b["error"], "Not Found");
    assert_eq!(b["code"], "not_found", "{b}");
    assert!(b["detail"].as_str().unwrap().starts_with(&format!("{field}: ")), "404 names {field}: {b}");
}

/// The `n`-th valid T.C. identity number of a family (check digits computed the
/// python-stdnum way, independently of the code under test).
pub(crate) fn tckn(n: u64) -> String {
    let base = format!("{:09}", 100_000_000 + n % 900_000_000);
    let d: Vec<i64> = base.bytes().map(|b| (b - b'0') as i64).collect();
    let c1 = (10 - d.iter().enumerate().map(|(i, x)| if i % 2 == 0 { 3 * x } else { *x }).sum::<i64>()).rem_euclid(10);
    let c2 = (c1 + d.iter().sum::<i64>()).rem_euclid(10);
    format!("{base}{c1}{c2}")
}

/// Assert the error body shape (`error` and `detail` text, a snake_case machine `code`) and
/// return it.
pub(crate) async fn error_body(res: Response, status: u16) -> Value {
    assert_eq!(res.status(), status, "unexpected status");
    assert!(
        res.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().starts_with("application/json"),
        "error bodies are JSON"
    );
    let b: Value = res.json().await.unwrap();
    assert!(b["error"].is_string() && b["detail"].is_string(), "error body shape: {b}");
    let code = b["code"].as_str().unwrap_or_else(|| panic!("error body has a code: {b}"));
    let snake = code.split('_').all(|w| !w.is_empty() && w.bytes().all(|c| c.is_ascii_lowercase()));
    assert!(snake, "the code is snake_case: {b}");
    b
}

/// The API running inside the test process.
pub(crate) struct TestApp {
    pub env: Env,
    pub api: Api,
    pub db: PgPool,
}

impl std::ops::Deref for TestApp {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.api
    }
}

impl TestApp {
    /// An API key with `scopes` made by an admin of `org` (a member added directly), not by its
    /// owner: for what only the owner's own credentials may do.
    pub(crate) async fn admin_key(&self, org: &Org, scopes: &[&str]) -> String {
        let (key_id, key) = self.create_key(&org.key, scopes).await;
        let admin: i64 = sqlx::query_scalar(
            "INSERT INTO users (org_id, email, full_name, password_hash, role)
             VALUES ($1, $2, 'Admin', 'x', 'admin') RETURNING id",
        )
        .bind(org.id)
        .bind(format!("admin-{}@example.com", org.id))
        .fetch_one(&self.db)
        .await
        .unwrap();
        sqlx::query("UPDATE api_keys SET created_by = $2 WHERE id = $1")
            .bind(key_id)
            .bind(admin)
            .execute(&self.db)
            .await
            .unwrap();
        key
    }

    pub(crate) async fn spawn() -> TestApp {
        TestApp::start(Env::new().await).await
    }

    pub(crate) async fn spawn_with(overrides: &[(&str, &str)]) -> TestApp {
        TestApp::start(Env::new().await.with(overrides)).await
    }

    /// Start an API on `env` (a second call on the same env is a second API process
    /// sharing the database and Redis).
    pub(crate) async fn start(env: Env) -> TestApp {
        let app = tns::roles::api(&env.config(Role::Api), None).await.expect("application starts");
        let (addr, metrics) = (app.addr().to_string(), app.metrics_addr().to_string());
        tokio::spawn(app.run(std::future::pending()));
        TestApp { api: Api::new(&addr, &metrics), db: env.pool().await, env }
    }
}

/// The plugin packages the tests load. Cargo builds a `cdylib` only when asked for that
/// package, never as part of building a test, so the first caller in each test process asks.
const PLUGINS: [&str; 5] = [
    "tns-adapter-sandbox",
    "tns-adapter-uetds",
    "abi-mismatch-fixture",
    "lying-buffer-fixture",
    "minimal-adapter-fixture",
];

/// Where cargo puts the plugin libraries (next to the `tns` binary), built once per test
/// process (a no-op when they are up to date).
pub(crate) fn plugin_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = tns_binary().parent().unwrap().to_path_buf();
            let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = std::process::Command::new(cargo);
            // Build with the environment of a shell, not of a test process: cargo and nextest add
            // variables (CARGO_PKG_*, OUT_DIR, LD_LIBRARY_PATH, ...) that change fingerprints and
            // would rebuild the plugins on every run.
            for (k, _) in std::env::vars_os() {
                let k = k.to_string_lossy().to_string();
                let keep = ["CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS"].contains(&k.as_str());
                let test_only = (k.starts_with("CARGO_") && !keep)
                    || k.starts_with("NEXTEST")
                    || k.starts_with("__CARGO")
                    || ["OUT_DIR", "LD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "RUST_TEST_THREADS"]
                        .contains(&k.as_str());
                if test_only {
                    cmd.env_remove(&k);
                }
            }
            cmd.args(["build", "-q"]).current_dir(&workspace);
            for p in PLUGINS {
                cmd.args(["-p", p]);
            }
            let status = cmd.status().expect("cargo build runs");
            assert!(status.success(), "building the adapter plugins failed");
            dir
        })
        .clone()
}

/// A fresh directory for a sandbox's records.
pub(crate) fn state_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("tns-sandbox-{}", unique()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every record the sandbox kept in `state` (one per accepted notification), parsed
/// independently of the sandbox's code. A torn line (a writer killed mid-write) is skipped.
pub(crate) fn sandbox_records(state: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(state.join("sandbox-records.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// A scheduler running inside the test process; stopped (gracefully) by `stop` or with the test.
pub(crate) struct InProcessScheduler {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl InProcessScheduler {
    pub(crate) async fn start(env: &Env) -> InProcessScheduler {
        let cfg = env.config(Role::Scheduler);
        let scheduler =
            tns::roles::scheduler(&cfg, &prometheus::Registry::new(), None).await.expect("scheduler starts");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(scheduler.run(async move {
            stopped.await.ok();
        }));
        InProcessScheduler { stop: Some(stop), task }
    }

    pub(crate) async fn stop(mut self) {
        self.stop.take().unwrap().send(()).ok();
        (&mut self.task).await.unwrap().unwrap();
    }
}

/// Run a scheduler until every queue of `env`'s database is empty (every submission and
/// webhook delivery final), then return: the outcome is in the database, nothing to wait for.
pub(crate) async fn drain(env: &Env) {
    let cfg = env.config(Role::Scheduler);
    let scheduler = tns::roles::scheduler(&cfg, &prometheus::Registry::new(), None).await.expect("scheduler starts");
    tokio::time::timeout(Duration::from_secs(60), scheduler.drain())
        .await
        .expect("the queues empty within 60 s")
        .expect("the scheduler runs");
}

/// The real `tns` binary: Cargo builds it for this test target (it belongs to the same
/// package) and says where. The adapter plugins it loads sit next to it, built by the
/// workspace build that runs the tests.
pub(crate) fn tns_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tns"))
}

pub(crate) fn tns_command(role: &str, env: &Env) -> Command {
    let mut cmd = Command::new(tns_binary());
    cmd.arg(role).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).envs(&env.0);
    cmd.kill_on_drop(true).stdin(Stdio::null());
    cmd
}

/// `tns admin ARGS` against `env`: its output lines as JSON, or its stderr when it fails.
pub(crate) async fn tns_admin(env: &Env, args: &[&str]) -> Result<Vec<Value>, String> {
    let out = tns_command("admin", env).args(args).output().await.unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

/// A running `tns api` (or `dev`) process, killed on drop.
pub(crate) struct Proc {
    /// Held so the process lives as long as this value (killed on drop).
    child: Child,
    pub api: Api,
    /// The admin API's `http://ADDR`, when `TNS_ADMIN_ADDR` was set.
    pub admin_root: Option<String>,
    /// Its log (stderr) lines so far, when started by [`Proc::start_logged`].
    pub log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl std::ops::Deref for Proc {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.api
    }
}

impl Proc {
    pub(crate) async fn start(role: &str, env: &Env) -> Proc {
        Proc::spawn(role, env, false).await
    }

    /// As `start`, keeping what the process logs in [`Proc::log`].
    pub(crate) async fn start_logged(role: &str, env: &Env) -> Proc {
        Proc::spawn(role, env, true).await
    }

    async fn spawn(role: &str, env: &Env, logged: bool) -> Proc {
        let stderr = if logged { Stdio::piped() } else { Stdio::inherit() };
        let mut child = tns_command(role, env).stdout(Stdio::piped()).stderr(stderr).spawn().unwrap();
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            let (mut lines, log) = (BufReader::new(err).lines(), log.clone());
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    log.lock().unwrap().push(line);
                }
            });
        }
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (addr, metrics, admin_root) = tokio::time::timeout(Duration::from_secs(60), async {
            let (mut metrics, mut admin) = (String::new(), None);
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(a) = line.strip_prefix("metrics on http://") {
                    metrics = a.to_string();
                }
                if let Some(a) = line.strip_prefix("admin on http://") {
                    admin = Some(format!("http://{a}"));
                }
                if let Some(a) = line.strip_prefix("listening on http://") {
                    return (a.to_string(), metrics, admin);
                }
            }
            panic!("tns exited before listening");
        })
        .await
        .expect("tns starts within 60 s");
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Proc { child, api: Api::new(&addr, &metrics), admin_root, log }
    }

    /// `kill -9`, and wait until it is gone.
    pub(crate) async fn kill(&mut self) {
        self.child.kill().await.unwrap();
    }
}

/// A TCP proxy in front of Redis or PostgreSQL that can be cut (an outage) and restored: `cut`
/// takes new connections and closes them at once, `refuse` stops listening (a stopped server:
/// connecting is refused); both close the connections being relayed.
pub(crate) struct ChaosProxy {
    pub addr: SocketAddr,
    mode: tokio::sync::watch::Sender<Mode>,
    generation: Arc<AtomicU64>,
    /// Connections being relayed now.
    live: Arc<AtomicUsize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Relay,
    Drop,
    Refuse,
}

/// Counts one relayed connection while it lives.
struct Relayed(Arc<AtomicUsize>);

impl Drop for Relayed {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ChaosProxy {
    pub(crate) async fn start(upstream: &'static str) -> ChaosProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, mut modes) = tokio::sync::watch::channel(Mode::Relay);
        let generation = Arc::new(AtomicU64::new(0));
        let live = Arc::new(AtomicUsize::new(0));
        let (g, l) = (generation.clone(), live.clone());
        tokio::spawn(async move {
            let mut listener = Some(listener);
            loop {
                let Some(open) = &listener else {
                    // Refusing: listen on the same address again once told to.
                    if modes.wait_for(|m| *m != Mode::Refuse).await.is_err() {
                        return;
                    }
                    listener = Some(rebind(addr).await);
                    continue;
                };
                let mut inbound = tokio::select! {
                    accepted = open.accept() => match accepted {
                        Ok((inbound, _)) => inbound,
                        Err(_) => continue,
                    },
                    changed = modes.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        if *modes.borrow() == Mode::Refuse {
                            listener = None;
                        }
                        continue;
                    }
                };
                if *modes.borrow() != Mode::Relay {
                    continue; // dropped: closed at once
                }
                let (g, mut relay_modes) = (g.clone(), modes.clone());
                let born = g.load(Ordering::SeqCst);
                l.fetch_add(1, Ordering::SeqCst);
                let relayed = Relayed(l.clone());
                tokio::spawn(async move {
                    let _relayed = relayed;
                    let Ok(mut outbound) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let copy = tokio::io::copy_bidirectional(&mut inbound, &mut outbound);
                    let cut = async {
                        while relay_modes.changed().await.is_ok() {
                            if *relay_modes.borrow() != Mode::Relay || g.load(Ordering::SeqCst) != born {
                                return;
                            }
                        }
                    };
                    tokio::select! { _ = copy => {}, _ = cut => {} }
                });
            }
        });
        ChaosProxy { addr, mode, generation, live }
    }

    /// How many connections the proxy relays now (after `cut`, 0 once it has closed them all).
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// `url` (of the upstream) with the proxy in its place: `postgres://u@127.0.0.1:5432/db`
    /// becomes `postgres://u@127.0.0.1:PROXY/db`.
    pub(crate) fn url_for(&self, url: &str) -> String {
        let mut u = reqwest::Url::parse(url).unwrap();
        u.set_ip_host(self.addr.ip()).unwrap();
        u.set_port(Some(self.addr.port())).unwrap();
        u.to_string()
    }

    pub(crate) fn cut(&self) {
        self.set(Mode::Drop);
    }

    /// Stop listening: connecting is refused, as by a stopped server.
    pub(crate) fn refuse(&self) {
        self.set(Mode::Refuse);
    }

    pub(crate) fn restore(&self) {
        self.mode.send_replace(Mode::Relay);
    }

    fn set(&self, mode: Mode) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.mode.send_replace(mode);
    }
}

/// Listen on `addr` again (the port was ours a moment ago; retried while the kernel lets go of it).
async fn rebind(addr: SocketAddr) -> TcpListener {
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Poll `f` until it returns `Some` or `timeout` passes.
pub(crate) async fn eventually<T, F, Fut>(timeout: Duration, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Put an organization on a custom plan directly in the database (before any metered call,
/// so no process has cached its limit).
pub(crate) async fn set_custom_plan(db: &PgPool, org: i64, code: &str, quota: Option<i32>, overage: Option<f64>) {
    sqlx::query(
        "INSERT INTO plans (code, name, monthly_quota, price_try, billing_period, overage_unit_try)
         VALUES ($1, $1, $2, 1, 'monthly', $3) ON CONFLICT (code) DO NOTHING",
    )
    .bind(code)
    .bind(quota)
    .bind(overage)
    .execute(db)
    .await
    .unwrap();
    sqlx::query("UPDATE subscriptions SET plan_code = $2 WHERE org_id = $1")
        .bind(org)
        .bind(code)
        .execute(db)
        .await
        .unwrap();
}

/// HMAC-SHA256 (RFC 2104) from the hash alone, so the check does not share code with the
/// signer.
pub(crate) fn hmac_sha256_hex(key: &[u8], msg: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(msg).finalize();
    hex::encode(Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize())
}
