//! Team members and passwords in the portal: invitations shown once and accepted, roles that
//! are sets of the API's scopes (on the pages and on the API alike), members removed (signed
//! out, their keys revoked), all audited; a password changed (other sessions end) or reset by
//! a link e-mailed through SMTP (a fake mail server here, the only thing faked).

use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
};

use crate::{
    helpers::{json_of, tns_admin, TestApp},
    portal::Visitor,
};

/// A mail server that takes every message and keeps it (the raw DATA).
struct FakeSmtp {
    addr: std::net::SocketAddr,
    messages: Arc<Mutex<Vec<String>>>,
}

impl FakeSmtp {
    async fn start() -> FakeSmtp {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let messages = Arc::new(Mutex::new(vec![]));
        let kept = messages.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let (read, mut write) = socket.into_split();
                    let mut lines = BufReader::new(read).lines();
                    write.write_all(b"220 fake ESMTP\r\n").await.unwrap();
                    let mut data: Option<String> = None;
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Some(d) = data.as_mut() {
                            if line == "." {
                                kept.lock().unwrap().push(data.take().unwrap());
                                write.write_all(b"250 kept\r\n").await.unwrap();
                            } else {
                                d.push_str(&line);
                                d.push('\n');
                            }
                            continue;
                        }
                        let verb = line.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
                        let reply: &[u8] = match verb.as_str() {
                            "EHLO" | "HELO" => b"250 fake\r\n",
                            "DATA" => {
                                data = Some(String::new());
                                b"354 go on\r\n"
                            }
                            "QUIT" => {
                                let _ = write.write_all(b"221 bye\r\n").await;
                                break;
                            }
                            _ => b"250 ok\r\n",
                        };
                        write.write_all(reply).await.unwrap();
                    }
                });
            }
        });
        FakeSmtp { addr, messages }
    }

    fn messages(&self) -> Vec<String> {
        self.messages.lock().unwrap().clone()
    }
}

/// The path of the first link to this site in `text` that starts with `prefix` (quoted-printable
/// soft line breaks undone).
fn link(text: &str, prefix: &str) -> String {
    let text = text.replace("=\n", "").replace("=3D", "=");
    let at = text.find(prefix).unwrap_or_else(|| panic!("no {prefix} in {text}"));
    text[at..].split(|c: char| c.is_whitespace() || c == '<' || c == '"').next().unwrap().to_string()
}

#[tokio::test]
async fn an_invited_dispatcher_joins_and_does_what_the_role_allows_on_pages_and_api_alike() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let owner = Visitor::owner(&app, &org).await;
    let email = format!("dispatch-{}@example.com", org.id);
    let made =
        owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "dispatcher")]).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let invite = link(&made.body, "/invite/");
    // Shown once: the team page lists the invitation, never its link again.
    let team = owner.get("/settings/team").await;
    assert!(team.body.contains(&email) && !team.body.contains(&invite));

    // The one invited chooses a name and a password, and is signed in.
    let dispatcher = Visitor::new(&app);
    let welcome = dispatcher.get(&invite).await;
    assert!(welcome.body.contains(&email), "{}", welcome.body);
    let short = dispatcher.post(&invite, &[("full_name", "Can Kaya"), ("password", "short")]).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(short.body.contains(r#"value="Can Kaya""#), "the name is kept");
    let joined = dispatcher.post(&invite, &[("full_name", "Can Kaya"), ("password", "correct horse")]).await;
    assert_eq!((joined.status, joined.location()), (StatusCode::SEE_OTHER, "/dashboard"));
    // Used: the link is gone.
    assert_eq!(Visitor::new(&app).get(&invite).await.status, StatusCode::NOT_FOUND);

    // A dispatcher keeps vehicles and journeys, not the team or billing.
    assert_eq!(dispatcher.get("/vehicles").await.status, StatusCode::OK);
    let made =
        dispatcher.submit("/vehicles/new", "/vehicles", &[("plate", "34 CAN 1"), ("vehicle_type", "otobus")]).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER);
    // The vehicle names who made it; a change through the API names the key.
    let member: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1").bind(&email).fetch_one(&app.db).await.unwrap();
    let listed = app.get_ok("/portal/vehicles", &org.key).await["data"][0].clone();
    assert_eq!(
        (listed["plate"].as_str(), listed["created_by"].clone()),
        (Some("34CAN1"), serde_json::json!(format!("user:{member}")))
    );
    let id = listed["id"].as_i64().unwrap();
    let changed =
        json_of(app.put(&format!("/portal/vehicles/{id}"), &org.key, serde_json::json!({"brand": "Temsa"})).await, 200)
            .await;
    let key_id = app.get_ok("/portal/api-keys", &org.key).await["data"][0]["id"].as_i64().unwrap();
    assert_eq!(
        (changed["created_by"].as_str(), changed["changed_by"].clone()),
        (Some(format!("user:{member}").as_str()), serde_json::json!(format!("key:{key_id}")))
    );
    assert_eq!(dispatcher.get("/settings/team").await.status, StatusCode::FORBIDDEN);
    // The same on the API, with the session: journeys:write yes, account:read no.
    let me = app.client.get(format!("{}/api/v1/portal/vehicles", app.root));
    assert_eq!(me.send().await.unwrap().status(), 401, "the test's API client has no session");
    let cookie_client = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let (base, login) = (app.root.clone(), serde_json::json!({"email": email, "password": "correct horse"}));
    let res = cookie_client.post(format!("{base}/api/v1/auth/login")).json(&login).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(cookie_client.get(format!("{base}/api/v1/portal/vehicles")).send().await.unwrap().status(), 200);
    assert_eq!(cookie_client.get(format!("{base}/api/v1/portal/api-keys")).send().await.unwrap().status(), 403);

    // The owner sees the member and the audit log says who did what.
    let team = owner.get("/settings/team").await;
    assert!(team.body.contains("Can Kaya"));
    let log = tns_admin(&app.env, &["audit", "--org", &org.id.to_string()]).await.unwrap();
    let actions: Vec<&str> = log.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["accept_invitation", "invite_member"]);
    assert_eq!(log[1]["actor"], format!("tenant:user:{}", org.user_id));
}

#[tokio::test]
async fn a_viewer_reads_submissions_but_no_people_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let owner = Visitor::owner(&app, &org).await;
    let email = format!("viewer-{}@example.com", org.id);
    let made = owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "viewer")]).await;
    let viewer = Visitor::new(&app);
    let joined =
        viewer.post(&link(&made.body, "/invite/"), &[("full_name", "Ece Su"), ("password", "correct horse")]).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER);
    assert_eq!(viewer.get("/dashboard").await.status, StatusCode::OK);
    for page in ["/vehicles", "/personnel", "/vehicles/new", "/settings/team"] {
        assert_eq!(viewer.get(page).await.status, StatusCode::FORBIDDEN, "{page}");
    }
}

#[tokio::test]
async fn a_removed_member_is_signed_out_everywhere_and_their_keys_stop() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let owner = Visitor::owner(&app, &org).await;
    let email = format!("admin-{}@example.com", org.id);
    let made = owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "admin")]).await;
    let admin = Visitor::new(&app);
    admin.post(&link(&made.body, "/invite/"), &[("full_name", "Ali Veli"), ("password", "correct horse")]).await;
    // The admin makes an API key with their session (the API's own route).
    let api = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let login = serde_json::json!({"email": email, "password": "correct horse"});
    let out: serde_json::Value =
        api.post(format!("{}/api/v1/auth/login", app.root)).json(&login).send().await.unwrap().json().await.unwrap();
    let key: serde_json::Value = api
        .post(format!("{}/api/v1/portal/api-keys", app.root))
        .header("x-csrf-token", out["csrf_token"].as_str().unwrap())
        .json(&serde_json::json!({"name": "integration", "scopes": ["journeys:read"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let admin_key = key["api_key"].as_str().unwrap().to_string();
    assert_eq!(app.get("/portal/vehicles", &admin_key).await.status(), 200);
    // An admin cannot remove the owner, nor another admin.
    let admin_id: i64 =
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1").bind(&email).fetch_one(&app.db).await.unwrap();
    let no = admin.submit("/settings/team", &format!("/settings/team/{}/remove", org.user_id), &[]).await;
    assert_eq!(no.status, StatusCode::FORBIDDEN);

    let gone = owner.submit("/settings/team", &format!("/settings/team/{admin_id}/remove"), &[]).await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER, "{}", gone.body);
    // Signed out (the next page sends to sign-in), the key refused, the address free again.
    let sent_away = admin.get("/dashboard").await;
    assert_eq!(sent_away.status, StatusCode::SEE_OTHER);
    let refused = crate::helpers::eventually(std::time::Duration::from_secs(10), || async {
        (app.get("/portal/vehicles", &admin_key).await.status() == 401).then_some(())
    })
    .await;
    assert!(refused.is_some(), "the removed member's key is revoked");
    assert_eq!(Visitor::new(&app).sign_in(&email, "correct horse").await.status, StatusCode::UNAUTHORIZED);
    let again = owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "viewer")]).await;
    assert_eq!(again.status, StatusCode::OK, "the address may be invited again");
    let log = tns_admin(&app.env, &["audit", "--org", &org.id.to_string()]).await.unwrap();
    assert_eq!(log[1]["action"], "remove_member");
    assert_eq!(log[1]["after"]["revoked_api_keys"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn changing_a_password_ends_the_other_sessions_and_keeps_this_one() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let here = Visitor::owner(&app, &org).await;
    let elsewhere = Visitor::owner(&app, &org).await;
    let wrong = here
        .submit("/account/password", "/account/password", &[("current", "not it"), ("password", "a new horse")])
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(wrong.body.contains("current-error"), "{}", wrong.body);
    let ok = here
        .submit("/account/password", "/account/password", &[("current", &org.password), ("password", "a new horse")])
        .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(here.get("/dashboard").await.status, StatusCode::OK, "this browser goes on");
    let ended = crate::helpers::eventually(std::time::Duration::from_secs(10), || async {
        (elsewhere.get("/dashboard").await.status == StatusCode::SEE_OTHER).then_some(())
    })
    .await;
    assert!(ended.is_some(), "the other session ended");
    assert_eq!(Visitor::new(&app).sign_in(&org.email, "a new horse").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_forgotten_password_is_reset_by_a_link_mailed_once() {
    let smtp = FakeSmtp::start().await;
    let url = format!("smtp://{}", smtp.addr);
    let env = crate::helpers::Env::new().await.with(&[
        ("TNS_SMTP_URL", url.as_str()),
        ("TNS_SMTP_ALLOW_PLAIN", "true"),
        ("TNS_PUBLIC_URL", "http://tns.example"),
        ("TNS_MAIL_FROM", "TNS <no-reply@tns.example>"),
    ]);
    let app = TestApp::start(env).await;
    let org = app.register().await;
    let v = Visitor::new(&app);
    // An unknown address gets the same answer, and no message.
    let unknown = v.post("/password/forgot", &[("email", "nobody@example.com")]).await;
    let known = v.post("/password/forgot", &[("email", &org.email)]).await;
    assert_eq!(unknown.status, known.status);
    assert_eq!(unknown.body.replace(&org.email, ""), known.body.replace(&org.email, ""));
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "one message, to the known address");
    assert!(messages[0].contains(&org.email) && messages[0].contains("http://tns.example/password/reset/"));
    let reset = link(&messages[0], "/password/reset/");
    assert_eq!(v.get(&reset).await.status, StatusCode::OK);
    let done = v.post(&reset, &[("password", "reset horse")]).await;
    assert_eq!((done.status, done.location()), (StatusCode::SEE_OTHER, "/login"));
    // Once: the link is spent; the new password signs in, the old does not.
    assert_eq!(v.post(&reset, &[("password", "again horse")]).await.status, StatusCode::NOT_FOUND);
    assert_eq!(Visitor::new(&app).sign_in(&org.email, "reset horse").await.status, StatusCode::SEE_OTHER);
    assert_eq!(Visitor::new(&app).sign_in(&org.email, &org.password).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn without_mail_a_reset_says_so_and_no_link_is_logged() {
    // Outside `tns dev`, without TNS_SMTP_URL, nothing is sent (and nothing written anywhere).
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = Visitor::new(&app).post("/password/forgot", &[("email", &org.email)]).await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    let resets: i64 = sqlx::query_scalar("SELECT count(*) FROM password_resets").fetch_one(&app.db).await.unwrap();
    assert_eq!(resets, 0);
}
