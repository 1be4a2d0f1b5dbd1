//! The non-scheduled ("tarifesiz", arızi) passenger service `UdhbUetdsAriziService`
//! (`schema/uetdsarizi.wsdl`, `schema/uetdsarizi.xsd`): the operations the adapter uses.
//!
//! A trip is declared (`seferEkle`), then its groups (`seferGrupEkle`: passengers need a
//! group's id), its personnel and its passengers; `bildirimOzeti` reads back what the
//! Ministry holds. Dates of the trip are `xs:dateTime` text; hours are `HH:mm` text.

use serde::{Deserialize, Serialize};

use super::{op, GenelIslemSonuc, GenelPdfSonuc, Operation, Reply, WsUser};

// ---- requests ----

/// `kullaniciKontrol`: checks the credentials and names the firm. The only operation whose
/// credentials are bare elements instead of a `wsuser`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KullaniciKontrol {
    pub kullanici_adi: String,
    pub sifre: String,
}

impl std::fmt::Debug for KullaniciKontrol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KullaniciKontrol").field("kullanici_adi", &self.kullanici_adi).field("sifre", &"***").finish()
    }
}

/// `seferEkle`: declares a trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferEkle {
    pub wsuser: WsUser,
    pub arizi_sefer_bilgileri_input: AriziSeferBilgileriInput,
}

/// `uetdsAriziSeferBilgileriInput`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferBilgileriInput {
    pub arac_plaka: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_aciklama: Option<String>,
    /// `xs:dateTime`.
    pub hareket_tarihi: String,
    /// `HH:mm`.
    pub hareket_saati: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arac_telefonu: Option<String>,
    /// Required by the XSD.
    pub firma_sefer_no: String,
    /// `xs:dateTime`.
    pub sefer_bitis_tarihi: String,
    /// `HH:mm`.
    pub sefer_bitis_saati: String,
}

/// `seferGuncelle`: replaces a trip's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferGuncelle {
    pub wsuser: WsUser,
    pub guncellenecek_sefer_referans_no: i64,
    pub arizi_sefer_bilgileri_input: AriziSeferBilgileriInput,
}

/// `seferPlakaDegistir`: moves a trip to another vehicle (a swap on the road).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferPlakaDegistir {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub tasit_plaka_no: String,
}

/// `yolcuGelmeyenBildir`: a passenger of the trip did not come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuGelmeyenBildir {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub gelmeyen_yolcu: AriziYolcuGelmeyenInput,
}

/// `uetdsAriziYolcuGelmeyenInput`: the passenger by seat and identity (or passport) number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziYolcuGelmeyenInput {
    pub koltuk_no: String,
    #[serde(rename = "yolcuTCKimlikPasaportNo")]
    pub yolcu_tc_kimlik_pasaport_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aciklama: Option<String>,
}

/// `yolcuBagajEkle`: passengers' baggage barcodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuBagajEkle {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub bagaj_bilgileri: Vec<SeferBagajBilgileriInput>,
}

/// `yolcuBagajIptal`: withdraws barcodes of one passenger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuBagajIptal {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub bagaj_bilgileri: SeferBagajBilgileriInput,
}

/// `uetdsSeferBagajBilgileriInput`: a passenger by identity (or passport) number and seat, and
/// the barcodes of their baggage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferBagajBilgileriInput {
    #[serde(rename = "yolcuTCKimlikPasaportNo")]
    pub yolcu_tc_kimlik_pasaport_no: String,
    pub koltuk_no: String,
    pub bagaj_barkod_numaralari: Vec<String>,
}

/// `aracMuayeneSorgula`: a vehicle's periodic inspection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AracMuayeneSorgula {
    pub wsuser: WsUser,
    pub plaka: String,
}

/// `yetkiBelgesiKontrol`: the authorisation certificate a plate is registered under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YetkiBelgesiKontrol {
    pub wsuser: WsUser,
    pub plaka: String,
}

/// `meslekiYeterlilikSorgula`: a driver's professional qualification certificates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeslekiYeterlilikSorgula {
    pub wsuser: WsUser,
    pub kimlik_no: String,
}

/// `kimlikDogrulama`: a T.C. identity number against a name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KimlikDogrulama {
    pub wsuser: WsUser,
    pub kimlik_bilgileri_input: KimlikBilgileriInput,
}

/// `uetdsKimlikBilgileriInput`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KimlikBilgileriInput {
    pub kimlik_no: String,
    pub adi: String,
    pub soyadi: String,
}

/// `seyahatIzinKontrol`: a passenger's travel permit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeyahatIzinKontrol {
    pub wsuser: WsUser,
    pub tc_kimlik_no: String,
}

/// `ipTanimla`: registers an address (or a range) the firm calls from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpTanimla {
    pub wsuser: WsUser,
    pub ip_baslangic: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_bitis: Option<String>,
}

/// `ipListele`: the firm's registered addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpListele {
    pub wsuser: WsUser,
}

/// `ipSil`: removes a registered address (the last one cannot be removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSil {
    pub wsuser: WsUser,
    pub ip_id: i64,
}

/// `uetdsEsyaIPListeleSonuc`: what `ipListele` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct IpListeleSonuc {
    pub sonuc_kodu: i32,
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub ip_listesi: Vec<IpListesi>,
}

/// `wsUetdsEsyaIPListesi`: one registered address or range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct IpListesi {
    pub id: Option<String>,
    pub ip_baslangic: Option<String>,
    pub ip_bitis: Option<String>,
}

/// `seferAktif`: re-activates a cancelled trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferAktif {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub aktif_aciklama: String,
}

/// `seferIptal`: cancels a trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferIptal {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub iptal_aciklama: String,
}

/// `seferBildirimListele`: the trips declared in a date range (at most a month), optionally
/// of one plate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferBildirimListele {
    pub wsuser: WsUser,
    pub sefer_listele_input: YtsAriziSeferListeleInput,
}

/// `uetdsYtsAriziSeferListeleInput`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YtsAriziSeferListeleInput {
    pub sefer_tarih1: String,
    pub sefer_tarih2: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaka: Option<String>,
}

/// `seferGrupEkle`: adds a group (route leg) to a trip; its `uetdsGrupRefNo` is the `grupId`
/// of the group's passengers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferGrupEkle {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub sefer_grup_bilgileri_input: AriziGrupBilgileriInput,
}

/// `seferGrupGuncelle`: changes a group's places (a route change of the trip).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferGrupGuncelle {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub grup_id: i64,
    pub sefer_grup_bilgileri_input: AriziGrupBilgileriInput,
}

/// `uetdsAriziGrupBilgileriInput`. `…Il` are MERNIS province codes, `…Ilce` MERNIS district
/// (or airport) codes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziGrupBilgileriInput {
    pub grup_aciklama: String,
    pub baslangic_ulke: String,
    pub baslangic_il: i64,
    pub baslangic_ilce: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_yer: Option<String>,
    pub bitis_ulke: String,
    pub bitis_il: i64,
    pub bitis_ilce: i64,
    /// Required by the XSD, unlike `baslangic_yer`.
    pub bitis_yer: String,
    pub grup_adi: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_ucret: Option<String>,
}

/// `seferGrupListesi`: a trip's groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferGrupListesi {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
}

/// `personelEkle`: adds crew to a trip (at least one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonelEkle {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    #[serde(default)]
    pub sefer_personel_bilgileri_input: Vec<AriziSeferPersonelBilgileriInput>,
}

/// `uetdsAriziSeferPersonelBilgileriInput`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferPersonelBilgileriInput {
    /// 0 driver, 1 assistant driver, 2 host, 3 hostess, 4 other, 5 guide.
    pub tur_kodu: i32,
    pub uyruk_ulke: String,
    pub tc_kimlik_pasaport_no: String,
    /// `E` or `K`; required here, optional for passengers.
    pub cinsiyet: String,
    pub adi: String,
    pub soyadi: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telefon: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hes_kodu: Option<String>,
}

/// `personelIptal`: removes a crew member from a trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonelIptal {
    pub wsuser: WsUser,
    pub iptal_personel_input: PersonelIptalInput,
}

/// `uetdsPersonelIptalInput` (the trip's reference comes last, inside it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonelIptalInput {
    #[serde(rename = "personelTCKimlikPasaportNo")]
    pub personel_tc_kimlik_pasaport_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_aciklama: Option<String>,
    pub uetds_sefer_referans_no: i64,
}

/// `yolcuEkleCoklu`: adds passengers in one call; each gets its own outcome (`sira`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuEkleCoklu {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    #[serde(default)]
    pub yolcu_bilgileri: Vec<AriziSeferYolcuBilgileriInput>,
}

/// `uetdsAriziSeferYolcuBilgileriInput`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferYolcuBilgileriInput {
    pub uyruk_ulke: String,
    pub tc_kimlik_pasaport_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cinsiyet: Option<String>,
    pub adi: String,
    pub soyadi: String,
    /// Required by the XSD.
    pub koltuk_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telefon_no: Option<String>,
    /// The group's `uetdsGrupRefNo`.
    pub grup_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hes_kodu: Option<String>,
}

/// `yolcuIptalUetdsYolcuRefNoIle`: cancels one passenger by its reference (`uetdsBiletRefNo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuIptalUetdsYolcuRefNoIle {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
    pub uetds_yolcu_referans_no: i64,
    pub iptal_aciklama: String,
}

/// `bildirimOzeti`: everything the Ministry holds about a trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BildirimOzeti {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
}

/// `seferDetayCiktisiAl`: the trip's report as a PDF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeferDetayCiktisiAl {
    pub wsuser: WsUser,
    pub uetds_sefer_referans_no: i64,
}

/// `servisTest`: an echo. Document/literal *bare* in this service: the Body holds
/// `<testMsj1>` itself and the reply `<servisTestResponse>` is the echoed text, no `<return>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ServisTest {
    pub test_msj1: String,
}

// ---- returns ----

/// `uetdsFirmaSonuc` (alphabetical, as JAXB wrote it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmaSonuc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_gecerlilik_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_turu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_unvan: Option<String>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unet_no: Option<i64>,
}

/// `uetdsMuayeneSorguSonuc`: until when the inspection is valid.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MuayeneSorguSonuc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub muayene_gecerlilik_tarihi: Option<String>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// `uetdsMesSorguSonuc`: the driver's certificates (`belgeListesi`, names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MesSorguSonuc {
    #[serde(default)]
    pub belge_listesi: Vec<Option<String>>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// `uetdsKimlikDogrulaSonuc`: whether the number and the name agree (`isUygun`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KimlikDogrulaSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    pub is_uygun: bool,
}

/// `uetdsSeyahatIzinKontrolSonuc` (its `kayitlar` are not read: the code says it all).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeyahatIzinKontrolSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// `uetdsAriziSeferBildirSonuc`: a declared trip's reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferBildirSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uetds_sefer_referans_no: Option<i64>,
}

/// `uetdsTarifeliSeferBildirSonuc`, what `seferGuncelle` returns: the same shape.
pub type TarifeliSeferBildirSonuc = AriziSeferBildirSonuc;

/// `uetdsAriziSeferAraSonuc` (the list comes first).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferAraSonuc {
    #[serde(default)]
    pub sefer_listesi: Vec<AriziSeferListesi>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// `cstUetdsAriziSeferListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bildirim_zamani: Option<String>,
    /// `Geçerli` or `İptal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_durum: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_plaka: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uetds_sefer_referans_no: Option<i64>,
}

/// `uetdsAriziGrupIslemSonuc`: `seferGrupEkle` and `seferGrupListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziGrupIslemSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    /// A number, as text; sent back as `grupId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uetds_grup_ref_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bilgisi: Option<AriziSeferBilgileri>,
    #[serde(default)]
    pub grup_liste: Vec<AriziGrupListe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_detay: Option<AriziGrupDetay>,
}

/// `uetdsAriziSeferBilgileri`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferBilgileri {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arac_tel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bak_sefer_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_turu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum: Option<String>,
    pub durum_kodu: i32,
    pub durum_kodu_null: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaka: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub son_yolcu_bildirim_tarihi: Option<String>,
    /// `xs:decimal`, as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unet_no: Option<String>,
}

/// `cstUetdsAriziGrupListe`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziGrupListe {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_il_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_il_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_ilce_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_ilce_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_ulke_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_ulke_kodu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baslangic_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_il_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_il_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_ilce_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_ilce_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_ulke_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_ulke_kodu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bitis_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ucret: Option<String>,
}

/// `cstUetdsAriziGrupDetay`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziGrupDetay {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum_aciklama: Option<String>,
    pub durum_kodu: i32,
    pub durum_kodu_null: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_yeri: Option<String>,
}

/// `uetdsYtsYolcuCokluSonuc`: `sonucKodu` 88 means some passengers were refused; each
/// item's own code says which.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YtsYolcuCokluSonuc {
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(default)]
    pub uetds_yolcu_sonuc: Vec<YolcuSonuc>,
}

/// `uetdsYolcuSonuc`: one passenger of a `yolcuEkleCoklu`, by position (`sira`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct YolcuSonuc {
    pub sira: i32,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uetds_bilet_ref_no: Option<i64>,
}

/// `uetdsAriziSeferBildirimOzetSonuc` (`sonucKodu` comes last).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferBildirimOzetSonuc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_unvan: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firma_sefer_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_saati: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_durum_kodu: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_durum_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub son_yolcu_bildirim_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belge_turu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bildirilen_yolcu_sayisi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_yolcu_sayisi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gelmeyen_yolcu_sayisi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personel_kayit_sayisi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_personel_kayit_sayisi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bagaj_adedi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iptal_bagaj_adedi: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arac_plaka: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arac_telefonu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bas_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_yeri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_tarihi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_bit_saati: Option<String>,
    #[serde(default)]
    pub grup_listesi: Vec<AriziGrupListe>,
    #[serde(default)]
    pub arizi_personel_listesi: Vec<AriziSeferPersonelListesi>,
    #[serde(default)]
    pub arizi_yolcu_listesi: Vec<AriziSeferYolcuListesi>,
    pub sonuc_kodu: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sonuc_mesaji: Option<String>,
}

/// `uetdsAriziSeferPersonelListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferPersonelListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adres: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cinsiyet: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hes_kod: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personel_turu: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sefer_personel_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soyadi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tckimlikno: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telefon: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ulke: Option<String>,
}

/// `uetdsAriziSeferYolcuListesi`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AriziSeferYolcuListesi {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binis_yeri_aciklama: Option<String>,
    /// `Erkek` or `Kadın` here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cinsiyet: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durum_kodu: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grup_adi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hes_kod: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inis_yeri_aciklama: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub koltuk_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soyadi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tckimlikno: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telefon_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uetds_bilet_ref_no: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ulke_kodu: Option<String>,
}

// ---- operations (soapAction from the WSDL binding) ----

op!(KullaniciKontrol, "kullaniciKontrol", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/kullaniciKontrol", FirmaSonuc);
op!(SeferEkle, "seferEkle", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferEkle", AriziSeferBildirSonuc);
op!(
    SeferGuncelle,
    "seferGuncelle",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferGuncelle",
    TarifeliSeferBildirSonuc
);
op!(SeferIptal, "seferIptal", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferIptal", GenelIslemSonuc);
op!(
    YolcuGelmeyenBildir,
    "yolcuGelmeyenBildir",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yolcuGelmeyenBildir",
    GenelIslemSonuc
);
op!(YolcuBagajEkle, "yolcuBagajEkle", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yolcuBagajEkle", GenelIslemSonuc);
op!(
    YolcuBagajIptal,
    "yolcuBagajIptal",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yolcuBagajIptal",
    GenelIslemSonuc
);
op!(
    AracMuayeneSorgula,
    "aracMuayeneSorgula",
    "http://uetds.unetws.udhb.gov.tr/uetdsyts/aracMuayeneSorgula",
    MuayeneSorguSonuc
);
op!(
    YetkiBelgesiKontrol,
    "yetkiBelgesiKontrol",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yetkiBelgesiKontrol",
    FirmaSonuc
);
op!(
    MeslekiYeterlilikSorgula,
    "meslekiYeterlilikSorgula",
    "http://uetds.unetws.udhb.gov.tr/uetdsyts/meslekiYeterlilikSorgula",
    MesSorguSonuc
);
op!(
    KimlikDogrulama,
    "kimlikDogrulama",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/kimlikDogrulama",
    KimlikDogrulaSonuc
);
op!(
    SeyahatIzinKontrol,
    "seyahatIzinKontrol",
    "http://uetds.unetws.udhb.gov.tr/uetdsyts/seyahatIzinKontrol",
    SeyahatIzinKontrolSonuc
);
op!(IpTanimla, "ipTanimla", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/ipTanimla", GenelIslemSonuc);
op!(IpListele, "ipListele", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/ipListele", IpListeleSonuc);
op!(IpSil, "ipSil", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/ipSil", GenelIslemSonuc);
op!(SeferAktif, "seferAktif", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferAktif", GenelIslemSonuc);
op!(
    SeferPlakaDegistir,
    "seferPlakaDegistir",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferPlakaDegistir",
    GenelIslemSonuc
);
op!(
    SeferBildirimListele,
    "seferBildirimListele",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferBildirimListele",
    AriziSeferAraSonuc
);
op!(SeferGrupEkle, "seferGrupEkle", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferGrupEkle", AriziGrupIslemSonuc);
op!(
    SeferGrupGuncelle,
    "seferGrupGuncelle",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferGrupGuncelle",
    AriziGrupIslemSonuc
);
op!(
    SeferGrupListesi,
    "seferGrupListesi",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/seferGrupListesi",
    AriziGrupIslemSonuc
);
op!(PersonelEkle, "personelEkle", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/personelEkle", GenelIslemSonuc);
op!(PersonelIptal, "personelIptal", "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/personelIptal", GenelIslemSonuc);
op!(
    YolcuEkleCoklu,
    "yolcuEkleCoklu",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yolcuEkleCoklu",
    YtsYolcuCokluSonuc
);
op!(
    YolcuIptalUetdsYolcuRefNoIle,
    "yolcuIptalUetdsYolcuRefNoIle",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/yolcuIptalUetdsYolcuRefNoIle",
    GenelIslemSonuc
);
op!(
    BildirimOzeti,
    "bildirimOzeti",
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/bildirimOzeti",
    AriziSeferBildirimOzetSonuc
);
// The WSDL binding gives this one an empty soapAction.
op!(SeferDetayCiktisiAl, "seferDetayCiktisiAl", "", GenelPdfSonuc);

impl Operation for ServisTest {
    const NAME: &'static str = "testMsj1";
    const ACTION: &'static str = "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/servisTest";
    type Return = String;
    const REPLY: Reply = Reply::Bare("servisTestResponse");
}
