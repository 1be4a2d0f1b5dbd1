//! Goods shipments: U-ETDS's eşya service, V3 operations.
//!
//! A shipment is a trip (`yeniSeferEkleV3`: plate, driver, dates as `dd/MM/yyyy`, our
//! reference in `firmaSeferNo`) and its load (`sefereYukEkleV3`, our reference in
//! `firmaYukNo`). Reconciling finds them by the firm's trips of that day and plate
//! (`seferListesiV3`) and the trip's loads (`seferDetayiV3`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tns_adapter::{
    AdapterError, AdapterResult, Amendment, Cancellation, Cargo, Document, Observed, Reactivation, Receipt, Step,
};

use crate::{
    arizi::pdf,
    config::Service,
    continue_with, dmy, number,
    outcome::{accepted, is_cancelled, refused},
    progress::load,
    trips::cancelled,
    wire::esya as w,
    Session,
};

#[derive(Debug, Default, Serialize, Deserialize)]
struct CargoProgress {
    /// `seferId`.
    trip: Option<i64>,
    /// `yukId`.
    load: Option<i64>,
}

/// U-ETDS's unit code (`yukMiktariBirimi`) of our cargo unit. The API refuses, at creation,
/// cargo of an organization that submits to U-ETDS in a unit without one.
fn unit(ours: &str) -> AdapterResult<&'static str> {
    Ok(match ours {
        "KG" => "KG",
        "TON" => "TON",
        "ADET" => "AD",
        "LITRE" => "L",
        other => return Err(AdapterError::Permanent(format!("cargo_unit {other} has no U-ETDS unit"))),
    })
}

/// A decimal with `.` and no exponent, as the service reads it.
fn amount(x: f64) -> String {
    let s = format!("{x}");
    if s.contains('e') {
        format!("{x:.3}")
    } else {
        s
    }
}

fn trip_input(c: &Cargo, reference: &str) -> w::EsyaSeferBilgileriInputV3 {
    w::EsyaSeferBilgileriInputV3 {
        plaka1: c.plate.clone(),
        plaka2: c.trailer_plate.clone(),
        // Required by the service; a shipment without a driver was submitted with a warning,
        // and U-ETDS's refusal says the rest.
        sofor1_tc_no: c.driver.as_ref().map(|d| d.identity_number.clone()).unwrap_or_default(),
        sofor2_tc_no: c.second_driver.as_ref().map(|d| d.identity_number.clone()),
        baslangic_tarihi: dmy(&c.loading.date),
        baslangic_saati: c.loading.time.clone(),
        bitis_tarihi: dmy(&c.unloading.date),
        bitis_saati: c.unloading.time.clone(),
        firma_sefer_no: Some(reference.to_string()),
    }
}

/// A MERNIS code of a place in Türkiye; none abroad.
fn mernis(s: &tns_adapter::Stop, code: i32) -> Option<String> {
    s.country.is_none().then(|| code.to_string())
}

fn load_input(c: &Cargo, reference: &str) -> AdapterResult<w::EsyaYukBilgileriInputV3> {
    if c.transport_type != 1 {
        return Err(AdapterError::Permanent("U-ETDS's goods service takes road shipments only".into()));
    }
    // How dangerous goods are carried, in U-ETDS's codes (1 packaged, 2 tank, 3 bulk).
    let form = |p: &str| -> AdapterResult<String> {
        Ok(match p {
            "packaged" => "1",
            "tank" => "2",
            "bulk" => "3",
            other => {
                return Err(AdapterError::Permanent(format!("dangerous goods carried as {other:?}: no U-ETDS code")))
            }
        }
        .into())
    };
    let dangerous = c.dangerous.as_ref();
    Ok(w::EsyaYukBilgileriInputV3 {
        // 1: dangerous goods (with their UN number and way of carrying), 2: other goods.
        tasima_turu_kodu: if dangerous.is_some() { "1" } else { "2" }.into(),
        // The province and district only in Türkiye (the schema leaves them out abroad).
        yukleme_ulke_kodu: c.loading.country().to_string(),
        yukleme_il_mernis_kodu: mernis(&c.loading, c.loading.city_id),
        yukleme_ilce_mernis_kodu: mernis(&c.loading, c.loading.district_id),
        bosaltma_ulke_kodu: c.unloading.country().to_string(),
        bosaltma_il_mernis_kodu: mernis(&c.unloading, c.unloading.city_id),
        bosaltma_ilce_mernis_kodu: mernis(&c.unloading, c.unloading.district_id),
        yukleme_tarihi: dmy(&c.loading.date),
        yukleme_saati: c.loading.time.clone(),
        bosaltma_tarihi: dmy(&c.unloading.date),
        bosaltma_saati: c.unloading.time.clone(),
        yuk_cins_id: Some(c.cargo_type.to_string()),
        yuk_cins_diger_aciklama: None,
        tehlikeli_madde_tasima_sekli: dangerous.map(|d| form(&d.packaging)).transpose()?,
        muafiyet_turu: dangerous.and_then(|d| d.exemption.clone()),
        un_id: dangerous.map(|d| d.un_number.clone()),
        yuk_miktari: amount(c.amount),
        yuk_miktari_birimi: unit(&c.unit)?.into(),
        gonderen_unvan: c.sender.name.clone(),
        gonderen_vergi_no: Some(c.sender.tax_number.clone()),
        alici_unvan: Some(c.receiver.name.clone()),
        alici_vergi_no: Some(c.receiver.tax_number.clone()),
        firma_yuk_no: Some(reference.to_string()),
    })
}

fn receipt(s: &Session, p: &CargoProgress) -> Receipt {
    Receipt {
        downstream_reference: p.trip.map(|t| t.to_string()).unwrap_or_default(),
        passengers: vec![],
        message: Some("İŞLEM BAŞARILI".into()),
        state: serde_json::json!({ "load": p.load, "environment": s.env }),
    }
}

pub fn advance(s: &Session, c: &Cargo, progress: &Value) -> AdapterResult<Step> {
    let mut p: CargoProgress = load(progress)?;
    let Some(trip) = p.trip else {
        let input = trip_input(c, s.reference);
        // Checked before the trip is declared, so a load that cannot be sent leaves nothing behind.
        load_input(c, s.reference)?;
        let r =
            accepted(s.call(Service::Esya, &w::YeniSeferEkleV3 { wsuser: s.wsuser(), sefer_bilgileri_input: input })?)?;
        p.trip = Some(
            r.sefer_id.ok_or_else(|| AdapterError::Transient("U-ETDS accepted the trip but gave no seferId".into()))?,
        );
        return continue_with(&p, p.trip);
    };
    let r = s.call(
        Service::Esya,
        &w::SefereYukEkleV3 {
            wsuser: s.wsuser(),
            sefer_id: trip,
            yuk_bilgileri_input_list: vec![load_input(c, s.reference)?],
        },
    )?;
    let item = r.uetds_esya_sonuc.iter().find(|y| y.sira == 1).or(r.uetds_esya_sonuc.first());
    match item {
        Some(y) if y.sonuc_kodu == 0 => p.load = y.yuk_id,
        Some(y) => return Err(refused(y.sonuc_kodu, y.sonuc_mesaji.as_deref())),
        None => {
            accepted(r)?;
            return Err(AdapterError::Transient("U-ETDS accepted the load but gave no result".into()));
        }
    }
    Ok(Step::Done { receipt: receipt(s, &p) })
}

pub fn reconcile(s: &Session, c: &Cargo, progress: &Value) -> AdapterResult<Step> {
    let mut p: CargoProgress = load(progress)?;
    if p.trip.is_none() {
        let list = accepted(s.call(
            Service::Esya,
            &w::SeferListesiV3 {
                wsuser: s.wsuser(),
                sefer_baslangic_tarihi: dmy(&c.loading.date),
                plaka: c.plate.clone(),
            },
        )?)?;
        p.trip = list
            .sefer_listesi
            .iter()
            .find(|t| t.firma_sefer_no.as_deref().is_some_and(|n| s.is_ours(n)))
            .and_then(|t| t.sefer_id);
        if p.trip.is_none() {
            return continue_with(&p, None);
        }
    }
    let detail = detail(s, p.trip.unwrap_or_default())?;
    let found = detail
        .yuk_listesi
        .iter()
        .find(|y| y.firma_yuk_no.as_deref().is_some_and(|n| s.is_ours(n)) && !is_cancelled(y.durum.as_deref()));
    match found {
        Some(y) => {
            p.load = y.yuk_id;
            Ok(Step::Done { receipt: receipt(s, &p) })
        }
        None => continue_with(&p, p.trip),
    }
}

fn detail(s: &Session, trip: i64) -> AdapterResult<w::EsyaSeferDetayiSonucV3> {
    accepted(s.call(Service::Esya, &w::SeferDetayiV3 { wsuser: s.wsuser(), sefer_id: trip })?)
}

pub fn cancel(s: &Session, c: &Cancellation) -> AdapterResult<Step> {
    let id = number(&c.downstream_reference, "the goods trip reference")?;
    let op = w::SeferIptalEtV3 {
        wsuser: s.wsuser(),
        sefer_id: id,
        sefer_iptal_tur_kodu: c.cancel_kind.clone().unwrap_or_else(|| s.cfg.goods_cancel_code.to_string()),
        sefer_iptal_aciklama: c.reason.clone(),
    };
    match accepted(s.call(Service::Esya, &op)?) {
        // Refused because it is cancelled already (say, by hand on U-ETDS's portal): done.
        Err(AdapterError::Permanent(_)) if trip_cancelled(s, id)? => Ok(cancelled(c)),
        Err(e) => Err(e),
        Ok(_) => Ok(cancelled(c)),
    }
}

fn trip_cancelled(s: &Session, id: i64) -> AdapterResult<bool> {
    Ok(is_cancelled(detail(s, id)?.sefer_detayi.as_ref().and_then(|t| t.durum.as_deref())))
}

pub fn reconcile_cancel(s: &Session, c: &Cancellation, progress: &Value) -> AdapterResult<Step> {
    let id = number(&c.downstream_reference, "the goods trip reference")?;
    if trip_cancelled(s, id)? {
        Ok(cancelled(c))
    } else {
        continue_with(progress, Some(id))
    }
}

/// What U-ETDS holds now of a delivered goods trip (drift checks), with the sender's reference
/// it was declared under: one detail call. A trip whose every load was cancelled counts as
/// cancelled (one shipment is one load).
pub fn inspect(s: &Session, reference: &str) -> AdapterResult<(Observed, Option<String>)> {
    let r = detail(s, number(reference, "the goods trip reference")?)?;
    let loads_cancelled = !r.yuk_listesi.is_empty() && r.yuk_listesi.iter().all(|l| is_cancelled(l.durum.as_deref()));
    // An answer without the trip says nothing about it: not "active".
    let t = r.sefer_detayi.ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let observed = Observed {
        cancelled: is_cancelled(t.durum.as_deref()) || loads_cancelled,
        plate: t.plaka1,
        departure_date: t.baslangic_tarihi.as_deref().and_then(crate::iso_day),
        departure_time: t.baslangic_saati,
        passengers: None,
        crew: None,
    };
    Ok((observed, t.firma_sefer_no))
}

/// How far a re-activation got: the trip first, then its load if it was cancelled too.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ReactivationProgress {
    trip_active: bool,
}

/// The trip and our load as U-ETDS holds them: (trip active, the load's id and whether it is
/// active). Our load is the one the delivery kept (its `yukId`), else one carrying a tag of
/// this notification's.
fn held(s: &Session, trip: i64, kept: Option<i64>) -> AdapterResult<(bool, Option<(i64, bool)>)> {
    let d = detail(s, trip)?;
    let t = d.sefer_detayi.ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let load = d
        .yuk_listesi
        .iter()
        .find(|y| match kept {
            Some(id) => y.yuk_id == Some(id),
            None => y.firma_yuk_no.as_deref().is_some_and(|n| s.is_ours(n)),
        })
        .and_then(|y| Some((y.yuk_id?, !is_cancelled(y.durum.as_deref()))));
    Ok((!is_cancelled(t.durum.as_deref()), load))
}

fn kept_load(state: &Value) -> Option<i64> {
    state.get("load").and_then(Value::as_i64)
}

/// Re-activate a cancelled goods trip (`seferAktifEtV3`), then its load when U-ETDS holds that
/// cancelled too (`yukAktifEtV3`): one change per call. A refusal of what is active already
/// (re-activated by hand) is done.
pub fn reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&r.downstream_reference, "the goods trip reference")?;
    let mut p: ReactivationProgress = load(progress)?;
    if !p.trip_active {
        match accepted(s.call(Service::Esya, &w::SeferAktifEtV3 { wsuser: s.wsuser(), sefer_id: trip })?) {
            Err(AdapterError::Permanent(_)) if held(s, trip, kept_load(&r.downstream_state))?.0 => {}
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        p.trip_active = true;
        return continue_with(&p, Some(trip));
    }
    match held(s, trip, kept_load(&r.downstream_state))? {
        (_, Some((_, true))) => {}
        (_, Some((load_id, false))) => {
            match accepted(s.call(Service::Esya, &w::YukAktifEtV3 { wsuser: s.wsuser(), yuk_id: load_id })?) {
                Err(AdapterError::Permanent(_)) if held(s, trip, Some(load_id))?.1.is_some_and(|(_, a)| a) => {}
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        // Never "done" without the load: it may be cancelled still.
        (_, None) => {
            return Err(AdapterError::Permanent(format!(
                "U-ETDS's goods trip {trip} is active again, but its load is not found there to check; \
                 re-activate the load on U-ETDS's portal if it is cancelled"
            )))
        }
    }
    Ok(cancelled(r))
}

/// What a re-activation whose last call's outcome is unknown achieved, read from the trip.
pub fn reconcile_reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&r.downstream_reference, "the goods trip reference")?;
    let mut p: ReactivationProgress = load(progress)?;
    let (trip_active, load) = held(s, trip, kept_load(&r.downstream_state))?;
    p.trip_active = trip_active;
    if trip_active && load.is_some_and(|(_, active)| active) {
        return Ok(cancelled(r));
    }
    continue_with(&p, Some(trip))
}

/// How far a goods amendment got, and what it read of the delivery once.
#[derive(Debug, Default, Serialize, Deserialize)]
struct AmendmentProgress {
    /// The tags the trip and the load carry at U-ETDS (`firmaSeferNo`, `firmaYukNo`) and the
    /// load's `yukId`: an edit sends the tags back, so the trip stays ours.
    tags: Option<Tags>,
    trip_sent: bool,
    load_sent: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tags {
    trip: Option<String>,
    load: Option<String>,
    load_id: i64,
}

/// The delivered trip's and load's tags and the load's id, read from the trip's detail (the
/// load the delivery kept; a shipment is one load, so without one kept, the trip's).
fn tags(s: &Session, trip: i64, state: &Value) -> AdapterResult<Tags> {
    let d = detail(s, trip)?;
    let t = d.sefer_detayi.ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let kept = kept_load(state);
    let load = d.yuk_listesi.iter().find(|y| kept.is_none_or(|id| y.yuk_id == Some(id))).ok_or_else(|| {
        AdapterError::Permanent(format!("U-ETDS's goods trip {trip} does not hold this shipment's load"))
    })?;
    Ok(Tags {
        trip: t.firma_sefer_no,
        load: load.firma_yuk_no.clone(),
        load_id: load.yuk_id.ok_or_else(|| AdapterError::Suspect("U-ETDS listed the load without its id".into()))?,
    })
}

/// A delivered shipment changed: the trip edited in place (`seferDuzenleV3`) when its own
/// fields differ, then the load (`yukDuzenleV3`) when its fields differ, each with the tags it
/// was declared with. An edit sets fields to values, so one whose outcome is unknown is simply
/// made again.
pub fn advance_amendment(s: &Session, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let g = a.goods.as_ref().ok_or_else(|| AdapterError::Permanent("a goods amendment without its shipment".into()))?;
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    let mut p: AmendmentProgress = load(progress)?;
    let Some(tags) = p.tags.clone() else {
        p.tags = Some(tags(s, trip, &a.downstream_state)?);
        return continue_with(&p, Some(trip));
    };
    let (trip_tag, load_tag) =
        (tags.trip.as_deref().unwrap_or(s.reference), tags.load.as_deref().unwrap_or(s.reference));
    let now = trip_input(&g.now, trip_tag);
    if !p.trip_sent && trip_input(&g.held, trip_tag) != now {
        let op = w::SeferDuzenleV3 { wsuser: s.wsuser(), sefer_id: trip, sefer_bilgileri_input: now };
        accepted(s.call(Service::Esya, &op)?)?;
        p.trip_sent = true;
        return continue_with(&p, Some(trip));
    }
    let now = load_input(&g.now, load_tag)?;
    if !p.load_sent && load_input(&g.held, load_tag)? != now {
        let op = w::YukDuzenleV3 { wsuser: s.wsuser(), yuk_id: tags.load_id, yuk_bilgileri_input: now };
        accepted(s.call(Service::Esya, &op)?)?;
        p.load_sent = true;
    }
    Ok(Step::Done {
        receipt: Receipt {
            downstream_reference: trip.to_string(),
            passengers: vec![],
            message: Some("İŞLEM BAŞARILI".into()),
            state: a.downstream_state.clone(),
        },
    })
}

/// An edit whose outcome is unknown is made again (it sets the same values): the progress
/// stands.
pub fn reconcile_amendment(a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    continue_with(progress, Some(trip))
}

pub fn report(s: &Session, id: i64) -> AdapterResult<Document> {
    let r = accepted(s.call(Service::Esya, &w::SeferRaporuV3 { wsuser: s.wsuser(), sefer_id: id })?)?;
    pdf(r.sonuc_pdf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_amounts() {
        assert_eq!(unit("ADET").unwrap(), "AD");
        assert_eq!(unit("LITRE").unwrap(), "L");
        assert!(unit("M3").is_err());
        assert_eq!(amount(1500.0), "1500");
        assert_eq!(amount(12.5), "12.5");
        assert_eq!(amount(1e9), "1000000000");
    }
}
