//! The journeys pages as a browser without scripts uses them: a journey through its form (the
//! API's rules, what was typed kept), passengers pasted, fixed in the table, uploaded as CSV
//! and `.xlsx` (nothing saved while a row is wrong), submitted and delivered through the
//! sandbox, its report, the list's filters, and tenancy and roles.

use std::{io::Write, time::Duration};

use reqwest::{header, StatusCode};
use serde_json::{json, Value};

use crate::{
    fixtures::{delivering, journey, Fleet, CEYHAN, KADIKOY},
    helpers::{tckn, Env, InProcessScheduler, TestApp},
    portal::{Seen, Visitor},
};

/// A multipart post of `file` (named `name`) with the CSRF token of the page at `from`, as a
/// browser sends an upload form.
async fn upload(v: &Visitor, from: &str, path: &str, name: &str, file: &[u8]) -> Seen {
    let csrf = v.get(from).await.hidden("_csrf").unwrap();
    let boundary = "----tns-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n{csrf}\r\n--{boundary}\r\n\
         Content-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    v.post_body(path, &format!("multipart/form-data; boundary={boundary}"), body).await
}

/// A one-sheet workbook: the smallest `.xlsx` a spreadsheet program writes, strings inline and
/// numbers as numbers.
fn xlsx(rows: &[Vec<Value>]) -> Vec<u8> {
    let mut sheet = String::new();
    for (i, row) in rows.iter().enumerate() {
        sheet.push_str(&format!(r#"<row r="{}">"#, i + 1));
        for (j, cell) in row.iter().enumerate() {
            let r = format!("{}{}", (b'A' + j as u8) as char, i + 1);
            match cell {
                Value::Number(n) => sheet.push_str(&format!(r#"<c r="{r}"><v>{n}</v></c>"#)),
                other => sheet
                    .push_str(&format!(r#"<c r="{r}" t="inlineStr"><is><t>{}</t></is></c>"#, other.as_str().unwrap())),
            }
        }
        sheet.push_str("</row>");
    }
    let rels = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let files = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string(),
        ),
        (
            "_rels/.rels",
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rels}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#),
        ),
        (
            "xl/workbook.xml",
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="{rels}"><sheets><sheet name="Yolcular" sheetId="1" r:id="rId1"/></sheets></workbook>"#),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rels}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#),
        ),
        (
            "xl/worksheets/sheet1.xml",
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{sheet}</sheetData></worksheet>"#),
        ),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The journey's passengers' identity numbers, through the JSON API.
async fn stored(app: &TestApp, key: &str, journey: i64) -> Vec<String> {
    let list = app.get_ok(&format!("/portal/journeys/{journey}/passengers?limit=200"), key).await;
    list["data"].as_array().unwrap().iter().map(|p| p["identity_number"].as_str().unwrap().to_string()).collect()
}

/// The journey form's fields for a non-scheduled trip on `vehicle` with `driver`.
fn journey_form<'a>(vehicle: &'a str, driver: &'a str, date: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("vehicle_id", vehicle),
        ("trip_kind", "tarifesiz"),
        ("personnel_ids", driver),
        ("departure.date", date),
        ("departure.time", "08:30"),
        ("departure.district_id", "1421"),
        ("arrival.date", date),
        ("arrival.time", "20:15"),
        ("arrival.district_id", "1219"),
    ]
}

#[tokio::test]
async fn a_dispatchers_journey_from_form_to_delivery() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let fleet = Fleet::new(&app).await;
    let key = fleet.key().to_string();
    let v = Visitor::owner(&app, &fleet.org).await;
    let (vehicle, driver) = (fleet.vehicle_id.to_string(), fleet.driver_id.to_string());

    // The form offers the organization's vehicles and crew; place inputs carry the picker.
    let form = v.get("/journeys/new").await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.contains(&format!(r#"<option value="{vehicle}">{}</option>"#, fleet.plate)), "{}", form.body);
    assert!(form.body.contains(&format!(r#"<option value="{driver}">Mehmet Demir"#)), "{}", form.body);
    assert!(form.body.contains(r#"name="departure.district_id""#) && form.body.contains(r#"data-picker="district""#));

    // Arrival before departure: the API's rule, beside the field, what was typed kept.
    let mut bad = journey_form(&vehicle, &driver, "2026-12-01");
    bad[7] = ("arrival.time", "06:00");
    let refused = v.submit("/journeys/new", "/journeys", &bad).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(refused.body.contains(r#"id="f-arrival-date-error""#), "{}", refused.body);
    assert!(refused.body.contains(r#"value="06:00""#) && refused.body.contains(r#"value="1219""#), "kept");
    assert!(refused.body.contains(&format!(r#"<option value="{driver}" selected>"#)), "the crew kept");
    assert_eq!(app.get_ok("/portal/journeys", &key).await["data"].as_array().unwrap().len(), 0);

    let made = v.submit("/journeys/new", "/journeys", &journey_form(&vehicle, &driver, "2026-12-01")).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let listed = app.get_ok("/portal/journeys", &key).await;
    let id = listed["data"][0]["id"].as_i64().unwrap();
    assert_eq!(made.location(), format!("/journeys/{id}?done=saved"));
    assert_eq!(listed["data"][0]["personnel_ids"], json!([fleet.driver_id]));
    assert_eq!(listed["data"][0]["trip_kind"], "tarifesiz");
    let page_path = format!("/journeys/{id}");

    // Twenty rows pasted from a spreadsheet, the seventh's identity number wrong: nothing saved,
    // the error beside that row, every row kept in the table.
    let base = fleet.org.id as u64 * 1000;
    let row = |i: u64, identity: &str| format!("Ali{i}\tKaya\t{identity}\tE\t{KADIKOY}\t{CEYHAN}");
    let mut lines =
        vec!["first_name\tlast_name\tidentity_number\tgender\tboarding_place_code\tdestination_place_code".to_string()];
    for i in 0..20 {
        lines.push(row(i, &if i == 6 { "12345678901".to_string() } else { tckn(base + i) }));
    }
    let pasted =
        v.submit(&page_path, &format!("/journeys/{id}/passengers/paste"), &[("rows", &lines.join("\n"))]).await;
    assert_eq!(pasted.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", pasted.body);
    assert!(pasted.body.contains(r#"id="r6-identity_number-error""#), "{}", pasted.body);
    assert!(pasted.body.contains("Satır 7, Kimlik numarası"), "the row and field named: {}", pasted.body);
    assert!(pasted.body.contains(&format!(r#"name="r19.identity_number" value="{}""#, tckn(base + 19))));
    assert!(stored(&app, &key, id).await.is_empty(), "nothing saved");

    // Fixed in the table: all twenty saved at once.
    let mut fields: Vec<(String, String)> = vec![];
    for i in 0..20u64 {
        for (f, val) in [
            ("first_name", format!("Ali{i}")),
            ("last_name", "Kaya".into()),
            ("identity_number", tckn(base + i)),
            ("gender", "E".into()),
            ("boarding_place_code", KADIKOY.to_string()),
            ("destination_place_code", CEYHAN.to_string()),
        ] {
            fields.push((format!("r{i}.{f}"), val));
        }
    }
    // The first passenger checks two bags in: barcodes typed with a comma or a space.
    fields.push(("r0.seat_no".into(), "1".into()));
    fields.push(("r0.baggage".into(), "b1, B2".into()));
    let refs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let saved = v.submit(&page_path, &format!("/journeys/{id}/passengers"), &refs).await;
    assert_eq!(
        (saved.status, saved.location()),
        (StatusCode::SEE_OTHER, format!("{page_path}?done=passengers&n=20").as_str())
    );
    assert_eq!(stored(&app, &key, id).await.len(), 20);
    let list = app.get_ok(&format!("/portal/journeys/{id}/passengers?limit=200"), &key).await;
    let first = list["data"].as_array().unwrap().iter().find(|p| p["identity_number"] == tckn(base).as_str()).unwrap();
    assert_eq!(first["baggage"], json!(["B1", "B2"]), "{first}");
    let shown = v.get(&page_path).await;
    assert!(shown.body.contains(r#"name="r0.baggage" value="B1 B2""#), "the table shows the barcodes");
    assert!(
        shown.body.contains(&tckn(base + 6)),
        "a member with journeys:read sees the numbers, as the API shows them"
    );

    // A CSV file (semicolons, a header in Turkish words), then an .xlsx (numbers as numbers).
    let csv = format!(
        "Ad;Soyad;Kimlik numarası;Cinsiyet;boarding_place_code;destination_place_code\n\
         Ayşe;Yılmaz;{};K;{KADIKOY};{CEYHAN}\nFatma;Demir;{};K;{KADIKOY};{CEYHAN}\n",
        tckn(base + 100),
        tckn(base + 101)
    );
    let up = upload(&v, &page_path, &format!("/journeys/{id}/passengers/upload"), "yolcular.csv", csv.as_bytes()).await;
    assert_eq!(up.status, StatusCode::SEE_OTHER, "{}", up.body);
    assert_eq!(stored(&app, &key, id).await.len(), 22);
    let header: Vec<Value> =
        ["first_name", "last_name", "identity_number", "gender", "boarding_place_code", "destination_place_code"]
            .iter()
            .map(|s| json!(s))
            .collect();
    let person = |n: u64| {
        vec![
            json!("Can"),
            json!("Öz"),
            json!(tckn(base + n).parse::<u64>().unwrap()),
            json!("E"),
            json!(KADIKOY),
            json!(CEYHAN),
        ]
    };
    let book = xlsx(&[header.clone(), person(200), person(201)]);
    let up = upload(&v, &page_path, &format!("/journeys/{id}/passengers/upload"), "yolcular.xlsx", &book).await;
    assert_eq!(up.status, StatusCode::SEE_OTHER, "{}", up.body);
    let now = stored(&app, &key, id).await;
    assert_eq!(now.len(), 24);
    assert!(now.contains(&tckn(base + 201)));
    // A bad row in a workbook: refused whole, named.
    let mut wrong = person(300);
    wrong[3] = json!("X");
    let refused = upload(
        &v,
        &page_path,
        &format!("/journeys/{id}/passengers/upload"),
        "y.xlsx",
        &xlsx(&[header, person(301), wrong]),
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(refused.body.contains(r#"id="r1-gender-error""#), "{}", refused.body);
    assert_eq!(stored(&app, &key, id).await.len(), 24);

    // Submitted from the page: queued in the member's name, delivered by the sandbox, and the
    // page follows it (and shows it without scripts).
    let sent = v.submit(&page_path, &format!("/journeys/{id}/submit"), &[]).await;
    assert_eq!((sent.status, sent.location()), (StatusCode::SEE_OTHER, format!("{page_path}?done=submitted").as_str()));
    let subs = app.get_ok(&format!("/portal/submissions?target_type=journey&target_id={id}"), &key).await;
    let sub = &subs["data"][0];
    assert_eq!(sub["submitted_by"], format!("user:{}", fleet.org.user_id));
    let sid = sub["id"].as_i64().unwrap();
    let mut delivered = Value::Null;
    for _ in 0..600 {
        let s = app.get_ok(&format!("/portal/submissions/{sid}"), &key).await;
        if s["state"] != "pending" {
            delivered = s;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(delivered["state"], "delivered", "{delivered}");
    let page = v.get(&format!("{page_path}?done=submitted")).await;
    assert!(page.body.contains(&format!(r#"<div id="submission-{sid}" aria-live="polite""#)), "{}", page.body);
    assert!(page.body.contains(r#"aria-live="polite""#) && page.body.contains("state-delivered"));
    assert!(page.body.contains(delivered["downstream_reference"].as_str().unwrap()));

    // The U-ETDS report, as the API serves it.
    let pdf = v.client.get(format!("{}{page_path}/report", v.root)).send().await.unwrap();
    assert_eq!(pdf.status(), StatusCode::OK);
    assert_eq!(pdf.headers()[header::CONTENT_TYPE], "application/pdf");

    // The list: newest first, filtered by date, state and vehicle as the API filters.
    let mut later = journey(json!(fleet.plate.clone()));
    later["departure"]["date"] = json!("2026-12-05");
    later["arrival"]["date"] = json!("2026-12-05");
    let other = app.post_ok("/portal/journeys", &key, later, 201).await["id"].as_i64().unwrap();
    let all = v.get("/journeys").await.body;
    let (at_other, at_first) =
        (all.find(&format!("/journeys/{other}\"")).unwrap(), all.find(&format!("{page_path}\"")).unwrap());
    assert!(at_other < at_first, "newest first");
    let from = v.get("/journeys?departure_from=2026-12-03").await.body;
    assert!(from.contains(&format!("/journeys/{other}\"")) && !from.contains(&format!("{page_path}\"")));
    let done = v.get("/journeys?status=delivered").await.body;
    assert!(done.contains(&format!("{page_path}\"")) && !done.contains(&format!("/journeys/{other}\"")));
    let by_vehicle = v.get(&format!("/journeys?vehicle_id={vehicle}")).await.body;
    assert!(by_vehicle.contains(&format!("{page_path}\"")) && by_vehicle.contains(&format!("/journeys/{other}\"")));
    let none = v.get(&format!("/journeys?vehicle_id={}", fleet.vehicle_id + 1000)).await.body;
    assert!(!none.contains(&format!("{page_path}\"")));
    let bad_filter = v.get("/journeys?departure_from=yesterday").await;
    assert_eq!(bad_filter.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn another_organizations_journey_is_nowhere_and_a_viewer_creates_none() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let id = fleet.journey(&app).await;
    let owner = Visitor::owner(&app, &fleet.org).await;
    assert_eq!(owner.get(&format!("/journeys/{id}")).await.status, StatusCode::OK);

    let stranger_org = app.register().await;
    let stranger = Visitor::owner(&app, &stranger_org).await;
    assert_eq!(stranger.get(&format!("/journeys/{id}")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(stranger.get(&format!("/journeys/{id}/edit")).await.status, StatusCode::NOT_FOUND);
    let rows = format!("Ali\tKaya\t{}\tE\t{KADIKOY}\t{CEYHAN}", tckn(7));
    let theirs = stranger.submit("/journeys", &format!("/journeys/{id}/passengers/paste"), &[("rows", &rows)]).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);
    let submit = stranger.submit("/journeys", &format!("/journeys/{id}/submit"), &[]).await;
    assert_eq!(submit.status, StatusCode::NOT_FOUND);
    assert!(stored(&app, fleet.key(), id).await.is_empty());
    assert!(!stranger.get("/journeys").await.body.contains(&format!("/journeys/{id}\"")));

    // A viewer: no journey pages (people's data), no creating.
    let email = format!("viewer-{}@example.com", fleet.org.id);
    let made = owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "viewer")]).await;
    let at = made.body.find("/invite/").expect("the invitation link is shown");
    let link: String =
        made.body[at..].split(|c: char| c.is_whitespace() || c == '<' || c == '"').next().unwrap().into();
    let viewer = Visitor::new(&app);
    let joined = viewer.post(&link, &[("full_name", "Ece Su"), ("password", "correct horse")]).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER);
    assert_eq!(viewer.get("/journeys/new").await.status, StatusCode::FORBIDDEN);
    let csrf = viewer.get("/dashboard").await.hidden("_csrf").unwrap();
    let vehicle = fleet.vehicle_id.to_string();
    let mut fields = vec![("_csrf", csrf.as_str())];
    fields.extend(journey_form(&vehicle, "", "2026-12-01"));
    assert_eq!(viewer.post("/journeys", &fields).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.get_ok("/portal/journeys", fleet.key()).await["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_deleted_record_says_who_deleted_it() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let owner = Visitor::owner(&app, &fleet.org).await;
    let (by_page, by_key) = (fleet.journey(&app).await, fleet.journey(&app).await);
    let _kept = fleet.journey(&app).await;

    // A draft deleted from its page (the member), another through the API (the key), and the
    // fleet's vehicle, which the journeys' history keeps as inactive: each in the audit log,
    // as who did it, naming the record and never its contents.
    let gone = owner.submit(&format!("/journeys/{by_page}"), &format!("/journeys/{by_page}/delete"), &[]).await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER, "{}", gone.body);
    let res = app.delete(&format!("/portal/journeys/{by_key}"), fleet.key()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let res = app.delete(&format!("/portal/vehicles/{}", fleet.vehicle_id), fleet.key()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let logged: Vec<(String, Value)> = sqlx::query_as(
        "SELECT actor, before FROM audit_log WHERE org_id = $1 AND action = 'delete_record' ORDER BY id",
    )
    .bind(fleet.org.id)
    .fetch_all(&app.db)
    .await
    .unwrap();
    let key: i64 = sqlx::query_scalar("SELECT id FROM api_keys WHERE org_id = $1")
        .bind(fleet.org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(
        logged,
        [
            (format!("tenant:user:{}", fleet.org.user_id), json!({"record": "journey", "id": by_page})),
            (format!("tenant:key:{key}"), json!({"record": "journey", "id": by_key})),
            (format!("tenant:key:{key}"), json!({"record": "vehicle", "id": fleet.vehicle_id, "kept_inactive": true})),
        ]
    );
    // A refused delete (no longer a draft, or not there) writes nothing.
    assert_eq!(app.delete(&format!("/portal/journeys/{by_key}"), fleet.key()).await.status(), StatusCode::NOT_FOUND);
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE org_id = $1")
        .bind(fleet.org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(n, 3);
}

#[tokio::test]
async fn a_cancelled_journey_is_reactivated_from_its_page() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let fleet = Fleet::new(&app).await;
    let key = fleet.key().to_string();
    let id = fleet.journey(&app).await;
    let wait = |path: String| {
        let (app, key) = (&app, key.clone());
        async move {
            let res =
                app.req(reqwest::Method::POST, &path, Some(&key)).header("Prefer", "wait=20").send().await.unwrap();
            assert_eq!(res.status(), StatusCode::ACCEPTED);
        }
    };
    wait(format!("/portal/journeys/{id}/submit")).await;
    wait(format!("/portal/journeys/{id}/cancel")).await;
    assert_eq!(app.get_ok(&format!("/portal/journeys/{id}"), &key).await["status"], "cancelled");

    let v = Visitor::owner(&app, &fleet.org).await;
    let page = format!("/journeys/{id}");
    let shown = v.get(&page).await;
    assert!(shown.body.contains(&format!(r#"action="/journeys/{id}/reactivate""#)), "{}", shown.body);
    assert!(!shown.body.contains(&format!(r#"action="/journeys/{id}/cancel""#)), "no cancel for a cancelled one");
    let sent = v.submit(&page, &format!("/journeys/{id}/reactivate"), &[]).await;
    assert_eq!((sent.status, sent.location()), (StatusCode::SEE_OTHER, format!("{page}?done=submitted").as_str()));
    let subs = app.get_ok(&format!("/portal/submissions?target_type=journey&target_id={id}"), &key).await;
    assert_eq!(subs["data"][0]["operation"], "reactivate");
    assert_eq!(subs["data"][0]["submitted_by"], format!("user:{}", fleet.org.user_id));
    let mut status = Value::Null;
    for _ in 0..400 {
        status = app.get_ok(&format!("/portal/journeys/{id}"), &key).await["status"].clone();
        if status == "delivered" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "delivered", "re-activated");
}

#[tokio::test]
async fn a_passenger_who_did_not_come_is_reported_from_the_journeys_page() {
    let (app, _scheduler, fleet) = delivering().await;
    let key = fleet.key().to_string();
    let id = fleet.journey(&app).await;
    let pid = app.post_ok(&format!("/portal/journeys/{id}/passengers"), &key, crate::fixtures::passenger(5), 201).await
        ["id"]
        .as_i64()
        .unwrap();
    let v = Visitor::owner(&app, &fleet.org).await;
    let page = format!("/journeys/{id}");
    let action = format!("/journeys/{id}/passengers/{pid}/no-show");
    assert!(!v.get(&page).await.body.contains(&action), "not before it is delivered");
    app.act(&format!("/portal/journeys/{id}/submit"), &key).await;
    assert!(v.get(&page).await.body.contains(&format!(r#"formaction="{action}""#)));
    let sent = v.submit(&page, &action, &[]).await;
    assert_eq!((sent.status, sent.location()), (StatusCode::SEE_OTHER, format!("{page}?done=submitted").as_str()));
    let subs = app.get_ok(&format!("/portal/submissions?target_type=journey&target_id={id}"), &key).await;
    assert_eq!(subs["data"][0]["operation"], "no_show", "{subs}");
    assert_eq!(subs["data"][0]["submitted_by"], format!("user:{}", fleet.org.user_id));
}

#[tokio::test]
async fn a_journey_abroad_is_made_from_the_form_and_shown_by_its_country_and_place() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let v = Visitor::owner(&app, &fleet.org).await;
    let (vehicle, driver) = (fleet.vehicle_id.to_string(), fleet.driver_id.to_string());
    let mut form = journey_form(&vehicle, &driver, "2026-12-01");
    form.retain(|(k, _)| *k != "arrival.district_id");
    form.extend([("arrival.country", "BG"), ("arrival.place", "Sofya")]);
    // A place abroad without its country is a stop at home that names no district.
    let no_country: Vec<_> = form.iter().filter(|(k, _)| *k != "arrival.country").copied().collect();
    let refused = v.submit("/journeys/new", "/journeys", &no_country).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(refused.body.contains(r#"id="f-arrival-district_id-error""#), "{}", refused.body);

    let made = v.submit("/journeys/new", "/journeys", &form).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let listed = app.get_ok("/portal/journeys", fleet.key()).await;
    assert_eq!(listed["data"][0]["arrival"]["country"], "BG");
    let page = v.get(made.location().split('?').next().unwrap()).await;
    assert!(page.body.contains("Sofya (BG)"), "{}", page.body);
    let list = v.get("/journeys").await;
    assert!(list.body.contains("Sofya (BG)"), "{}", list.body);
}
