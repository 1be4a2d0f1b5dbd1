//! The non-scheduled (arızi) passenger service: trips, groups, crew, passengers, the summary and
//! the report, with the result types of `adapters/uetds/schema/uetdsarizi.xsd` (element order
//! included). The trip-level operations the scheduled service shares (cancel, crew, list,
//! summary) live here and are reused by `tarifeli`.

use base64::Engine;
use chrono::NaiveDate;

use super::ops::{
    codes, date_time, gender_label, is_country, is_gender, is_hhmm, istanbul_date, long, or_answer, parse_dmy,
    parse_ymd, plate_key, text, text_or_empty, timestamp, Ctx, BAD_CREDENTIALS_MESSAGE, OK_MESSAGE,
};
use super::reply::{pdf, Answer};
use super::state::{Bag, CrewMember, Group, Passenger, Service, Status, Trip};
use super::xml::Element;

const SEFER_EKLENDI: &str =
    "Sefer Başarılı şekilde eklenmiştir.Sefer Personel ve Yolcu Ekleme işlemlerini yapabilirsiniz.";

/// Runs an arızi operation; `None` for operations the fake does not simulate.
pub(crate) fn handle(ctx: &mut Ctx, op: &str, el: &Element) -> Option<Answer> {
    Some(match op {
        "kullaniciKontrol" => kullanici_kontrol(ctx, el),
        // The request element is `<testMsj1>` itself (a bare xs:string part).
        "servisTest" => Answer::Text(el.text.clone()),
        "seferEkle" => sefer_ekle(ctx, el),
        "seferGuncelle" => sefer_guncelle(ctx, el),
        "seferIptal" => sefer_iptal(ctx, el),
        "seferAktif" => sefer_aktif(ctx, el),
        "seferPlakaDegistir" => sefer_plaka_degistir(ctx, el),
        "seferBildirimListele" => sefer_bildirim_listele(ctx, el),
        "seferGrupEkle" => sefer_grup_ekle(ctx, el),
        "seferGrupGuncelle" => sefer_grup_guncelle(ctx, el),
        "seferGrupIptal" => sefer_grup_iptal(ctx, el),
        "seferGrupListesi" => sefer_grup_listesi(ctx, el),
        "personelEkle" => personel_ekle(ctx, el),
        "personelIptal" => personel_iptal(ctx, el),
        "yolcuEkle" => yolcu_ekle(ctx, el),
        "yolcuEkleCoklu" => yolcu_ekle_coklu(ctx, el),
        "yolcuIptal" => yolcu_iptal(ctx, el),
        "yolcuIptalUetdsYolcuRefNoIle" => yolcu_iptal_ref(ctx, el),
        "bildirimOzeti" => bildirim_ozeti(ctx, el),
        "yolcuGelmeyenBildir" => yolcu_gelmeyen_bildir(ctx, el),
        "yolcuBagajEkle" => yolcu_bagaj_ekle(ctx, el),
        "yolcuBagajIptal" => yolcu_bagaj_iptal(ctx, el),
        "aracMuayeneSorgula" => arac_muayene_sorgula(ctx, el),
        "yetkiBelgesiKontrol" => yetki_belgesi_kontrol(ctx, el),
        "meslekiYeterlilikSorgula" => mesleki_yeterlilik_sorgula(ctx, el),
        "kimlikDogrulama" => kimlik_dogrulama(ctx, el),
        "seyahatIzinKontrol" => Answer::result(codes::OK, OK_MESSAGE),
        "ipTanimla" => ip_tanimla(ctx, el),
        "ipListele" => ip_listele(ctx),
        "ipSil" => ip_sil(ctx, el),
        "seferDetayCiktisiAl" => sefer_detay_ciktisi(ctx, el),
        _ => return None,
    })
}

fn ok_with(fields: impl IntoIterator<Item = Element>) -> Answer {
    Answer::ret(Element::new("return").field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE).with_all(fields))
}

/// `kullaniciKontrol(kullaniciAdi, sifre)` → `uetdsFirmaSonuc`.
fn kullanici_kontrol(ctx: &mut Ctx, el: &Element) -> Answer {
    let user = el.child_text("kullaniciAdi").unwrap_or_default();
    let pass = el.child_text("sifre").unwrap_or_default();
    let known = ctx.store.account(user, pass);
    let Some(account) = known.filter(|_| (user, pass) == (ctx.basic.0.as_str(), ctx.basic.1.as_str())) else {
        return Answer::result(codes::BAD_CREDENTIALS, BAD_CREDENTIALS_MESSAGE);
    };
    let r = Element::new("return")
        .field("belgeGecerlilikTarihi", "31/12/2030")
        .field("belgeNo", format!("D2-{}", account.user))
        .field("belgeTuru", "D2")
        .field("firmaUnvan", &account.title)
        .field("sonucKodu", codes::OK)
        .field("sonucMesaji", OK_MESSAGE)
        .opt_field("unetNo", account.user.parse::<i64>().ok());
    Answer::ret(r)
}

/// The trip's index, if this firm has it in this service and environment.
pub(super) fn trip_idx(ctx: &Ctx, reference: Option<i64>) -> Result<usize, Answer> {
    let Some(r) = reference else {
        return Err(Answer::result(codes::INVALID, "uetdsSeferReferansNo zorunludur"));
    };
    ctx.store
        .trips
        .iter()
        .position(|t| t.service == ctx.service && t.env == ctx.env && t.firm == ctx.firm && t.reference == r)
        .ok_or_else(|| Answer::result(codes::NOT_FOUND, &format!("{r} referans numaralı sefer bulunamadı")))
}

/// As [`trip_idx`], and the trip must not be cancelled.
pub(super) fn valid_trip_idx(ctx: &Ctx, reference: Option<i64>) -> Result<usize, Answer> {
    let i = trip_idx(ctx, reference)?;
    if ctx.store.trips[i].status == Status::Cancelled {
        return Err(Answer::result(codes::WRONG_STATE, "Sefer iptal edilmiş, işlem yapılamaz"));
    }
    Ok(i)
}

/// What a passenger trip's declaration gives, read and judged.
pub(super) struct TripInput {
    pub(super) plate: String,
    pub(super) description: Option<String>,
    pub(super) departure_date: NaiveDate,
    pub(super) departure_time: String,
    pub(super) phone: Option<String>,
    pub(super) firma_sefer_no: String,
    /// Arızi only.
    pub(super) end_date: Option<NaiveDate>,
    pub(super) end_time: Option<String>,
}

/// Reads an `uetdsAriziSeferBilgileriInput`, judging the formats.
fn trip_input(ctx: &mut Ctx, input: Option<&Element>) -> Result<TripInput, Answer> {
    let Some(i) = input else {
        return Err(Answer::result(codes::INVALID, "ariziSeferBilgileriInput zorunludur"));
    };
    let plate = text_or_empty(i, "aracPlaka");
    if plate.is_empty() {
        return Err(Answer::result(codes::INVALID, "Araç plakası zorunludur"));
    }
    let (Some(departure_date), Some(end_date)) =
        (istanbul_date(&text_or_empty(i, "hareketTarihi")), istanbul_date(&text_or_empty(i, "seferBitisTarihi")))
    else {
        return Err(ctx.format_error("hareketTarihi / seferBitisTarihi must be xs:dateTime".into()));
    };
    let departure_time = text_or_empty(i, "hareketSaati");
    let end_time = text_or_empty(i, "seferBitisSaati");
    for (name, t) in [("hareketSaati", &departure_time), ("seferBitisSaati", &end_time)] {
        if !is_hhmm(t) {
            return Err(ctx.format_error(format!("{name} {t:?} is not HH:mm")));
        }
    }
    if (end_date, end_time.as_str()) < (departure_date, departure_time.as_str()) {
        return Err(Answer::result(codes::INVALID, "Sefer bitiş zamanı hareket zamanından önce olamaz"));
    }
    Ok(TripInput {
        plate,
        description: text(i, "seferAciklama"),
        departure_date,
        departure_time,
        phone: text(i, "aracTelefonu"),
        firma_sefer_no: i.child_text("firmaSeferNo").unwrap_or_default().to_string(),
        end_date: Some(end_date),
        end_time: Some(end_time),
    })
}

/// `seferEkle(wsuser, ariziSeferBilgileriInput)` → `uetdsAriziSeferBildirSonuc`.
fn sefer_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let input = or_answer!(trip_input(ctx, el.child("ariziSeferBilgileriInput")));
    declare(ctx, input, None, None, SEFER_EKLENDI)
}

/// Records a trip declared on either passenger service (`route_code` and `travel_hours` are
/// the scheduled one's) and answers `{sonucKodu, sonucMesaji, uetdsSeferReferansNo}`.
pub(super) fn declare(
    ctx: &mut Ctx,
    input: TripInput,
    route_code: Option<i64>,
    travel_hours: Option<i32>,
    message: &str,
) -> Answer {
    let reference = ctx.store.trip_reference(input.departure_date);
    ctx.store.trips.push(Trip {
        service: ctx.service,
        env: ctx.env,
        firm: ctx.firm.clone(),
        reference,
        firma_sefer_no: input.firma_sefer_no,
        plate: input.plate,
        description: input.description,
        phone: input.phone,
        departure_date: input.departure_date,
        departure_time: input.departure_time,
        end_date: input.end_date,
        end_time: input.end_time,
        route_code,
        travel_hours,
        status: Status::Valid,
        cancel_reason: None,
        declared_at: ctx.now,
        updates: 0,
        groups: Vec::new(),
        crew: Vec::new(),
        passengers: Vec::new(),
        baggage: Vec::new(),
    });
    Answer::ret(
        Element::new("return")
            .field("sonucKodu", codes::OK)
            .field("sonucMesaji", message)
            .field("uetdsSeferReferansNo", reference),
    )
}

/// `seferGuncelle(wsuser, guncellenecekSeferReferansNo, ariziSeferBilgileriInput)` →
/// `uetdsTarifeliSeferBildirSonuc` with the same reference (or a new one, when so set).
fn sefer_guncelle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "guncellenecekSeferReferansNo")));
    let input = or_answer!(trip_input(ctx, el.child("ariziSeferBilgileriInput")));
    let t = &mut ctx.store.trips[i];
    t.plate = input.plate;
    t.description = input.description;
    t.departure_date = input.departure_date;
    t.departure_time = input.departure_time;
    t.phone = input.phone;
    t.firma_sefer_no = input.firma_sefer_no;
    t.end_date = input.end_date;
    t.end_time = input.end_time;
    t.updates += 1;
    if ctx.renumber_on_update {
        let day = ctx.store.trips[i].departure_date;
        let fresh = ctx.store.trip_reference(day);
        ctx.store.trips[i].reference = fresh;
    }
    let reference = ctx.store.trips[i].reference;
    ok_with([Element::leaf("uetdsSeferReferansNo", reference)])
}

/// `seferIptal(wsuser, uetdsSeferReferansNo, iptalAciklama)` → `uetdsGenelIslemSonuc`.
pub(super) fn sefer_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let t = &mut ctx.store.trips[i];
    if t.status == Status::Cancelled {
        return Answer::result(codes::WRONG_STATE, "Sefer daha önce iptal edilmiş");
    }
    t.status = Status::Cancelled;
    t.cancel_reason = text(el, "iptalAciklama");
    ok_with([])
}

/// `seferAktif(wsuser, uetdsSeferReferansNo, aktifAciklama)`: re-activates a cancelled trip.
fn sefer_aktif(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let t = &mut ctx.store.trips[i];
    if t.status == Status::Valid {
        return Answer::result(codes::WRONG_STATE, "Sefer zaten geçerli durumda");
    }
    t.status = Status::Valid;
    t.cancel_reason = None;
    ok_with([])
}

/// `seferPlakaDegistir(wsuser, uetdsSeferReferansNo, tasitPlakaNo)`.
fn sefer_plaka_degistir(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(plate) = text(el, "tasitPlakaNo") else {
        return Answer::result(codes::INVALID, "Taşıt plakası zorunludur");
    };
    let t = &mut ctx.store.trips[i];
    t.plate = plate;
    t.updates += 1;
    ok_with([])
}

/// `seferBildirimListele(wsuser, seferListeleInput{seferTarih1, seferTarih2, plaka?})` →
/// `uetdsAriziSeferAraSonuc`: this firm's trips departing (or, when so set, notified) in the
/// range (at most a month), with the plate when one is given. Dates `dd/MM/yyyy`; `YYYY-MM-DD`
/// is accepted too.
pub(super) fn sefer_bildirim_listele(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(input) = el.child("seferListeleInput") else {
        return Answer::result(codes::INVALID, "seferListeleInput zorunludur");
    };
    let date = |name: &str| {
        let s = text_or_empty(input, name);
        parse_dmy(&s).or_else(|| parse_ymd(&s)).ok_or(s)
    };
    let (from, to) = match (date("seferTarih1"), date("seferTarih2")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(s), _) | (_, Err(s)) => return ctx.format_error(format!("sefer date {s:?} is not dd/MM/yyyy")),
    };
    if to < from {
        return Answer::result(codes::INVALID, "Bitiş tarihi başlangıç tarihinden önce olamaz");
    }
    if (to - from).num_days() > 31 {
        return Answer::result(codes::INVALID, "Tarih aralığı en fazla 1 ay olabilir");
    }
    let plate = text(input, "plaka").map(|p| plate_key(&p));
    let items: Vec<Element> = ctx
        .store
        .trips
        .iter()
        .filter(|t| t.service == ctx.service && t.env == ctx.env && t.firm == ctx.firm)
        .filter(|t| {
            let day = if ctx.list_by_notification_day { t.declared_at.date() } else { t.departure_date };
            (from..=to).contains(&day)
        })
        .filter(|t| plate.as_ref().is_none_or(|p| plate_key(&t.plate) == *p))
        .map(|t| {
            Element::new("seferListesi")
                .field("bildirimZamani", timestamp(t.declared_at))
                .field("seferDurum", t.status.label())
                .field("seferPlaka", &t.plate)
                .field("uetdsSeferReferansNo", t.reference)
        })
        .collect();
    Answer::ret(Element::new("return").with_all(items).field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE))
}

fn group_input(ctx: &mut Ctx, el: &Element, id: i64) -> Result<Group, Answer> {
    let Some(g) = el.child("seferGrupBilgileriInput") else {
        return Err(Answer::result(codes::INVALID, "seferGrupBilgileriInput zorunludur"));
    };
    let start_country = text_or_empty(g, "baslangicUlke");
    let end_country = text_or_empty(g, "bitisUlke");
    for c in [&start_country, &end_country] {
        if !is_country(c) {
            return Err(ctx.format_error(format!("country code {c:?} is not a two-letter code")));
        }
    }
    let group = Group {
        id,
        name: text_or_empty(g, "grupAdi"),
        description: text_or_empty(g, "grupAciklama"),
        start_country,
        start_province: long(g, "baslangicIl").unwrap_or_default(),
        start_district: long(g, "baslangicIlce").unwrap_or_default(),
        start_place: text(g, "baslangicYer"),
        end_country,
        end_province: long(g, "bitisIl").unwrap_or_default(),
        end_district: long(g, "bitisIlce").unwrap_or_default(),
        end_place: text_or_empty(g, "bitisYer"),
        fare: text(g, "grupUcret"),
        status: Status::Valid,
    };
    // The Ministry's document: in Türkiye the province and district are required; abroad the
    // place's text is enough.
    let ends = [
        (&group.start_country, group.start_province, group.start_place.clone().unwrap_or_default()),
        (&group.end_country, group.end_province, group.end_place.clone()),
    ];
    for (country, province, place) in ends {
        if country == "TR" && !(1..=81).contains(&province) {
            return Err(Answer::result(codes::INVALID, &format!("{province} geçerli bir il kodu değil")));
        }
        if country != "TR" && place.trim().is_empty() {
            return Err(Answer::result(codes::INVALID, "yurt dışı için yer bilgisi zorunludur"));
        }
    }
    Ok(group)
}

/// `seferGrupEkle(wsuser, uetdsSeferReferansNo, seferGrupBilgileriInput)` →
/// `uetdsAriziGrupIslemSonuc` with `uetdsGrupRefNo`.
fn sefer_grup_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let id = ctx.store.group_id();
    let group = or_answer!(group_input(ctx, el, id));
    ctx.store.trips[i].groups.push(group);
    ok_with([Element::leaf("uetdsGrupRefNo", id)])
}

fn group_idx(ctx: &Ctx, trip: usize, id: Option<i64>) -> Result<usize, Answer> {
    let id = id.ok_or_else(|| Answer::result(codes::INVALID, "grupId zorunludur"))?;
    ctx.store.trips[trip]
        .groups
        .iter()
        .position(|g| g.id == id && g.status == Status::Valid)
        .ok_or_else(|| Answer::result(codes::NOT_FOUND, &format!("{id} numaralı grup bulunamadı")))
}

/// `seferGrupGuncelle(wsuser, uetdsSeferReferansNo, grupId, seferGrupBilgileriInput)`.
fn sefer_grup_guncelle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let g = or_answer!(group_idx(ctx, i, long(el, "grupId")));
    let id = ctx.store.trips[i].groups[g].id;
    let group = or_answer!(group_input(ctx, el, id));
    ctx.store.trips[i].groups[g] = group;
    ok_with([Element::leaf("uetdsGrupRefNo", id)])
}

/// `seferGrupIptal(wsuser, uetdsSeferReferansNo, grupId, iptalAciklama)`.
fn sefer_grup_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let g = or_answer!(group_idx(ctx, i, long(el, "grupId")));
    ctx.store.trips[i].groups[g].status = Status::Cancelled;
    ok_with([])
}

fn group_list_item(name: &str, t: &Trip, g: &Group) -> Element {
    Element::new(name)
        .field("baslangicIlId", g.start_province)
        .field("baslangicIlceId", g.start_district)
        .field("baslangicUlkeKodu", &g.start_country)
        .opt_field("baslangicYeri", g.start_place.as_ref())
        .field("bitisIlId", g.end_province)
        .field("bitisIlceId", g.end_district)
        .field("bitisUlkeKodu", &g.end_country)
        .field("bitisYeri", &g.end_place)
        .field("grupAciklama", &g.description)
        .field("grupAdi", &g.name)
        .field("grupId", g.id)
        .field("seferBasSaati", &t.departure_time)
        .field("seferBasTarihi", t.departure_date.format("%d/%m/%Y"))
        .opt_field("seferBitSaati", t.end_time.as_ref())
        .opt_field("seferBitTarihi", t.end_date.map(|d| d.format("%d/%m/%Y")))
        .opt_field("ucret", g.fare.as_ref())
}

/// `seferGrupListesi(wsuser, uetdsSeferReferansNo)` → `uetdsAriziGrupIslemSonuc` with `grupListe`.
fn sefer_grup_listesi(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let t = &ctx.store.trips[i];
    ok_with(t.valid_groups().map(|g| group_list_item("grupListe", t, g)).collect::<Vec<_>>())
}

/// `personelEkle(wsuser, uetdsSeferReferansNo, seferPersonelBilgileriInput…)`: all or nothing.
pub(super) fn personel_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let mut crew = Vec::new();
    for item in el.children_named("seferPersonelBilgileriInput") {
        let kind = long(item, "turKodu").unwrap_or(-1);
        if !(0..=5).contains(&kind) {
            return ctx.format_error(format!("turKodu {kind} is not one of 0..5"));
        }
        let gender = text_or_empty(item, "cinsiyet");
        if !is_gender(&gender) {
            return ctx.format_error(format!("personnel cinsiyet {gender:?} is not E or K"));
        }
        let nationality = text_or_empty(item, "uyrukUlke");
        if !is_country(&nationality) {
            return ctx.format_error(format!("uyrukUlke {nationality:?} is not a two-letter code"));
        }
        let identity = text_or_empty(item, "tcKimlikPasaportNo");
        if identity.is_empty() {
            return Answer::result(codes::INVALID, "Personel kimlik numarası zorunludur");
        }
        crew.push(CrewMember {
            id: 0,
            kind: kind as i32,
            nationality,
            identity,
            gender,
            first_name: text_or_empty(item, "adi"),
            last_name: text_or_empty(item, "soyadi"),
            phone: text(item, "telefon"),
            address: text(item, "adres"),
            status: Status::Valid,
        });
    }
    if crew.is_empty() {
        return Answer::result(codes::INVALID, "En az bir personel gönderilmelidir");
    }
    for mut c in crew {
        c.id = ctx.store.crew_id();
        ctx.store.trips[i].crew.push(c);
    }
    ok_with([])
}

/// `personelIptal(wsuser, iptalPersonelInput{personelTCKimlikPasaportNo, iptalAciklama?,
/// uetdsSeferReferansNo})`.
pub(crate) fn personel_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(input) = el.child("iptalPersonelInput") else {
        return Answer::result(codes::INVALID, "iptalPersonelInput zorunludur");
    };
    let i = or_answer!(valid_trip_idx(ctx, long(input, "uetdsSeferReferansNo")));
    let identity = text_or_empty(input, "personelTCKimlikPasaportNo");
    let t = &mut ctx.store.trips[i];
    match t.crew.iter_mut().find(|c| c.identity == identity && c.status == Status::Valid) {
        Some(c) => c.status = Status::Cancelled,
        None => return Answer::result(codes::NOT_FOUND, "Seferde bu kimlik numaralı personel bulunamadı"),
    }
    ok_with([])
}

/// One `uetdsAriziSeferYolcuBilgileriInput` → the stored passenger, or the item's code and message.
fn passenger(ctx: &mut Ctx, trip: usize, item: &Element) -> Result<Passenger, (i32, String)> {
    let identity = text_or_empty(item, "tcKimlikPasaportNo");
    if let Some(message) = ctx.refused_passengers.get(&identity) {
        return Err((codes::REFUSED, message.clone()));
    }
    let nationality = text_or_empty(item, "uyrukUlke");
    if !is_country(&nationality) {
        let m = format!("uyrukUlke {nationality:?} is not a two-letter code");
        ctx.violations.push(m.clone());
        return Err((codes::INVALID, m));
    }
    let gender = text(item, "cinsiyet");
    if let Some(g) = gender.as_deref().filter(|g| !is_gender(g)) {
        let m = format!("passenger cinsiyet {g:?} is not E or K");
        ctx.violations.push(m.clone());
        return Err((codes::INVALID, m));
    }
    let group = long(item, "grupId");
    let t = &ctx.store.trips[trip];
    if !t.valid_groups().any(|g| Some(g.id) == group) {
        return Err((codes::NOT_FOUND, format!("{} numaralı grup bu seferde bulunamadı", group.unwrap_or_default())));
    }
    Ok(Passenger {
        ticket_ref: 0,
        nationality,
        identity,
        gender,
        first_name: text_or_empty(item, "adi"),
        last_name: text_or_empty(item, "soyadi"),
        seat: text(item, "koltukNo"),
        phone: text(item, "telefonNo"),
        group_id: group,
        boarding: None,
        alighting: None,
        ticket_serial: None,
        fare: None,
        status: Status::Valid,
        cancel_reason: None,
        no_show: None,
    })
}

/// `yolcuEkleCoklu(wsuser, uetdsSeferReferansNo, yolcuBilgileri…)` → `uetdsYtsYolcuCokluSonuc`:
/// one `uetdsYolcuSonuc` per item (`sira` 1-based); overall 0 when all were stored, 88 when some
/// were, nonzero when none was.
fn yolcu_ekle_coklu(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let items: Vec<&Element> = el.children_named("yolcuBilgileri").collect();
    if items.is_empty() {
        return Answer::result(codes::INVALID, "En az bir yolcu gönderilmelidir");
    }
    let mut results = Vec::new();
    let mut stored = 0;
    for (n, item) in items.iter().enumerate() {
        let r = Element::new("uetdsYolcuSonuc").field("sira", n + 1);
        results.push(match passenger(ctx, i, item) {
            Ok(mut p) => {
                p.ticket_ref = ctx.store.ticket_reference();
                let ticket = p.ticket_ref;
                ctx.store.trips[i].passengers.push(p);
                stored += 1;
                r.field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE).field("uetdsBiletRefNo", ticket)
            }
            Err((code, message)) => r.field("sonucKodu", code).field("sonucMesaji", message),
        });
    }
    let (code, message) = match stored {
        s if s == items.len() => (codes::OK, OK_MESSAGE.to_string()),
        0 => (codes::INVALID, "Yolcuların hiçbiri eklenemedi".to_string()),
        s => (codes::PARTIAL, format!("{} yolcudan {s} tanesi eklendi, hatalı olanları kontrol ediniz", items.len())),
    };
    Answer::ret(Element::new("return").field("sonucKodu", code).field("sonucMesaji", message).with_all(results))
}

/// `yolcuEkle(wsuser, uetdsSeferReferansNo, seferYolcuBilgileriInput)` →
/// `uetdsAriziYolcuIslemSonuc` with `uetdsYolcuRefNo`.
fn yolcu_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(item) = el.child("seferYolcuBilgileriInput") else {
        return Answer::result(codes::INVALID, "seferYolcuBilgileriInput zorunludur");
    };
    match passenger(ctx, i, item) {
        Ok(mut p) => {
            p.ticket_ref = ctx.store.ticket_reference();
            let ticket = p.ticket_ref;
            ctx.store.trips[i].passengers.push(p);
            ok_with([Element::leaf("uetdsYolcuRefNo", ticket)])
        }
        Err((code, message)) => Answer::result(code, &message),
    }
}

/// Cancels a valid passenger of a trip chosen by `pick`.
pub(super) fn cancel_passenger(
    ctx: &mut Ctx,
    trip: usize,
    pick: impl Fn(&Passenger) -> bool,
    reason: Option<String>,
) -> Answer {
    let t = &mut ctx.store.trips[trip];
    let Some(p) = t.passengers.iter_mut().find(|p| pick(p)) else {
        return Answer::result(codes::NOT_FOUND, "Yolcu bulunamadı");
    };
    if p.status == Status::Cancelled {
        return Answer::result(codes::WRONG_STATE, "Yolcu daha önce iptal edilmiş");
    }
    p.status = Status::Cancelled;
    p.cancel_reason = reason;
    ok_with([])
}

/// `yolcuIptal(wsuser, uetdsSeferReferansNo, iptalYolcu{koltukNo, yolcuTCKimlikPasaportNo, iptalAciklama?})`.
fn yolcu_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(input) = el.child("iptalYolcu") else {
        return Answer::result(codes::INVALID, "iptalYolcu zorunludur");
    };
    let identity = text_or_empty(input, "yolcuTCKimlikPasaportNo");
    let seat = text(input, "koltukNo");
    let valid_first = |p: &Passenger| p.identity == identity && p.seat == seat && p.status == Status::Valid;
    if ctx.store.trips[i].passengers.iter().any(valid_first) {
        return cancel_passenger(ctx, i, valid_first, text(input, "iptalAciklama"));
    }
    cancel_passenger(ctx, i, |p| p.identity == identity && p.seat == seat, text(input, "iptalAciklama"))
}

/// `yolcuIptalUetdsYolcuRefNoIle(wsuser, uetdsSeferReferansNo, uetdsYolcuReferansNo, iptalAciklama)`:
/// the reference is the `uetdsBiletRefNo` / `uetdsYolcuRefNo` the add returned.
fn yolcu_iptal_ref(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(r) = long(el, "uetdsYolcuReferansNo") else {
        return Answer::result(codes::INVALID, "uetdsYolcuReferansNo zorunludur");
    };
    cancel_passenger(ctx, i, |p| p.ticket_ref == r, text(el, "iptalAciklama"))
}

/// `yolcuGelmeyenBildir(wsuser, uetdsSeferReferansNo, gelmeyenYolcu{koltukNo,
/// yolcuTCKimlikPasaportNo, aciklama?})`: a passenger of the trip, by seat and identity number,
/// did not come.
fn yolcu_gelmeyen_bildir(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(who) = el.child("gelmeyenYolcu") else {
        return Answer::result(codes::INVALID, "gelmeyenYolcu zorunludur");
    };
    let (seat, identity) = (text_or_empty(who, "koltukNo"), text_or_empty(who, "yolcuTCKimlikPasaportNo"));
    let note = text(who, "aciklama").unwrap_or_default();
    let Some(p) = ctx.store.trips[i]
        .passengers
        .iter_mut()
        .find(|p| p.status == Status::Valid && p.identity == identity && p.seat.as_deref() == Some(seat.as_str()))
    else {
        return Answer::result(codes::INVALID, "Bu koltuk ve kimlik numarasıyla seferde yolcu bulunamadı");
    };
    if p.no_show.is_some() {
        return Answer::result(codes::WRONG_STATE, "Yolcu için daha önce gelmedi bildirimi yapılmış");
    }
    p.no_show = Some(note);
    ok_with([])
}

/// One `uetdsSeferBagajBilgileriInput`: the passenger (a valid one of the trip, by identity
/// and seat) and the barcodes, or the refusal.
fn bags_input(ctx: &Ctx, trip: usize, item: &Element) -> Result<(String, String, Vec<String>), Answer> {
    let (identity, seat) = (text_or_empty(item, "yolcuTCKimlikPasaportNo"), text_or_empty(item, "koltukNo"));
    let barcodes: Vec<String> = item.children_named("bagajBarkodNumaralari").map(|b| b.text.clone()).collect();
    if barcodes.is_empty() || barcodes.iter().any(|b| b.trim().is_empty()) {
        return Err(Answer::result(codes::INVALID, "Bagaj barkod numarası zorunludur"));
    }
    let t = &ctx.store.trips[trip];
    if !t.valid_passengers().any(|p| p.identity == identity && p.seat.as_deref() == Some(seat.as_str())) {
        return Err(Answer::result(codes::INVALID, "Bu koltuk ve kimlik numarasıyla seferde yolcu bulunamadı"));
    }
    Ok((identity, seat, barcodes))
}

/// `yolcuBagajEkle(wsuser, uetdsSeferReferansNo, bagajBilgileri…)`: all or nothing. A barcode
/// sent twice is stored twice (no published rule says otherwise), which tests look for.
fn yolcu_bagaj_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let items: Vec<&Element> = el.children_named("bagajBilgileri").collect();
    if items.is_empty() {
        return Answer::result(codes::INVALID, "En az bir bagaj bilgisi gönderilmelidir");
    }
    let mut bags = Vec::new();
    for item in items {
        let (identity, seat, barcodes) = or_answer!(bags_input(ctx, i, item));
        bags.extend(barcodes.into_iter().map(|barcode| Bag {
            identity: identity.clone(),
            seat: seat.clone(),
            barcode,
            status: Status::Valid,
        }));
    }
    ctx.store.trips[i].baggage.extend(bags);
    ok_with([])
}

/// `yolcuBagajIptal(wsuser, uetdsSeferReferansNo, bagajBilgileri)`: withdraws the passenger's
/// barcodes listed; one not held refuses the call.
fn yolcu_bagaj_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(item) = el.child("bagajBilgileri") else {
        return Answer::result(codes::INVALID, "bagajBilgileri zorunludur");
    };
    let (identity, seat, barcodes) = or_answer!(bags_input(ctx, i, item));
    let t = &mut ctx.store.trips[i];
    let held = |b: &Bag, code: &str| {
        b.status == Status::Valid && b.identity == identity && b.seat == seat && b.barcode == code
    };
    if let Some(code) = barcodes.iter().find(|c| !t.baggage.iter().any(|b| held(b, c))) {
        return Answer::result(codes::NOT_FOUND, &format!("{code} barkod numaralı bagaj bulunamadı"));
    }
    for b in t.baggage.iter_mut().filter(|b| barcodes.iter().any(|c| held(b, c))) {
        b.status = Status::Cancelled;
    }
    ok_with([])
}

/// `aracMuayeneSorgula(wsuser, plaka)` → `uetdsMuayeneSorguSonuc` with the day the inspection
/// is valid until (`dd/MM/yyyy`).
fn arac_muayene_sorgula(ctx: &mut Ctx, el: &Element) -> Answer {
    let plate = plate_key(&text_or_empty(el, "plaka"));
    let until = ctx.store.registers.inspections.get(&plate).copied();
    let until = until.unwrap_or(NaiveDate::from_ymd_opt(2030, 12, 31).expect("a day"));
    Answer::ret(
        Element::new("return")
            .field("muayeneGecerlilikTarihi", until.format("%d/%m/%Y"))
            .field("sonucKodu", codes::OK)
            .field("sonucMesaji", OK_MESSAGE),
    )
}

/// `yetkiBelgesiKontrol(wsuser, plaka)` → `uetdsFirmaSonuc`: the certificate the plate is on.
fn yetki_belgesi_kontrol(ctx: &mut Ctx, el: &Element) -> Answer {
    let plate = plate_key(&text_or_empty(el, "plaka"));
    if ctx.store.registers.unauthorised.contains(&plate) {
        return Answer::result(
            codes::NOT_REGISTERED,
            "Girilen plaka Bakanlık kayıtlarında herhangi bir yetki belgesine kayıtlı değil!",
        );
    }
    let title = ctx.firm_title();
    Answer::ret(
        Element::new("return")
            .field("belgeGecerlilikTarihi", "31/12/2030")
            .field("belgeNo", format!("D2-{}", ctx.firm))
            .field("belgeTuru", "D2")
            .field("firmaUnvan", title)
            .field("sonucKodu", codes::OK)
            .field("sonucMesaji", OK_MESSAGE),
    )
}

/// `meslekiYeterlilikSorgula(wsuser, kimlikNo)` → `uetdsMesSorguSonuc` with the certificates.
fn mesleki_yeterlilik_sorgula(ctx: &mut Ctx, el: &Element) -> Answer {
    let identity = text_or_empty(el, "kimlikNo");
    if ctx.store.registers.unqualified.contains(&identity) {
        return Answer::result(codes::NOT_REGISTERED, "Mesleki yeterlilik bulunamadı.");
    }
    Answer::ret(
        Element::new("return")
            .field("belgeListesi", "SRC2")
            .field("sonucKodu", codes::OK)
            .field("sonucMesaji", OK_MESSAGE),
    )
}

/// `kimlikDogrulama(wsuser, kimlikBilgileriInput{kimlikNo, adi, soyadi})` →
/// `uetdsKimlikDogrulaSonuc` (`isUygun`).
fn kimlik_dogrulama(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(input) = el.child("kimlikBilgileriInput") else {
        return Answer::result(codes::INVALID, "kimlikBilgileriInput zorunludur");
    };
    let matches = !ctx.store.registers.mismatched.contains(&text_or_empty(input, "kimlikNo"));
    Answer::ret(
        Element::new("return").field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE).field("isUygun", matches),
    )
}

/// `ipTanimla(wsuser, ipBaslangic, ipBitis?)`: registers an address the firm calls from.
fn ip_tanimla(ctx: &mut Ctx, el: &Element) -> Answer {
    let first = text_or_empty(el, "ipBaslangic");
    if first.parse::<std::net::IpAddr>().is_err() {
        return Answer::result(codes::INVALID, "Geçerli bir IP adresi giriniz");
    }
    let last = text(el, "ipBitis").filter(|l| !l.is_empty());
    let id = ctx.store.next();
    ctx.store.allowed.entry((ctx.firm.clone(), ctx.env)).or_default().push((id, first, last));
    ok_with([])
}

/// `ipListele(wsuser)` → `uetdsEsyaIPListeleSonuc`.
fn ip_listele(ctx: &mut Ctx) -> Answer {
    let list = ctx.store.allowed.get(&(ctx.firm.clone(), ctx.env)).cloned().unwrap_or_default();
    let items = list.into_iter().map(|(id, first, last)| {
        Element::new("ipListesi").field("id", id).field("ipBaslangic", first).opt_field("ipBitis", last.as_ref())
    });
    Answer::ret(Element::new("return").field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE).with_all(items))
}

/// `ipSil(wsuser, ipId)`: removes a registered address; the last one cannot be removed.
fn ip_sil(ctx: &mut Ctx, el: &Element) -> Answer {
    let id = long(el, "ipId");
    let list = ctx.store.allowed.entry((ctx.firm.clone(), ctx.env)).or_default();
    let Some(at) = list.iter().position(|(i, _, _)| Some(*i) == id) else {
        return Answer::result(codes::INVALID, "IP kaydı bulunamadı");
    };
    if list.len() == 1 {
        return Answer::result(codes::WRONG_STATE, "Son IP kaydı silinemez");
    }
    list.remove(at);
    ok_with([])
}

fn crew_label(kind: i32) -> &'static str {
    match kind {
        0 => "Şoför",
        1 => "Şoför Yardımcısı",
        2 => "Host",
        3 => "Hostes",
        5 => "Rehber",
        _ => "Diğer",
    }
}

/// `bildirimOzeti(wsuser, uetdsSeferReferansNo)` → `uetdsAriziSeferBildirimOzetSonuc` (cancelled
/// passengers and crew are listed with their 'İptal' state).
pub(super) fn bildirim_ozeti(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let title = ctx.firm_title();
    let t = &ctx.store.trips[i];
    let count = |n: usize| n as i64;
    let valid = t.valid_passengers().count();
    let active_crew = t.active_crew().count();
    let group_name = |id: Option<i64>| t.groups.iter().find(|g| Some(g.id) == id).map(|g| g.name.clone());
    let passengers = t.passengers.iter().map(|p| {
        Element::new("ariziYolcuListesi")
            .field("adi", &p.first_name)
            .opt_field("binisYeriAciklama", p.boarding)
            .opt_field("cinsiyet", p.gender.as_deref().map(gender_label))
            .field("durumAciklama", p.status.label())
            .field("durumKodu", p.status.code())
            .opt_field("grupAdi", group_name(p.group_id))
            .opt_field("inisYeriAciklama", p.alighting)
            .opt_field("koltukNo", p.seat.as_ref())
            .field("soyadi", &p.last_name)
            .field("tckimlikno", &p.identity)
            .opt_field("telefonNo", p.phone.as_ref())
            .field("uetdsBiletRefNo", p.ticket_ref)
            .field("ulkeKodu", &p.nationality)
    });
    let crew = t.crew.iter().map(|c| {
        Element::new("ariziPersonelListesi")
            .field("adi", &c.first_name)
            .opt_field("adres", c.address.as_ref())
            .field("cinsiyet", gender_label(&c.gender))
            .field("durumAciklama", c.status.label())
            .field("personelTuru", crew_label(c.kind))
            .field("seferPersonelId", c.id)
            .field("soyadi", &c.last_name)
            .field("tckimlikno", &c.identity)
            .opt_field("telefon", c.phone.as_ref())
            .field("ulke", &c.nationality)
    });
    let first_group = t.valid_groups().next();
    let r = Element::new("return")
        .field("seferTarihi", date_time(t.departure_date))
        .field("firmaUnvan", title)
        .field("firmaSeferNo", &t.firma_sefer_no)
        .field("seferSaati", &t.departure_time)
        .field("seferDurumKodu", t.status.code())
        .field("seferDurumAciklama", t.status.label())
        .field("belgeNo", format!("D2-{}", t.firm))
        .field("belgeTuru", if t.service == Service::Tarifeli { "D1" } else { "D2" })
        .field("bildirilenYolcuSayisi", count(valid))
        .field("iptalYolcuSayisi", count(t.passengers.len() - valid))
        .field("gelmeyenYolcuSayisi", 0)
        .field("personelKayitSayisi", count(active_crew))
        .field("iptalPersonelKayitSayisi", count(t.crew.len() - active_crew))
        .field("bagajAdedi", count(t.baggage.len()))
        .field("iptalBagajAdedi", count(t.baggage.len() - t.valid_baggage().count()))
        .field("aracPlaka", &t.plate)
        .opt_field("seferAciklama", t.description.as_ref())
        .opt_field("aracTelefonu", t.phone.as_ref())
        .opt_field("seferBasYeri", first_group.and_then(|g| g.start_place.clone()))
        .opt_field("seferBitYeri", first_group.map(|g| g.end_place.clone()))
        .opt_field("seferBitTarihi", t.end_date.map(date_time))
        .opt_field("seferBitSaati", t.end_time.as_ref())
        .with_all(t.groups.iter().filter(|g| g.status == Status::Valid).map(|g| group_list_item("grupListesi", t, g)))
        .with_all(crew)
        .with_all(passengers)
        .field("sonucKodu", codes::OK)
        .field("sonucMesaji", OK_MESSAGE);
    Answer::ret(r)
}

/// `seferDetayCiktisiAl(wsuser, uetdsSeferReferansNo)` → `uetdsGenelPdfSonuc` (a small PDF).
fn sefer_detay_ciktisi(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let t = &ctx.store.trips[i];
    let doc = pdf(&format!("U-ETDS SEFER {} {} {}", t.reference, t.plate, t.firma_sefer_no));
    ok_with([Element::leaf("sonucPdf", base64::engine::general_purpose::STANDARD.encode(doc))])
}
