//! The fake judged by hand-written envelopes over plain HTTP. Every SOAP answer is itself checked
//! against the schema (structurally and with xmllint), so the fake's replies keep the published
//! shapes too.

use std::time::Duration;

use super::judge::{self, specs, SOAP11_NS};
use super::xml::{self, Element};
use super::*;

const ARIZI: &str = "/services/g2g/kdgm/test/uetdsarizi";
const ESYA: &str = "/services/g2g/kdgm/test/uetdsesya";
const TARIFELI: &str = "/services/g2g/kdgm/test/uetdstarifeli";
const WSUSER: &str = "<wsuser><kullaniciAdi>999999</kullaniciAdi><sifre>999999testtest</sifre></wsuser>";

fn envelope(inner: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:uet="http://uetds.unetws.udhb.gov.tr/"><soapenv:Header/><soapenv:Body>{inner}</soapenv:Body></soapenv:Envelope>"#
    )
}

/// The binding's SOAPAction, quoted (looked up in the WSDL tables; two are empty strings there).
fn action(path: &str, op: &str) -> String {
    let spec = specs().get(judge::route(path).unwrap().0);
    let o = spec.ops.values().find(|o| o.name == op).unwrap_or_else(|| panic!("no operation {op}"));
    format!("\"{}\"", o.soap_action)
}

fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder().no_proxy().timeout(timeout).build().unwrap()
}

/// POSTs raw; `None` action / auth leave the header out.
async fn post(
    fake: &FakeUetds,
    path: &str,
    soap_action: Option<&str>,
    auth: Option<(&str, &str)>,
    body: &str,
) -> reqwest::Result<(u16, String, String)> {
    let mut req = client(Duration::from_secs(20))
        .post(format!("{}{path}", fake.base_url()))
        .header("content-type", "text/xml; charset=utf-8")
        .body(body.to_string());
    if let Some(a) = soap_action {
        req = req.header("soapaction", a);
    }
    if let Some((u, p)) = auth {
        req = req.basic_auth(u, Some(p));
    }
    let resp = req.send().await?;
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    Ok((status, ct, resp.text().await?))
}

/// The `<ns2:opResponse>` of a SOAP answer, checked against the service's schema.
async fn response_element(path: &str, body: &str) -> Element {
    let root = xml::parse(body).unwrap().root;
    assert_eq!((root.ns.as_deref(), root.name.as_str()), (Some(SOAP11_NS), "Envelope"));
    let el = root.path("Body").unwrap().children[0].clone();
    let service = judge::route(path).unwrap().0;
    let problems = specs().get(service).schema.check(&el);
    assert!(problems.is_empty(), "the fake's own reply breaks the schema: {problems:?}\n{body}");
    judge::xmllint(service, &el)
        .await
        .unwrap_or_else(|e| panic!("the fake's own reply breaks the schema: {e}\n{body}"));
    el
}

/// A well-formed call with the test account; returns the `<return>` element.
async fn call(fake: &FakeUetds, path: &str, op: &str, inner: &str) -> Element {
    let body = envelope(&format!("<uet:{op}>{inner}</uet:{op}>"));
    let (status, ct, text) =
        post(fake, path, Some(&action(path, op)), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 200, "{text}");
    assert_eq!(ct, "text/xml;charset=utf-8");
    let el = response_element(path, &text).await;
    assert_eq!(el.name, format!("{op}Response"));
    el.child("return").cloned().unwrap_or(el)
}

fn code(r: &Element) -> i32 {
    r.child_text("sonucKodu").unwrap().parse().unwrap()
}

fn trip_input(plate: &str, firma_sefer_no: &str) -> String {
    format!(
        "{WSUSER}<ariziSeferBilgileriInput><aracPlaka>{plate}</aracPlaka><seferAciklama>Gezi</seferAciklama>\
         <hareketTarihi>2030-05-01T00:00:00+03:00</hareketTarihi><hareketSaati>09:00</hareketSaati>\
         <firmaSeferNo>{firma_sefer_no}</firmaSeferNo><seferBitisTarihi>2030-05-01T00:00:00+03:00</seferBitisTarihi>\
         <seferBitisSaati>18:00</seferBitisSaati></ariziSeferBilgileriInput>"
    )
}

async fn new_trip(fake: &FakeUetds, firma_sefer_no: &str) -> i64 {
    let r = call(fake, ARIZI, "seferEkle", &trip_input("34 ABC 111", firma_sefer_no)).await;
    assert_eq!(code(&r), 0, "{r:?}");
    r.child_text("uetdsSeferReferansNo").unwrap().parse().unwrap()
}

async fn new_group(fake: &FakeUetds, trip: i64) -> i64 {
    let r = call(
        fake,
        ARIZI,
        "seferGrupEkle",
        &format!(
            "{WSUSER}<uetdsSeferReferansNo>{trip}</uetdsSeferReferansNo><seferGrupBilgileriInput>\
             <grupAciklama>Okul</grupAciklama><baslangicUlke>TR</baslangicUlke><baslangicIl>34</baslangicIl>\
             <baslangicIlce>1421</baslangicIlce><baslangicYer>Kadıköy</baslangicYer><bitisUlke>TR</bitisUlke>\
             <bitisIl>16</bitisIl><bitisIlce>1832</bitisIlce><bitisYer>Bursa</bitisYer><grupAdi>A</grupAdi>\
             </seferGrupBilgileriInput>"
        ),
    )
    .await;
    assert_eq!(code(&r), 0, "{r:?}");
    r.child_text("uetdsGrupRefNo").unwrap().parse().unwrap()
}

fn passenger(id: &str, group: i64) -> String {
    format!(
        "<yolcuBilgileri><uyrukUlke>TR</uyrukUlke><tcKimlikPasaportNo>{id}</tcKimlikPasaportNo><cinsiyet>K</cinsiyet>\
         <adi>Ayşe</adi><soyadi>Yılmaz</soyadi><koltukNo>1</koltukNo><grupId>{group}</grupId></yolcuBilgileri>"
    )
}

#[tokio::test]
async fn valid_sefer_ekle_gets_a_reference() {
    let fake = FakeUetds::start().await;
    let reference = new_trip(&fake, "tns-42").await;
    let s = reference.to_string();
    assert_eq!(s.len(), 14);
    assert!(s.starts_with("300501"), "{s}");
    fake.assert_no_violations();
    let trips = fake.trips_with_firma_sefer_no("tns-42");
    assert_eq!(trips.len(), 1);
    assert_eq!(
        (trips[0].reference, trips[0].plate.as_str(), trips[0].status),
        (reference, "34 ABC 111", Status::Valid)
    );
    let req = &fake.requests_for("seferEkle")[0];
    assert_eq!(req.basic_user.as_deref(), Some(TEST_USER));
    assert_eq!(req.element.as_ref().unwrap().path_text("ariziSeferBilgileriInput/firmaSeferNo"), Some("tns-42"));
    assert_eq!(fake.calls("seferEkle"), 1);
}

#[tokio::test]
async fn a_prefixed_child_is_a_violation_and_a_client_fault() {
    let fake = FakeUetds::start().await;
    let inner = trip_input("34ABC111", "x")
        .replace("<aracPlaka>34ABC111</aracPlaka>", "<uet:aracPlaka>34ABC111</uet:aracPlaka>");
    let body = envelope(&format!("<uet:seferEkle>{inner}</uet:seferEkle>"));
    let (status, _, text) =
        post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 500);
    assert!(text.contains("<faultcode>S:Client</faultcode>"), "{text}");
    let v = fake.violations();
    assert!(v.iter().any(|v| v.reason.contains("aracPlaka") && v.reason.contains("unqualified")), "{v:?}");
    assert_eq!(v[0].op.as_deref(), Some("seferEkle"));
    assert!(fake.trips().is_empty());
}

#[tokio::test]
async fn a_wrong_soap_action_is_a_violation() {
    let fake = FakeUetds::start().await;
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "x")));
    let wrong = "http://uetds.unetws.udhb.gov.tr/uetdsyts/seferEkle";
    let (status, _, _) = post(&fake, ARIZI, Some(wrong), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 500);
    assert!(fake.violations().iter().any(|v| v.reason.contains("SOAPAction")), "{:?}", fake.violations());
    // Unquoted is accepted.
    fake.reset();
    let right = "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferEkle";
    let (status, _, _) = post(&fake, ARIZI, Some(right), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 200);
    fake.assert_no_violations();
}

#[tokio::test]
async fn missing_basic_auth_is_a_401_html_page_and_unknown_accounts_are_refused_by_the_service() {
    let fake = FakeUetds::start().await;
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "x")));
    let (status, ct, text) = post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), None, &body).await.unwrap();
    assert_eq!(status, 401);
    assert!(ct.starts_with("text/html") && text.contains("<html"), "{ct} {text}");
    assert!(fake.violations().iter().any(|v| v.reason.contains("Basic")));
    // A well-formed but unknown account passes the gateway; the service refuses it in its own
    // words, and it is not the client's protocol mistake.
    fake.reset();
    let (status, _, text) =
        post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some(("123", "nope")), &body).await.unwrap();
    assert_eq!(status, 200);
    assert!(text.contains("KULLANICI ADI YADA SIFRE HATALI"), "{text}");
    fake.assert_no_violations();
    assert!(fake.trips().is_empty());
}

#[tokio::test]
async fn wsuser_not_matching_basic_is_the_credentials_business_error() {
    let fake = FakeUetds::start().await;
    fake.add_account("123456", "other");
    let inner = trip_input("34ABC111", "x");
    let body = envelope(&format!("<uet:seferEkle>{inner}</uet:seferEkle>"));
    let (status, _, text) =
        post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some(("123456", "other")), &body).await.unwrap();
    assert_eq!(status, 200);
    let r = response_element(ARIZI, &text).await;
    let r = r.child("return").unwrap();
    assert_ne!(code(r), 0);
    assert_eq!(r.child_text("sonucMesaji"), Some(BAD_CREDENTIALS_MESSAGE));
    assert!(fake.trips().is_empty());
    fake.assert_no_violations();
}

#[tokio::test]
async fn kullanici_kontrol_and_servis_test() {
    let fake = FakeUetds::start().await;
    let r = call(&fake, ARIZI, "kullaniciKontrol", "<kullaniciAdi>999999</kullaniciAdi><sifre>999999testtest</sifre>")
        .await;
    assert_eq!((code(&r), r.child_text("sonucMesaji")), (0, Some(OK_MESSAGE)));
    assert_eq!(r.child_text("unetNo"), Some("999999"));
    let r = call(&fake, ARIZI, "kullaniciKontrol", "<kullaniciAdi>999999</kullaniciAdi><sifre>yanlis</sifre>").await;
    assert_eq!((code(&r), r.child_text("sonucMesaji")), (codes::BAD_CREDENTIALS, Some(BAD_CREDENTIALS_MESSAGE)));
    // arızi servisTest: the Body element is <testMsj1> and the reply is a bare string.
    let body = envelope("<uet:testMsj1>merhaba</uet:testMsj1>");
    let (status, _, text) =
        post(&fake, ARIZI, Some(&action(ARIZI, "servisTest")), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(response_element(ARIZI, &text).await.text, "merhaba");
    let r = call(&fake, ESYA, "servisTest", "<testMsj>selam</testMsj>").await;
    assert_eq!(r.text, "selam");
    fake.assert_no_violations();
    assert_eq!(fake.calls("servisTest"), 2);
}

#[tokio::test]
async fn partial_passengers_give_88_and_only_the_good_ones_are_stored() {
    let fake = FakeUetds::start().await;
    let trip = new_trip(&fake, "tns-88").await;
    let group = new_group(&fake, trip).await;
    fake.refuse_passenger("22222222222", "Yolcu kimlik bilgisi doğrulanamadı");
    let items = [passenger("11111111110", group), passenger("22222222222", group), passenger("33333333330", group)];
    let inner = format!("{WSUSER}<uetdsSeferReferansNo>{trip}</uetdsSeferReferansNo>{}", items.concat());
    let r = call(&fake, ARIZI, "yolcuEkleCoklu", &inner).await;
    assert_eq!(code(&r), codes::PARTIAL);
    let results: Vec<&Element> = r.children_named("uetdsYolcuSonuc").collect();
    assert_eq!(results.len(), 3);
    let sira: Vec<&str> = results.iter().map(|e| e.child_text("sira").unwrap()).collect();
    assert_eq!(sira, ["1", "2", "3"]);
    assert_eq!(code(results[1]), codes::REFUSED);
    assert_eq!(results[1].child_text("sonucMesaji"), Some("Yolcu kimlik bilgisi doğrulanamadı"));
    assert!(results[1].child("uetdsBiletRefNo").is_none());
    for ok in [results[0], results[2]] {
        assert_eq!(code(ok), 0);
        assert_eq!(ok.child_text("uetdsBiletRefNo").unwrap().len(), 12);
    }
    let t = fake.trip(trip).unwrap();
    assert_eq!(t.valid_passengers().count(), 2);

    // All refused → nonzero (not 88); an unknown group is an item error.
    let inner = format!(
        "{WSUSER}<uetdsSeferReferansNo>{trip}</uetdsSeferReferansNo>{}{}",
        passenger("22222222222", group),
        passenger("44444444440", 987)
    );
    let r = call(&fake, ARIZI, "yolcuEkleCoklu", &inner).await;
    assert!(code(&r) != 0 && code(&r) != codes::PARTIAL);
    assert_eq!(code(r.children_named("uetdsYolcuSonuc").nth(1).unwrap()), codes::NOT_FOUND);

    // The summary lists the passengers under the schema's names.
    let r =
        call(&fake, ARIZI, "bildirimOzeti", &format!("{WSUSER}<uetdsSeferReferansNo>{trip}</uetdsSeferReferansNo>"))
            .await;
    assert_eq!((r.child_text("firmaSeferNo"), r.child_text("seferDurumAciklama")), (Some("tns-88"), Some("Geçerli")));
    let ids: Vec<&str> = r.children_named("ariziYolcuListesi").map(|p| p.child_text("tckimlikno").unwrap()).collect();
    assert_eq!(ids, ["11111111110", "33333333330"]);
    assert_eq!(r.child_text("bildirilenYolcuSayisi"), Some("2"));
    fake.assert_no_violations();
}

#[tokio::test]
async fn reset_is_an_rst_and_changes_nothing() {
    let fake = FakeUetds::start().await;
    fake.script("seferEkle", 1, Behaviour::Reset);
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC112", "reset")));
    let err = post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some((TEST_USER, TEST_PASSWORD)), &body)
        .await
        .expect_err("the connection is reset");
    let mut source: Option<&dyn std::error::Error> = Some(&err);
    let mut reset = false;
    while let Some(e) = source {
        reset |= e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionReset);
        source = e.source();
    }
    assert!(reset, "a connection reset, not a clean close: {err:?}");
    assert!(fake.trips_with_firma_sefer_no("reset").is_empty(), "nothing done");
}

#[tokio::test]
async fn lose_answer_changes_state_and_drops_the_connection() {
    let fake = FakeUetds::start().await;
    fake.script("seferEkle", 1, Behaviour::LoseAnswer);
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "lost")));
    let err = post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some((TEST_USER, TEST_PASSWORD)), &body)
        .await
        .expect_err("the answer is lost");
    assert!(!err.is_timeout(), "{err:?}");
    assert_eq!(fake.trips_with_firma_sefer_no("lost").len(), 1);
    assert_eq!(fake.requests_for("seferEkle")[0].scripted, Some(Behaviour::LoseAnswer));
    // The next call is normal again, and the client can find the lost trip by date and plate.
    let r = call(
        &fake,
        ARIZI,
        "seferBildirimListele",
        &format!("{WSUSER}<seferListeleInput><seferTarih1>01/05/2030</seferTarih1><seferTarih2>01/05/2030</seferTarih2><plaka>34abc111</plaka></seferListeleInput>"),
    )
    .await;
    let found: Vec<&Element> = r.children_named("seferListesi").collect();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].child_text("seferDurum"), Some("Geçerli"));
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_missing_required_element_fails_the_schema() {
    let fake = FakeUetds::start().await;
    let inner = trip_input("34ABC111", "x").replace("<hareketSaati>09:00</hareketSaati>", "");
    let body = envelope(&format!("<uet:seferEkle>{inner}</uet:seferEkle>"));
    let (status, _, text) =
        post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 500, "{text}");
    assert!(fake.violations().iter().any(|v| v.reason.contains("hareketSaati")), "{:?}", fake.violations());

    // xmllint on its own rejects it too (and accepts the complete element).
    let doc = xml::parse(&body).unwrap().root;
    let el = &doc.path("Body").unwrap().children[0];
    let err = judge::xmllint(Service::Arizi, el).await.unwrap_err();
    assert!(err.contains("hareketSaati") || err.contains("firmaSeferNo"), "{err}");
    let good = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "x")));
    let doc = xml::parse(&good).unwrap().root;
    judge::xmllint(Service::Arizi, &doc.path("Body").unwrap().children[0]).await.unwrap();
    // A date-only dateTime is caught by the schema as well.
    let inner =
        trip_input("34ABC111", "x").replace("2030-05-01T00:00:00+03:00</hareketTarihi>", "2030-05-01</hareketTarihi>");
    let body = envelope(&format!("<uet:seferEkle>{inner}</uet:seferEkle>"));
    fake.reset();
    let (status, _, _) =
        post(&fake, ARIZI, Some(&action(ARIZI, "seferEkle")), Some((TEST_USER, TEST_PASSWORD)), &body).await.unwrap();
    assert_eq!(status, 500);
    assert!(fake.violations().iter().any(|v| v.reason.contains("hareketTarihi")));
}

#[tokio::test]
async fn esya_trip_loads_and_date_format() {
    let fake = FakeUetds::start().await;
    let trip = |start: &str| {
        format!(
            "{WSUSER}<seferBilgileriInput><plaka1>06ESY123</plaka1><sofor1TCNo>10000000146</sofor1TCNo>\
             <baslangicTarihi>{start}</baslangicTarihi><baslangicSaati>08:00</baslangicSaati>\
             <bitisTarihi>03/04/2030</bitisTarihi><bitisSaati>20:00</bitisSaati><firmaSeferNo>tns-c1</firmaSeferNo>\
             </seferBilgileriInput>"
        )
    };
    let r = call(&fake, ESYA, "yeniSeferEkleV3", &trip("2030-04-03")).await;
    assert_ne!(code(&r), 0);
    assert_eq!(fake.violations().len(), 1, "a wrong date format is recorded");
    fake.reset();

    let r = call(&fake, ESYA, "yeniSeferEkleV3", &trip("03/04/2030")).await;
    assert_eq!((code(&r), r.child_text("firmaSeferNo")), (0, Some("tns-c1")));
    let sefer_id: i64 = r.child_text("seferId").unwrap().parse().unwrap();
    let load = |no: &str| {
        format!(
            "<yukBilgileriInputList><tasimaTuruKodu>2</tasimaTuruKodu><yuklemeUlkeKodu>TR</yuklemeUlkeKodu>\
             <yuklemeIlMernisKodu>6</yuklemeIlMernisKodu><yuklemeIlceMernisKodu>1231</yuklemeIlceMernisKodu>\
             <bosaltmaUlkeKodu>TR</bosaltmaUlkeKodu><bosaltmaIlMernisKodu>34</bosaltmaIlMernisKodu>\
             <bosaltmaIlceMernisKodu>1421</bosaltmaIlceMernisKodu>\
             <yuklemeTarihi>03/04/2030</yuklemeTarihi><yuklemeSaati>08:00</yuklemeSaati>\
             <bosaltmaTarihi>03/04/2030</bosaltmaTarihi><bosaltmaSaati>19:00</bosaltmaSaati><yukCinsId>12</yukCinsId>\
             <yukMiktari>1500.5</yukMiktari><yukMiktariBirimi>KG</yukMiktariBirimi><gonderenUnvan>ACME A.Ş.</gonderenUnvan>\
             <firmaYukNo>{no}</firmaYukNo></yukBilgileriInputList>"
        )
    };
    fake.refuse_load("L2", "Yük cinsi geçersiz");
    let inner = format!("{WSUSER}<seferId>{sefer_id}</seferId>{}{}", load("L1"), load("L2"));
    let r = call(&fake, ESYA, "sefereYukEkleV3", &inner).await;
    assert_eq!(code(&r), codes::PARTIAL);
    let items: Vec<&Element> = r.children_named("uetdsEsyaSonuc").collect();
    assert_eq!((items[0].child_text("sira"), items[0].child_text("firmaYukNo")), (Some("1"), Some("L1")));
    assert!(items[0].child("yukId").is_some() && items[1].child("yukId").is_none());

    let r = call(&fake, ESYA, "seferDetayiV3", &format!("{WSUSER}<seferId>{sefer_id}</seferId>")).await;
    assert_eq!(r.path_text("seferDetayi/plaka1"), Some("06ESY123"));
    assert_eq!(r.children_named("yukListesi").count(), 1);
    let r = call(
        &fake,
        ESYA,
        "seferListesiV3",
        &format!("{WSUSER}<seferBaslangicTarihi>03/04/2030</seferBaslangicTarihi><plaka>06ESY123</plaka>"),
    )
    .await;
    assert_eq!(r.path_text("seferListesi/seferId"), Some(sefer_id.to_string().as_str()));
    let r = call(&fake, ESYA, "seferIptalTurleri", WSUSER).await;
    let kind = r.path_text("iptalTuruListesi/kodu").unwrap().to_string();
    let r = call(
        &fake,
        ESYA,
        "seferIptalEtV3",
        &format!("{WSUSER}<seferId>{sefer_id}</seferId><seferIptalTurKodu>{kind}</seferIptalTurKodu><seferIptalAciklama>iptal</seferIptalAciklama>"),
    )
    .await;
    assert_eq!(code(&r), 0);
    let r = call(&fake, ESYA, "seferRaporuV3", &format!("{WSUSER}<seferId>{sefer_id}</seferId>")).await;
    assert!(r.child_text("sonucPdf").unwrap().starts_with("JVBERi0")); // "%PDF-"
    let t = fake.cargo_trip(sefer_id).unwrap();
    assert_eq!((t.status, t.valid_loads().count()), (Status::Cancelled, 1));
    fake.assert_no_violations();
}

#[tokio::test]
async fn tarifeli_trip_ticket_and_summary() {
    let fake = FakeUetds::start().await;
    let trip = format!(
        "{WSUSER}<tarifeliSeferBilgileriInput><aracPlaka>34TRF001</aracPlaka><unetGuzergahKodu>123456</unetGuzergahKodu>\
         <hareketTarihi>2030-06-01</hareketTarihi><hareketSaati>23:30</hareketSaati><seyahatSuresi>7</seyahatSuresi>\
         <firmaSeferNo>tns-t1</firmaSeferNo></tarifeliSeferBilgileriInput>"
    );
    let r = call(&fake, TARIFELI, "seferEkle", &trip).await;
    assert_eq!(code(&r), 0);
    let reference: i64 = r.child_text("uetdsSeferReferansNo").unwrap().parse().unwrap();
    let ticket = format!(
        "{WSUSER}<uetdsSeferReferansNo>{reference}</uetdsSeferReferansNo><yolcuBiletBilgileriInput><uyrukUlke>DE</uyrukUlke>\
         <tcKimlikPasaportNo>C01X00T47</tcKimlikPasaportNo><cinsiyet>E</cinsiyet><adi>Hans</adi><soyadi>Müller</soyadi>\
         <binisYerKodu>34001</binisYerKodu><inisYerKodu>6001</inisYerKodu><koltukNo>12</koltukNo><tutar>450.00</tutar>\
         </yolcuBiletBilgileriInput>"
    );
    let r = call(&fake, TARIFELI, "yolcuBiletEkle", &ticket).await;
    assert_eq!(code(&r), 0);
    assert_eq!(r.child_text("uetdsBiletRefNo").unwrap().len(), 12);
    let r = call(
        &fake,
        TARIFELI,
        "bildirimOzeti",
        &format!("{WSUSER}<uetdsSeferReferansNo>{reference}</uetdsSeferReferansNo>"),
    )
    .await;
    assert_eq!(r.path_text("ariziYolcuListesi/tckimlikno"), Some("C01X00T47"));
    fake.assert_no_violations();
    let t = fake.trip(reference).unwrap();
    assert_eq!((t.service, t.route_code, t.travel_hours), (Service::Tarifeli, Some(123456), Some(7)));
    // The arızi service does not know the tarifeli trip.
    let r = call(
        &fake,
        ARIZI,
        "bildirimOzeti",
        &format!("{WSUSER}<uetdsSeferReferansNo>{reference}</uetdsSeferReferansNo>"),
    )
    .await;
    assert_eq!(code(&r), codes::NOT_FOUND);

    // An unknown element is a violation.
    let bad = trip.replace("<firmaSeferNo>", "<seferAciklama>x</seferAciklama><firmaSeferNo>");
    let (status, _, _) = post(
        &fake,
        TARIFELI,
        Some(&action(TARIFELI, "seferEkle")),
        Some((TEST_USER, TEST_PASSWORD)),
        &envelope(&format!("<uet:seferEkle>{bad}</uet:seferEkle>")),
    )
    .await
    .unwrap();
    assert_eq!(status, 500);
    assert!(fake.violations().iter().any(|v| v.reason.contains("seferAciklama")), "{:?}", fake.violations());
}

#[tokio::test]
async fn scripted_gateway_failures() {
    let fake = FakeUetds::start().await;
    fake.script("seferEkle", 1, Behaviour::Status(503));
    fake.script("seferEkle", 1, Behaviour::Empty);
    fake.script("seferEkle", 1, Behaviour::business(34, "Girilen plaka kayıtlı değil"));
    fake.script("seferEkle", 1, Behaviour::fault("Server", "Internal Error"));
    fake.script("seferEkle", 1, Behaviour::Echo(502));
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "s")));
    let soap_action = action(ARIZI, "seferEkle");
    let send = || post(&fake, ARIZI, Some(&soap_action), Some((TEST_USER, TEST_PASSWORD)), &body);
    let (status, ct, text) = send().await.unwrap();
    assert_eq!((status, ct.starts_with("text/html")), (503, true), "{text}");
    let (status, _, text) = send().await.unwrap();
    assert_eq!((status, text.as_str()), (200, ""));
    let (status, _, text) = send().await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(code(response_element(ARIZI, &text).await.child("return").unwrap()), 34);
    let (status, _, text) = send().await.unwrap();
    assert_eq!(status, 500);
    assert!(text.contains("<faultcode>S:Server</faultcode><faultstring>Internal Error</faultstring>"), "{text}");
    let (status, ct, text) = send().await.unwrap();
    assert_eq!((status, ct.starts_with("text/plain")), (502, true), "{text}");
    assert!(text.contains("Authorization: Basic ") && text.contains(&body), "the request quoted: {text}");
    assert!(fake.trips().is_empty());
    assert_eq!(fake.scripted_pending("seferEkle"), 0);
    let (status, _, _) = send().await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(fake.trips().len(), 1);
    fake.assert_no_violations();
}

#[tokio::test]
async fn hang_answers_late_and_performs_after_the_delay() {
    let fake = FakeUetds::start().await;
    fake.script("seferEkle", 1, Behaviour::Hang(Duration::from_millis(600)));
    let body = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "slow")));
    let req = client(Duration::from_millis(200))
        .post(format!("{}{ARIZI}", fake.base_url()))
        .header("content-type", "text/xml; charset=utf-8")
        .header("soapaction", action(ARIZI, "seferEkle"))
        .basic_auth(TEST_USER, Some(TEST_PASSWORD))
        .body(body);
    let err = req.send().await.expect_err("the client times out");
    assert!(err.is_timeout(), "{err:?}");
    assert!(fake.wait_for_calls("seferEkle", 1, Duration::from_secs(5)).await);
    assert!(fake.trips().is_empty(), "nothing is done during the delay");
    assert!(fake.wait_until(Duration::from_secs(5), |f| f.trips().len() == 1).await);
}

#[tokio::test]
async fn envelope_level_mistakes_are_violations() {
    let fake = FakeUetds::start().await;
    let good = envelope(&format!("<uet:seferEkle>{}</uet:seferEkle>", trip_input("34ABC111", "x")));
    let soap_action = action(ARIZI, "seferEkle");
    let send = |ct: &'static str, body: String| {
        client(Duration::from_secs(20))
            .post(format!("{}{ARIZI}", fake.base_url()))
            .header("content-type", ct)
            .header("soapaction", soap_action.clone())
            .basic_auth(TEST_USER, Some(TEST_PASSWORD))
            .body(body)
            .send()
    };
    let cases = [
        ("text/xml", good.clone(), "Content-Type"),
        ("text/xml; charset=utf-8", good.replace("uet:seferEkle", "uet:seferEkleX"), "not an operation"),
        ("text/xml; charset=utf-8", good.replace("<soapenv:Header/>", "<soapenv:Header/><x/>"), "Body"),
        ("text/xml; charset=utf-8", good.replace("<uet:seferEkle>", "<uet:seferEkle><wsuser/>"), "wsuser"),
        ("text/xml; charset=utf-8", good.replace("<aracPlaka>", "<aracPlaka a=\"1\">"), "attribute"),
        ("text/xml; charset=utf-8", good.replace("</soapenv:Body>", ""), "well-formed"),
        (
            "text/xml; charset=utf-8",
            good.replace("schemas.xmlsoap.org/soap/envelope/", "www.w3.org/2003/05/soap-envelope"),
            "SOAP 1.2",
        ),
    ];
    for (ct, body, why) in cases {
        fake.reset();
        let resp = send(ct, body).await.unwrap();
        assert_eq!(resp.status().as_u16(), 500, "{why}");
        assert!(fake.violations().iter().any(|v| v.reason.contains(why)), "{why}: {:?}", fake.violations());
        assert!(fake.trips().is_empty());
    }
    // xmllint on its own keeps a qualified child qualified (and rejects it).
    let doc =
        xml::parse(&good.replace("<firmaSeferNo>x</firmaSeferNo>", "<uet:firmaSeferNo>x</uet:firmaSeferNo>")).unwrap();
    let err = judge::xmllint(Service::Arizi, &doc.root.path("Body").unwrap().children[0]).await.unwrap_err();
    assert!(err.contains("firmaSeferNo"), "{err}");
}

/// A synchronous client on the test's own thread: the fake runs on a runtime of its own.
#[tokio::test]
async fn background_fake_serves_a_blocking_client() {
    let fake = FakeUetds::start_background();
    fake.set_keep_requests(false);
    let url = fake.url(Service::Arizi, Env::Test);
    let body = envelope("<uet:testMsj1>ping</uet:testMsj1>");
    let soap_action = action(ARIZI, "servisTest");
    let text = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                client(Duration::from_secs(20))
                    .post(url)
                    .header("content-type", "text/xml; charset=utf-8")
                    .header("soapaction", soap_action)
                    .basic_auth(TEST_USER, Some(TEST_PASSWORD))
                    .body(body)
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap()
            })
        })
        .join()
        .unwrap()
    });
    assert!(text.contains(">ping</ns2:servisTestResponse>"), "{text}");
    assert_eq!(fake.calls("servisTest"), 1);
    assert!(fake.requests().is_empty());
    fake.assert_no_violations();
}
