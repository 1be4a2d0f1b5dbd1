//! A fake U-ETDS (the Ministry's SOAP services) on loopback, written from the published shapes
//! only (`adapters/uetds/schema/`), independently of the adapter, so that it catches the
//! adapter's mistakes instead of sharing them.
//!
//! It JUDGES every request as the e-Devlet gateway and the service behind it would (path, POST,
//! content type, SOAPAction, HTTP Basic, SOAP 1.1 envelope, namespaces, `<wsuser>`, the schema,
//! the formats of dates and codes): each mistake is recorded as a [`Violation`] and answered as
//! the gateway would (HTTP 500 with a `S:Client` fault, or the business error the service gives
//! for a bad format). It BEHAVES like the service, statefully per firm (trips, groups, crew,
//! passengers, goods trips and loads, with the reference numbers and the 0 / 88 / error results),
//! and lets a test SCRIPT failures ([`Behaviour`]) and read everything it was sent and stored.
//!
//! ```ignore
//! let fake = FakeUetds::start().await;
//! fake.script("seferEkle", 1, Behaviour::LoseAnswer);
//! // … point the adapter at fake.base_url() and submit …
//! assert!(fake.wait_for_calls("yolcuEkleCoklu", 1, Duration::from_secs(10)).await);
//! fake.assert_no_violations();
//! assert_eq!(fake.trips_with_firma_sefer_no("tns-42").len(), 1);
//! ```

mod arizi;
mod esya;
pub mod judge;
mod ops;
pub mod reply;
pub mod schema;
mod script;
mod state;
mod tarifeli;
pub mod xml;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::task::{AbortHandle, JoinHandle};

pub use ops::{codes, BAD_CREDENTIALS_MESSAGE, OK_MESSAGE};
pub use script::Behaviour;
pub use state::{Account, CargoTrip, CrewMember, Env, Group, Load, Passenger, Registers, Service, Status, Trip};
pub use xml::Element;

use judge::{GatewayRefusal, HttpParts, Judged};
use ops::Ctx;
use reply::{Answer, HttpReply};
use script::Scripts;
use state::Store;

/// The public test account of the service (UNET number and web-service password).
pub const TEST_USER: &str = "999999";
/// Password of [`TEST_USER`].
pub const TEST_PASSWORD: &str = "999999testtest";

/// One request as received, with what the judge made of it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub seq: usize,
    pub method: String,
    pub path: String,
    pub service: Option<Service>,
    pub env: Option<Env>,
    /// The SOAPAction header as sent (quotes included).
    pub soap_action: Option<String>,
    /// Operation name (the Body element's local name; `servisTest` for arızi's `<testMsj1>`).
    pub op: Option<String>,
    /// HTTP Basic user, when the header was well-formed.
    pub basic_user: Option<String>,
    /// The raw body.
    pub body: String,
    /// The operation element, parsed (e.g. `element.path_text("ariziSeferBilgileriInput/firmaSeferNo")`).
    pub element: Option<Element>,
    /// The scripted behaviour this call got, if any.
    pub scripted: Option<Behaviour>,
}

/// A request the real gateway or service would have rejected, and why.
#[derive(Debug, Clone)]
pub struct Violation {
    pub op: Option<String>,
    pub reason: String,
    pub path: String,
    pub soap_action: Option<String>,
    /// The raw request body.
    pub body: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.path, self.op.as_deref().unwrap_or("?"), self.reason)
    }
}

struct Shared {
    store: Store,
    requests: Vec<RecordedRequest>,
    /// Requests per operation (kept even when the requests themselves are not).
    call_counts: HashMap<String, usize>,
    keep_requests: bool,
    violations: Vec<Violation>,
    scripts: Scripts,
    refused_passengers: HashMap<String, String>,
    refused_loads: HashMap<String, String>,
    /// The trip list's dates are the days of notification, not of departure (no public
    /// source says which; the adapter must find its trips either way).
    list_by_notification_day: bool,
    /// `seferGuncelle` gives the trip a new reference (the WSDL's answer carries one; whether
    /// it ever differs no public source says).
    renumber_on_update: bool,
    latency: Duration,
    validate_xsd: bool,
    log: bool,
}

struct Core {
    addr: SocketAddr,
    shared: Mutex<Shared>,
    changes: watch::Sender<u64>,
}

impl Core {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }
}

struct Handle {
    core: Arc<Core>,
    accept: AbortHandle,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// The fake service. Cheap to clone; it stops accepting connections when the last clone is
/// dropped.
#[derive(Clone)]
pub struct FakeUetds {
    handle: Arc<Handle>,
}

impl fmt::Debug for FakeUetds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeUetds").field("addr", &self.handle.core.addr).finish()
    }
}

impl FakeUetds {
    /// Starts on 127.0.0.1 with a free port, with the test account `999999` / `999999testtest`.
    pub async fn start() -> FakeUetds {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        FakeUetds::start_on(addr).await.expect("binding the fake U-ETDS to loopback")
    }

    /// Starts on a given address (port 0 picks a free one).
    pub async fn start_on(addr: SocketAddr) -> std::io::Result<FakeUetds> {
        Ok(FakeUetds::launch(addr).await?.0)
    }

    /// Starts on 127.0.0.1 with a free port on a runtime of its own (a thread that ends when the
    /// last clone is dropped): for tests that call a synchronous client (an adapter plugin) on
    /// their own runtime's thread, which would otherwise starve a fake running on that runtime.
    pub fn start_background() -> FakeUetds {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("fake-uetds".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
                rt.block_on(async move {
                    let (fake, accept) = match FakeUetds::launch(SocketAddr::from(([127, 0, 0, 1], 0))).await {
                        Ok(started) => started,
                        Err(e) => return drop(tx.send(Err(e))),
                    };
                    let _ = tx.send(Ok(fake));
                    // Aborted when the last handle is dropped; the runtime (hanging calls
                    // included) goes with it.
                    let _ = accept.await;
                });
            })
            .expect("spawning the fake U-ETDS thread");
        rx.recv().expect("the fake U-ETDS thread starts").expect("binding the fake U-ETDS to loopback")
    }

    async fn launch(addr: SocketAddr) -> std::io::Result<(FakeUetds, JoinHandle<()>)> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let mut store = Store::default();
        store.accounts.insert(
            TEST_USER.into(),
            Account { user: TEST_USER.into(), password: TEST_PASSWORD.into(), title: "TEST FİRMASI".into() },
        );
        let core = Arc::new(Core {
            addr,
            shared: Mutex::new(Shared {
                store,
                requests: Vec::new(),
                call_counts: HashMap::new(),
                keep_requests: true,
                violations: Vec::new(),
                scripts: Scripts::default(),
                refused_passengers: HashMap::new(),
                refused_loads: HashMap::new(),
                list_by_notification_day: false,
                renumber_on_update: false,
                latency: Duration::ZERO,
                validate_xsd: true,
                log: false,
            }),
            changes: watch::channel(0).0,
        });
        // Parse the schemas now, not inside the first request.
        judge::specs();
        let accept = tokio::spawn(serve(listener, core.clone()));
        let handle = Handle { core, accept: accept.abort_handle() };
        Ok((FakeUetds { handle: Arc::new(handle) }, accept))
    }

    fn core(&self) -> &Core {
        &self.handle.core
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.core().addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.core().addr)
    }

    /// The endpoint URL of a service, e.g. `…/services/g2g/kdgm/test/uetdsarizi`.
    pub fn url(&self, service: Service, env: Env) -> String {
        let name = match service {
            Service::Arizi => "uetdsarizi",
            Service::Esya => "uetdsesya",
            Service::Tarifeli => "uetdstarifeli",
        };
        let env = if env == Env::Test { "test/" } else { "" };
        format!("{}/services/g2g/kdgm/{env}{name}", self.base_url())
    }

    /// Adds (or replaces) a firm's account; the firm's title is `TEST FİRMASI <user>`.
    pub fn add_account(&self, user: &str, password: &str) {
        let account = Account { user: user.into(), password: password.into(), title: format!("TEST FİRMASI {user}") };
        self.core().lock().store.accounts.insert(user.into(), account);
    }

    /// The registers pre-flight checks read (inspections, certificates, identities), to change.
    pub fn registers(&self, change: impl FnOnce(&mut state::Registers)) {
        change(&mut self.core().lock().store.registers);
    }

    /// Take any user name and password as a firm's (for a fuzzer's random credentials).
    pub fn set_open_accounts(&self, on: bool) {
        self.core().lock().store.open_accounts = on;
    }

    /// The next `times` calls of `op` (operation name) get `b` instead of the normal answer
    /// (queued after anything already scripted for `op`).
    pub fn script(&self, op: &str, times: usize, b: Behaviour) {
        self.core().lock().scripts.push(op, times, b);
    }

    /// Scripted calls still queued for `op`.
    pub fn scripted_pending(&self, op: &str) -> usize {
        self.core().lock().scripts.pending(op)
    }

    /// Drops every queued script.
    pub fn clear_scripts(&self) {
        self.core().lock().scripts.clear();
    }

    /// From now on, a passenger with this identity number is refused (arızi item of
    /// `yolcuEkleCoklu` / `yolcuEkle`, tarifeli `yolcuBiletEkle`) with this message and
    /// [`codes::REFUSED`].
    pub fn refuse_passenger(&self, identity_number: &str, message: &str) {
        self.core().lock().refused_passengers.insert(identity_number.into(), message.into());
    }

    /// Undoes [`FakeUetds::refuse_passenger`].
    pub fn accept_passenger(&self, identity_number: &str) {
        self.core().lock().refused_passengers.remove(identity_number);
    }

    /// From now on, the trip list (`seferBildirimListele`) reads its dates as the days the
    /// trips were notified, not the days they depart.
    pub fn list_by_notification_day(&self) {
        self.core().lock().list_by_notification_day = true;
    }

    /// From now on, `seferGuncelle` gives the trip a new reference in its answer.
    pub fn renumber_on_update(&self) {
        self.core().lock().renumber_on_update = true;
    }

    /// From now on, a load with this `firmaYukNo` is refused (`sefereYukEkleV3` item).
    pub fn refuse_load(&self, firma_yuk_no: &str, message: &str) {
        self.core().lock().refused_loads.insert(firma_yuk_no.into(), message.into());
    }

    /// Delay added to every answer (the benchmark uses 50 ms).
    pub fn set_latency(&self, latency: Duration) {
        self.core().lock().latency = latency;
    }

    /// Turns the xmllint schema validation on or off (on by default). The built-in structural
    /// check of the schema (order, required and unknown elements, types) stays on.
    pub fn set_validate_xsd(&self, on: bool) {
        self.core().lock().validate_xsd = on;
    }

    /// Whether [`FakeUetds::requests`] keeps every request (on by default). A long benchmark
    /// turns it off to keep memory flat; [`FakeUetds::calls`] and the violations still count.
    pub fn set_keep_requests(&self, on: bool) {
        self.core().lock().keep_requests = on;
    }

    /// Logs every request and violation to stderr (for the `uetds-sim` binary).
    pub fn set_log(&self, on: bool) {
        self.core().lock().log = on;
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.core().lock().requests.clone()
    }

    /// The requests of one operation.
    pub fn requests_for(&self, op: &str) -> Vec<RecordedRequest> {
        self.core().lock().requests.iter().filter(|r| r.op.as_deref() == Some(op)).cloned().collect()
    }

    /// How many requests of this operation arrived (judged valid or not, scripted or not).
    pub fn calls(&self, op: &str) -> usize {
        self.core().lock().call_counts.get(op).copied().unwrap_or(0)
    }

    /// Every violation recorded so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.core().lock().violations.clone()
    }

    /// Panics, listing them with their requests, if any violation was recorded.
    #[track_caller]
    pub fn assert_no_violations(&self) {
        let v = self.violations();
        if !v.is_empty() {
            let list: Vec<String> = v.iter().map(|v| format!("- {v}\n  request: {}", v.body)).collect();
            panic!("the fake U-ETDS recorded {} violation(s):\n{}", v.len(), list.join("\n"));
        }
    }

    /// Every passenger trip (arızi and tarifeli, all firms and environments).
    pub fn trips(&self) -> Vec<Trip> {
        self.core().lock().store.trips.clone()
    }

    /// The passenger trips declared with this `firmaSeferNo`.
    pub fn trips_with_firma_sefer_no(&self, firma_sefer_no: &str) -> Vec<Trip> {
        self.core().lock().store.trips.iter().filter(|t| t.firma_sefer_no == firma_sefer_no).cloned().collect()
    }

    /// The passenger trip with this `uetdsSeferReferansNo`.
    pub fn trip(&self, reference: i64) -> Option<Trip> {
        self.core().lock().store.trips.iter().find(|t| t.reference == reference).cloned()
    }

    /// Every goods trip with its loads.
    pub fn cargo_trips(&self) -> Vec<CargoTrip> {
        self.core().lock().store.cargo.clone()
    }

    /// The goods trip with this `seferId`.
    pub fn cargo_trip(&self, id: i64) -> Option<CargoTrip> {
        self.core().lock().store.cargo.iter().find(|t| t.id == id).cloned()
    }

    /// Changes a stored passenger trip as U-ETDS's own portal (e-Devlet) would, behind the
    /// client's back; false when there is none with this `uetdsSeferReferansNo`.
    pub fn edit_trip(&self, reference: i64, f: impl FnOnce(&mut Trip)) -> bool {
        let mut s = self.core().lock();
        s.store.trips.iter_mut().find(|t| t.reference == reference).map(f).is_some()
    }

    /// Changes a stored goods trip behind the client's back, as [`FakeUetds::edit_trip`].
    pub fn edit_cargo_trip(&self, id: i64, f: impl FnOnce(&mut CargoTrip)) -> bool {
        let mut s = self.core().lock();
        s.store.cargo.iter_mut().find(|t| t.id == id).map(f).is_some()
    }

    /// Reads the stored trips without copying them (for cheap checks on large states).
    pub fn inspect<R>(&self, f: impl FnOnce(&[Trip], &[CargoTrip]) -> R) -> R {
        let s = self.core().lock();
        f(&s.store.trips, &s.store.cargo)
    }

    /// Forgets the records, requests, counts, violations, scripts and refusals (accounts and
    /// settings stay).
    pub fn reset(&self) {
        let mut s = self.core().lock();
        s.store.trips.clear();
        s.store.cargo.clear();
        s.requests.clear();
        s.call_counts.clear();
        s.violations.clear();
        s.scripts.clear();
        s.refused_passengers.clear();
        s.refused_loads.clear();
    }

    /// Waits until `cond` holds (checked now and after every request and state change), at most
    /// `timeout`; returns whether it held.
    pub async fn wait_until(&self, timeout: Duration, mut cond: impl FnMut(&FakeUetds) -> bool) -> bool {
        let mut rx = self.core().changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if cond(self) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return cond(self),
            }
        }
    }

    /// Waits until at least `n` requests of `op` have been received and handled (a `Hang`ing one
    /// counts once received), at most `timeout`.
    pub async fn wait_for_calls(&self, op: &str, n: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |f| f.calls(op) >= n).await
    }
}

async fn serve(listener: TcpListener, core: Arc<Core>) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let core = core.clone();
        tokio::spawn(async move {
            // Set by a `LoseAnswer` call: the connection is dropped without an answer.
            let kill = Arc::new(Notify::new());
            let k = kill.clone();
            // A `Reset` call sets SO_LINGER to zero on the socket before it is dropped, so it is
            // closed with an RST, not a FIN. The descriptor is valid while a request on it is
            // being handled: the connection (which owns it) outlives its handlers.
            let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
            let svc = service_fn(move |req| handle(core.clone(), k.clone(), fd, req));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
            tokio::select! {
                _ = conn => {}
                _ = kill.notified() => {}
            }
        });
    }
}

struct OwnedRequest {
    method: String,
    path: String,
    content_type: Option<String>,
    soap_action: Option<String>,
    authorization: Option<String>,
    body: Bytes,
}

enum Outcome {
    Reply(HttpReply),
    /// Close the connection without an answer.
    Drop,
    /// Reset the connection (RST) without an answer.
    Reset,
}

async fn handle(
    core: Arc<Core>,
    kill: Arc<Notify>,
    fd: std::os::fd::RawFd,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let header = |name: &str| parts.headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        kill.notify_one();
        return std::future::pending().await;
    };
    let req = OwnedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        content_type: header("content-type"),
        soap_action: header("soapaction"),
        authorization: header("authorization"),
        body,
    };
    // Handled in its own task so that a client giving up never cancels a state change halfway.
    let outcome = tokio::spawn(process(core, req)).await.unwrap_or(Outcome::Drop);
    match outcome {
        Outcome::Reply(r) => {
            let status = hyper::StatusCode::from_u16(r.status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = Response::builder().status(status);
            if let Some(ct) = r.content_type {
                resp = resp.header("content-type", ct);
            }
            if r.challenge {
                resp = resp.header("www-authenticate", "Basic realm=\"e-Devlet Kapisi\"");
            }
            Ok(resp.body(Full::new(Bytes::from(r.body))).expect("a valid response"))
        }
        Outcome::Reset => {
            // SAFETY: `fd` is the socket of the connection this request came on, open for as
            // long as the request is being handled (see `serve`).
            let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            let _ = socket2::SockRef::from(&socket).set_linger(Some(Duration::ZERO));
            kill.notify_one();
            std::future::pending().await
        }
        Outcome::Drop => {
            kill.notify_one();
            std::future::pending().await
        }
    }
}

async fn process(core: Arc<Core>, req: OwnedRequest) -> Outcome {
    let parts = HttpParts {
        method: &req.method,
        path: &req.path,
        content_type: req.content_type.as_deref(),
        soap_action: req.soap_action.as_deref(),
        authorization: req.authorization.as_deref(),
        body: &req.body,
    };
    let mut judged = judge::judge(parts);
    let validate = core.lock().validate_xsd;
    if validate && judged.violations.is_empty() {
        if let (Some(el), Some((service, _))) = (&judged.element, judged.route) {
            if let Err(e) = judge::xmllint(service, el).await {
                judged.violations.push(e);
            }
        }
    }
    let (reply, hold, latency, reset) = {
        let mut s = core.lock();
        let scripted = judged.op.as_deref().and_then(|op| s.scripts.take(op));
        let reset = scripted == Some(Behaviour::Reset);
        record(&mut s, &req, &judged, scripted.clone());
        let reply = match &scripted {
            Some(Behaviour::Hang(_)) => None,
            Some(b) => scripted_reply(&mut s, &req, &judged, b),
            None => Some(perform(&mut s, &req, &judged)),
        };
        let hold = match scripted {
            Some(Behaviour::Hang(d)) => Some((d, true)),
            Some(Behaviour::HangAfterWrite(d)) => Some((d, false)),
            Some(Behaviour::LoseAnswer) => None,
            _ => None,
        };
        (reply, hold, s.latency, reset)
    };
    core.changed();
    let reply = match hold {
        Some((d, perform_later)) => {
            tokio::time::sleep(d).await;
            if perform_later {
                let r = perform(&mut core.lock(), &req, &judged);
                core.changed();
                Some(r)
            } else {
                reply
            }
        }
        None => reply,
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    match reply {
        Some(r) => Outcome::Reply(r),
        None if reset => Outcome::Reset,
        None => Outcome::Drop,
    }
}

fn record(s: &mut Shared, req: &OwnedRequest, j: &Judged, scripted: Option<Behaviour>) {
    if s.log {
        let op = j.op.as_deref().unwrap_or("?");
        eprintln!(
            "uetds-sim: {} {} {op}{}",
            req.method,
            req.path,
            scripted.as_ref().map_or(String::new(), |b| format!(" (scripted {b:?})"))
        );
    }
    for reason in &j.violations {
        add_violation(s, req, j, reason.clone());
    }
    if let Some(op) = &j.op {
        *s.call_counts.entry(op.clone()).or_default() += 1;
    }
    if !s.keep_requests {
        return;
    }
    let seq = s.requests.len();
    let body = String::from_utf8_lossy(&req.body).into_owned();
    s.requests.push(RecordedRequest {
        seq,
        method: req.method.clone(),
        path: req.path.clone(),
        service: j.route.map(|r| r.0),
        env: j.route.map(|r| r.1),
        soap_action: req.soap_action.clone(),
        op: j.op.clone(),
        basic_user: j.basic.as_ref().map(|b| b.0.clone()),
        body,
        element: j.element.clone(),
        scripted,
    });
}

fn add_violation(s: &mut Shared, req: &OwnedRequest, j: &Judged, reason: String) {
    if s.log {
        eprintln!("uetds-sim: VIOLATION {} {}: {reason}", req.path, j.op.as_deref().unwrap_or("?"));
    }
    s.violations.push(Violation {
        op: j.op.clone(),
        reason,
        path: req.path.clone(),
        soap_action: req.soap_action.clone(),
        body: String::from_utf8_lossy(&req.body).into_owned(),
    });
}

/// The answer of a scripted call; `None` for "drop the connection". `LoseAnswer` and
/// `HangAfterWrite` perform the operation first.
fn scripted_reply(s: &mut Shared, req: &OwnedRequest, j: &Judged, b: &Behaviour) -> Option<HttpReply> {
    let op = j.op.as_deref().unwrap_or_default();
    Some(match b {
        Behaviour::BusinessError { code, message } => reply::soap_ok(op, &Answer::result(*code, message)),
        Behaviour::Fault { code, message } => reply::soap_fault(code, message),
        Behaviour::Status(status) => reply::html(*status),
        Behaviour::Html => reply::html(200),
        Behaviour::Empty => reply::empty(),
        Behaviour::Echo(status) => reply::echo(*status, req.authorization.as_deref(), &req.body),
        Behaviour::LoseAnswer => {
            perform(s, req, j);
            return None;
        }
        Behaviour::Reset => return None,
        Behaviour::HangAfterWrite(_) => perform(s, req, j),
        Behaviour::Hang(_) => unreachable!("a hanging call is performed after its delay"),
    })
}

/// The normal answer: gateway refusals, authentication, violations, credentials, then the
/// operation itself. Records the format violations the operation finds.
fn perform(s: &mut Shared, req: &OwnedRequest, j: &Judged) -> HttpReply {
    let (reply, found) = perform_inner(s, j);
    for reason in found {
        add_violation(s, req, j, reason);
    }
    reply
}

fn perform_inner(s: &mut Shared, j: &Judged) -> (HttpReply, Vec<String>) {
    match j.refusal {
        Some(GatewayRefusal::NotFound) => return (reply::html(404), vec![]),
        Some(GatewayRefusal::MethodNotAllowed) => return (reply::html(405), vec![]),
        None => {}
    }
    // The gateway wants HTTP Basic; whether the credentials are right is the service's to
    // say, in its own words (`KULLANICI ADI YADA SIFRE HATALI`).
    let Some((user, pass)) = j.basic.clone() else { return (reply::html(401), vec![]) };
    if !j.violations.is_empty() {
        return (reply::soap_fault("Client", &j.violations.join("; ")), vec![]);
    }
    let (Some(op), Some(el), Some((service, env))) = (j.op.as_deref(), j.element.as_ref(), j.route) else {
        return (reply::soap_fault("Client", "no operation"), vec![]);
    };
    let known = s.store.account(&user, &pass).is_some();
    if !matches!(op, "kullaniciKontrol" | "servisTest")
        && (!known || judge::wsuser(el) != Some((user.as_str(), pass.as_str())))
    {
        return (reply::soap_ok(op, &Answer::result(codes::BAD_CREDENTIALS, BAD_CREDENTIALS_MESSAGE)), vec![]);
    }
    let now = (chrono::Utc::now() + chrono::Duration::hours(3)).naive_utc();
    let mut ctx = Ctx {
        service,
        env,
        firm: user.clone(),
        basic: (user, pass),
        store: &mut s.store,
        refused_passengers: &s.refused_passengers,
        refused_loads: &s.refused_loads,
        list_by_notification_day: s.list_by_notification_day,
        renumber_on_update: s.renumber_on_update,
        violations: Vec::new(),
        now,
    };
    match ops::dispatch(&mut ctx, op, el) {
        Some(answer) => (reply::soap_ok(op, &answer), ctx.violations),
        None => {
            let why = format!("operation {op} is valid but not simulated by the fake U-ETDS");
            (reply::soap_fault("Server", &why), vec![why])
        }
    }
}
