//! Invoices end to end: what each kind of plan is charged (issued by the invoicing code on the
//! real database, read back through the API as JSON and PDF), fixed fees in advance and credits
//! on a change, a day billed at the dearest plan held in it (the same-day flip), the upcoming
//! invoice, overage counted by the admission script, exactly once with runners racing, and an
//! overdue invoice suspending until an operator records it paid.

use std::time::Duration;

use chrono::{Datelike, NaiveDate};
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::Value;
use sqlx::PgPool;
use tns_core::{
    domain::{billing::TaxRate, month::Month},
    env::RedisSettings,
};
use tns_jobs::periodic::Job;
use tns_store::billing::invoices::{issue_due, Terms};

use crate::helpers::{error_body, eventually, set_custom_plan, tns_admin as admin, Org, TestApp};

fn terms(kdv: i64) -> Terms {
    Terms { tax_rate: TaxRate::percent(Decimal::from(kdv)).unwrap(), due_days: 14 }
}

fn d(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// A term on `plan` from `starts` until `ends` (exclusive), nothing invoiced yet.
pub(crate) async fn term(db: &PgPool, org: i64, plan: &str, starts: &str, ends: Option<&str>) {
    sqlx::query(
        "INSERT INTO plan_terms (org_id, plan_code, starts_on, ends_on, billed_until) VALUES ($1, $2, $3, $4, $3)",
    )
    .bind(org)
    .bind(plan)
    .bind(d(starts))
    .bind(ends.map(d))
    .execute(db)
    .await
    .unwrap();
}

async fn today(db: &PgPool) -> NaiveDate {
    sqlx::query_scalar("SELECT (now() AT TIME ZONE 'UTC')::date").fetch_one(db).await.unwrap()
}

/// The organization's invoices, oldest first, each with its lines.
async fn invoices(app: &TestApp, org: &Org) -> Vec<Value> {
    let list = app.get_ok("/portal/billing/invoices", &org.key).await;
    let mut out = vec![];
    for i in list["data"].as_array().unwrap().iter().rev() {
        out.push(app.get_ok(&format!("/portal/billing/invoices/{}", i["id"]), &org.key).await);
    }
    out
}

type Summary = (String, String, f64, f64, f64);

/// (period_start, period_end, subtotal, tax, total) as the API shows them. JSON numbers read
/// as f64 compare exactly with the same decimal literal read the same way.
fn summary(i: &Value) -> Summary {
    let s = |k: &str| i[k].as_str().unwrap().to_string();
    let n = |k: &str| i[k].as_f64().unwrap();
    (s("period_start"), s("period_end"), n("subtotal"), n("tax_amount"), n("total_amount"))
}

fn row(start: &str, end: &str, subtotal: &str, tax: &str, total: &str) -> Summary {
    let n = |v: &str| v.parse::<f64>().unwrap();
    (start.into(), end.into(), n(subtotal), n(tax), n(total))
}

#[tokio::test]
async fn each_kind_of_plan_is_invoiced_once_its_period_is_over_with_kdv_as_its_own_line() {
    let app = TestApp::spawn().await;
    let db = &app.db;
    let (monthly, yearly, overage, upgrade, downgrade, left_yearly) = (
        app.register().await,
        app.register().await,
        app.register().await,
        app.register().await,
        app.register().await,
        app.register().await,
    );
    term(db, monthly.id, "starter", "2026-10-01", Some("2026-11-01")).await;
    term(db, yearly.id, "Y-10", "2025-01-01", Some("2026-01-01")).await;
    term(db, overage.id, "growth", "2026-10-01", Some("2026-11-01")).await;
    sqlx::query("INSERT INTO usage_overage (org_id, month, calls) VALUES ($1, '2026-10-01', 2000)")
        .bind(overage.id)
        .execute(db)
        .await
        .unwrap();
    // Upgrade and downgrade on 15 September: 14 days of one plan, 16 of the other.
    term(db, upgrade.id, "starter", "2026-09-01", Some("2026-09-15")).await;
    term(db, upgrade.id, "growth", "2026-09-15", Some("2026-10-01")).await;
    term(db, downgrade.id, "growth", "2026-09-01", Some("2026-09-15")).await;
    term(db, downgrade.id, "starter", "2026-09-15", Some("2026-10-01")).await;
    // A yearly plan left after 100 days.
    term(db, left_yearly.id, "Y-10", "2026-01-01", Some("2026-04-11")).await;

    // Invoicing behind (terms that ended before it ran) charges what each held, late: one
    // invoice per organization.
    let issued = issue_due(db, d("2026-11-25"), terms(20)).await.unwrap();
    assert_eq!(issued.len(), 6);

    let m = &invoices(&app, &monthly).await;
    assert_eq!(
        m.iter().map(summary).collect::<Vec<_>>(),
        [row("2026-10-01", "2026-10-31", "99.00", "19.80", "118.80")]
    );
    let lines = m[0]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!((lines[0]["kind"].as_str(), lines[0]["quantity"].as_i64()), (Some("plan"), Some(31)));
    assert_eq!((lines[1]["kind"].as_str(), lines[1]["description"].as_str()), (Some("tax"), Some("KDV 20%")));
    assert_eq!((m[0]["status"].as_str(), m[0]["currency"].as_str()), (Some("open"), Some("TRY")));
    assert_eq!(m[0]["due_on"], "2026-12-09", "14 days after the issue date given");

    let y = invoices(&app, &yearly).await;
    assert_eq!(
        y.iter().map(summary).collect::<Vec<_>>(),
        [row("2025-01-01", "2025-12-31", "14000.00", "2800.00", "16800.00")]
    );

    let o = invoices(&app, &overage).await;
    assert_eq!(
        o.iter().map(summary).collect::<Vec<_>>(),
        [row("2026-10-01", "2026-10-31", "599.00", "119.80", "718.80")]
    );
    let line = &o[0]["lines"][1];
    assert_eq!((line["kind"].as_str(), line["quantity"].as_i64()), (Some("overage"), Some(2000)));
    assert_eq!((line["unit_price"].as_f64(), line["amount"].as_f64()), (Some(0.05), Some(100.0)));

    // 14 days of one plan and 16 of the other, each charged by day: 46.20 + 266.13, and
    // 232.87 + 52.80.
    let u = invoices(&app, &upgrade).await;
    assert_eq!(
        u.iter().map(summary).collect::<Vec<_>>(),
        [row("2026-09-01", "2026-09-30", "312.33", "62.47", "374.80")]
    );
    let amounts = |i: &Value| -> Vec<f64> {
        i["lines"].as_array().unwrap().iter().map(|l| l["amount"].as_f64().unwrap()).collect()
    };
    assert_eq!(amounts(&u[0]), [46.2, 266.13, 62.47]);
    let g = invoices(&app, &downgrade).await;
    assert_eq!(
        g.iter().map(summary).collect::<Vec<_>>(),
        [row("2026-09-01", "2026-09-30", "285.67", "57.13", "342.80")]
    );
    assert_eq!(amounts(&g[0]), [232.87, 52.8, 57.13]);
    let l = invoices(&app, &left_yearly).await;
    assert_eq!(
        l.iter().map(summary).collect::<Vec<_>>(),
        [row("2026-01-01", "2026-04-10", "3835.62", "767.12", "4602.74")]
    );
    assert_eq!(
        (l[0]["lines"][0]["quantity"].as_i64(), l[0]["lines"][0]["period_days"].as_i64()),
        (Some(100), Some(365))
    );

    // The amounts travel as exact decimals, digit for digit.
    let raw =
        app.get(&format!("/portal/billing/invoices/{}", l[0]["id"]), &left_yearly.key).await.text().await.unwrap();
    assert!(raw.contains("\"total_amount\":4602.74"), "{raw}");

    // Running again issues nothing: every period is invoiced once.
    assert!(issue_due(db, d("2026-11-25"), terms(20)).await.unwrap().is_empty());
    // Another organization's invoice is not found.
    error_body(app.get(&format!("/portal/billing/invoices/{}", m[0]["id"]), &yearly.key).await, 404).await;
}

#[tokio::test]
async fn an_invoice_downloads_as_a_pdf_with_its_lines() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    sqlx::query("UPDATE organizations SET name = 'Çağlar Turizm' WHERE id = $1")
        .bind(org.id)
        .execute(&app.db)
        .await
        .unwrap();
    term(&app.db, org.id, "starter", "2026-10-01", Some("2026-11-01")).await;
    let id = issue_due(&app.db, d("2026-11-25"), terms(20)).await.unwrap()[0];
    let res = app.get(&format!("/portal/billing/invoices/{id}/pdf"), &org.key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    let pdf = res.bytes().await.unwrap();
    let text = String::from_utf8_lossy(&pdf);
    assert!(text.starts_with("%PDF-1.4") && text.ends_with("%%EOF\n"));
    for shown in [
        format!("(TNS invoice {id}) Tj"),
        "Period: 2026-10-01 to 2026-10-31".to_string(),
        "\\307aglar Turizm".to_string(),
        "Subtotal: 99.00 TRY".to_string(),
        "KDV 20%: 19.80 TRY".to_string(),
        "(Total: 118.80 TRY) Tj".to_string(),
    ] {
        assert!(text.contains(&shown), "{shown} in {text}");
    }
    let other = app.register().await;
    error_body(app.get(&format!("/portal/billing/invoices/{id}/pdf"), &other.key).await, 404).await;
}

/// Change `org`'s plan through the API.
async fn change_plan(app: &TestApp, org: &Org, plan: &str) {
    app.post_ok("/portal/billing/subscription/change", &org.key, serde_json::json!({"plan_code": plan}), 200).await;
}

/// The terms of `org` as (plan, starts_on, ends_on, billed_until), in order.
async fn plan_terms(db: &PgPool, org: i64) -> Vec<(String, NaiveDate, Option<NaiveDate>, NaiveDate)> {
    sqlx::query_as("SELECT plan_code, starts_on, ends_on, billed_until FROM plan_terms WHERE org_id = $1 ORDER BY id")
        .bind(org)
        .fetch_all(db)
        .await
        .unwrap()
}

/// `price × days / full_days` to the kuruş, as the invoices charge by day.
fn by_day(price: i64, days: i64, full_days: i64) -> f64 {
    let v = Decimal::from(price * days) / Decimal::from(full_days);
    v.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero).to_string().parse().unwrap()
}

/// The lines of every invoice of `org` on `plan`, as (kind, days, period_days, amount).
fn plan_lines(all: &[Value], plan: &str) -> Vec<(String, i64, i64, f64)> {
    all.iter()
        .flat_map(|i| i["lines"].as_array().unwrap().clone())
        .filter(|l| l["description"].as_str().unwrap().contains(&format!("({plan})")))
        .map(|l| {
            (
                l["kind"].as_str().unwrap().to_string(),
                l["quantity"].as_i64().unwrap(),
                l["period_days"].as_i64().unwrap(),
                l["amount"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn fees_are_charged_in_advance_and_a_change_credits_the_unused_days() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let change = |plan: &'static str| change_plan(&app, &org, plan);
    let today = today(&app.db).await;
    let month = Month::of_day(today);
    let rest_of_month = month.days() - i64::from(today.day()) + 1;
    // On trial nothing is billed, nothing is upcoming.
    error_body(app.get("/portal/billing/invoices/upcoming", &org.key).await, 404).await;
    // What choosing starter will cost, before choosing: the rest of this month, in advance.
    let preview = app.get_ok("/portal/billing/invoices/upcoming?plan_code=starter", &org.key).await;
    assert_eq!(
        (preview["issue_on"].as_str(), preview["plan_code"].as_str()),
        (Some(today.to_string().as_str()), Some("starter"))
    );
    assert_eq!(preview["subtotal"].as_f64(), Some(by_day(99, rest_of_month, month.days())));
    assert!(invoices(&app, &org).await.is_empty(), "a preview issues nothing");
    error_body(app.get("/portal/billing/invoices/upcoming?plan_code=nope", &org.key).await, 404).await;

    // Choosing it: charged at once (the jobs issue it within minutes) for the rest of the month.
    change("starter").await;
    issue_due(&app.db, today, terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    assert_eq!(got.len(), 1);
    assert_eq!(summary(&got[0]).0, today.to_string());
    assert_eq!(summary(&got[0]).1, month.last_day().to_string());
    assert_eq!(summary(&got[0]).2, preview["subtotal"].as_f64().unwrap(), "the preview was the invoice");
    assert_eq!(got[0]["lines"][0]["kind"], "plan");
    // The next one is next month's fee, on its first day.
    let next = app.get_ok("/portal/billing/invoices/upcoming", &org.key).await;
    assert_eq!(next["issue_on"].as_str(), Some(month.next().first_day().to_string().as_str()));
    assert_eq!(next["subtotal"].as_f64(), Some(99.0));
    assert!(issue_due(&app.db, today, terms(20)).await.unwrap().is_empty(), "charged once");

    // Upgrade to a yearly plan: the starter days from today on come back, the year is charged
    // now (not a year later).
    let upgrade = app.get_ok("/portal/billing/invoices/upcoming?plan_code=Y-10", &org.key).await;
    change("Y-10").await;
    issue_due(&app.db, today, terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    assert_eq!(got.len(), 2);
    let lines = got[1]["lines"].as_array().unwrap();
    assert_eq!((lines[0]["kind"].as_str(), lines[0]["quantity"].as_i64()), (Some("credit"), Some(rest_of_month)));
    assert_eq!(lines[0]["amount"].as_f64(), Some(-by_day(99, rest_of_month, month.days())));
    assert_eq!((lines[1]["kind"].as_str(), lines[1]["amount"].as_f64()), (Some("plan"), Some(14000.0)));
    assert_eq!(summary(&got[1]).4, upgrade["total_amount"].as_f64().unwrap(), "the preview was the invoice");

    // Down to starter: Y-10 keeps today (the dearer plan held in it), starter from tomorrow;
    // the rest of the year comes back as credit, which pays the next invoices.
    let year = got[1]["lines"][1]["period_days"].as_i64().unwrap();
    change("starter").await;
    let tomorrow = today + chrono::Days::new(1);
    assert_eq!(
        plan_terms(&app.db, org.id).await.iter().map(|t| (t.0.as_str(), t.1, t.2)).collect::<Vec<_>>(),
        [("starter", today, Some(today)), ("Y-10", today, Some(tomorrow)), ("starter", tomorrow, None)]
    );
    // The credit comes with starter's first day, tomorrow, in one invoice; the preview says so.
    assert!(issue_due(&app.db, today, terms(20)).await.unwrap().is_empty());
    let next = app.get_ok("/portal/billing/invoices/upcoming", &org.key).await;
    assert_eq!(next["issue_on"].as_str(), Some(tomorrow.to_string().as_str()));
    issue_due(&app.db, tomorrow, terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    assert_eq!(got.len(), 3);
    let credited = by_day(14000, year - 1, year);
    let starter_month = Month::of_day(tomorrow);
    let starter_days = starter_month.days() - i64::from(tomorrow.day()) + 1;
    let amounts: Vec<(&str, f64)> = got[2]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["kind"].as_str().unwrap(), l["amount"].as_f64().unwrap()))
        .collect();
    let charged = by_day(99, starter_days, starter_month.days());
    let carried = ((credited - charged) * 100.0).round() / 100.0;
    assert_eq!(amounts, [("credit", -credited), ("plan", charged), ("balance", carried), ("tax", 0.0)]);
    assert_eq!(
        (got[2]["total_amount"].as_f64(), got[2]["status"].as_str()),
        (Some(0.0), Some("paid")),
        "nothing to pay"
    );
    assert_eq!(next["lines"], got[2]["lines"], "the preview was the invoice");
    assert_eq!(next["credit_balance"].as_f64(), Some(carried));
}

#[tokio::test]
async fn flipping_to_the_unlimited_plan_for_a_day_costs_that_day_of_it() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let change = |plan: &'static str| change_plan(&app, &org, plan);
    change("starter").await;
    let today = today(&app.db).await;
    // As if starter had been chosen at the start of last month; its fees are paid.
    let since = Month::of_day(today).previous().first_day();
    sqlx::query("UPDATE plan_terms SET starts_on = $2, billed_until = $2 WHERE org_id = $1")
        .bind(org.id)
        .bind(since)
        .execute(&app.db)
        .await
        .unwrap();
    issue_due(&app.db, today, terms(20)).await.unwrap();
    // Unlimited in the morning, with every call the day needs; starter again in the evening.
    // The jobs invoice between the changes, as they run every few minutes.
    change("Y-999").await;
    assert_eq!(crate::helpers::header_i64(&app.get("/portal/vehicles", &org.key).await, "x-ratelimit-limit"), -1);
    issue_due(&app.db, today, terms(20)).await.unwrap();
    change("starter").await;
    assert_eq!(crate::helpers::header_i64(&app.get("/portal/vehicles", &org.key).await, "x-ratelimit-limit"), 1000);
    issue_due(&app.db, today, terms(20)).await.unwrap();
    // The next day's run credits Y-999's other days and charges starter again.
    issue_due(&app.db, today + chrono::Days::new(1), terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    let y999 = plan_lines(&got, "Y-999");
    let net: f64 = y999.iter().map(|l| l.3).sum();
    let year = y999[0].2;
    assert!(y999.iter().any(|l| l.0 == "credit"), "{y999:?}");
    assert!((net - by_day(100000, 1, year)).abs() < 0.015, "one day of Y-999 billed: {net} ({y999:?})");
    // Starter is not billed for today too: its credit starts today.
    let starter = plan_lines(&got, "starter");
    let credited: i64 = starter.iter().filter(|l| l.0 == "credit").map(|l| l.1).sum();
    let rest = Month::of_day(today).days() - i64::from(today.day()) + 1;
    assert_eq!(credited, rest, "starter's days from today on come back");
}

#[tokio::test]
async fn calls_beyond_a_soft_quota_are_counted_as_overage_and_billed() {
    let app = TestApp::spawn_with(&[("TNS_USAGE_FLUSH_SECS", "1")]).await;
    let org = app.register().await;
    let plan = format!("soft-{}", org.id);
    set_custom_plan(&app.db, org.id, &plan, Some(3), Some(0.5)).await;
    let this_month = Month::now();
    term(&app.db, org.id, &plan, &this_month.first_day().to_string(), None).await;
    // Calls 4 to 6 are beyond the quota; billing routes are counted but never billed.
    for _ in 0..6 {
        assert_eq!(app.get("/portal/vehicles", &org.key).await.status(), 200);
    }
    for _ in 0..2 {
        assert_eq!(app.get("/portal/billing/invoices", &org.key).await.status(), 200);
    }
    assert_eq!(app.get("/portal/vehicles", &org.key).await.status(), 200);

    // The API process adds its calls to the ledger (every second here).
    let persisted = eventually(Duration::from_secs(15), || async {
        let n: Option<i64> = sqlx::query_scalar("SELECT calls FROM usage_overage WHERE org_id = $1")
            .bind(org.id)
            .fetch_optional(&app.db)
            .await
            .unwrap();
        n.filter(|n| *n >= 4)
    })
    .await;
    assert_eq!(persisted, Some(4));
    // The per-route usage is unchanged by the overage count.
    let usage = app.usage(&org.key).await;
    assert!(usage.to_string().contains("/portal/vehicles"), "{usage}");
    assert!(!usage.to_string().contains("overage"), "{usage}");

    // While the month lasts only its fee is charged (in advance); the 4 calls at 0.50 come
    // once it is over, with the next month's fee.
    issue_due(&app.db, this_month.first_day(), terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["lines"].as_array().unwrap().len(), 2, "the plan and KDV: no overage yet");
    issue_due(&app.db, this_month.next().first_day(), terms(20)).await.unwrap();
    let got = invoices(&app, &org).await;
    assert_eq!(got.len(), 2);
    let lines = got[1]["lines"].as_array().unwrap();
    assert_eq!((lines[0]["kind"].as_str(), lines[0]["amount"].as_f64()), (Some("plan"), Some(1.0)));
    assert_eq!((lines[1]["kind"].as_str(), lines[1]["quantity"].as_i64()), (Some("overage"), Some(4)));
    assert_eq!(summary(&got[1]).2, 3.0);
    assert_eq!(summary(&got[1]).4, 3.6);
    assert!(issue_due(&app.db, this_month.next().first_day(), terms(20)).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_overdue_invoice_suspends_the_organization_until_an_operator_records_it_paid() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let redis =
        RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() };
    app.post_ok("/portal/billing/subscription/change", &org.key, serde_json::json!({"plan_code": "starter"}), 200)
        .await;
    sqlx::query("DELETE FROM plan_terms WHERE org_id = $1").bind(org.id).execute(&app.db).await.unwrap();
    // Two invoices, issued today (the dunning job reads the real clock): due in 14 days.
    let mut ids = vec![];
    for (from, to) in [("2026-09-01", "2026-10-01"), ("2026-10-01", "2026-11-01")] {
        term(&app.db, org.id, "starter", from, Some(to)).await;
        ids.extend(issue_due(&app.db, today(&app.db).await, terms(20)).await.unwrap());
    }
    assert_eq!(ids.len(), 2);
    assert_eq!(app.get("/portal/vehicles", &org.key).await.status(), 200);

    // Not due yet: nothing happens.
    assert_eq!(Job::Dunning.run(&app.db, &redis).await.unwrap(), 0);
    sqlx::query("UPDATE invoices SET due_on = '2026-10-15' WHERE org_id = $1")
        .bind(org.id)
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(Job::Dunning.run(&app.db, &redis).await.unwrap(), 1);
    assert_eq!(Job::Dunning.run(&app.db, &redis).await.unwrap(), 0, "suspended once");
    let refused = error_body(app.post("/portal/vehicles", Some(&org.key), serde_json::json!({})).await, 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("invoice is unpaid"), "{refused}");
    // Billing still answers, so the invoices can be seen.
    assert_eq!(app.get("/portal/billing/invoices", &org.key).await.status(), 200);

    // One paid: the other is still overdue, so the suspension stays.
    let (first, second) = (ids[0].to_string(), ids[1].to_string());
    let out = admin(&app.env, &["invoice", &first, "paid", "--reason", "bank transfer 4711", "--operator", "deniz"])
        .await
        .unwrap();
    assert_eq!(out[0]["reactivated"], false);
    error_body(app.post("/portal/vehicles", Some(&org.key), serde_json::json!({})).await, 403).await;
    // Voiding the other lifts it, at once on the API.
    let out = admin(&app.env, &["invoice", &second, "void", "--reason", "billed in error", "--operator", "deniz"])
        .await
        .unwrap();
    assert_eq!((out[0]["reactivated"].as_bool(), out[0]["organization"].as_i64()), (Some(true), Some(org.id)));
    assert_eq!(app.post("/portal/vehicles", Some(&org.key), serde_json::json!({})).await.status(), 422);
    let statuses: Vec<String> =
        invoices(&app, &org).await.iter().map(|i| i["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(statuses, ["paid", "void"]);

    // A settled invoice is not settled again, and nothing changes.
    let again =
        admin(&app.env, &["invoice", &first, "void", "--reason", "x", "--operator", "deniz"]).await.unwrap_err();
    assert!(again.contains("is paid"), "{again}");
    let missing =
        admin(&app.env, &["invoice", "999999", "paid", "--reason", "x", "--operator", "deniz"]).await.unwrap_err();
    assert!(missing.contains("no invoice 999999"), "{missing}");

    // The audit log tells the story: the jobs' suspension, both settlements, the reactivation.
    let org_id = org.id.to_string();
    let log = admin(&app.env, &["audit", "--org", &org_id]).await.unwrap();
    let actions: Vec<(&str, &str)> =
        log.iter().map(|e| (e["actor"].as_str().unwrap(), e["action"].as_str().unwrap())).collect();
    let key = format!("tenant:key:{}", log[5]["actor"].as_str().unwrap().trim_start_matches("tenant:key:"));
    assert_eq!(
        actions,
        [
            ("operator:deniz", "set_status"),
            ("operator:deniz", "settle_invoice"),
            ("operator:deniz", "settle_invoice"),
            ("jobs", "invoice_overdue"),
            // The tenant chose its plan: the end of its trial is on the record too.
            (key.as_str(), "set_status"),
            (key.as_str(), "change_plan"),
        ]
    );
    assert!(key.trim_start_matches("tenant:key:").parse::<i64>().is_ok(), "{key}");
    assert_eq!(log[1]["after"]["status"], "void");
    assert_eq!(log[2]["reason"], "bank transfer 4711");

    // Tenants cannot settle invoices: there is no such route for them.
    let res = app.call(Method::POST, &format!("/portal/billing/invoices/{first}/pay"), &org.key, None).await;
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn overage_of_a_month_is_billed_once_even_when_two_runners_invoice_at_once() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    // Two terms on the soft plan in September (it was left and chosen again), 1000 calls beyond
    // the quota that month: billed once, by whichever term is invoiced first.
    term(&app.db, org.id, "growth", "2026-09-01", Some("2026-09-10")).await;
    term(&app.db, org.id, "starter", "2026-09-10", Some("2026-09-20")).await;
    term(&app.db, org.id, "growth", "2026-09-20", Some("2026-10-01")).await;
    sqlx::query("INSERT INTO usage_overage (org_id, month, calls) VALUES ($1, '2026-09-01', 1000)")
        .bind(org.id)
        .execute(&app.db)
        .await
        .unwrap();
    let (a, b) =
        tokio::join!(issue_due(&app.db, d("2026-11-25"), terms(20)), issue_due(&app.db, d("2026-11-25"), terms(20)));
    assert_eq!(a.unwrap().len() + b.unwrap().len(), 1, "one invoice for the organization");
    let billed: i64 = sqlx::query_scalar(
        "SELECT sum(quantity)::int8 FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id
          WHERE i.org_id = $1 AND l.kind = 'overage'",
    )
    .bind(org.id)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(billed, 1000);
}

#[tokio::test]
async fn billing_follows_the_standing_an_operator_sets() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let today = today(&app.db).await;
    let open_terms = || async {
        sqlx::query_as::<_, (String, NaiveDate)>(
            "SELECT plan_code, starts_on FROM plan_terms WHERE org_id = $1 AND ends_on IS NULL",
        )
        .bind(org.id)
        .fetch_all(&app.db)
        .await
        .unwrap()
    };
    let id = org.id.to_string();
    let set = |status: &'static str| {
        let (env, id) = (app.env.clone(), id.clone());
        async move {
            admin(&env, &["set-status", &id, status, "--reason", "test", "--operator", "deniz"]).await.unwrap();
        }
    };
    // A trial is not billed, nor a trial suspended.
    assert!(open_terms().await.is_empty());
    set("suspended").await;
    assert!(open_terms().await.is_empty(), "a suspended trial is not billed");
    // Activated: billed from today; suspended from active: still billed (the plan goes on).
    set("active").await;
    assert_eq!(open_terms().await, [("starter".to_string(), today)]);
    set("suspended").await;
    assert_eq!(open_terms().await, [("starter".to_string(), today)]);
    // Back to trial: billing stops, after today (it was held today).
    set("trial").await;
    assert!(open_terms().await.is_empty());
    let tomorrow = today + chrono::Days::new(1);
    assert_eq!(
        plan_terms(&app.db, org.id).await.iter().map(|t| (t.0.as_str(), t.1, t.2)).collect::<Vec<_>>(),
        [("starter", today, Some(tomorrow))]
    );
}
