//! The transport against a tiny HTTP/1.1 server on loopback (one thread per connection, every
//! answer closes its connection).

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use super::{echoes, leaks, PASSWORD as HOSTILE, USER};
use crate::wire::{arizi, envelope, CallError, Transport, TransportSettings, WsUser, NAMESPACE};

const SOAP11: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const PASSWORD: &str = "999999testtest";

/// A request as the server saw it: request line, headers (names lower-cased), body.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

fn read_request(stream: &mut TcpStream) -> Seen {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').unwrap();
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    Seen { line: line.trim_end().to_string(), headers, body: String::from_utf8(body).unwrap() }
}

fn response(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// Serves each connection with `handler` (given the stream); returns the base URL and what
/// was seen so far.
fn serve_raw(handler: impl Fn(TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = handler.clone();
            thread::spawn(move || handler(stream));
        }
    });
    url
}

/// Answers every request with `answer(request)`; returns the base URL and the requests seen.
fn serve(answer: impl Fn(&Seen) -> Vec<u8> + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let url = serve_raw(move |mut stream| {
        let request = read_request(&mut stream);
        let reply = answer(&request);
        log.lock().unwrap().push(request);
        let _ = stream.write_all(&reply);
    });
    (url, seen)
}

fn transport(call_timeout: Duration) -> Transport {
    Transport::new(&TransportSettings { connect_timeout: Duration::from_secs(2), call_timeout, extra_ca_pem: None })
        .unwrap()
}

fn user() -> WsUser {
    WsUser::new("999999", PASSWORD)
}

fn metro(op: &str, ret: &str) -> Vec<u8> {
    let body = format!(
        r#"<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:{op}Response xmlns:ns2="{NAMESPACE}"><return>{ret}</return></ns2:{op}Response></S:Body></S:Envelope>"#
    );
    response("200 OK", "text/xml; charset=utf-8", body.as_bytes())
}

fn fault(message: &str) -> Vec<u8> {
    let body = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><S:Fault><faultcode>S:Server</faultcode><faultstring>{message}</faultstring></S:Fault></S:Body></S:Envelope>"#
    );
    response("500 Internal Server Error", "text/xml; charset=utf-8", body.as_bytes())
}

fn iptal() -> arizi::SeferIptal {
    arizi::SeferIptal {
        wsuser: user(), uetds_sefer_referans_no: 18073000016130, iptal_aciklama: "Araç arızası".into()
    }
}

#[test]
fn transport_is_shareable() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<Transport>();
}

#[test]
fn posts_the_envelope_with_soap_headers_and_basic_auth() {
    let (url, seen) =
        serve(|_| metro("seferIptal", "<sonucKodu>0</sonucKodu><sonucMesaji>İŞLEM BAŞARILI</sonucMesaji>"));
    let t = transport(Duration::from_secs(5));
    let r = t.call(&format!("{url}/services/g2g/kdgm/test/uetdsarizi"), &user(), &iptal()).unwrap();
    assert_eq!((r.sonuc_kodu, r.sonuc_mesaji.as_deref()), (0, Some("İŞLEM BAŞARILI")));

    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.line, "POST /services/g2g/kdgm/test/uetdsarizi HTTP/1.1");
    assert_eq!(seen.header("content-type"), Some("text/xml; charset=utf-8"));
    assert_eq!(seen.header("soapaction"), Some("\"http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferIptal\""));
    // base64("999999:999999testtest")
    assert_eq!(seen.header("authorization"), Some("Basic OTk5OTk5Ojk5OTk5OXRlc3R0ZXN0"));
    assert!(seen.header("host").is_some());
    assert_eq!(seen.body, envelope(&iptal()));
}

#[test]
fn an_empty_soap_action_is_sent_as_two_quotes() {
    let (url, seen) =
        serve(|_| metro("seferDetayCiktisiAl", "<sonucKodu>0</sonucKodu><sonucPdf>JVBERi0xLjQK</sonucPdf>"));
    let op = arizi::SeferDetayCiktisiAl { wsuser: user(), uetds_sefer_referans_no: 1 };
    let r = transport(Duration::from_secs(5)).call(&url, &user(), &op).unwrap();
    assert_eq!(r.sonuc_pdf.as_deref(), Some("JVBERi0xLjQK"));
    assert_eq!(seen.lock().unwrap()[0].header("soapaction"), Some("\"\""));
}

#[test]
fn dynamic_operations() {
    let (url, seen) = serve(|_| {
        let body = format!(
            r#"<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body><t:seferEkleResponse xmlns:t="urn:tarifeli"><return><sonucKodu>0</sonucKodu><uetdsSeferReferansNo>7</uetdsSeferReferansNo></return></t:seferEkleResponse></soap:Body></soap:Envelope>"#
        );
        response("200 OK", "text/xml", body.as_bytes())
    });
    #[derive(serde::Serialize)]
    struct Body {
        wsuser: WsUser,
        #[serde(rename = "aracPlaka")]
        arac_plaka: String,
    }
    let r: arizi::AriziSeferBildirSonuc = transport(Duration::from_secs(5))
        .call_dynamic(
            &url,
            &user(),
            "urn:tarifeli",
            "seferEkle",
            "urn:tarifeli/seferEkle",
            &Body { wsuser: user(), arac_plaka: "06TARIFELI1".into() },
        )
        .unwrap();
    assert_eq!(r.uetds_sefer_referans_no, Some(7));
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.header("soapaction"), Some("\"urn:tarifeli/seferEkle\""));
    assert!(seen.body.contains(r#"xmlns:uet="urn:tarifeli""#), "{}", seen.body);
    assert!(seen.body.contains("<uet:seferEkle><wsuser>"), "{}", seen.body);
}

#[test]
fn a_silent_server_times_out_as_sent() {
    let url = serve_raw(|mut stream| {
        let _ = read_request(&mut stream);
        thread::sleep(Duration::from_secs(5));
    });
    let started = Instant::now();
    let r = transport(Duration::from_millis(300)).call(&url, &user(), &iptal());
    assert!(matches!(r, Err(CallError::Unreachable { sent: true, .. })), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

#[test]
fn a_closed_port_is_not_sent() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = transport(Duration::from_secs(5)).call(&format!("http://127.0.0.1:{port}/x"), &user(), &iptal());
    assert!(matches!(&r, Err(CallError::Unreachable { sent: false, detail }) if detail.contains("refused")), "{r:?}");
}

#[test]
fn a_failed_tls_handshake_is_not_sent() {
    // Answers the ClientHello with plain HTTP: the handshake fails before anything is sent.
    let url = serve_raw(|mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let r = transport(Duration::from_secs(5)).call(&url.replace("http://", "https://"), &user(), &iptal());
    assert!(matches!(r, Err(CallError::Unreachable { sent: false, .. })), "{r:?}");
}

#[test]
fn a_reset_after_the_request_is_sent() {
    let url = serve_raw(|mut stream| {
        let _ = read_request(&mut stream);
        // Dropped without an answer.
    });
    let r = transport(Duration::from_secs(5)).call(&url, &user(), &iptal());
    assert!(matches!(r, Err(CallError::Unreachable { sent: true, .. })), "{r:?}");
}

#[test]
fn unusable_urls_are_not_sent() {
    let t = transport(Duration::from_secs(5));
    for url in ["not a url", "ftp://127.0.0.1/x", "/relative", ""] {
        let r = t.call(url, &user(), &iptal());
        assert!(matches!(r, Err(CallError::Unreachable { sent: false, .. })), "{url}: {r:?}");
    }
}

#[test]
fn gateway_errors_are_http_errors() {
    let (url, _) = serve(|seen| match seen.line.split(' ').nth(1).unwrap() {
        "/401" => response(
            "401 Unauthorized",
            "text/html",
            b"<html><head><title>401 Unauthorized</title></head><body>Kimlik dogrulama gerekli</body></html>",
        ),
        "/403" => {
            response("403 Forbidden", "text/plain", format!("IP not allowed for user 999999:{PASSWORD}").as_bytes())
        }
        _ => response("503 Service Unavailable", "text/plain", b"Service   Unavailable\n"),
    });
    let t = transport(Duration::from_secs(5));
    assert_eq!(
        t.call(&format!("{url}/401"), &user(), &iptal()),
        Err(CallError::Http { status: 401, detail: "401 Unauthorized".into() })
    );
    let forbidden = t.call(&format!("{url}/403"), &user(), &iptal()).unwrap_err();
    assert_eq!(forbidden, CallError::Http { status: 403, detail: "IP not allowed for user 999999:***".into() });
    assert!(!forbidden.to_string().contains(PASSWORD));
    assert_eq!(
        t.call(&format!("{url}/503"), &user(), &iptal()),
        Err(CallError::Http { status: 503, detail: "Service Unavailable".into() })
    );
}

#[test]
fn faults_come_with_any_status_and_never_echo_the_password() {
    let (url, _) = serve(|seen| {
        if seen.line.contains("/ok") {
            let body = format!(
                r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><S:Fault><faultcode>S:Client</faultcode><faultstring>bad</faultstring></S:Fault></S:Body></S:Envelope>"#
            );
            response("200 OK", "text/xml", body.as_bytes())
        } else {
            fault(&format!("Kullanıcı 999999 / {PASSWORD} &amp; yetkisiz"))
        }
    });
    let t = transport(Duration::from_secs(5));
    assert_eq!(
        t.call(&url, &user(), &iptal()),
        Err(CallError::Fault { code: "Server".into(), message: "Kullanıcı 999999 / *** & yetkisiz".into() })
    );
    assert_eq!(
        t.call(&format!("{url}/ok"), &user(), &iptal()),
        Err(CallError::Fault { code: "Client".into(), message: "bad".into() })
    );
}

/// A downstream that quotes what it got, each way an error can carry a text: a gateway page
/// quoting the request (its `Authorization` header and its body), a fault and an HTML page
/// quoting each form of the password, a page whose text is cut inside one, a page with the
/// password folded across lines.
#[test]
fn a_hostile_downstream_never_gets_the_password_into_an_error() {
    let (url, _) = serve(|seen| {
        let path = seen.line.split(' ').nth(1).unwrap().to_string();
        if path == "/request" {
            let auth = seen.header("authorization").unwrap_or_default();
            let page = format!("Denied.\nAuthorization: {auth}\n\n{}", seen.body);
            return response("502 Bad Gateway", "text/plain", page.as_bytes());
        }
        let parts: Vec<&str> = path[1..].split('/').collect();
        let (kind, (_, form)) = (parts[0], &echoes()[parts[1].parse::<usize>().unwrap()]);
        let escaped = quick_xml::escape::escape(form.as_str());
        match kind {
            "fault" => fault(&format!("Oturum açılamadı: {USER} / {escaped}")),
            "page" => response(
                "403 Forbidden",
                "text/html",
                format!("<html><body><p>Kullanıcı {USER} ({escaped}) yetkisiz</p></body></html>").as_bytes(),
            ),
            // The form starts a few characters before the 200th or the 300th.
            _ => {
                let page = format!("{} {form} …", "x".repeat(parts[2].parse().unwrap()));
                response("503 Service Unavailable", "text/plain", page.as_bytes())
            }
        }
    });
    let t = transport(Duration::from_secs(5));
    let user = WsUser::new(USER, HOSTILE);
    let op = arizi::SeferIptal { wsuser: user.clone(), ..iptal() };
    let mut paths = vec!["/request".to_string()];
    for n in 0..echoes().len() {
        paths.extend([format!("/fault/{n}"), format!("/page/{n}"), format!("/cut/{n}/195"), format!("/cut/{n}/295")]);
    }
    let mut leaked = Vec::new();
    for path in paths {
        let e = t.call(&format!("{url}{path}"), &user, &op).unwrap_err();
        let text = e.to_string();
        if leaks(&text) {
            leaked.push(format!("{path}: {text}"));
            continue;
        }
        assert!(text.chars().count() < 400, "{path}: a short excerpt, not {text}");
        match path.split('/').nth(1).unwrap() {
            "fault" => assert!(text.contains(&format!("Oturum açılamadı: {USER} / ")) && text.ends_with("***")),
            "page" => assert!(text.contains(&format!("Kullanıcı {USER} (")) && text.ends_with("***) yetkisiz")),
            "cut" => assert!(text.ends_with('…'), "{path}: {text}"),
            _ => assert!(
                text.starts_with("HTTP 502 from U-ETDS: Denied. Authorization: Basic *** 999999 ***"),
                "{path}: {text}"
            ),
        }
    }
    assert!(leaked.is_empty(), "{} errors carry the password:\n{}", leaked.len(), leaked.join("\n"));
}

#[test]
fn a_2xx_that_is_not_soap_is_malformed() {
    let (url, _) = serve(|seen| match seen.line.split(' ').nth(1).unwrap() {
        "/html" => response("200 OK", "text/html", b"<!DOCTYPE html><html><title>Bakim</title></html>"),
        "/empty" => response("200 OK", "text/xml", b""),
        _ => response("200 OK", "text/xml", &vec![b' '; 9 * 1024 * 1024]),
    });
    let t = transport(Duration::from_secs(10));
    for (path, expected) in [("/html", "HTML page"), ("/empty", "empty body"), ("/big", "larger than 8 MiB")] {
        match t.call(&format!("{url}{path}"), &user(), &iptal()) {
            Err(CallError::Malformed(m)) => assert!(m.contains(expected), "{path}: {m}"),
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn one_transport_serves_many_threads() {
    let (url, seen) = serve(|seen| {
        let n = seen.body.split("<uetdsSeferReferansNo>").nth(1).unwrap().split('<').next().unwrap().to_string();
        metro("seferIptal", &format!("<sonucKodu>0</sonucKodu><sonucMesaji>{n}</sonucMesaji>"))
    });
    let t = transport(Duration::from_secs(10));
    let workers: Vec<_> = (0..16)
        .map(|i| {
            let (t, url) = (t.clone(), url.clone());
            thread::spawn(move || {
                for j in 0..4 {
                    let n = i * 100 + j;
                    let op = arizi::SeferIptal { uetds_sefer_referans_no: n, ..iptal() };
                    let r = t.call(&url, &user(), &op).unwrap();
                    assert_eq!(r.sonuc_mesaji, Some(n.to_string()));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(seen.lock().unwrap().len(), 64);
}

#[test]
fn calls_from_inside_another_runtime() {
    let (url, _) = serve(|_| metro("seferIptal", "<sonucKodu>0</sonucKodu>"));
    let t = transport(Duration::from_secs(5));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let r = rt.block_on(async { t.call(&url, &user(), &iptal()) });
    assert_eq!(r.unwrap().sonuc_kodu, 0);
}

const TEST_ROOT: &str = "-----BEGIN CERTIFICATE-----
MIIBhjCCAS2gAwIBAgIUJQ4hrTOWyRE1MuLE0Kg29b6ZadowCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNVE5TIHRlc3Qgcm9vdDAgFw0yNjExMjQyMTM4MjJaGA8yMTI2
MTAzMTIxMzgyMlowGDEWMBQGA1UEAwwNVE5TIHRlc3Qgcm9vdDBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABLTFIO/N50bsS5G+OZhwl8U6zcWOz2t9ncNCt0xGtwrE
X82P66gJV/fqSbc/YOYuWF0SU+FJDaFRPuLi5sAjEzajUzBRMB0GA1UdDgQWBBRw
zLsRcGZnH+RWxjza5tMR0wKMmTAfBgNVHSMEGDAWgBRwzLsRcGZnH+RWxjza5tMR
0wKMmTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIELBFhoQtJFb
DcsiZuWXmuMSm2co3WF/Bb65shLx28/EAiBMhmbbarYg4f9t5NpOP9GU1YSmrhuw
2nrYhWYXkflRpQ==
-----END CERTIFICATE-----
";

#[test]
fn an_extra_root_ca_from_a_pem_file() {
    let dir = std::env::temp_dir().join(format!("tns-uetds-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let settings = |path: &std::path::Path| TransportSettings {
        connect_timeout: Duration::from_secs(1),
        call_timeout: Duration::from_secs(1),
        extra_ca_pem: Some(path.to_path_buf()),
    };
    let good = dir.join("root.pem");
    std::fs::write(&good, TEST_ROOT).unwrap();
    assert!(Transport::new(&settings(&good)).is_ok());
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    let err = Transport::new(&settings(&empty)).unwrap_err();
    assert!(err.contains("no certificate"), "{err}");
    let err = Transport::new(&settings(&dir.join("missing.pem"))).unwrap_err();
    assert!(err.contains("missing.pem"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
