//! The goods ("eşya") service `UdhbUetdsEsyaWsService`, its V3 operations
//! (`schema/uetdsesya-v3.wsdl`, `schema/uetdsesya-v3.xsd`): the ones the adapter uses.
//!
//! A trip is declared (`yeniSeferEkleV3`, giving a `seferId`), then its loads
//! (`sefereYukEkleV3`, one `yukId` each). Every input field of this service is text, codes
//! and MERNIS numbers included; dates are `dd/MM/yyyy`, hours `HH:mm`. The V3 result types
//! extend `uetdsGenelIslemSonuc`, so `sonucKodu` and `sonucMesaji` come first in them.

use serde::{Deserialize, Serialize};

use super::{op, GenelIslemSonuc, GenelPdfSonuc, WsUser};

// ---- requests ----

/// `yeniSeferEkleV3`: declares a trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YeniSeferEkleV3 {
    pub wsuser: WsUser,
    pub sefer_bilgileri_input: EsyaSeferBilgileriInputV3,
}

/// `uetdsEsyaSeferBilgileriInputV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferBilgileriInputV3 {
    pub plaka1: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaka2: Option<String>,
    #[serde(rename = "sofor1TCNo")]
    pub sofor1_tc_no: String,
    #[serde(rename = "sofor2TCNo", skip_serializing_if = "Option::is_none")]
    pub sofor2_tc_no: Option<String>,
    pub baslangic_tarihi: String,
    pub baslangic_saati: String,
    pub bitis_tarihi: String,
    pub bitis_saati: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
}

/// `sefereYukEkleV3`: adds loads (at least one) to a trip; each gets its own outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SefereYukEkleV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
    #[serde(default)]
    pub yuk_bilgileri_input_list: Vec<EsyaYukBilgileriInputV3>,
}

/// `uetdsEsyaYukBilgileriInputV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaYukBilgileriInputV3 {
    /// `1` dangerous goods, `2` other.
    pub tasima_turu_kodu: String,
    pub yukleme_ulke_kodu: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yukleme_il_mernis_kodu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yukleme_ilce_mernis_kodu: Option<String>,
    pub bosaltma_ulke_kodu: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bosaltma_il_mernis_kodu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bosaltma_ilce_mernis_kodu: Option<String>,
    pub yukleme_tarihi: String,
    pub yukleme_saati: String,
    pub bosaltma_tarihi: String,
    pub bosaltma_saati: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yuk_cins_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yuk_cins_diger_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tehlikeli_madde_tasima_sekli: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub muafiyet_turu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub un_id: Option<String>,
    /// A decimal with `.`.
    pub yuk_miktari: String,
    pub yuk_miktari_birimi: String,
    pub gonderen_unvan: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gonderen_vergi_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alici_unvan: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alici_vergi_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_yuk_no: Option<String>,
}

/// `seferIptalEtV3`: cancels a trip, with a code from `seferIptalTurleri`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferIptalEtV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
    pub sefer_iptal_tur_kodu: String,
    pub sefer_iptal_aciklama: String,
}

/// `seferDuzenleV3`: edits a delivered trip in place (the same fields it was declared with).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferDuzenleV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
    pub sefer_bilgileri_input: EsyaSeferBilgileriInputV3,
}

/// `yukDuzenleV3`: edits a delivered load in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YukDuzenleV3 {
    pub wsuser: WsUser,
    pub yuk_id: i64,
    pub yuk_bilgileri_input: EsyaYukBilgileriInputV3,
}

/// `seferAktifEtV3`: re-activates a cancelled trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferAktifEtV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
}

/// `yukIptalEtV3`: withdraws one load of a trip, with a code from `iptalTurleri`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YukIptalEtV3 {
    pub wsuser: WsUser,
    pub yuk_id: i64,
    pub yuk_iptal_tur_kodu: String,
    pub yuk_iptal_aciklama: String,
}

/// `yukAktifEtV3`: re-activates a cancelled load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YukAktifEtV3 {
    pub wsuser: WsUser,
    pub yuk_id: i64,
}

/// `seferDetayiV3`: a trip and its loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferDetayiV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
}

/// `seferListesiV3`: the trips of a plate from a date on (both required).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferListesiV3 {
    pub wsuser: WsUser,
    pub sefer_baslangic_tarihi: String,
    pub plaka: String,
}

/// `seferRaporuV3`: the trip's report as a PDF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferRaporuV3 {
    pub wsuser: WsUser,
    pub sefer_id: i64,
}

/// `seferIptalTurleri`: the codes `seferIptalEtV3` accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferIptalTurleri {
    pub wsuser: WsUser,
}

/// `iptalTurleri`: the codes `yukIptalEtV3` accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IptalTurleri {
    pub wsuser: WsUser,
}

/// `paramTasimaTurleri`: the transport types (dangerous goods or other).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamTasimaTurleri {
    pub wsuser: WsUser,
}

/// `paramTehlikeliMaddeTasimaSekli`: how dangerous goods are carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamTehlikeliMaddeTasimaSekli {
    pub wsuser: WsUser,
}

/// `paramTehlikeMaddeMuafiyetTurleri`: the dangerous-goods exemptions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamTehlikeMaddeMuafiyetTurleri {
    pub wsuser: WsUser,
}

/// `paramYukTuru`: the goods types of one transport type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamYukTuru {
    pub wsuser: WsUser,
    pub tasima_turu_kodu: String,
}

/// `paramYukBirimi`: the quantity units of one transport type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamYukBirimi {
    pub wsuser: WsUser,
    pub tasima_turu_kodu: String,
}

/// `servisTest`: an echo (wrapped in this service, unlike the arızi one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServisTest {
    pub test_msj: String,
}

// ---- returns ----

/// `uetdsEsyaSeferEkleSonucV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferEkleSonucV3 {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
}

/// `uetdsEsyaYeniYukEkleSonucV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaYeniYukEkleSonucV3 {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub uetds_esya_sonuc: Vec<EsyaSonucV3>,
}

/// `uetdsEsyaSonucV3`: one load of a `sefereYukEkleV3`, by position (`sira`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSonucV3 {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    pub sira: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_yuk_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yuk_id: Option<i64>,
}

/// `uetdsEsyaSeferDetayiSonucV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferDetayiSonucV3 {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_detayi: Option<EsyaSeferDetayi>,
    #[serde(default)]
    pub yuk_listesi: Vec<EsyaSeferYukListesi>,
}

/// `wsUetdsEsyaSeferDetayi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferDetayi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bildirim_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_tur_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_tur_kodu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaka1: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaka2: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_id: Option<i64>,
    #[serde(rename = "sofor1TCNo", skip_serializing_if = "Option::is_none")]
    pub sofor1_tc_no: Option<String>,
    #[serde(rename = "sofor2TCNo", skip_serializing_if = "Option::is_none")]
    pub sofor2_tc_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub son_guncelleme_tarihi: Option<String>,
}

/// `wsUetdsEsyaSeferYukListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferYukListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_yuk_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yuk_id: Option<i64>,
}

/// `uetdsEsyaSeferListesiSonucV3`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferListesiSonucV3 {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub sefer_listesi: Vec<EsyaSeferListesi>,
}

/// `wsUetdsEsyaSeferListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaSeferListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_id: Option<i64>,
}

/// `uetdsEsyaParamIptalTuruSonuc` (the list comes first).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamIptalTuruSonuc {
    #[serde(default)]
    pub iptal_turu_listesi: Vec<Parametre>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// A code and its wording: `paramIptalTurListesi`, `paramYukBirimiListesi`, `uetdsParametre`,
/// `cstParamEsyaTehlikeliMaddeTasimaSekli` and `paramTasimaTuruListesi` all have this shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parametre {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kodu: Option<String>,
}

/// `uetdsEsyaParamYukBirimiSonuc`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamYukBirimiSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub param_yuk_birimi_listesi: Vec<Parametre>,
}

/// `uetdsEsyaParamMuafiyetTuruSonuc`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamMuafiyetTuruSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub muafiyet_turu_listesi: Vec<Parametre>,
}

/// `uetdsEsyaParamTehlikeliMaddeTasimaSekliSonuc`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamTehlikeliMaddeTasimaSekliSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub tehlikeli_madde_tasima_sekli_listesi: Vec<Parametre>,
}

/// `uetdsEsyaParamTasimaTuruSonuc`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamTasimaTuruSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub tasima_turu_listesi: Vec<Parametre>,
}

/// `uetdsEsyaParamEsyaTurSonuc`: the goods types, numbered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsyaParamEsyaTurSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub yuk_tur_listesi: Vec<ParamEsyaTurListesi>,
}

/// `paramEsyaTurListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamEsyaTurListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
}

// ---- operations (soapAction from the WSDL binding) ----

op!(
    YeniSeferEkleV3,
    "yeniSeferEkleV3",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/yeniSeferEkleV3",
    EsyaSeferEkleSonucV3
);
op!(
    SefereYukEkleV3,
    "sefereYukEkleV3",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/sefereYukEkleV3",
    EsyaYeniYukEkleSonucV3
);
op!(SeferIptalEtV3, "seferIptalEtV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferIptalEtV3", GenelIslemSonuc);
op!(SeferDuzenleV3, "seferDuzenleV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferDuzenleV3", GenelIslemSonuc);
op!(YukDuzenleV3, "yukDuzenleV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/yukDuzenleV3", GenelIslemSonuc);
op!(SeferAktifEtV3, "seferAktifEtV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferAktifEtV3", GenelIslemSonuc);
op!(YukIptalEtV3, "yukIptalEtV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/yukIptalEtV3", GenelIslemSonuc);
op!(YukAktifEtV3, "yukAktifEtV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/yukAktifEtV3", GenelIslemSonuc);
op!(SeferDetayiV3, "seferDetayiV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferDetayiV3", EsyaSeferDetayiSonucV3);
op!(
    SeferListesiV3,
    "seferListesiV3",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferListesiV3",
    EsyaSeferListesiSonucV3
);
op!(SeferRaporuV3, "seferRaporuV3", "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferRaporuV3", GenelPdfSonuc);
op!(
    SeferIptalTurleri,
    "seferIptalTurleri",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/seferIptalTurleri",
    EsyaParamIptalTuruSonuc
);
op!(IptalTurleri, "iptalTurleri", "http://uetds.unetws.udhb.gov.tr/uetdsesya/iptalTurleri", EsyaParamIptalTuruSonuc);
op!(
    ParamTasimaTurleri,
    "paramTasimaTurleri",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/paramTasimaTurleri",
    EsyaParamTasimaTuruSonuc
);
op!(
    ParamTehlikeliMaddeTasimaSekli,
    "paramTehlikeliMaddeTasimaSekli",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/paramTehlikeliMaddeTasimaSekli",
    EsyaParamTehlikeliMaddeTasimaSekliSonuc
);
op!(
    ParamTehlikeMaddeMuafiyetTurleri,
    "paramTehlikeMaddeMuafiyetTurleri",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/paramTehlikeMaddeMuafiyetTurleri",
    EsyaParamMuafiyetTuruSonuc
);
op!(ParamYukTuru, "paramYukTuru", "http://uetds.unetws.udhb.gov.tr/uetdsesya/paramYukTuru", EsyaParamEsyaTurSonuc);
op!(
    ParamYukBirimi,
    "paramYukBirimi",
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/paramYukBirimi",
    EsyaParamYukBirimiSonuc
);
// The WSDL binding gives this one an empty soapAction.
op!(ServisTest, "servisTest", "", String);
