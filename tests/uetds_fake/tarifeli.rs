//! The scheduled (tarifeli) service in the provisional shape TNS implements (see `tarifeli.xsd`
//! beside this file): a trip on an approved route, crew as in arızi, one ticket per passenger,
//! and the arızi list and summary replies.

use super::arizi;
use super::ops::{
    codes, is_country, is_gender, is_hhmm, long, or_answer, parse_ymd, text, text_or_empty, Ctx, OK_MESSAGE,
};
use super::reply::Answer;
use super::state::{Passenger, Status};
use super::xml::Element;

/// Runs a tarifeli operation; `None` for anything else.
pub(crate) fn handle(ctx: &mut Ctx, op: &str, el: &Element) -> Option<Answer> {
    Some(match op {
        "seferEkle" => sefer_ekle(ctx, el),
        "personelEkle" => arizi::personel_ekle(ctx, el),
        "personelIptal" => arizi::personel_iptal(ctx, el),
        "yolcuBiletEkle" => yolcu_bilet_ekle(ctx, el),
        "yolcuBiletIptalUetdsBiletRefNoIle" => bilet_iptal(ctx, el),
        "seferIptal" => arizi::sefer_iptal(ctx, el),
        "seferBildirimListele" => arizi::sefer_bildirim_listele(ctx, el),
        "bildirimOzeti" => arizi::bildirim_ozeti(ctx, el),
        _ => return None,
    })
}

/// `seferEkle(wsuser, tarifeliSeferBilgileriInput)` → `{sonucKodu, sonucMesaji, uetdsSeferReferansNo}`.
fn sefer_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let Some(i) = el.child("tarifeliSeferBilgileriInput") else {
        return Answer::result(codes::INVALID, "tarifeliSeferBilgileriInput zorunludur");
    };
    let date = text_or_empty(i, "hareketTarihi");
    let Some(departure_date) = parse_ymd(&date) else {
        return ctx.format_error(format!("hareketTarihi {date:?} is not YYYY-MM-DD"));
    };
    let departure_time = text_or_empty(i, "hareketSaati");
    if !is_hhmm(&departure_time) {
        return ctx.format_error(format!("hareketSaati {departure_time:?} is not HH:mm"));
    }
    let hours = long(i, "seyahatSuresi").unwrap_or(0);
    if hours <= 0 {
        return Answer::result(codes::INVALID, "Seyahat süresi sıfırdan büyük olmalıdır");
    }
    let plate = text_or_empty(i, "aracPlaka");
    if plate.is_empty() {
        return Answer::result(codes::INVALID, "Araç plakası zorunludur");
    }
    let input = arizi::TripInput {
        plate,
        description: None,
        departure_date,
        departure_time,
        phone: text(i, "aracTelefonu"),
        firma_sefer_no: i.child_text("firmaSeferNo").unwrap_or_default().to_string(),
        end_date: None,
        end_time: None,
    };
    arizi::declare(ctx, input, long(i, "unetGuzergahKodu"), Some(hours as i32), OK_MESSAGE)
}

/// `yolcuBiletEkle(wsuser, uetdsSeferReferansNo, yolcuBiletBilgileriInput)` →
/// `{sonucKodu, sonucMesaji, uetdsBiletRefNo}`.
fn yolcu_bilet_ekle(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(arizi::valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(item) = el.child("yolcuBiletBilgileriInput") else {
        return Answer::result(codes::INVALID, "yolcuBiletBilgileriInput zorunludur");
    };
    let identity = text_or_empty(item, "tcKimlikPasaportNo");
    if let Some(message) = ctx.refused_passengers.get(&identity) {
        return Answer::result(codes::REFUSED, message);
    }
    let nationality = text_or_empty(item, "uyrukUlke");
    if !is_country(&nationality) {
        return ctx.format_error(format!("uyrukUlke {nationality:?} is not a two-letter code"));
    }
    let gender = text_or_empty(item, "cinsiyet");
    if !is_gender(&gender) {
        return ctx.format_error(format!("passenger cinsiyet {gender:?} is not E or K"));
    }
    let ticket_ref = ctx.store.ticket_reference();
    ctx.store.trips[i].passengers.push(Passenger {
        ticket_ref,
        nationality,
        identity,
        gender: Some(gender),
        first_name: text_or_empty(item, "adi"),
        last_name: text_or_empty(item, "soyadi"),
        seat: text(item, "koltukNo"),
        phone: text(item, "telefonNo"),
        group_id: None,
        boarding: long(item, "binisYerKodu"),
        alighting: long(item, "inisYerKodu"),
        ticket_serial: text(item, "biletSeriNo"),
        fare: text(item, "tutar"),
        status: Status::Valid,
        cancel_reason: None,
        no_show: None,
    });
    Answer::ret(
        Element::new("return")
            .field("sonucKodu", codes::OK)
            .field("sonucMesaji", OK_MESSAGE)
            .field("uetdsBiletRefNo", ticket_ref),
    )
}

/// `yolcuBiletIptalUetdsBiletRefNoIle(wsuser, uetdsSeferReferansNo, uetdsBiletRefNo, iptalAciklama)`.
fn bilet_iptal(ctx: &mut Ctx, el: &Element) -> Answer {
    let i = or_answer!(arizi::valid_trip_idx(ctx, long(el, "uetdsSeferReferansNo")));
    let Some(r) = long(el, "uetdsBiletRefNo") else {
        return Answer::result(codes::INVALID, "uetdsBiletRefNo zorunludur");
    };
    arizi::cancel_passenger(ctx, i, |p| p.ticket_ref == r, text(el, "iptalAciklama"))
}
