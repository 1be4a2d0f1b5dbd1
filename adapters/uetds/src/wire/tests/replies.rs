//! Reading replies: Metro's prefixes and others', faults, and what a gateway sends instead.

use crate::wire::{
    arizi, esya, parse_reply, parse_return, CallError, GenelIslemSonuc, GenelPdfSonuc, Secrets, NAMESPACE,
};

const SOAP11: &str = "http://schemas.xmlsoap.org/soap/envelope/";

/// The success reply of `seferEkle` as Metro writes it (the Ministry's own sample).
const METRO_SEFER_EKLE: &str = r#"<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>
 <ns2:seferEkleResponse xmlns:ns2="http://uetds.unetws.udhb.gov.tr/"><return>
  <sonucKodu>0</sonucKodu>
  <sonucMesaji>Sefer Başarılı şekilde eklenmiştir.Sefer Personel ve Yolcu Ekleme işlemlerini yapabilirsiniz.</sonucMesaji>
  <uetdsSeferReferansNo>18073000016130</uetdsSeferReferansNo>
 </return></ns2:seferEkleResponse></S:Body></S:Envelope>"#;

fn sefer_ekle(xml: &str) -> Result<arizi::AriziSeferBildirSonuc, CallError> {
    parse_reply::<arizi::SeferEkle>(xml.as_bytes())
}

/// `r`'s error as the transport returns it: redacted, its texts cleaned and cut.
fn malformed(r: Result<impl std::fmt::Debug, CallError>, contains: &str) {
    match r.map_err(|e| e.redact(&Secrets::default())) {
        Err(CallError::Malformed(m)) => assert!(m.contains(contains), "{m:?} lacks {contains:?}"),
        other => panic!("expected Malformed({contains}), got {other:?}"),
    }
}

#[test]
fn metro_reply() {
    let r = sefer_ekle(METRO_SEFER_EKLE).unwrap();
    assert_eq!(r.sonuc_kodu, 0);
    assert_eq!(r.uetds_sefer_referans_no, Some(18073000016130));
    assert!(r.sonuc_mesaji.unwrap().starts_with("Sefer Başarılı şekilde"));
}

#[test]
fn any_prefixes_or_default_namespaces() {
    let shapes = [
        format!(
            r#"<soap:Envelope xmlns:soap="{SOAP11}"><soap:Header/><soap:Body><tns:seferEkleResponse xmlns:tns="{NAMESPACE}"><return><sonucKodu>0</sonucKodu><uetdsSeferReferansNo>42</uetdsSeferReferansNo></return></tns:seferEkleResponse></soap:Body></soap:Envelope>"#
        ),
        format!(
            r#"<soapenv:Envelope xmlns:soapenv="{SOAP11}"><soapenv:Body><seferEkleResponse xmlns="{NAMESPACE}"><return xmlns=""><sonucKodu>0</sonucKodu><uetdsSeferReferansNo>42</uetdsSeferReferansNo></return></seferEkleResponse></soapenv:Body></soapenv:Envelope>"#
        ),
        // SOAP 1.2 envelope namespace, children qualified by a prefix (against the schema, tolerated).
        format!(
            r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Header><x:trace xmlns:x="urn:x">1</x:trace></env:Header><env:Body><u:seferEkleResponse xmlns:u="{NAMESPACE}"><u:return><u:sonucKodu>0</u:sonucKodu><u:uetdsSeferReferansNo>42</u:uetdsSeferReferansNo></u:return></u:seferEkleResponse></env:Body></env:Envelope>"#
        ),
        // Everything in default namespaces, whitespace and comments around.
        format!(
            "<Envelope xmlns=\"{SOAP11}\">\n  <!-- gateway -->\n  <Body>\n    <seferEkleResponse xmlns=\"{NAMESPACE}\">\n      <return>\n        <sonucKodu> 0 </sonucKodu>\n        <uetdsSeferReferansNo>42</uetdsSeferReferansNo>\n      </return>\n    </seferEkleResponse>\n  </Body>\n</Envelope>\n"
        ),
    ];
    for xml in shapes {
        let r = sefer_ekle(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
        assert_eq!((r.sonuc_kodu, r.sonuc_mesaji, r.uetds_sefer_referans_no), (0, None, Some(42)), "{xml}");
    }
}

#[test]
fn escaped_turkish_text_round_trips() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:seferIptalResponse xmlns:ns2="{NAMESPACE}"><return><sonucKodu>34</sonucKodu><sonucMesaji>Girilen plaka &amp; &lt;Şoför&gt; &#x130;ptal &quot;ÇĞÖÜ&quot; <![CDATA[<ham> & ]]>bitti</sonucMesaji></return></ns2:seferIptalResponse></S:Body></S:Envelope>"#
    );
    let r: GenelIslemSonuc = parse_return(xml.as_bytes(), "seferIptal").unwrap();
    assert_eq!(r.sonuc_kodu, 34);
    assert_eq!(r.sonuc_mesaji.as_deref(), Some("Girilen plaka & <Şoför> İptal \"ÇĞÖÜ\" <ham> & bitti"));
    // And back: what we write reads the same.
    let written = quick_xml::se::to_string_with_root("return", &r).unwrap();
    assert!(written.contains("&amp; &lt;Şoför&gt; İptal"), "{written}");
    assert_eq!(quick_xml::de::from_str::<GenelIslemSonuc>(&written).unwrap(), r);
}

#[test]
fn business_errors_are_returns_not_errors() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:kullaniciKontrolResponse xmlns:ns2="{NAMESPACE}"><return><sonucKodu>1</sonucKodu><sonucMesaji>KULLANICI ADI YADA SIFRE HATALI</sonucMesaji></return></ns2:kullaniciKontrolResponse></S:Body></S:Envelope>"#
    );
    let r = parse_reply::<arizi::KullaniciKontrol>(xml.as_bytes()).unwrap();
    assert_eq!(
        r,
        arizi::FirmaSonuc {
            sonuc_kodu: 1,
            sonuc_mesaji: Some("KULLANICI ADI YADA SIFRE HATALI".into()),
            ..Default::default()
        }
    );
}

#[test]
fn partial_passenger_success_keeps_every_item() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:yolcuEkleCokluResponse xmlns:ns2="{NAMESPACE}"><return>
<sonucKodu>88</sonucKodu><sonucMesaji>Bazı yolcular eklenemedi</sonucMesaji>
<uetdsYolcuSonuc><sira>1</sira><sonucKodu>0</sonucKodu><sonucMesaji>İŞLEM BAŞARILI</sonucMesaji><uetdsBiletRefNo>240101000001</uetdsBiletRefNo></uetdsYolcuSonuc>
<uetdsYolcuSonuc><sira>2</sira><sonucKodu>12</sonucKodu><sonucMesaji>Geçersiz kimlik</sonucMesaji></uetdsYolcuSonuc>
<uetdsYolcuSonuc><sira>3</sira><sonucKodu>0</sonucKodu><uetdsBiletRefNo>240101000003</uetdsBiletRefNo></uetdsYolcuSonuc>
</return></ns2:yolcuEkleCokluResponse></S:Body></S:Envelope>"#
    );
    let r = parse_reply::<arizi::YolcuEkleCoklu>(xml.as_bytes()).unwrap();
    assert_eq!(r.sonuc_kodu, 88);
    let items: Vec<_> = r.uetds_yolcu_sonuc.iter().map(|y| (y.sira, y.sonuc_kodu, y.uetds_bilet_ref_no)).collect();
    assert_eq!(items, [(1, 0, Some(240101000001)), (2, 12, None), (3, 0, Some(240101000003))]);
}

#[test]
fn summary_lists_nil_items_and_unknown_elements() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><S:Body><ns2:bildirimOzetiResponse xmlns:ns2="{NAMESPACE}"><return>
<seferTarihi>2024-07-30T00:00:00+03:00</seferTarihi><firmaUnvan>Öz Turizm</firmaUnvan><seferDurumKodu>0</seferDurumKodu><seferDurumAciklama>Geçerli</seferDurumAciklama>
<bildirilenYolcuSayisi>2</bildirilenYolcuSayisi><aracPlaka>34ABC111</aracPlaka><yeniBirAlan>yarın eklenmiş</yeniBirAlan>
<grupListesi><grupAdi>Gidiş</grupAdi><grupId>99</grupId><baslangicIlId>34</baslangicIlId></grupListesi>
<grupListesi xsi:nil="true"/>
<ariziPersonelListesi><adi>Ali</adi><personelTuru>Şoför</personelTuru></ariziPersonelListesi>
<ariziYolcuListesi><adi>Ayşe</adi><cinsiyet>Kadın</cinsiyet><durumKodu>1</durumKodu><uetdsBiletRefNo>1</uetdsBiletRefNo></ariziYolcuListesi>
<ariziYolcuListesi><adi>Can</adi><koltukNo xsi:nil="true"/><uetdsBiletRefNo>2</uetdsBiletRefNo></ariziYolcuListesi>
<sonucKodu>0</sonucKodu></return></ns2:bildirimOzetiResponse></S:Body></S:Envelope>"#
    );
    let r = parse_reply::<arizi::BildirimOzeti>(xml.as_bytes()).unwrap();
    assert_eq!(r.sonuc_kodu, 0);
    assert_eq!(r.firma_unvan.as_deref(), Some("Öz Turizm"));
    assert_eq!(r.bildirilen_yolcu_sayisi, Some(2));
    assert_eq!(r.grup_listesi.len(), 1, "the nil item is dropped");
    assert_eq!((r.grup_listesi[0].grup_id, r.grup_listesi[0].baslangic_il_id), (Some(99), Some(34)));
    assert_eq!(r.arizi_personel_listesi[0].personel_turu.as_deref(), Some("Şoför"));
    let passengers: Vec<_> = r
        .arizi_yolcu_listesi
        .iter()
        .map(|y| (y.adi.as_deref(), y.koltuk_no.as_deref(), y.uetds_bilet_ref_no))
        .collect();
    assert_eq!(passengers, [(Some("Ayşe"), None, Some(1)), (Some("Can"), None, Some(2))]);
}

#[test]
fn minimal_replies_parse_and_missing_required_elements_do_not() {
    let wrap = |op: &str, ret: &str| {
        format!(
            r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:{op}Response xmlns:ns2="{NAMESPACE}">{ret}</ns2:{op}Response></S:Body></S:Envelope>"#
        )
    };
    let r = parse_reply::<arizi::SeferGrupEkle>(
        wrap("seferGrupEkle", "<return><sonucKodu>5</sonucKodu></return>").as_bytes(),
    );
    assert_eq!(r.unwrap(), arizi::AriziGrupIslemSonuc { sonuc_kodu: 5, ..Default::default() });
    let r = parse_reply::<esya::SefereYukEkleV3>(
        wrap("sefereYukEkleV3", "<return><sonucKodu>0</sonucKodu></return>").as_bytes(),
    );
    assert_eq!(r.unwrap().uetds_esya_sonuc, []);
    // A reply without sonucKodu must never read as code 0.
    malformed(
        parse_reply::<arizi::SeferEkle>(wrap("seferEkle", "<return><sonucMesaji>?</sonucMesaji></return>").as_bytes()),
        "sonucKodu",
    );
    malformed(
        parse_reply::<arizi::SeferEkle>(wrap("seferEkle", "<return><sonucKodu>sıfır</sonucKodu></return>").as_bytes()),
        "",
    );
    malformed(parse_reply::<arizi::SeferEkle>(wrap("seferEkle", "").as_bytes()), "no <return> in <seferEkleResponse>");
    malformed(
        parse_reply::<arizi::SeferEkle>(wrap("seferIptal", "<return><sonucKodu>0</sonucKodu></return>").as_bytes()),
        "no <seferEkleResponse>",
    );
    let nil = r#"<return xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>"#;
    malformed(parse_reply::<arizi::SeferEkle>(wrap("seferEkle", nil).as_bytes()), "nil");
}

#[test]
fn pdf_and_echo_replies() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:seferDetayCiktisiAlResponse xmlns:ns2="{NAMESPACE}"><return><sonucKodu>0</sonucKodu><sonucMesaji>OK</sonucMesaji><sonucPdf>JVBERi0x
LjQK</sonucPdf></return></ns2:seferDetayCiktisiAlResponse></S:Body></S:Envelope>"#
    );
    let r: GenelPdfSonuc = parse_reply::<arizi::SeferDetayCiktisiAl>(xml.as_bytes()).unwrap();
    assert_eq!(r.sonuc_pdf.as_deref(), Some("JVBERi0x\nLjQK"));

    // arızi servisTest is bare: the echo is the response element itself.
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:servisTestResponse xmlns:ns2="{NAMESPACE}">merhaba &amp; selam</ns2:servisTestResponse></S:Body></S:Envelope>"#
    );
    assert_eq!(parse_reply::<arizi::ServisTest>(xml.as_bytes()).unwrap(), "merhaba & selam");
    // eşya servisTest is wrapped.
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><ns2:servisTestResponse xmlns:ns2="{NAMESPACE}"><return>merhaba</return></ns2:servisTestResponse></S:Body></S:Envelope>"#
    );
    assert_eq!(parse_reply::<esya::ServisTest>(xml.as_bytes()).unwrap(), "merhaba");
}

#[test]
fn soap_11_fault() {
    let xml = format!(
        r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><S:Fault xmlns:ns4="http://www.w3.org/2003/05/soap-envelope"><faultcode>S:Server</faultcode><faultstring>java.lang.NullPointerException &amp; more</faultstring><detail><ns2:exception xmlns:ns2="http://jax-ws.dev.java.net/" class="java.lang.NullPointerException"><message>x</message></ns2:exception></detail></S:Fault></S:Body></S:Envelope>"#
    );
    assert_eq!(
        sefer_ekle(&xml),
        Err(CallError::Fault { code: "Server".into(), message: "java.lang.NullPointerException & more".into() })
    );
    // A fault wins even next to a response, and wherever it sits in the Body.
    let xml = format!(
        r#"<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body><gw:wrapper xmlns:gw="urn:gw"><soap:Fault><faultcode>soap:Client</faultcode><faultstring>Policy Falsified</faultstring></soap:Fault></gw:wrapper></soap:Body></soap:Envelope>"#
    );
    assert_eq!(sefer_ekle(&xml), Err(CallError::Fault { code: "Client".into(), message: "Policy Falsified".into() }));
}

#[test]
fn soap_12_fault() {
    let xml = r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value><env:Subcode><env:Value>x:Busy</env:Value></env:Subcode></env:Code><env:Reason><env:Text xml:lang="tr">Servis meşgul</env:Text><env:Text xml:lang="en">Busy</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>"#;
    assert_eq!(sefer_ekle(xml), Err(CallError::Fault { code: "Receiver".into(), message: "Servis meşgul".into() }));
}

#[test]
fn what_is_not_a_soap_reply() {
    malformed(sefer_ekle(""), "empty body");
    malformed(sefer_ekle(" \r\n "), "empty body");
    malformed(sefer_ekle("Service Unavailable"), "no XML element");
    malformed(sefer_ekle(r#"{"error":"bad gateway"}"#), "no XML element");
    malformed(sefer_ekle("<a><b></a>"), "not a SOAP envelope (root element <a>)");
    malformed(
        sefer_ekle(&format!(r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body><x></y></S:Body></S:Envelope>"#)),
        "not XML",
    );
    malformed(sefer_ekle(&METRO_SEFER_EKLE[..METRO_SEFER_EKLE.len() - 40]), "");
    malformed(sefer_ekle("<?xml version=\"1.0\"?><error>quota</error>"), "not a SOAP envelope (root element <error>)");
    malformed(sefer_ekle(&format!(r#"<S:Envelope xmlns:S="{SOAP11}"><S:Header/></S:Envelope>"#)), "no SOAP Body");
    malformed(
        sefer_ekle(&format!(r#"<S:Envelope xmlns:S="{SOAP11}"><S:Body/></S:Envelope>"#)),
        "no <seferEkleResponse> in the SOAP Body",
    );
    let page = "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>502 Bad Gateway</title></head><body><h1>Bad Gateway<br></h1></body></html>";
    malformed(sefer_ekle(page), "HTML page instead of a SOAP envelope: 502 Bad Gateway");
    malformed(
        sefer_ekle("<html><body><p>Erişim engellendi &amp; kayıt</p></body></html>"),
        "Erişim engellendi & kayıt",
    );
    malformed(parse_return::<GenelIslemSonuc>(&[0xff, 0xfe, b'<', 0, b'a', 0], "x"), "");
}
