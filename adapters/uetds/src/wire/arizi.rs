//! The non-scheduled ("tarifesiz", arızi) passenger service `UdhbUetdsAriziService`
//! (`schema/uetdsarizi.wsdl`, `schema/uetdsarizi.xsd`): the operations the adapter uses.
//!
//! A trip is declared (`seferEkle`), then its groups (`seferGrupEkle`: passengers need a
//! group's id), its personnel and its passengers; `bildirimOzeti` reads back what the
//! Ministry holds. Dates of the trip are `xs:dateTime` text; hours are `HH:mm` text.

use serde::{Deserialize, Serialize};

use super::{messages, op, operations, GenelIslemSonuc, GenelPdfSonuc, Operation, Reply, WsUser};

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

messages! {
    /// `seferEkle`: declares a trip.
    SeferEkle { wsuser: WsUser, arizi_sefer_bilgileri_input: AriziSeferBilgileriInput }
    /// `uetdsAriziSeferBilgileriInput`.
    AriziSeferBilgileriInput: Default {
        arac_plaka: String,
        sefer_aciklama: Option<String>,
        /// `xs:dateTime`.
        hareket_tarihi: String,
        /// `HH:mm`.
        hareket_saati: String,
        arac_telefonu: Option<String>,
        /// Required by the XSD.
        firma_sefer_no: String,
        /// `xs:dateTime`.
        sefer_bitis_tarihi: String,
        /// `HH:mm`.
        sefer_bitis_saati: String,
    }
    /// `seferGuncelle`: replaces a trip's data.
    SeferGuncelle {
        wsuser: WsUser,
        guncellenecek_sefer_referans_no: i64,
        arizi_sefer_bilgileri_input: AriziSeferBilgileriInput,
    }
    /// `seferPlakaDegistir`: moves a trip to another vehicle (a swap on the road).
    SeferPlakaDegistir { wsuser: WsUser, uetds_sefer_referans_no: i64, tasit_plaka_no: String }
    /// `yolcuGelmeyenBildir`: a passenger of the trip did not come.
    YolcuGelmeyenBildir { wsuser: WsUser, uetds_sefer_referans_no: i64, gelmeyen_yolcu: AriziYolcuGelmeyenInput }
    /// `uetdsAriziYolcuGelmeyenInput`: the passenger by seat and identity (or passport) number.
    AriziYolcuGelmeyenInput {
        koltuk_no: String,
        #[serde(rename = "yolcuTCKimlikPasaportNo")]
        yolcu_tc_kimlik_pasaport_no: String,
        aciklama: Option<String>,
    }
    /// `yolcuBagajEkle`: passengers' baggage barcodes.
    YolcuBagajEkle { wsuser: WsUser, uetds_sefer_referans_no: i64, bagaj_bilgileri: Vec<SeferBagajBilgileriInput> }
    /// `yolcuBagajIptal`: withdraws barcodes of one passenger.
    YolcuBagajIptal { wsuser: WsUser, uetds_sefer_referans_no: i64, bagaj_bilgileri: SeferBagajBilgileriInput }
    /// `uetdsSeferBagajBilgileriInput`: a passenger by identity (or passport) number and seat, and
    /// the barcodes of their baggage.
    SeferBagajBilgileriInput {
        #[serde(rename = "yolcuTCKimlikPasaportNo")]
        yolcu_tc_kimlik_pasaport_no: String,
        koltuk_no: String,
        bagaj_barkod_numaralari: Vec<String>,
    }
    /// `aracMuayeneSorgula`: a vehicle's periodic inspection.
    AracMuayeneSorgula { wsuser: WsUser, plaka: String }
    /// `yetkiBelgesiKontrol`: the authorisation certificate a plate is registered under.
    YetkiBelgesiKontrol { wsuser: WsUser, plaka: String }
    /// `meslekiYeterlilikSorgula`: a driver's professional qualification certificates.
    MeslekiYeterlilikSorgula { wsuser: WsUser, kimlik_no: String }
    /// `kimlikDogrulama`: a T.C. identity number against a name.
    KimlikDogrulama { wsuser: WsUser, kimlik_bilgileri_input: KimlikBilgileriInput }
    /// `uetdsKimlikBilgileriInput`.
    KimlikBilgileriInput { kimlik_no: String, adi: String, soyadi: String }
    /// `seyahatIzinKontrol`: a passenger's travel permit.
    SeyahatIzinKontrol { wsuser: WsUser, tc_kimlik_no: String }
    /// `ipTanimla`: registers an address (or a range) the firm calls from.
    IpTanimla { wsuser: WsUser, ip_baslangic: String, ip_bitis: Option<String> }
    /// `ipListele`: the firm's registered addresses.
    IpListele { wsuser: WsUser }
    /// `ipSil`: removes a registered address (the last one cannot be removed).
    IpSil { wsuser: WsUser, ip_id: i64 }
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

messages! {
    /// `seferAktif`: re-activates a cancelled trip.
    SeferAktif { wsuser: WsUser, uetds_sefer_referans_no: i64, aktif_aciklama: String }
    /// `seferIptal`: cancels a trip.
    SeferIptal { wsuser: WsUser, uetds_sefer_referans_no: i64, iptal_aciklama: String }
    /// `seferBildirimListele`: the trips declared in a date range (at most a month), optionally
    /// of one plate.
    SeferBildirimListele { wsuser: WsUser, sefer_listele_input: YtsAriziSeferListeleInput }
    /// `uetdsYtsAriziSeferListeleInput`.
    YtsAriziSeferListeleInput: Default { sefer_tarih1: String, sefer_tarih2: String, plaka: Option<String> }
    /// `seferGrupEkle`: adds a group (route leg) to a trip; its `uetdsGrupRefNo` is the `grupId`
    /// of the group's passengers.
    SeferGrupEkle { wsuser: WsUser, uetds_sefer_referans_no: i64, sefer_grup_bilgileri_input: AriziGrupBilgileriInput }
    /// `seferGrupGuncelle`: changes a group's places (a route change of the trip).
    SeferGrupGuncelle {
        wsuser: WsUser,
        uetds_sefer_referans_no: i64,
        grup_id: i64,
        sefer_grup_bilgileri_input: AriziGrupBilgileriInput,
    }
    /// `uetdsAriziGrupBilgileriInput`. `…Il` are MERNIS province codes, `…Ilce` MERNIS district
    /// (or airport) codes.
    AriziGrupBilgileriInput: Default {
        grup_aciklama: String,
        baslangic_ulke: String,
        baslangic_il: i64,
        baslangic_ilce: i64,
        baslangic_yer: Option<String>,
        bitis_ulke: String,
        bitis_il: i64,
        bitis_ilce: i64,
        /// Required by the XSD, unlike `baslangic_yer`.
        bitis_yer: String,
        grup_adi: String,
        grup_ucret: Option<String>,
    }
    /// `seferGrupListesi`: a trip's groups.
    SeferGrupListesi { wsuser: WsUser, uetds_sefer_referans_no: i64 }
    /// `personelEkle`: adds crew to a trip (at least one).
    PersonelEkle {
        wsuser: WsUser,
        uetds_sefer_referans_no: i64,
        sefer_personel_bilgileri_input: Vec<AriziSeferPersonelBilgileriInput>,
    }
    /// `uetdsAriziSeferPersonelBilgileriInput`.
    AriziSeferPersonelBilgileriInput: Default {
        /// 0 driver, 1 assistant driver, 2 host, 3 hostess, 4 other, 5 guide.
        tur_kodu: i32,
        uyruk_ulke: String,
        tc_kimlik_pasaport_no: String,
        /// `E` or `K`; required here, optional for passengers.
        cinsiyet: String,
        adi: String,
        soyadi: String,
        telefon: Option<String>,
        adres: Option<String>,
        hes_kodu: Option<String>,
    }
    /// `personelIptal`: removes a crew member from a trip.
    PersonelIptal { wsuser: WsUser, iptal_personel_input: PersonelIptalInput }
    /// `uetdsPersonelIptalInput` (the trip's reference comes last, inside it).
    PersonelIptalInput: Default {
        #[serde(rename = "personelTCKimlikPasaportNo")]
        personel_tc_kimlik_pasaport_no: String,
        iptal_aciklama: Option<String>,
        uetds_sefer_referans_no: i64,
    }
    /// `yolcuEkleCoklu`: adds passengers in one call; each gets its own outcome (`sira`).
    YolcuEkleCoklu { wsuser: WsUser, uetds_sefer_referans_no: i64, yolcu_bilgileri: Vec<AriziSeferYolcuBilgileriInput> }
    /// `uetdsAriziSeferYolcuBilgileriInput`.
    AriziSeferYolcuBilgileriInput: Default {
        uyruk_ulke: String,
        tc_kimlik_pasaport_no: String,
        cinsiyet: Option<String>,
        adi: String,
        soyadi: String,
        /// Required by the XSD.
        koltuk_no: String,
        telefon_no: Option<String>,
        /// The group's `uetdsGrupRefNo`.
        grup_id: i64,
        hes_kodu: Option<String>,
    }
    /// `yolcuIptalUetdsYolcuRefNoIle`: cancels one passenger by its reference (`uetdsBiletRefNo`).
    YolcuIptalUetdsYolcuRefNoIle {
        wsuser: WsUser,
        uetds_sefer_referans_no: i64,
        uetds_yolcu_referans_no: i64,
        iptal_aciklama: String,
    }
    /// `bildirimOzeti`: everything the Ministry holds about a trip.
    BildirimOzeti { wsuser: WsUser, uetds_sefer_referans_no: i64 }
    /// `seferDetayCiktisiAl`: the trip's report as a PDF.
    SeferDetayCiktisiAl { wsuser: WsUser, uetds_sefer_referans_no: i64 }
}

/// `servisTest`: an echo. Document/literal *bare* in this service: the Body holds
/// `<testMsj1>` itself and the reply `<servisTestResponse>` is the echoed text, no `<return>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ServisTest {
    pub test_msj1: String,
}

// ---- returns ----

messages! {
    /// `uetdsFirmaSonuc` (alphabetical, as JAXB wrote it).
    FirmaSonuc: Default {
        belge_gecerlilik_tarihi: Option<String>,
        belge_no: Option<String>,
        belge_turu: Option<String>,
        firma_unvan: Option<String>,
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        unet_no: Option<i64>,
    }
    /// `uetdsMuayeneSorguSonuc`: until when the inspection is valid.
    MuayeneSorguSonuc: Default {
        muayene_gecerlilik_tarihi: Option<String>,
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
    }
    /// `uetdsMesSorguSonuc`: the driver's certificates (`belgeListesi`, names).
    MesSorguSonuc: Default { belge_listesi: Vec<Option<String>>, sonuc_kodu: i32, sonuc_mesaji: Option<String> }
    /// `uetdsKimlikDogrulaSonuc`: whether the number and the name agree (`isUygun`).
    KimlikDogrulaSonuc: Default { sonuc_kodu: i32, sonuc_mesaji: Option<String>, is_uygun: bool }
    /// `uetdsSeyahatIzinKontrolSonuc` (its `kayitlar` are not read: the code says it all).
    SeyahatIzinKontrolSonuc: Default { sonuc_kodu: i32, sonuc_mesaji: Option<String> }
    /// `uetdsAriziSeferBildirSonuc`: a declared trip's reference.
    AriziSeferBildirSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        uetds_sefer_referans_no: Option<i64>,
    }
}

/// `uetdsTarifeliSeferBildirSonuc`, what `seferGuncelle` returns: the same shape.
pub type TarifeliSeferBildirSonuc = AriziSeferBildirSonuc;

messages! {
    /// `uetdsAriziSeferAraSonuc` (the list comes first).
    AriziSeferAraSonuc: Default { sefer_listesi: Vec<AriziSeferListesi>, sonuc_kodu: i32, sonuc_mesaji: Option<String> }
    /// `cstUetdsAriziSeferListesi`.
    AriziSeferListesi: Default {
        bildirim_zamani: Option<String>,
        /// `Geçerli` or `İptal`.
        sefer_durum: Option<String>,
        sefer_plaka: Option<String>,
        uetds_sefer_referans_no: Option<i64>,
    }
    /// `uetdsAriziGrupIslemSonuc`: `seferGrupEkle` and `seferGrupListesi`.
    AriziGrupIslemSonuc: Default {
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
        /// A number, as text; sent back as `grupId`.
        uetds_grup_ref_no: Option<String>,
        sefer_bilgisi: Option<AriziSeferBilgileri>,
        grup_liste: Vec<AriziGrupListe>,
        grup_detay: Option<AriziGrupDetay>,
    }
    /// `uetdsAriziSeferBilgileri`.
    AriziSeferBilgileri: Default {
        arac_tel: Option<String>,
        bak_sefer_no: Option<String>,
        belge_no: Option<String>,
        belge_turu: Option<String>,
        durum: Option<String>,
        durum_kodu: i32,
        durum_kodu_null: bool,
        firma_sefer_no: Option<String>,
        plaka: Option<String>,
        sefer_aciklama: Option<String>,
        sefer_bas_saati: Option<String>,
        sefer_bas_tarihi: Option<String>,
        sefer_bit_saati: Option<String>,
        sefer_bit_tarihi: Option<String>,
        son_yolcu_bildirim_tarihi: Option<String>,
        /// `xs:decimal`, as text.
        unet_no: Option<String>,
    }
    /// `cstUetdsAriziGrupListe`.
    AriziGrupListe: Default {
        baslangic_il_adi: Option<String>,
        baslangic_il_id: Option<i64>,
        baslangic_ilce_adi: Option<String>,
        baslangic_ilce_id: Option<i64>,
        baslangic_ulke_adi: Option<String>,
        baslangic_ulke_kodu: Option<String>,
        baslangic_yeri: Option<String>,
        bitis_il_adi: Option<String>,
        bitis_il_id: Option<i64>,
        bitis_ilce_adi: Option<String>,
        bitis_ilce_id: Option<i64>,
        bitis_ulke_adi: Option<String>,
        bitis_ulke_kodu: Option<String>,
        bitis_yeri: Option<String>,
        grup_aciklama: Option<String>,
        grup_adi: Option<String>,
        grup_id: Option<i64>,
        sefer_bas_saati: Option<String>,
        sefer_bas_tarihi: Option<String>,
        sefer_bas_yeri: Option<String>,
        sefer_bit_saati: Option<String>,
        sefer_bit_tarihi: Option<String>,
        sefer_bit_yeri: Option<String>,
        ucret: Option<String>,
    }
    /// `cstUetdsAriziGrupDetay`.
    AriziGrupDetay: Default {
        durum_aciklama: Option<String>,
        durum_kodu: i32,
        durum_kodu_null: bool,
        grup_aciklama: Option<String>,
        grup_adi: Option<String>,
        grup_id: Option<i64>,
        sefer_bas_saati: Option<String>,
        sefer_bas_tarihi: Option<String>,
        sefer_bas_yeri: Option<String>,
        sefer_bit_saati: Option<String>,
        sefer_bit_tarihi: Option<String>,
        sefer_bit_yeri: Option<String>,
    }
    /// `uetdsYtsYolcuCokluSonuc`: `sonucKodu` 88 means some passengers were refused; each
    /// item's own code says which.
    YtsYolcuCokluSonuc: Default { sonuc_kodu: i32, sonuc_mesaji: Option<String>, uetds_yolcu_sonuc: Vec<YolcuSonuc> }
    /// `uetdsYolcuSonuc`: one passenger of a `yolcuEkleCoklu`, by position (`sira`).
    YolcuSonuc: Default { sira: i32, sonuc_kodu: i32, sonuc_mesaji: Option<String>, uetds_bilet_ref_no: Option<i64> }
    /// `uetdsAriziSeferBildirimOzetSonuc` (`sonucKodu` comes last).
    AriziSeferBildirimOzetSonuc: Default {
        sefer_tarihi: Option<String>,
        firma_unvan: Option<String>,
        firma_sefer_no: Option<String>,
        sefer_saati: Option<String>,
        sefer_durum_kodu: Option<i32>,
        sefer_durum_aciklama: Option<String>,
        son_yolcu_bildirim_tarihi: Option<String>,
        belge_no: Option<String>,
        belge_turu: Option<String>,
        bildirilen_yolcu_sayisi: Option<i64>,
        iptal_yolcu_sayisi: Option<i64>,
        gelmeyen_yolcu_sayisi: Option<i64>,
        personel_kayit_sayisi: Option<i64>,
        iptal_personel_kayit_sayisi: Option<i64>,
        bagaj_adedi: Option<i64>,
        iptal_bagaj_adedi: Option<i64>,
        arac_plaka: Option<String>,
        sefer_aciklama: Option<String>,
        arac_telefonu: Option<String>,
        sefer_bas_yeri: Option<String>,
        sefer_bit_yeri: Option<String>,
        sefer_bit_tarihi: Option<String>,
        sefer_bit_saati: Option<String>,
        grup_listesi: Vec<AriziGrupListe>,
        arizi_personel_listesi: Vec<AriziSeferPersonelListesi>,
        arizi_yolcu_listesi: Vec<AriziSeferYolcuListesi>,
        sonuc_kodu: i32,
        sonuc_mesaji: Option<String>,
    }
    /// `uetdsAriziSeferPersonelListesi`.
    AriziSeferPersonelListesi: Default {
        adi: Option<String>,
        adres: Option<String>,
        cinsiyet: Option<String>,
        durum_aciklama: Option<String>,
        hes_kod: Option<String>,
        personel_turu: Option<String>,
        sefer_personel_id: Option<i64>,
        soyadi: Option<String>,
        tckimlikno: Option<String>,
        telefon: Option<String>,
        ulke: Option<String>,
    }
    /// `uetdsAriziSeferYolcuListesi`.
    AriziSeferYolcuListesi: Default {
        adi: Option<String>,
        binis_yeri_aciklama: Option<String>,
        /// `Erkek` or `Kadın` here.
        cinsiyet: Option<String>,
        durum_aciklama: Option<String>,
        durum_kodu: Option<i32>,
        grup_adi: Option<String>,
        hes_kod: Option<String>,
        inis_yeri_aciklama: Option<String>,
        koltuk_no: Option<String>,
        soyadi: Option<String>,
        tckimlikno: Option<String>,
        telefon_no: Option<String>,
        uetds_bilet_ref_no: Option<i64>,
        ulke_kodu: Option<String>,
    }
}

// ---- operations (soapAction from the WSDL binding) ----

operations! {
    "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/" {
        KullaniciKontrol "kullaniciKontrol" -> FirmaSonuc,
        SeferEkle "seferEkle" -> AriziSeferBildirSonuc,
        SeferGuncelle "seferGuncelle" -> TarifeliSeferBildirSonuc,
        SeferIptal "seferIptal" -> GenelIslemSonuc,
        YolcuGelmeyenBildir "yolcuGelmeyenBildir" -> GenelIslemSonuc,
        YolcuBagajEkle "yolcuBagajEkle" -> GenelIslemSonuc,
        YolcuBagajIptal "yolcuBagajIptal" -> GenelIslemSonuc,
        YetkiBelgesiKontrol "yetkiBelgesiKontrol" -> FirmaSonuc,
        KimlikDogrulama "kimlikDogrulama" -> KimlikDogrulaSonuc,
        IpTanimla "ipTanimla" -> GenelIslemSonuc,
        IpListele "ipListele" -> IpListeleSonuc,
        IpSil "ipSil" -> GenelIslemSonuc,
        SeferAktif "seferAktif" -> GenelIslemSonuc,
        SeferPlakaDegistir "seferPlakaDegistir" -> GenelIslemSonuc,
        SeferBildirimListele "seferBildirimListele" -> AriziSeferAraSonuc,
        SeferGrupEkle "seferGrupEkle" -> AriziGrupIslemSonuc,
        SeferGrupGuncelle "seferGrupGuncelle" -> AriziGrupIslemSonuc,
        SeferGrupListesi "seferGrupListesi" -> AriziGrupIslemSonuc,
        PersonelEkle "personelEkle" -> GenelIslemSonuc,
        PersonelIptal "personelIptal" -> GenelIslemSonuc,
        YolcuEkleCoklu "yolcuEkleCoklu" -> YtsYolcuCokluSonuc,
        YolcuIptalUetdsYolcuRefNoIle "yolcuIptalUetdsYolcuRefNoIle" -> GenelIslemSonuc,
        BildirimOzeti "bildirimOzeti" -> AriziSeferBildirimOzetSonuc,
    }
    // Operations both passenger services have keep the scheduled service's path here.
    "http://uetds.unetws.udhb.gov.tr/uetdsyts/" {
        AracMuayeneSorgula "aracMuayeneSorgula" -> MuayeneSorguSonuc,
        MeslekiYeterlilikSorgula "meslekiYeterlilikSorgula" -> MesSorguSonuc,
        SeyahatIzinKontrol "seyahatIzinKontrol" -> SeyahatIzinKontrolSonuc,
    }
}

// The WSDL binding gives this one an empty soapAction.
op!(SeferDetayCiktisiAl, "seferDetayCiktisiAl", "", GenelPdfSonuc);

impl Operation for ServisTest {
    const NAME: &'static str = "testMsj1";
    const ACTION: &'static str = "http://uetds.unetws.udhb.gov.tr/uetdsytsarizi/servisTest";
    type Return = String;
    const REPLY: Reply = Reply::Bare("servisTestResponse");
}
