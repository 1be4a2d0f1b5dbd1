//! Every message against the published XSDs.
//!
//! For each operation a sample of its request is generated from the XSD itself (every element,
//! then only the required ones), read into the Rust struct, written back through
//! [`envelope`], and the Body's wrapper element must carry exactly the sample's elements, in
//! the sample's order, with the same text; xmllint then validates it. Replies go the same
//! way: a sample `<return>` from the XSD in a Metro envelope, [`parse_reply`], written back,
//! compared and validated. So a field missing, misspelt, misplaced or mistyped in a struct
//! fails here, requests and returns alike.

use std::{collections::HashMap, fmt::Debug, path::PathBuf, process::Command};

use quick_xml::{
    events::{BytesText, Event},
    Reader, Writer,
};
use serde::{de::DeserializeOwned, Serialize};

use super::{body_child, canonical, qualify};
use crate::wire::{arizi, envelope, esya, parse_reply, Operation, Reply, WsUser, NAMESPACE};

struct Field {
    name: String,
    ty: String,
    optional: bool,
    repeated: bool,
}

/// The part of an XSD the messages need: top-level elements and complex types.
struct Schema {
    file: &'static str,
    elements: HashMap<String, String>,
    types: HashMap<String, (Option<String>, Vec<Field>)>,
}

fn schema_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema").join(file)
}

impl Schema {
    fn load(file: &'static str) -> Schema {
        let text = std::fs::read_to_string(schema_path(file)).unwrap();
        let mut reader = Reader::from_str(&text);
        let mut schema = Schema { file, elements: HashMap::new(), types: HashMap::new() };
        let mut current: Option<String> = None;
        let strip = |t: &str| t.strip_prefix("tns:").unwrap_or(t).to_string();
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) | Event::Empty(e) => {
                    let attr = |name: &str| e.try_get_attribute(name).unwrap().map(|a| a.value.into_owned());
                    match e.local_name().into_inner() {
                        "complexType" => {
                            let name = attr("name").unwrap();
                            schema.types.insert(name.clone(), (None, Vec::new()));
                            current = Some(name);
                        }
                        "extension" => {
                            let ty = current.as_ref().unwrap();
                            schema.types.get_mut(ty).unwrap().0 = Some(strip(&attr("base").unwrap()));
                        }
                        "element" => {
                            let (name, ty) = (attr("name").unwrap(), strip(&attr("type").unwrap()));
                            match &current {
                                Some(ct) => schema.types.get_mut(ct).unwrap().1.push(Field {
                                    name,
                                    ty,
                                    optional: attr("minOccurs").as_deref() == Some("0"),
                                    repeated: attr("maxOccurs").is_some_and(|m| m != "1"),
                                }),
                                None => {
                                    schema.elements.insert(name, ty);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                Event::End(e) if e.local_name().into_inner() == "complexType" => current = None,
                Event::Eof => break,
                _ => {}
            }
        }
        schema
    }

    /// A type's elements in order, its base type's first.
    fn fields(&self, ty: &str) -> Vec<&Field> {
        let (base, own) = self.types.get(ty).unwrap_or_else(|| panic!("{}: no type {ty}", self.file));
        let mut all = base.as_deref().map(|b| self.fields(b)).unwrap_or_default();
        all.extend(own);
        all
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fill {
    All,
    Required,
}

/// Sample text of a built-in type; strings carry what needs escaping and Turkish letters.
fn primitive(ty: &str, name: &str, i: usize) -> String {
    match ty {
        "xs:string" => format!("Öz & <Şirket> \"İğneci\" 'çÇ' {name}{i}"),
        "xs:long" => format!("1807300001613{i}"),
        "xs:int" => format!("{}", 7 + i),
        "xs:boolean" => "true".into(),
        "xs:dateTime" => "2024-05-01T10:00:00+03:00".into(),
        "xs:decimal" => "1234.5".into(),
        "xs:base64Binary" => "JVBERi0xLjQK".into(),
        other => panic!("no sample for {other}"),
    }
}

/// `<name>` of type `ty` with sample content. With `Fill::Required`, optional elements are left
/// out below `name`, except that `keep_children` keeps all of `name`'s own (wrapper parameters:
/// JAX-WS marks them optional, the service needs them).
fn write_value(
    w: &mut Writer<Vec<u8>>,
    schema: &Schema,
    name: &str,
    ty: &str,
    fill: Fill,
    keep_children: bool,
    i: usize,
) {
    if ty.starts_with("xs:") {
        w.create_element(name).write_text_content(BytesText::new(&primitive(ty, name, i))).unwrap();
        return;
    }
    w.create_element(name)
        .write_inner_content(|w| {
            for f in schema.fields(ty) {
                if fill == Fill::Required && f.optional && !keep_children {
                    continue;
                }
                for i in 0..if f.repeated { 2 } else { 1 } {
                    write_value(w, schema, &f.name, &f.ty, fill, false, i);
                }
            }
            Ok(())
        })
        .unwrap();
}

fn sample_request(schema: &Schema, element: &str, fill: Fill) -> String {
    let ty = &schema.elements[element];
    let mut w = Writer::new(Vec::new());
    write_value(&mut w, schema, element, ty, fill, true, 0);
    String::from_utf8(w.into_inner()).unwrap()
}

/// Children of the wrapper are unprefixed and carry no attributes (no namespace of their own).
fn assert_unqualified(wrapper: &str, op: &str) {
    let mut reader = Reader::from_str(wrapper);
    let mut first = true;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => {
                if !first {
                    assert!(
                        !e.name().into_inner().contains(':'),
                        "{op}: child <{}> is prefixed",
                        e.name().into_inner()
                    );
                    assert_eq!(e.attributes().count(), 0, "{op}: child <{}> has attributes", e.name().into_inner());
                }
                first = false;
            }
            Event::Eof => break,
            _ => {}
        }
    }
}

/// The request of `O` from an XSD sample, checked against the sample; the wrapper element
/// ready for xmllint.
fn request_doc<O>(schema: &Schema, fill: Fill) -> String
where
    O: Operation + DeserializeOwned + PartialEq + Debug,
{
    let sample = sample_request(schema, O::NAME, fill);
    let op: O = quick_xml::de::from_str(&sample).unwrap_or_else(|e| panic!("{}: {e}\n{sample}", O::NAME));
    let wrapper = body_child(&envelope(&op));
    assert!(wrapper.starts_with(&["<uet:", O::NAME].concat()), "{}: wrapper is {wrapper}", O::NAME);
    assert_unqualified(&wrapper, O::NAME);
    assert_eq!(canonical(&wrapper), canonical(&sample), "{} ({fill:?}): the envelope is not the XSD's shape", O::NAME);
    qualify(&wrapper, NAMESPACE)
}

/// The reply of `O` from an XSD sample in a Metro envelope, parsed, written back and compared;
/// the response element ready for xmllint.
fn response_doc<O>(schema: &Schema, fill: Fill) -> String
where
    O: Operation,
    O::Return: Serialize + Debug,
{
    let mut w = Writer::new(Vec::new());
    w.create_element("S:Envelope")
        .with_attribute(("xmlns:S", "http://schemas.xmlsoap.org/soap/envelope/"))
        .write_inner_content(|w| {
            w.create_element("S:Body").write_inner_content(|w| {
                match O::REPLY {
                    Reply::Wrapped => {
                        let element = [O::NAME, "Response"].concat();
                        let ret = schema.fields(&schema.elements[&element]).into_iter().find(|f| f.name == "return");
                        let ret_ty = ret.unwrap_or_else(|| panic!("{element} has no return")).ty.clone();
                        w.create_element(["ns2:", &element].concat())
                            .with_attribute(("xmlns:ns2", NAMESPACE))
                            .write_inner_content(|w| {
                                write_value(w, schema, "return", &ret_ty, fill, false, 0);
                                Ok(())
                            })?;
                    }
                    Reply::Bare(element) => {
                        let ty = &schema.elements[element];
                        w.create_element(["ns2:", element].concat())
                            .with_attribute(("xmlns:ns2", NAMESPACE))
                            .write_text_content(BytesText::new(&primitive(ty, element, 0)))?;
                    }
                }
                Ok(())
            })?;
            Ok(())
        })
        .unwrap();
    let reply = String::from_utf8(w.into_inner()).unwrap();
    let value = parse_reply::<O>(reply.as_bytes()).unwrap_or_else(|e| panic!("{}: {e}\n{reply}", O::NAME));
    let mut w = Writer::new(Vec::new());
    match O::REPLY {
        Reply::Wrapped => {
            w.create_element([O::NAME, "Response"].concat())
                .write_inner_content(|w| w.write_serializable("return", &value).map_err(std::io::Error::other))
                .unwrap();
        }
        Reply::Bare(element) => w.write_serializable(element, &value).unwrap(),
    }
    let written = String::from_utf8(w.into_inner()).unwrap();
    assert_eq!(
        canonical(&written),
        canonical(&body_child(&reply)),
        "{} ({fill:?}): the return type is not the XSD's shape: {value:?}",
        O::NAME
    );
    qualify(&written, NAMESPACE)
}

/// Validates every document against `schema` in one xmllint run.
fn xmllint(schema: &str, docs: &[(String, String)]) {
    let dir = std::env::temp_dir().join(format!("tns-uetds-xsd-{}-{schema}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (name, doc) in docs {
        let path = dir.join(name);
        std::fs::write(&path, doc).unwrap();
        files.push(path);
    }
    let out = Command::new("xmllint").arg("--noout").arg("--schema").arg(schema_path(schema)).args(&files).output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.unwrap_or_else(|e| {
        panic!(
            "xmllint is needed to check the SOAP messages against the XSDs and could not be run ({e}); \
             install it (Debian/Ubuntu: apt-get install libxml2-utils)"
        )
    });
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xmllint rejected messages against {schema}:\n{report}");
    assert_eq!(report.matches(" validates").count(), docs.len(), "{report}");
}

macro_rules! docs {
    ($schema:expr, $($op:ty),+ $(,)?) => {{
        let mut docs = Vec::new();
        $(
            for fill in [Fill::All, Fill::Required] {
                let name = <$op as Operation>::NAME;
                docs.push((format!("{name}-{fill:?}-request.xml"), request_doc::<$op>(&$schema, fill)));
                docs.push((format!("{name}-{fill:?}-response.xml"), response_doc::<$op>(&$schema, fill)));
            }
        )+
        docs
    }};
}

#[test]
fn arizi_messages_match_the_xsd() {
    let schema = Schema::load("uetdsarizi.xsd");
    let mut docs = docs!(
        schema,
        arizi::KullaniciKontrol,
        arizi::SeferEkle,
        arizi::SeferGuncelle,
        arizi::SeferIptal,
        arizi::SeferBildirimListele,
        arizi::SeferGrupEkle,
        arizi::SeferGrupListesi,
        arizi::PersonelEkle,
        arizi::PersonelIptal,
        arizi::YolcuEkleCoklu,
        arizi::YolcuIptalUetdsYolcuRefNoIle,
        arizi::BildirimOzeti,
        arizi::SeferDetayCiktisiAl,
        arizi::ServisTest,
    );
    assert_eq!(docs.len(), 14 * 4);
    docs.push(("handmade-seferEkle.xml".into(), qualify(&body_child(&envelope(&handmade_sefer_ekle())), NAMESPACE)));
    xmllint("uetdsarizi.xsd", &docs);
}

#[test]
fn esya_messages_match_the_xsd() {
    let schema = Schema::load("uetdsesya-v3.xsd");
    let docs = docs!(
        schema,
        esya::YeniSeferEkleV3,
        esya::SefereYukEkleV3,
        esya::SeferIptalEtV3,
        esya::SeferAktifEtV3,
        esya::YukAktifEtV3,
        esya::YukIptalEtV3,
        esya::SeferDetayiV3,
        esya::SeferListesiV3,
        esya::SeferRaporuV3,
        esya::SeferIptalTurleri,
        esya::IptalTurleri,
        esya::ParamTasimaTurleri,
        esya::ParamTehlikeliMaddeTasimaSekli,
        esya::ParamTehlikeMaddeMuafiyetTurleri,
        esya::ParamYukTuru,
        esya::ParamYukBirimi,
        esya::ServisTest,
    );
    assert_eq!(docs.len(), 17 * 4);
    xmllint("uetdsesya-v3.xsd", &docs);
}

fn handmade_sefer_ekle() -> arizi::SeferEkle {
    arizi::SeferEkle {
        wsuser: WsUser::new("999999", "999999test&<test>"),
        arizi_sefer_bilgileri_input: arizi::AriziSeferBilgileriInput {
            arac_plaka: "34ABC111".into(),
            sefer_aciklama: Some("İstanbul → Çeşme & <Ağva> \"özel\"".into()),
            hareket_tarihi: "2024-07-30T00:00:00".into(),
            hareket_saati: "11:00".into(),
            arac_telefonu: None,
            firma_sefer_no: "tns-42".into(),
            sefer_bitis_tarihi: "2024-07-30T00:00:00".into(),
            sefer_bitis_saati: "16:00".into(),
        },
    }
}

/// The exact bytes of a request: the SoapUI shape, escaped text, unqualified children.
#[test]
fn sefer_ekle_envelope_is_exact() {
    let expected = concat!(
        r#"<?xml version="1.0" encoding="UTF-8"?>"#,
        r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:uet="http://uetds.unetws.udhb.gov.tr/">"#,
        r#"<soapenv:Header/><soapenv:Body><uet:seferEkle>"#,
        r#"<wsuser><kullaniciAdi>999999</kullaniciAdi><sifre>999999test&amp;&lt;test&gt;</sifre></wsuser>"#,
        r#"<ariziSeferBilgileriInput><aracPlaka>34ABC111</aracPlaka>"#,
        r#"<seferAciklama>İstanbul → Çeşme &amp; &lt;Ağva&gt; "özel"</seferAciklama>"#,
        r#"<hareketTarihi>2024-07-30T00:00:00</hareketTarihi><hareketSaati>11:00</hareketSaati>"#,
        r#"<firmaSeferNo>tns-42</firmaSeferNo><seferBitisTarihi>2024-07-30T00:00:00</seferBitisTarihi>"#,
        r#"<seferBitisSaati>16:00</seferBitisSaati></ariziSeferBilgileriInput>"#,
        r#"</uet:seferEkle></soapenv:Body></soapenv:Envelope>"#,
    );
    assert_eq!(envelope(&handmade_sefer_ekle()), expected);
}

#[test]
fn bare_servis_test_and_dynamic_envelopes() {
    let env = envelope(&arizi::ServisTest { test_msj1: "a<b".into() });
    assert_eq!(body_child(&env), "<uet:testMsj1>a&lt;b</uet:testMsj1>");

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Body<'a> {
        wsuser: &'a WsUser,
        sefer_no: i64,
    }
    let user = WsUser::new("1", "2");
    let env = crate::wire::envelope_dynamic("urn:tarifeli", "seferEkle", &Body { wsuser: &user, sefer_no: 5 });
    assert!(env.contains(r#"xmlns:uet="urn:tarifeli""#), "{env}");
    assert_eq!(
        body_child(&env),
        "<uet:seferEkle><wsuser><kullaniciAdi>1</kullaniciAdi><sifre>2</sifre></wsuser><seferNo>5</seferNo></uet:seferEkle>"
    );
    assert!(crate::wire::soap::try_envelope("urn:x", "bad name", &Body { wsuser: &user, sefer_no: 5 }).is_err());
}

#[test]
fn debug_never_shows_the_password() {
    let user = WsUser::new("999999", "s3cret-pass");
    let op = arizi::BildirimOzeti { wsuser: user.clone(), uetds_sefer_referans_no: 1 };
    let check = arizi::KullaniciKontrol { kullanici_adi: "999999".into(), sifre: "s3cret-pass".into() };
    for text in [format!("{user:?}"), format!("{op:?}"), format!("{check:?}")] {
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("999999"), "{text}");
    }
}
