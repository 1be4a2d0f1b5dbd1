//! The portal in a real browser: Debian's chromium, headless, driven through chromedriver
//! (WebDriver, the `fantoccini` crate) against the API this test runs. Every page visited is
//! checked with axe-core (no `serious` or `critical` violation) and photographed at 1280 and
//! 360 px wide into `target/portal-screenshots/<test>/`.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's `chromium` and
//! `chromium-driver`; `.ci/run` installs them) and `npm`, which fetches axe-core once into
//! `target/axe-core/`. Waiting is always on something the page shows, bounded.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use fantoccini::{elements::Element, Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use crate::{
    fixtures::{CEYHAN, KADIKOY},
    helpers::{tckn, tns_binary, unique_tax_number, Env, InProcessScheduler, TestApp},
};

/// How long any one wait for the page may take.
const WAIT: Duration = Duration::from_secs(30);
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The widths every page is photographed at: a laptop and a small phone.
const WIDTHS: [u32; 2] = [1280, 360];

/// Cargo's target directory (the `tns` binary sits in `target/<profile>/`).
fn target_dir() -> PathBuf {
    tns_binary().parent().and_then(Path::parent).expect("target/<profile>/tns").to_path_buf()
}

/// axe-core's script, from the npm registry the first time (`npm pack`), then from
/// `target/axe-core/`. Tests run in processes of their own: each fetch goes to a directory of
/// its own and is renamed into place, so two at once cannot leave half a file.
fn axe_source() -> String {
    let dir = target_dir().join("axe-core");
    let file = dir.join("axe.min.js");
    if !file.exists() {
        let work = dir.join(format!("fetch-{}", std::process::id()));
        std::fs::create_dir_all(&work).unwrap();
        let packed = std::process::Command::new("npm")
            .args(["pack", "--silent", "axe-core@4"])
            .current_dir(&work)
            .stdin(Stdio::null())
            .output()
            .expect("npm runs (the browser tests fetch axe-core with it)");
        assert!(packed.status.success(), "npm pack axe-core@4: {}", String::from_utf8_lossy(&packed.stderr));
        let tgz = String::from_utf8(packed.stdout).unwrap().trim().lines().last().unwrap().to_string();
        let untar = std::process::Command::new("tar")
            .args(["xzf", &tgz, "package/axe.min.js"])
            .current_dir(&work)
            .status()
            .unwrap();
        assert!(untar.success(), "unpacking {tgz}");
        std::fs::rename(work.join("package/axe.min.js"), &file).unwrap();
        let _ = std::fs::remove_dir_all(&work);
    }
    std::fs::read_to_string(&file).unwrap()
}

/// A free port on loopback (asked of the kernel; chromedriver takes it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A chromedriver of this test's own, and the chromium it starts, in a process group of their
/// own so that all of them end with the test, however it ends.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    async fn start() -> Driver {
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .process_group(0)
                .kill_on_drop(true)
                .spawn()
                .unwrap_or_else(|e| panic!("{CHROMEDRIVER} starts (apt-get install chromium-driver): {e}"));
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let started = tokio::time::timeout(WAIT, async {
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.contains("started successfully") {
                        return true;
                    }
                }
                false
            })
            .await
            .unwrap_or(false);
            // Keep reading, so chromedriver never blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            if started {
                return Driver { child, url: format!("http://127.0.0.1:{port}") };
            }
            // The port was taken meanwhile: another.
            let _ = child.kill().await;
        }
        panic!("chromedriver did not start");
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver and every chromium process it started (they share its group).
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
        }
    }
}

/// One browser (its own profile, in a fresh directory) on the portal of `root`.
pub(crate) struct Browser {
    pub c: Client,
    root: String,
    /// Screenshots go to `target/portal-screenshots/<test>/`, numbered in visiting order.
    shots: PathBuf,
    seen: usize,
    axe: String,
    profile: PathBuf,
    _driver: Driver,
}

impl Browser {
    /// A headless chromium on `app`; its pages photographed under `test`'s name (a second
    /// browser in the same test gets another `test`).
    pub(crate) async fn open(app: &TestApp, test: &str) -> Browser {
        let axe = tokio::task::spawn_blocking(axe_source).await.unwrap();
        let driver = Driver::start().await;
        let profile = std::env::temp_dir().join(format!("tns-chromium-{}-{}", std::process::id(), unique_tax_number()));
        std::fs::create_dir_all(&profile).unwrap();
        // Without these, chromium reaches for the network (updates, sync, QUIC probes), which
        // these machines do not have, and hangs.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let caps = json!({"browserName": "chrome", "goog:chromeOptions": {"binary": CHROMIUM, "args": args}});
        let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.as_object().unwrap().clone())
            .connect(&driver.url)
            .await
            .expect("a chromium session");
        let shots = target_dir().join("portal-screenshots").join(test);
        let _ = std::fs::remove_dir_all(&shots);
        std::fs::create_dir_all(&shots).unwrap();
        Browser { c, root: app.root.clone(), shots, seen: 0, axe, profile, _driver: driver }
    }

    /// End the session (chromium quits; its profile is removed).
    pub(crate) async fn close(self) {
        self.c.clone().close().await.unwrap();
        let _ = std::fs::remove_dir_all(&self.profile);
    }

    pub(crate) async fn goto(&self, path: &str) {
        self.c.goto(&format!("{}{path}", self.root)).await.unwrap();
    }

    /// The first element `css` finds, waiting for it to appear.
    pub(crate) async fn wait(&self, css: &str) -> Element {
        match self.c.wait().at_most(WAIT).for_element(Locator::Css(css)).await {
            Ok(found) => found,
            Err(e) => self.lost(&format!("no {css} within {WAIT:?}: {e}")).await,
        }
    }

    /// Fail, saying where the browser is and what it shows (and photographing it).
    async fn lost(&self, why: &str) -> ! {
        let url = self.c.current_url().await.map(|u| u.to_string()).unwrap_or_default();
        let png = self.c.screenshot().await.unwrap_or_default();
        let _ = std::fs::write(self.shots.join("failed.png"), png);
        panic!("{why}\nat {url}, showing:\n{}", self.text().await);
    }

    /// Wait until the page's main heading reads `text`.
    pub(crate) async fn heading(&self, text: &str) {
        let xpath = format!("//main//h1[normalize-space(.)={}]", xpath_literal(text));
        if let Err(e) = self.c.wait().at_most(WAIT).for_element(Locator::XPath(&xpath)).await {
            self.lost(&format!("the heading {text:?} did not appear: {e}")).await;
        }
    }

    /// The text of the whole page.
    pub(crate) async fn text(&self) -> String {
        self.c.find(Locator::Css("body")).await.unwrap().text().await.unwrap()
    }

    /// The form control labelled `label` (a label that reads so, or so followed by a
    /// parenthesis: "(required)", a length).
    pub(crate) async fn field(&self, label: &str) -> Element {
        let l = xpath_literal(label);
        let xpath = format!("//label[normalize-space(.)={l} or starts-with(normalize-space(.), concat({l}, ' ('))]");
        let l = self.c.find(Locator::XPath(&xpath)).await.unwrap_or_else(|e| panic!("no label {label:?}: {e}"));
        let id = l.attr("for").await.unwrap().unwrap_or_else(|| panic!("the label {label:?} names its control"));
        self.c.find(Locator::Id(&id)).await.unwrap()
    }

    /// Type `value` into the control labelled `label` (a choice: the option of that value).
    pub(crate) async fn fill(&self, label: &str, value: &str) {
        let control = self.field(label).await;
        if control.tag_name().await.unwrap() == "select" {
            control.select_by_value(value).await.unwrap_or_else(|e| panic!("{label}: no option {value}: {e}"));
        } else {
            control.clear().await.unwrap();
            control.send_keys(value).await.unwrap();
        }
    }

    /// Set the control labelled `label` to `value` as a picker does: a date or time input
    /// takes its value in ISO form whatever the browser's locale would have one type, and a
    /// pasted text arrives whole. The `input` and `change` events fire as on a user's edit.
    pub(crate) async fn put(&self, label: &str, value: &str) {
        let control = self.field(label).await;
        let arg = serde_json::to_value(&control).unwrap();
        self.c
            .execute(
                "const [el, v] = arguments; el.value = v;
                 el.dispatchEvent(new Event('input', {bubbles: true}));
                 el.dispatchEvent(new Event('change', {bubbles: true}));",
                vec![arg, json!(value)],
            )
            .await
            .unwrap();
    }

    /// Click the control labelled `label` (a radio button, a checkbox).
    pub(crate) async fn choose(&self, label: &str) {
        self.field(label).await.click().await.unwrap();
    }

    /// Click the button that reads `text` (in the page's main part).
    pub(crate) async fn press(&self, text: &str) {
        let xpath = format!("//main//button[normalize-space(.)={}]", xpath_literal(text));
        self.c
            .find(Locator::XPath(&xpath))
            .await
            .unwrap_or_else(|e| panic!("no button {text:?}: {e}"))
            .click()
            .await
            .unwrap();
    }

    /// Sign in through the form.
    pub(crate) async fn sign_in(&mut self, email: &str, password: &str) {
        self.goto("/login").await;
        self.wait("form[action='/login']").await;
        self.check("login").await;
        self.fill("E-posta", email).await;
        self.fill("Parola", password).await;
        self.press("Giriş yap").await;
        self.wait("#usage-h").await;
    }

    /// The page now shown: axe-checked and photographed as `name`.
    pub(crate) async fn check(&mut self, name: &str) {
        self.seen += 1;
        self.axe_check(name).await;
        self.screenshot(&format!("{:02}-{name}", self.seen)).await;
    }

    /// Run axe-core on the page; fail on any `serious` or `critical` violation, each printed.
    pub(crate) async fn axe_check(&self, name: &str) {
        let loaded = self.c.execute("return typeof window.axe === 'object';", vec![]).await.unwrap();
        if loaded != Value::Bool(true) {
            self.c.execute(&format!("{}\nreturn true;", self.axe), vec![]).await.unwrap();
        }
        let found = self
            .c
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {resultTypes: ['violations']})
                    .then(r => done({passed: r.passes.length, violations: r.violations.map(v => ({id: v.id,
                        impact: v.impact, help: v.help,
                        nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary}))}))}))
                    .catch(e => done({error: String(e)}));",
                vec![],
            )
            .await
            .unwrap();
        assert!(found.get("error").is_none(), "axe failed on {name}: {found}");
        // axe looked at the page (rules passed), so an empty list of violations means something.
        assert!(found["passed"].as_u64().unwrap_or(0) > 0, "axe checked nothing on {name}: {found}");
        let found = &found["violations"];
        let bad: Vec<&Value> = found
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        for v in &found.as_array().unwrap()[..] {
            eprintln!("axe on {name}: {} ({}): {}", v["id"], v["impact"], v["help"]);
        }
        assert!(
            bad.is_empty(),
            "serious or critical accessibility violations on {name}:\n{:#}",
            Value::from(bad.into_iter().cloned().collect::<Vec<_>>())
        );
    }

    /// PNGs of the page at each of [`WIDTHS`], as `<name>-<width>.png`; at each width the page
    /// fits the window (a wide table scrolls inside its own box, the page does not scroll sideways).
    pub(crate) async fn screenshot(&self, name: &str) {
        for width in WIDTHS {
            self.c.set_window_size(width, 900).await.unwrap();
            let wide = self
                .c
                .execute(
                    "const root = document.documentElement;
                     if (root.scrollWidth <= root.clientWidth) return [];
                     // What reaches past the window: the widest first (a table's cells inside its
                     // scrolling box are listed too, as they may be what escaped it).
                     return [...document.querySelectorAll('body *')]
                       .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1)
                       .sort((a, b) => b.getBoundingClientRect().right - a.getBoundingClientRect().right)
                       .slice(0, 8)
                       .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.')
                            + ' right=' + Math.round(e.getBoundingClientRect().right));",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(wide, json!([]), "{name} is wider than {width} px; these reach past the window");
            let png = self.c.screenshot().await.unwrap();
            assert!(png.starts_with(b"\x89PNG"), "a PNG");
            std::fs::write(self.shots.join(format!("{name}-{width}.png")), png).unwrap();
        }
        self.c.set_window_size(WIDTHS[0], 900).await.unwrap();
    }
}

/// `s` as an XPath string literal (it may hold an apostrophe, as Turkish text does).
fn xpath_literal(s: &str) -> String {
    if !s.contains('\'') {
        format!("'{s}'")
    } else if !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("concat('{}')", s.replace('\'', "', \"'\", '"))
    }
}

/// The dispatcher's whole first day, in the browser only: register, choose the sandbox, add a
/// vehicle and a driver, create a journey (places picked by name), paste twenty passengers
/// (one bad row shown beside itself and fixed in the table), submit, watch it turn
/// `delivered` without reloading, fetch the U-ETDS PDF, and switch to English.
#[tokio::test]
async fn a_dispatcher_registers_and_gets_a_journey_with_twenty_passengers_delivered() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let mut b = Browser::open(&app, "first_day").await;

    // From the sign-in page to the registration form.
    b.goto("/").await;
    b.wait("form[action='/login']").await;
    b.check("login").await;
    b.c.find(Locator::Css("a[href='/register']")).await.unwrap().click().await.unwrap();
    b.heading("Kuruluşunuzu kaydedin").await;
    b.check("register").await;
    // A refused field: the API's reason beside it, what was typed kept.
    let email = format!("browser-{}@example.com", unique_tax_number());
    b.fill("Kuruluş adı", "Anadolu Ekspres").await;
    b.fill("Vergi numarası", "123").await;
    b.fill("Ad soyad", "Elif Şahin").await;
    b.fill("E-posta", &email).await;
    b.fill("Parola", "correct horse").await;
    b.press("Kayıt ol").await;
    b.wait("#f-tax_number-error").await;
    b.check("register-refused").await;
    assert_eq!(b.field("E-posta").await.prop("value").await.unwrap().as_deref(), Some(email.as_str()));
    assert_eq!(b.field("Parola").await.prop("value").await.unwrap().as_deref(), Some(""), "the password is not kept");
    let tax = unique_tax_number();
    b.fill("Vergi numarası", &tax).await;
    b.fill("Parola", "correct horse").await;
    b.press("Kayıt ol").await;
    b.heading("Hoş geldiniz").await;
    b.check("welcome").await;
    assert!(b.wait("#new-secret").await.text().await.unwrap().starts_with("sk_live_"), "the first API key, shown once");
    b.c.find(Locator::LinkText("Panoya git")).await.unwrap().click().await.unwrap();
    b.wait("#usage-h").await;
    b.heading("Pano").await;
    b.check("dashboard").await;
    let org: i64 = sqlx::query_scalar("SELECT id FROM organizations WHERE tax_number = $1")
        .bind(&tax)
        .fetch_one(&app.db)
        .await
        .unwrap();

    // A vehicle through its form (htmx posts it; the list then shows it).
    b.c.find(Locator::LinkText("Araçlar")).await.unwrap().click().await.unwrap();
    b.heading("Araçlar").await;
    b.check("vehicles-empty").await;
    b.c.find(Locator::LinkText("Yeni araç")).await.unwrap().click().await.unwrap();
    b.heading("Yeni araç").await;
    b.check("vehicle-new").await;
    // A malformed plate: the API's reason beside the field (htmx swaps the form in place).
    b.fill("Plaka", "??").await;
    b.fill("Araç türü", "otobus").await;
    b.fill("Kapasite", "46").await;
    b.press("Kaydet").await;
    b.wait("#f-plate-error").await;
    b.check("vehicle-refused").await;
    assert_eq!(b.field("Kapasite").await.prop("value").await.unwrap().as_deref(), Some("46"), "kept");
    b.fill("Plaka", "34 abc 123").await;
    b.press("Kaydet").await;
    b.wait("td:first-child").await;
    b.heading("Araçlar").await;
    b.check("vehicles").await;
    assert!(b.text().await.contains("34ABC123"), "the plate as the API stored it");
    let plate: String =
        sqlx::query_scalar("SELECT plate FROM vehicles WHERE org_id = $1").bind(org).fetch_one(&app.db).await.unwrap();
    assert_eq!(plate, "34ABC123");

    // A driver.
    b.c.find(Locator::LinkText("Personel")).await.unwrap().click().await.unwrap();
    b.heading("Personel").await;
    b.c.find(Locator::LinkText("Yeni personel")).await.unwrap().click().await.unwrap();
    b.heading("Yeni personel").await;
    b.check("person-new").await;
    b.fill("Kimlik numarası", "10000000146").await;
    b.fill("Ad", "Mehmet").await;
    b.fill("Soyad", "Demir").await;
    b.fill("Cinsiyet", "E").await;
    b.fill("Görev", "driver").await;
    b.press("Kaydet").await;
    b.wait("td:first-child").await;
    b.heading("Personel").await;
    b.check("personnel").await;
    assert!(b.text().await.contains("Mehmet"));
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM personnel WHERE org_id = $1 AND role_type = 'driver'")
        .bind(org)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(n, 1);

    // Where submissions go: the sandbox, chosen explicitly.
    b.goto("/settings/downstream").await;
    b.heading("U-ETDS bağlantısı").await;
    b.check("downstream").await;
    b.choose("Sandbox (deneme; Bakanlığa gitmez)").await;
    b.press("Kaydet").await;
    b.wait(".flash.ok").await;
    assert!(b.text().await.contains("Kaydedildi."));
    // The allowed-addresses page: the sandbox keeps no list, which the page says.
    b.goto("/settings/downstream/addresses").await;
    b.heading("İzinli IP adresleri").await;
    b.check("addresses").await;
    assert!(b.text().await.contains("keeps no list"), "{}", b.text().await);
    // Pre-flight checks: a warning when one does not pass.
    b.goto("/settings/downstream/preflight").await;
    b.heading("Ön kontroller").await;
    b.check("preflight").await;
    b.choose("Uyar ve bildir").await;
    b.press("Kaydet").await;
    b.wait(".flash.ok").await;

    // A journey through its form; the places are picked by name from the type-ahead list.
    b.goto("/journeys").await;
    b.heading("Seferler").await;
    b.check("journeys-empty").await;
    b.c.find(Locator::LinkText("Yeni sefer")).await.unwrap().click().await.unwrap();
    b.heading("Yeni sefer").await;
    b.check("journey-new").await;
    let (vehicle, driver): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT id FROM vehicles WHERE org_id = $1), (SELECT id FROM personnel WHERE org_id = $1)",
    )
    .bind(org)
    .fetch_one(&app.db)
    .await
    .unwrap();
    b.fill("Araç", &vehicle.to_string()).await;
    b.fill("Sefer türü", "tarifesiz").await;
    b.fill("Personel", &driver.to_string()).await;
    b.put("Kalkış tarihi", "2026-12-01").await;
    b.put("Kalkış saati", "08:30").await;
    b.put("Varış tarihi", "2026-12-01").await;
    b.put("Varış saati", "20:15").await;
    for (label, typed, want, name) in
        [("Kalkış yeri (ilçe)", "Kadık", KADIKOY, "Kadıköy"), ("Varış yeri (ilçe)", "Ceyh", CEYHAN, "Ceyhan")]
    {
        let input = b.field(label).await;
        input.send_keys(typed).await.unwrap();
        let list = input.attr("list").await.unwrap().expect("a place input names its list");
        let option = b.wait(&format!("datalist#{list} option")).await;
        let shown = option.prop("textContent").await.unwrap().unwrap_or_default();
        assert!(shown.starts_with(name), "{shown:?} offered for {typed:?}");
        let picked = option.attr("value").await.unwrap().unwrap();
        assert_eq!(picked, want.to_string(), "the first match for {typed:?} is the district wanted");
        // Choosing an option from the list puts its value in the input.
        b.put(label, &picked).await;
    }
    b.check("journey-filled").await;
    b.press("Kaydet").await;
    b.wait("#passengers-h").await;
    b.check("journey").await;
    let journey: i64 =
        sqlx::query_scalar("SELECT id FROM journeys WHERE org_id = $1").bind(org).fetch_one(&app.db).await.unwrap();

    // Twenty rows pasted from a spreadsheet, the seventh's identity number wrong: nothing is
    // saved, the reason is beside that row, every row stays in the table.
    let mut rows = vec!["Ad;Soyad;Kimlik numarası;Cinsiyet;boarding_place_code;destination_place_code".to_string()];
    let base = org as u64 * 1000;
    for i in 0..20u64 {
        let identity = if i == 6 { "12345678901".to_string() } else { tckn(base + i) };
        rows.push(format!("Yolcu{i};Kaya;{identity};E;{KADIKOY};{CEYHAN}"));
    }
    b.put("Satırları yapıştırın", &rows.join("\n")).await;
    b.press("Oku ve kaydet").await;
    b.wait("#r6-identity_number-error").await;
    b.check("passengers-refused").await;
    assert!(b.text().await.contains("Satır 7, Kimlik numarası"), "the row and the field are named");
    let saved = || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM passengers WHERE journey_id = $1")
            .bind(journey)
            .fetch_one(&app.db)
            .await
            .unwrap();
        n
    };
    assert_eq!(saved().await, 0, "nothing saved while a row is wrong");
    assert_eq!(
        b.field("Satır 20: Ad").await.prop("value").await.unwrap().as_deref(),
        Some("Yolcu19"),
        "every row kept"
    );
    b.fill("Satır 7: Kimlik numarası", &tckn(base + 6)).await;
    b.press("Yolcuları kaydet").await;
    b.wait(".flash.ok").await;
    assert!(b.text().await.contains("Yolcular kaydedildi (20)"));
    assert_eq!(saved().await, 20);
    b.check("passengers").await;

    // Submitted: the page follows the submission live, from pending to delivered.
    b.press("U-ETDS'ye bildir").await;
    b.wait("#submission .badge").await;
    b.wait("#submission .badge.state-delivered").await;
    b.check("delivered").await;
    let reference: String =
        sqlx::query_scalar("SELECT downstream_reference FROM submissions WHERE target_id = $1 AND state = 'delivered'")
            .bind(journey)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(b.text().await.contains(&reference), "the downstream's reference shown without reloading");

    // The journey's own state and actions follow (still without reloading): delivered, its
    // reference, cancelling offered instead of deleting, the U-ETDS PDF.
    let link = b.wait("#journey-card a[download][href$='/report']").await;
    let card = b.c.find(Locator::Css("#journey-card")).await.unwrap().text().await.unwrap();
    assert!(card.contains("İletildi") && card.contains(&reference), "{card}");
    assert!(b.c.find_all(Locator::Css("#journey-card form[action$='/delete']")).await.unwrap().is_empty(), "{card}");
    assert!(!b.c.find_all(Locator::Css("#journey-card form[action$='/cancel']")).await.unwrap().is_empty(), "{card}");
    b.check("delivered-record").await;
    // The PDF, fetched as the link downloads it (with the member's session).
    let href = link.attr("href").await.unwrap().unwrap();
    let got =
        b.c.execute_async(
            "const [href, done] = arguments;
             fetch(href, {credentials: 'same-origin'})
               .then(async r => done({status: r.status, type: r.headers.get('content-type'),
                   head: new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5))}))
               .catch(e => done({error: String(e)}));",
            vec![json!(href)],
        )
        .await
        .unwrap();
    assert_eq!(got, json!({"status": 200, "type": "application/pdf", "head": "%PDF-"}), "{got}");

    // English, on the same page, and remembered from page to page.
    b.c.find(Locator::Css("a.lang")).await.unwrap().click().await.unwrap();
    b.wait("html[lang='en']").await;
    b.wait("#journey-card").await;
    assert!(b.text().await.contains(&format!("Journey #{journey}")), "back on the journey's page");
    b.check("journey-en").await;
    b.c.find(Locator::LinkText("Dashboard")).await.unwrap().click().await.unwrap();
    b.heading("Dashboard").await;
    b.wait("html[lang='en']").await;
    assert!(b.text().await.contains("Usage this month"));
    b.check("dashboard-en").await;
    b.goto("/vehicles/new").await;
    b.heading("New vehicle").await;
    b.check("vehicle-new-en").await;
    b.close().await;
}

#[tokio::test]
async fn an_invited_viewer_sees_only_what_the_role_allows() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let mut owner = Browser::open(&app, "invite_owner").await;
    owner.sign_in(&org.email, &org.password).await;
    owner.check("dashboard").await;

    // The invitation: the link is shown once, on the team page.
    owner.goto("/settings/team").await;
    owner.heading("Ekip").await;
    owner.check("team").await;
    let email = format!("viewer-{}@example.com", unique_tax_number());
    owner.fill("E-posta", &email).await;
    owner.fill("Rol", "viewer").await;
    owner.press("Davet et").await;
    let link = owner.wait(".flash.ok code").await.text().await.unwrap();
    owner.check("team-invited").await;
    assert!(link.starts_with("/invite/"), "{link}");

    // The one invited, in a browser of their own.
    let mut viewer = Browser::open(&app, "invite_viewer").await;
    viewer.goto(&link).await;
    viewer.wait("form[action^='/invite/']").await;
    viewer.check("join").await;
    viewer.fill("Ad soyad", "Can Öztürk").await;
    viewer.fill("Yeni parola", "viewer password").await;
    viewer.press("Katıl").await;
    viewer.heading("Pano").await;
    viewer.check("dashboard").await;
    // The navigation offers a viewer only what the role opens.
    let mut offered = vec![];
    for a in viewer.c.find_all(Locator::Css("header nav a")).await.unwrap() {
        offered.push(a.attr("href").await.unwrap().unwrap());
    }
    assert_eq!(offered, ["/dashboard", "/submissions", "/settings/downstream"]);
    // A viewer sees submissions but not the registries, nor the team.
    viewer.goto("/vehicles/new").await;
    viewer.heading("Bu işlem için yetkiniz yok.").await;
    viewer.check("vehicle-new-refused").await;
    viewer.goto("/vehicles").await;
    viewer.heading("Bu işlem için yetkiniz yok.").await;
    assert!(viewer.c.find_all(Locator::Css("a[href='/vehicles/new']")).await.unwrap().is_empty(), "no add button");
    viewer.goto("/settings/team").await;
    viewer.heading("Bu işlem için yetkiniz yok.").await;
    let role: String = sqlx::query_scalar("SELECT role::text FROM users WHERE email = $1")
        .bind(&email)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(role, "viewer");

    // The owner's team page now lists them.
    owner.goto("/settings/team").await;
    owner.heading("Ekip").await;
    assert!(owner.text().await.contains("Can Öztürk"));
    viewer.close().await;
    owner.close().await;
}
