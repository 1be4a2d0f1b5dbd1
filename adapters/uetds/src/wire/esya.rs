//! The goods ("eşya") service `UdhbUetdsEsyaWsService`, its V3 operations
//! (`schema/uetdsesya-v3.wsdl`, `schema/uetdsesya-v3.xsd`): the ones the adapter uses.
//!
//! A trip is declared (`yeniSeferEkleV3`, giving a `seferId`), then its loads
//! (`sefereYukEkleV3`, one `yukId` each). Every input field of this service is text, codes
//! and MERNIS numbers included; dates are `dd/MM/yyyy`, hours `HH:mm`. The V3 result types
//! extend `uetdsGenelIslemSonuc`, so `sonucKodu` and `sonucMesaji` come first in them.

use super::{messages, op, operations, GenelIslemSonuc, GenelPdfSonuc, WsUser};

// ---- requests ----

messages! {
    /// `yeniSeferEkleV3`: declares a trip.
    YeniSeferEkleV3 { wsuser: WsUser, sefer_bilgileri_input: EsyaSeferBilgileriInputV3 }
    /// `uetdsEsyaSeferBilgileriInputV3`.
    EsyaSeferBilgileriInputV3: Default {
        plaka1: String,
        plaka2: Option<String>,
        #[serde(rename = "sofor1TCNo")]
        sofor1_tc_no: String,
        #[serde(rename = "sofor2TCNo")]
        sofor2_tc_no: Option<String>,
        baslangic_tarihi: String,
        baslangic_saati: String,
        bitis_tarihi: String,
        bitis_saati: String,
        firma_sefer_no: Option<String>,
    }
    /// `sefereYukEkleV3`: adds loads (at least one) to a trip; each gets its own outcome.
    SefereYukEkleV3 { wsuser: WsUser, sefer_id: i64, yuk_bilgileri_input_list: Vec<EsyaYukBilgileriInputV3> }
    /// `uetdsEsyaYukBilgileriInputV3`.
    EsyaYukBilgileriInputV3: Default {
        /// `1` dangerous goods, `2` other.
        tasima_turu_kodu: String,
        yukleme_ulke_kodu: String,
        yukleme_il_mernis_kodu: Option<String>,
        yukleme_ilce_mernis_kodu: Option<String>,
        bosaltma_ulke_kodu: String,
        bosaltma_il_mernis_kodu: Option<String>,
        bosaltma_ilce_mernis_kodu: Option<String>,
        yukleme_tarihi: String,
        yukleme_saati: String,
        bosaltma_tarihi: String,
        bosaltma_saati: String,
        yuk_cins_id: Option<String>,
        yuk_cins_diger_aciklama: Option<String>,
        tehlikeli_madde_tasima_sekli: Option<String>,
        muafiyet_turu: Option<String>,
        un_id: Option<String>,
        /// A decimal with `.`.
        yuk_miktari: String,
        yuk_miktari_birimi: String,
        gonderen_unvan: String,
        gonderen_vergi_no: Option<String>,
        alici_unvan: Option<String>,
        alici_vergi_no: Option<String>,
        firma_yuk_no: Option<String>,
    }
    /// `seferIptalEtV3`: cancels a trip, with a code from `seferIptalTurleri`.
    SeferIptalEtV3 { wsuser: WsUser, sefer_id: i64, sefer_iptal_tur_kodu: String, sefer_iptal_aciklama: String }
    /// `seferDuzenleV3`: edits a delivered trip in place (the same fields it was declared with).
    SeferDuzenleV3 { wsuser: WsUser, sefer_id: i64, sefer_bilgileri_input: EsyaSeferBilgileriInputV3 }
    /// `yukDuzenleV3`: edits a delivered load in place.
    YukDuzenleV3 { wsuser: WsUser, yuk_id: i64, yuk_bilgileri_input: EsyaYukBilgileriInputV3 }
    /// `seferAktifEtV3`: re-activates a cancelled trip.
    SeferAktifEtV3 { wsuser: WsUser, sefer_id: i64 }
    /// `yukIptalEtV3`: withdraws one load of a trip, with a code from `iptalTurleri`.
    YukIptalEtV3 { wsuser: WsUser, yuk_id: i64, yuk_iptal_tur_kodu: String, yuk_iptal_aciklama: String }
    /// `yukAktifEtV3`: re-activates a cancelled load.
    YukAktifEtV3 { wsuser: WsUser, yuk_id: i64 }
    /// `seferDetayiV3`: a trip and its loads.
    SeferDetayiV3 { wsuser: WsUser, sefer_id: i64 }
    /// `seferListesiV3`: the trips of a plate from a date on (both required).
    SeferListesiV3 { wsuser: WsUser, sefer_baslangic_tarihi: String, plaka: String }
    /// `seferRaporuV3`: the trip's report as a PDF.
    SeferRaporuV3 { wsuser: WsUser, sefer_id: i64 }
    /// `seferIptalTurleri`: the codes `seferIptalEtV3` accepts.
    SeferIptalTurleri { wsuser: WsUser }
    /// `iptalTurleri`: the codes `yukIptalEtV3` accepts.
    IptalTurleri { wsuser: WsUser }
    /// `paramTasimaTurleri`: the transport types (dangerous goods or other).
    ParamTasimaTurleri { wsuser: WsUser }
    /// `paramTehlikeliMaddeTasimaSekli`: how dangerous goods are carried.
    ParamTehlikeliMaddeTasimaSekli { wsuser: WsUser }
    /// `paramTehlikeMaddeMuafiyetTurleri`: the dangerous-goods exemptions.
    ParamTehlikeMaddeMuafiyetTurleri { wsuser: WsUser }
    /// `paramYukTuru`: the goods types of one transport type.
    ParamYukTuru { wsuser: WsUser, tasima_turu_kodu: String }
    /// `paramYukBirimi`: the quantity units of one transport type.
    ParamYukBirimi { wsuser: WsUser, tasima_turu_kodu: String }
    /// `servisTest`: an echo (wrapped in this service, unlike the arızi one).
    ServisTest { test_msj: String }
}

// ---- returns ----

messages! {
    /// `uetdsEsyaSeferEkleSonucV3`.
    EsyaSeferEkleSonucV3: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        sefer_id: Option<i64>,
        firma_sefer_no: Option<String>,
    }
    /// `uetdsEsyaYeniYukEkleSonucV3`.
    EsyaYeniYukEkleSonucV3: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        uetds_esya_sonuc: Vec<EsyaSonucV3>,
    }
    /// `uetdsEsyaSonucV3`: one load of a `sefereYukEkleV3`, by position (`sira`).
    EsyaSonucV3: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        sira: i32,
        firma_yuk_no: Option<String>,
        yuk_id: Option<i64>,
    }
    /// `uetdsEsyaSeferDetayiSonucV3`.
    EsyaSeferDetayiSonucV3: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        sefer_detayi: Option<EsyaSeferDetayi>,
        yuk_listesi: Vec<EsyaSeferYukListesi>,
    }
    /// `wsUetdsEsyaSeferDetayi`.
    EsyaSeferDetayi: Default {
        baslangic_saati: Option<String>,
        baslangic_tarihi: Option<String>,
        bildirim_tarihi: Option<String>,
        bitis_saati: Option<String>,
        bitis_tarihi: Option<String>,
        durum: Option<String>,
        firma_sefer_no: Option<String>,
        iptal_aciklama: Option<String>,
        iptal_tarihi: Option<String>,
        iptal_tur_aciklama: Option<String>,
        iptal_tur_kodu: Option<String>,
        plaka1: Option<String>,
        plaka2: Option<String>,
        sefer_id: Option<i64>,
        #[serde(rename = "sofor1TCNo")]
        sofor1_tc_no: Option<String>,
        #[serde(rename = "sofor2TCNo")]
        sofor2_tc_no: Option<String>,
        son_guncelleme_tarihi: Option<String>,
    }
    /// `wsUetdsEsyaSeferYukListesi`.
    EsyaSeferYukListesi: Default { durum: Option<String>, firma_yuk_no: Option<String>, yuk_id: Option<i64> }
    /// `uetdsEsyaSeferListesiSonucV3`.
    EsyaSeferListesiSonucV3: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        sefer_listesi: Vec<EsyaSeferListesi>,
    }
    /// `wsUetdsEsyaSeferListesi`.
    EsyaSeferListesi: Default { durum: Option<String>, firma_sefer_no: Option<String>, sefer_id: Option<i64> }
    /// `uetdsEsyaParamIptalTuruSonuc` (the list comes first).
    EsyaParamIptalTuruSonuc: Default {
        iptal_turu_listesi: Vec<Parametre>,
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
    }
    /// A code and its wording: `paramIptalTurListesi`, `paramYukBirimiListesi`, `uetdsParametre`,
    /// `cstParamEsyaTehlikeliMaddeTasimaSekli` and `paramTasimaTuruListesi` all have this shape.
    Parametre: Default { aciklama: Option<String>, kodu: Option<String> }
    /// `uetdsEsyaParamYukBirimiSonuc`.
    EsyaParamYukBirimiSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        param_yuk_birimi_listesi: Vec<Parametre>,
    }
    /// `uetdsEsyaParamMuafiyetTuruSonuc`.
    EsyaParamMuafiyetTuruSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        muafiyet_turu_listesi: Vec<Parametre>,
    }
    /// `uetdsEsyaParamTehlikeliMaddeTasimaSekliSonuc`.
    EsyaParamTehlikeliMaddeTasimaSekliSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        tehlikeli_madde_tasima_sekli_listesi: Vec<Parametre>,
    }
    /// `uetdsEsyaParamTasimaTuruSonuc`.
    EsyaParamTasimaTuruSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        tasima_turu_listesi: Vec<Parametre>,
    }
    /// `uetdsEsyaParamEsyaTurSonuc`: the goods types, numbered.
    EsyaParamEsyaTurSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        yuk_tur_listesi: Vec<ParamEsyaTurListesi>,
    }
    /// `paramEsyaTurListesi`.
    ParamEsyaTurListesi: Default { adi: Option<String>, id: Option<i64> }
}

// ---- operations (soapAction from the WSDL binding) ----

operations! {
    "http://uetds.unetws.udhb.gov.tr/uetdsesya/" {
        YeniSeferEkleV3 "yeniSeferEkleV3" -> EsyaSeferEkleSonucV3,
        SefereYukEkleV3 "sefereYukEkleV3" -> EsyaYeniYukEkleSonucV3,
        SeferIptalEtV3 "seferIptalEtV3" -> GenelIslemSonuc,
        SeferDuzenleV3 "seferDuzenleV3" -> GenelIslemSonuc,
        YukDuzenleV3 "yukDuzenleV3" -> GenelIslemSonuc,
        SeferAktifEtV3 "seferAktifEtV3" -> GenelIslemSonuc,
        YukIptalEtV3 "yukIptalEtV3" -> GenelIslemSonuc,
        YukAktifEtV3 "yukAktifEtV3" -> GenelIslemSonuc,
        SeferDetayiV3 "seferDetayiV3" -> EsyaSeferDetayiSonucV3,
        SeferListesiV3 "seferListesiV3" -> EsyaSeferListesiSonucV3,
        SeferRaporuV3 "seferRaporuV3" -> GenelPdfSonuc,
        SeferIptalTurleri "seferIptalTurleri" -> EsyaParamIptalTuruSonuc,
        IptalTurleri "iptalTurleri" -> EsyaParamIptalTuruSonuc,
        ParamTasimaTurleri "paramTasimaTurleri" -> EsyaParamTasimaTuruSonuc,
        ParamTehlikeliMaddeTasimaSekli "paramTehlikeliMaddeTasimaSekli" -> EsyaParamTehlikeliMaddeTasimaSekliSonuc,
        ParamTehlikeMaddeMuafiyetTurleri "paramTehlikeMaddeMuafiyetTurleri" -> EsyaParamMuafiyetTuruSonuc,
        ParamYukTuru "paramYukTuru" -> EsyaParamEsyaTurSonuc,
        ParamYukBirimi "paramYukBirimi" -> EsyaParamYukBirimiSonuc,
    }
}

// The WSDL binding gives this one an empty soapAction.
op!(ServisTest, "servisTest", "", String);
