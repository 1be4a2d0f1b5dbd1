//! The goods (eşya) service, V3 operations, with the result types of
//! `adapters/uetds/schema/uetdsesya-v3.xsd` (base `uetdsGenelIslemSonuc` fields first, then the
//! extension's). Dates are `dd/MM/yyyy` and times `HH:mm`; anything else is answered as the
//! service's business error and recorded as a violation.

use base64::Engine;
use chrono::NaiveDate;

use super::ops::{
    codes, is_hhmm, long, or_answer, parse_dmy, plate_key, text, text_or_empty, timestamp, Ctx, OK_MESSAGE,
};
use super::reply::{pdf, Answer};
use super::state::{CargoTrip, Load, Status};
use super::xml::Element;

/// Trip cancellation kinds (`seferIptalTurleri`). The real list is reference data the client
/// must read, not hard-code; the fake's codes are its own.
pub(crate) const TRIP_CANCEL_KINDS: [(&str, &str); 3] =
    [("1", "SEFER GERÇEKLEŞMEDİ"), ("2", "HATALI BİLDİRİM"), ("3", "DİĞER")];
/// Load cancellation kinds (`iptalTurleri`).
pub(crate) const LOAD_CANCEL_KINDS: [(&str, &str); 3] =
    [("1", "YÜK TAŞINMADI"), ("2", "HATALI BİLDİRİM"), ("3", "DİĞER")];
/// Transport types (`paramTasimaTurleri`).
pub(crate) const TRANSPORT_KINDS: [(&str, &str); 2] = [("1", "TEHLİKELİ MADDE"), ("2", "DİĞER")];
/// Goods types (`paramYukTuru`) of dangerous goods (transport type 1) and of others.
pub(crate) const DANGEROUS_GOODS_TYPES: [(i64, &str); 2] = [(101, "PATLAYICI MADDELER"), (103, "YANICI SIVILAR")];
pub(crate) const GOODS_TYPES: [(i64, &str); 3] = [(1, "GIDA"), (2, "TEKSTİL"), (3, "İNŞAAT MALZEMESİ")];
/// Quantity units (`paramYukBirimi`), the same for both transport types here.
pub(crate) const UNITS: [(&str, &str); 4] = [("KG", "KİLOGRAM"), ("TON", "TON"), ("AD", "ADET"), ("L", "LİTRE")];
/// How dangerous goods travel (`paramTehlikeliMaddeTasimaSekli`).
pub(crate) const PACKAGING: [(&str, &str); 3] = [("1", "AMBALAJLI"), ("2", "TANK"), ("3", "DÖKME")];
/// Dangerous-goods exemptions (`paramTehlikeMaddeMuafiyetTurleri`).
pub(crate) const EXEMPTIONS: [(&str, &str); 2] = [("1", "SINIRLI MİKTAR MUAFİYETİ"), ("2", "MUAFİYET YOK")];

/// Runs an eşya operation; `None` for operations the fake does not simulate.
pub(crate) fn handle(ctx: &mut Ctx, op: &str, el: &Element) -> Option<Answer> {
    Some(match op {
        "servisTest" => Answer::ret(Element::leaf("return", el.child_text("testMsj").unwrap_or_default())),
        "yeniSeferEkleV3" => yeni_sefer(ctx, el),
        "seferDuzenleV3" => sefer_duzenle(ctx, el),
        "seferIptalEtV3" => sefer_iptal(ctx, el),
        "seferAktifEtV3" => sefer_aktif(ctx, el),
        "sefereYukEkleV3" => yuk_ekle(ctx, el),
        "yukIptalEtV3" => yuk_iptal(ctx, el),
        "yukDuzenleV3" => yuk_duzenle(ctx, el),
        "yukAktifEtV3" => yuk_aktif(ctx, el),
        "seferDetayiV3" => sefer_detayi(ctx, el),
        "seferListesiV3" => sefer_listesi(ctx, el),
        "seferRaporuV3" => sefer_raporu(ctx, el),
        "seferIptalTurleri" => kinds(&TRIP_CANCEL_KINDS),
        "iptalTurleri" => kinds(&LOAD_CANCEL_KINDS),
        "paramTasimaTurleri" => listed("tasimaTuruListesi", &TRANSPORT_KINDS),
        "paramYukTuru" => goods_types(el),
        "paramYukBirimi" => listed("paramYukBirimiListesi", &UNITS),
        "paramTehlikeliMaddeTasimaSekli" => listed("tehlikeliMaddeTasimaSekliListesi", &PACKAGING),
        "paramTehlikeMaddeMuafiyetTurleri" => listed("muafiyetTuruListesi", &EXEMPTIONS),
        _ => return None,
    })
}

fn ok() -> Element {
    Element::new("return").field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE)
}

fn date(ctx: &mut Ctx, el: &Element, name: &str) -> Result<NaiveDate, Answer> {
    let s = text_or_empty(el, name);
    parse_dmy(&s).ok_or_else(|| ctx.format_error(format!("{name} {s:?} is not dd/MM/yyyy")))
}

fn time(ctx: &mut Ctx, el: &Element, name: &str) -> Result<String, Answer> {
    let s = text_or_empty(el, name);
    if is_hhmm(&s) {
        Ok(s)
    } else {
        Err(ctx.format_error(format!("{name} {s:?} is not HH:mm")))
    }
}

struct TripInput {
    plate1: String,
    plate2: Option<String>,
    driver1: String,
    driver2: Option<String>,
    start: (NaiveDate, String),
    end: (NaiveDate, String),
    firma_sefer_no: Option<String>,
}

/// Reads an `uetdsEsyaSeferBilgileriInputV3`.
fn trip_input(ctx: &mut Ctx, el: &Element) -> Result<TripInput, Answer> {
    let Some(i) = el.child("seferBilgileriInput") else {
        return Err(Answer::result(codes::INVALID, "seferBilgileriInput zorunludur"));
    };
    let start = (date(ctx, i, "baslangicTarihi")?, time(ctx, i, "baslangicSaati")?);
    let end = (date(ctx, i, "bitisTarihi")?, time(ctx, i, "bitisSaati")?);
    if end < start {
        return Err(Answer::result(codes::INVALID, "Bitiş zamanı başlangıç zamanından önce olamaz"));
    }
    let plate1 = text_or_empty(i, "plaka1");
    let driver1 = text_or_empty(i, "sofor1TCNo");
    if plate1.is_empty() || driver1.is_empty() {
        return Err(Answer::result(codes::INVALID, "plaka1 ve sofor1TCNo zorunludur"));
    }
    Ok(TripInput {
        plate1,
        plate2: text(i, "plaka2"),
        driver1,
        driver2: text(i, "sofor2TCNo"),
        start,
        end,
        firma_sefer_no: text(i, "firmaSeferNo"),
    })
}

/// `yeniSeferEkleV3(wsuser, seferBilgileriInput)` → `uetdsEsyaSeferEkleSonucV3{seferId, firmaSeferNo}`.
fn yeni_sefer(ctx: &mut Ctx, el: &Element) -> Answer {
    let input = or_answer!(trip_input(ctx, el));
    let id = ctx.store.cargo_trip_id();
    let firma_sefer_no = input.firma_sefer_no.clone();
    ctx.store.cargo.push(CargoTrip {
        env: ctx.env,
        firm: ctx.firm.clone(),
        id,
        firma_sefer_no: input.firma_sefer_no,
        plate1: input.plate1,
        plate2: input.plate2,
        driver1: input.driver1,
        driver2: input.driver2,
        start_date: input.start.0,
        start_time: input.start.1,
        end_date: input.end.0,
        end_time: input.end.1,
        status: Status::Valid,
        cancel_code: None,
        cancel_reason: None,
        declared_at: ctx.now,
        updates: 0,
        loads: Vec::new(),
    });
    Answer::ret(ok().field("seferId", id).opt_field("firmaSeferNo", firma_sefer_no))
}

fn trip_idx(ctx: &Ctx, id: Option<i64>) -> Result<usize, Answer> {
    let id = id.ok_or_else(|| Answer::result(codes::INVALID, "seferId zorunludur"))?;
    ctx.store
        .cargo
        .iter()
        .position(|t| t.env == ctx.env && t.firm == ctx.firm && t.id == id)
        .ok_or_else(|| Answer::result(codes::NOT_FOUND, &format!("{id} numaralı sefer bulunamadı")))
}

fn valid_trip_idx(ctx: &Ctx, id: Option<i64>) -> Result<usize, Answer> {
    let i = trip_idx(ctx, id)?;
    if ctx.store.cargo[i].status == Status::Cancelled {
        return Err(Answer::result(codes::WRONG_STATE, "Sefer iptal edilmiş, işlem yapılamaz"));
    }
    Ok(i)
}

/// `seferDuzenleV3(wsuser, seferId, seferBilgileriInput)`.
fn sefer_duzenle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "seferId")));
    let input = or_answer!(trip_input(ctx, el));
    let t = &mut ctx.store.cargo[i];
    t.plate1 = input.plate1;
    t.plate2 = input.plate2;
    t.driver1 = input.driver1;
    t.driver2 = input.driver2;
    (t.start_date, t.start_time) = input.start;
    (t.end_date, t.end_time) = input.end;
    t.firma_sefer_no = input.firma_sefer_no;
    t.updates += 1;
    Answer::ret(ok())
}

fn kind_known(kinds: &[(&str, &str)], code: &str) -> bool {
    kinds.iter().any(|(k, _)| *k == code)
}

/// `seferIptalEtV3(wsuser, seferId, seferIptalTurKodu, seferIptalAciklama)`.
fn sefer_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "seferId")));
    let code = text_or_empty(el, "seferIptalTurKodu");
    if !kind_known(&TRIP_CANCEL_KINDS, &code) {
        return Answer::result(codes::INVALID, &format!("{code:?} geçerli bir sefer iptal türü değil"));
    }
    let t = &mut ctx.store.cargo[i];
    if t.status == Status::Cancelled {
        return Answer::result(codes::WRONG_STATE, "Sefer daha önce iptal edilmiş");
    }
    t.status = Status::Cancelled;
    t.cancel_code = Some(code);
    t.cancel_reason = text(el, "seferIptalAciklama");
    Answer::ret(ok())
}

/// `seferAktifEtV3(wsuser, seferId)`.
fn sefer_aktif(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "seferId")));
    let t = &mut ctx.store.cargo[i];
    if t.status == Status::Valid {
        return Answer::result(codes::WRONG_STATE, "Sefer zaten geçerli durumda");
    }
    t.status = Status::Valid;
    t.cancel_code = None;
    t.cancel_reason = None;
    Answer::ret(ok())
}

/// One `uetdsEsyaYukBilgileriInputV3` checked; `Err` is the item's code and message.
fn load(ctx: &mut Ctx, item: &Element) -> Result<Load, (i32, String)> {
    let firma_yuk_no = text(item, "firmaYukNo");
    if let Some(message) = firma_yuk_no.as_ref().and_then(|n| ctx.refused_loads.get(n)) {
        return Err((codes::REFUSED, message.clone()));
    }
    let mut format = |m: String| {
        ctx.violations.push(m.clone());
        Err((codes::INVALID, m))
    };
    let kind = text_or_empty(item, "tasimaTuruKodu");
    if !matches!(kind.as_str(), "1" | "2") {
        return format(format!("tasimaTuruKodu {kind:?} is not 1 (dangerous) or 2 (other)"));
    }
    // Dangerous goods come with their UN number and way of carrying; other goods without.
    let (un, form) = (text(item, "unId"), text(item, "tehlikeliMaddeTasimaSekli"));
    if kind == "1" {
        if !un.as_deref().is_some_and(|u| u.len() == 4 && u.bytes().all(|b| b.is_ascii_digit())) {
            return Err((codes::INVALID, "Tehlikeli madde için UN numarası zorunludur".into()));
        }
        if !form.as_deref().is_some_and(|f| matches!(f, "1" | "2" | "3")) {
            return format(format!("tehlikeliMaddeTasimaSekli {form:?} is not 1, 2 or 3"));
        }
    } else if un.is_some() || form.is_some() || text(item, "muafiyetTuru").is_some() {
        return Err((codes::INVALID, "Tehlikeli madde bilgileri yalnız tehlikeli madde taşımasında verilir".into()));
    }
    let mut dates = Vec::new();
    for (d, t) in [("yuklemeTarihi", "yuklemeSaati"), ("bosaltmaTarihi", "bosaltmaSaati")] {
        let ds = text_or_empty(item, d);
        let ts = text_or_empty(item, t);
        let Some(date) = parse_dmy(&ds) else { return format(format!("{d} {ds:?} is not dd/MM/yyyy")) };
        if !is_hhmm(&ts) {
            return format(format!("{t} {ts:?} is not HH:mm"));
        }
        dates.push((date, ts));
    }
    let amount = text_or_empty(item, "yukMiktari");
    let (int, frac) = amount.split_once('.').unwrap_or((amount.as_str(), "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(int) && digits(frac)) {
        return format(format!("yukMiktari {amount:?} is not a decimal with '.'"));
    }
    if dates[1] < dates[0] {
        return Err((codes::INVALID, "Boşaltma zamanı yükleme zamanından önce olamaz".into()));
    }
    for name in ["yuklemeUlkeKodu", "bosaltmaUlkeKodu", "yukMiktariBirimi", "gonderenUnvan"] {
        if text(item, name).is_none() {
            return Err((codes::INVALID, format!("{name} zorunludur")));
        }
    }
    // In Türkiye the province and district are required (the schema makes them optional for
    // places abroad).
    for side in ["yukleme", "bosaltma"] {
        let country = text_or_empty(item, &format!("{side}UlkeKodu"));
        let province = text(item, &format!("{side}IlMernisKodu"));
        let district = text(item, &format!("{side}IlceMernisKodu"));
        if country == "TR" && (province.is_none() || district.is_none()) {
            return Err((codes::INVALID, format!("{side} il ve ilçe bilgisi Türkiye için zorunludur")));
        }
        if country != "TR" && (province.is_some() || district.is_some()) {
            return Err((codes::INVALID, format!("{side} il ve ilçe bilgisi yalnız Türkiye için verilir")));
        }
    }
    Ok(Load {
        id: 0,
        firma_yuk_no,
        transport_kind: kind,
        status: Status::Valid,
        cancel_code: None,
        cancel_reason: None,
        updates: 0,
        input: item.clone(),
    })
}

/// `sefereYukEkleV3(wsuser, seferId, yukBilgileriInputList…)` → `uetdsEsyaYeniYukEkleSonucV3`:
/// per item `sira` (1-based), `sonucKodu`, `firmaYukNo` echoed, `yukId` when stored; overall 0,
/// 88 when some failed (as the passenger bulk add), nonzero when all failed.
fn yuk_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(valid_trip_idx(ctx, long(el, "seferId")));
    let items: Vec<&Element> = el.children_named("yukBilgileriInputList").collect();
    let mut results = Vec::new();
    let mut stored = 0;
    for (n, item) in items.iter().enumerate() {
        let echo = text(item, "firmaYukNo");
        results.push(match load(ctx, item) {
            Ok(mut l) => {
                l.id = ctx.store.load_id();
                let id = l.id;
                ctx.store.cargo[i].loads.push(l);
                stored += 1;
                ok().rename("uetdsEsyaSonuc").field("sira", n + 1).opt_field("firmaYukNo", echo).field("yukId", id)
            }
            Err((code, message)) => Element::new("uetdsEsyaSonuc")
                .field("sonucKodu", code)
                .field("sonucMesaji", message)
                .field("sira", n + 1)
                .opt_field("firmaYukNo", echo),
        });
    }
    let (code, message) = match stored {
        s if s == items.len() => (codes::OK, OK_MESSAGE.to_string()),
        0 => (codes::INVALID, "Yüklerin hiçbiri eklenemedi".to_string()),
        s => (codes::PARTIAL, format!("{} yükten {s} tanesi eklendi, hatalı olanları kontrol ediniz", items.len())),
    };
    Answer::ret(Element::new("return").field("sonucKodu", code).field("sonucMesaji", message).with_all(results))
}

/// `yukIptalEtV3(wsuser, yukId, yukIptalTurKodu, yukIptalAciklama)`.
fn yuk_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(id) = long(el, "yukId") else { return Answer::result(codes::INVALID, "yukId zorunludur") };
    let code = text_or_empty(el, "yukIptalTurKodu");
    if !kind_known(&LOAD_CANCEL_KINDS, &code) {
        return Answer::result(codes::INVALID, &format!("{code:?} geçerli bir yük iptal türü değil"));
    }
    let l = or_answer!(firms_load(ctx, id));
    if l.status == Status::Cancelled {
        return Answer::result(codes::WRONG_STATE, "Yük daha önce iptal edilmiş");
    }
    l.status = Status::Cancelled;
    l.cancel_code = Some(code);
    l.cancel_reason = text(el, "yukIptalAciklama");
    Answer::ret(ok())
}

/// `yukDuzenleV3(wsuser, yukId, yukBilgileriInput)`: the load's fields replaced, judged as an
/// added load's are.
fn yuk_duzenle(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(id) = long(el, "yukId") else { return Answer::result(codes::INVALID, "yukId zorunludur") };
    let Some(item) = el.child("yukBilgileriInput") else {
        return Answer::result(codes::INVALID, "yukBilgileriInput zorunludur");
    };
    let edited = match load(ctx, item) {
        Ok(l) => l,
        Err((code, message)) => return Answer::result(code, &message),
    };
    let l = or_answer!(firms_load(ctx, id));
    if l.status == Status::Cancelled {
        return Answer::result(codes::WRONG_STATE, "Yük iptal edilmiş, düzenlenemez");
    }
    let updates = l.updates + 1;
    *l = Load { id, updates, ..edited };
    Answer::ret(ok())
}

/// The calling firm's load `id` in the environment called, or the service's "not found".
fn firms_load<'a>(ctx: &'a mut Ctx<'_>, id: i64) -> Result<&'a mut Load, Answer> {
    let (env, firm) = (ctx.env, ctx.firm.clone());
    ctx.store
        .cargo
        .iter_mut()
        .filter(|t| t.env == env && t.firm == firm)
        .flat_map(|t| t.loads.iter_mut())
        .find(|l| l.id == id)
        .ok_or_else(|| Answer::result(codes::NOT_FOUND, &format!("{id} numaralı yük bulunamadı")))
}

/// `yukAktifEtV3(wsuser, yukId)`.
fn yuk_aktif(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(id) = long(el, "yukId") else { return Answer::result(codes::INVALID, "yukId zorunludur") };
    let l = or_answer!(firms_load(ctx, id));
    if l.status == Status::Valid {
        return Answer::result(codes::WRONG_STATE, "Yük zaten geçerli durumda");
    }
    l.status = Status::Valid;
    l.cancel_code = None;
    l.cancel_reason = None;
    Answer::ret(ok())
}

fn dmy(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// `seferDetayiV3(wsuser, seferId)` → `uetdsEsyaSeferDetayiSonucV3{seferDetayi, yukListesi…}`.
fn sefer_detayi(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "seferId")));
    let t = &ctx.store.cargo[i];
    let cancel_label = |code: &Option<String>, kinds: &[(&str, &str)]| {
        code.as_ref().and_then(|c| kinds.iter().find(|(k, _)| k == c)).map(|(_, l)| l.to_string())
    };
    let detail = Element::new("seferDetayi")
        .field("baslangicSaati", &t.start_time)
        .field("baslangicTarihi", dmy(t.start_date))
        .field("bildirimTarihi", timestamp(t.declared_at))
        .field("bitisSaati", &t.end_time)
        .field("bitisTarihi", dmy(t.end_date))
        .field("durum", t.status.label())
        .opt_field("firmaSeferNo", t.firma_sefer_no.as_ref())
        .opt_field("iptalAciklama", t.cancel_reason.as_ref())
        .opt_field("iptalTurAciklama", cancel_label(&t.cancel_code, &TRIP_CANCEL_KINDS))
        .opt_field("iptalTurKodu", t.cancel_code.as_ref())
        .field("plaka1", &t.plate1)
        .opt_field("plaka2", t.plate2.as_ref())
        .field("seferId", t.id)
        .field("sofor1TCNo", &t.driver1)
        .opt_field("sofor2TCNo", t.driver2.as_ref());
    let loads = t.loads.iter().map(|l| {
        Element::new("yukListesi")
            .field("durum", l.status.label())
            .opt_field("firmaYukNo", l.firma_yuk_no.as_ref())
            .field("yukId", l.id)
    });
    Answer::ret(ok().with(detail).with_all(loads.collect::<Vec<_>>()))
}

/// `seferListesiV3(wsuser, seferBaslangicTarihi, plaka)` → `uetdsEsyaSeferListesiSonucV3`: this
/// firm's trips starting that day (`dd/MM/yyyy`) with that plate as `plaka1` or `plaka2`.
fn sefer_listesi(ctx: &mut Ctx, el: &Element) -> Answer {
    let day = or_answer!(date(ctx, el, "seferBaslangicTarihi"));
    let plate = plate_key(&text_or_empty(el, "plaka"));
    let items: Vec<Element> = ctx
        .store
        .cargo
        .iter()
        .filter(|t| t.env == ctx.env && t.firm == ctx.firm && t.start_date == day)
        .filter(|t| plate_key(&t.plate1) == plate || t.plate2.as_deref().is_some_and(|p| plate_key(p) == plate))
        .map(|t| {
            Element::new("seferListesi")
                .field("durum", t.status.label())
                .opt_field("firmaSeferNo", t.firma_sefer_no.as_ref())
                .field("seferId", t.id)
        })
        .collect();
    Answer::ret(ok().with_all(items))
}

/// `seferRaporuV3(wsuser, seferId)` → `uetdsGenelPdfSonuc`.
fn sefer_raporu(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(trip_idx(ctx, long(el, "seferId")));
    let t = &ctx.store.cargo[i];
    let doc = pdf(&format!("U-ETDS ESYA SEFER {} {} {}", t.id, t.plate1, t.firma_sefer_no.as_deref().unwrap_or("")));
    Answer::ret(ok().field("sonucPdf", base64::engine::general_purpose::STANDARD.encode(doc)))
}

/// A code list answered after `sonucKodu` and `sonucMesaji`, each entry `{aciklama, kodu}`.
fn listed(element: &str, list: &[(&str, &str)]) -> Answer {
    let items = list.iter().map(|(k, a)| Element::new(element).field("aciklama", a).field("kodu", k));
    Answer::ret(ok().with_all(items))
}

/// `paramYukTuru(tasimaTuruKodu)` → `uetdsEsyaParamEsyaTurSonuc` (`yukTurListesi{adi, id}`).
fn goods_types(el: &Element) -> Answer {
    let list: &[(i64, &str)] =
        if text_or_empty(el, "tasimaTuruKodu") == "1" { &DANGEROUS_GOODS_TYPES } else { &GOODS_TYPES };
    let items = list.iter().map(|(id, a)| Element::new("yukTurListesi").field("adi", a).field("id", id));
    Answer::ret(ok().with_all(items))
}

/// `seferIptalTurleri` / `iptalTurleri` → `uetdsEsyaParamIptalTuruSonuc` (list first).
fn kinds(list: &[(&str, &str)]) -> Answer {
    let items = list.iter().map(|(k, a)| Element::new("iptalTuruListesi").field("aciklama", a).field("kodu", k));
    Answer::ret(Element::new("return").with_all(items).field("sonucKodu", codes::OK).field("sonucMesaji", OK_MESSAGE))
}
