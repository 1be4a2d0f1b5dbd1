//! Goods shipments: U-ETDS's eşya service, V3 operations.
//!
//! A shipment is a trip (`yeniSeferEkleV3`: plate, driver, dates as `dd/MM/yyyy`, our
//! reference in `firmaSeferNo`) and its loads (`sefereYukEkleV3`: the shipment's own, tagged
//! with our reference in `firmaYukNo`, then each of its `items`, tagged `<reference>-2`,
//! `<reference>-3`, …). Reconciling finds them by the firm's trips of that day and plate
//! (`seferListesiV3`) and the trip's loads (`seferDetayiV3`), by their tags.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tns_adapter::{
    AdapterError, AdapterResult, Amendment, Cancellation, Cargo, Document, Load, Observed, Problem, Reactivation,
    Receipt, Step,
};

use crate::{
    arizi::pdf,
    config::Service,
    continue_with, dmy, fingerprint,
    loads::{index_under, sent_of, HeldLoad, Loads},
    number,
    outcome::{accepted, is_cancelled},
    progress::load,
    trips::cancelled,
    wire::esya as w,
    Session,
};

#[derive(Debug, Default, Serialize, Deserialize)]
struct CargoProgress {
    /// `seferId`.
    trip: Option<i64>,
    /// The first load's `yukId`, still written for a plugin of before shipments had several
    /// loads (during a rolling upgrade), which finishes on it rather than declaring it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    load: Option<i64>,
    #[serde(flatten)]
    loads: Loads,
}

/// The tag (`firmaYukNo`) of load `index` of the shipment whose first load carries `base`.
fn load_tag(base: &str, index: usize) -> String {
    match index {
        0 => base.to_string(),
        i => format!("{base}-{}", i + 1),
    }
}

/// The index of the load a tag of U-ETDS's names, when it is one of this notification's.
fn load_index(s: &Session, tag: &str) -> Option<usize> {
    std::iter::once(s.reference).chain(s.earlier.iter().map(String::as_str)).find_map(|r| index_under(r, tag))
}

/// U-ETDS's unit code (`yukMiktariBirimi`) of our cargo unit. [`screen`] finds a unit without
/// one before the shipment is queued.
fn unit(ours: &str) -> AdapterResult<&'static str> {
    Ok(match ours {
        "KG" => "KG",
        "TON" => "TON",
        "ADET" => "AD",
        "LITRE" => "L",
        other => return Err(AdapterError::Permanent(format!("cargo_unit {other} has no U-ETDS unit"))),
    })
}

/// What U-ETDS's goods service would refuse in `c`, named as the API's fields: it takes road
/// shipments (`transport_type` 1) only, in the units it has codes for.
pub(crate) fn screen(c: &Cargo) -> Vec<Problem> {
    let mut found = vec![];
    if c.transport_type != 1 {
        found.push(Problem {
            field: "transport_type".into(),
            detail: "U-ETDS's goods service takes road shipments only (1)".into(),
        });
    }
    let units = std::iter::once(("cargo_unit".to_string(), &c.unit))
        .chain(c.items.iter().enumerate().map(|(i, l)| (format!("items[{i}].cargo_unit"), &l.unit)));
    for (field, ours) in units {
        if unit(ours).is_err() {
            found.push(Problem { field, detail: format!("U-ETDS has no unit for {ours}; use KG, TON, ADET or LITRE") });
        }
    }
    found
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

/// Load `l` of shipment `c` (its places and times are the shipment's), tagged `tag`.
fn load_input(c: &Cargo, l: &Load, tag: &str) -> AdapterResult<w::EsyaYukBilgileriInputV3> {
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
    let dangerous = l.dangerous.as_ref();
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
        yuk_cins_id: Some(l.cargo_type.to_string()),
        yuk_cins_diger_aciklama: None,
        tehlikeli_madde_tasima_sekli: dangerous.map(|d| form(&d.packaging)).transpose()?,
        muafiyet_turu: dangerous.and_then(|d| d.exemption.clone()),
        un_id: dangerous.map(|d| d.un_number.clone()),
        yuk_miktari: amount(l.amount),
        yuk_miktari_birimi: unit(&l.unit)?.into(),
        gonderen_unvan: l.sender.name.clone(),
        gonderen_vergi_no: Some(l.sender.tax_number.clone()),
        alici_unvan: Some(l.receiver.name.clone()),
        alici_vergi_no: Some(l.receiver.tax_number.clone()),
        firma_yuk_no: Some(tag.to_string()),
    })
}

/// Every load of `c`, tagged from `base`.
fn load_inputs(c: &Cargo, base: &str) -> AdapterResult<Vec<w::EsyaYukBilgileriInputV3>> {
    c.loads().iter().enumerate().map(|(i, l)| load_input(c, l, &load_tag(base, i))).collect()
}

/// The receipt of a delivered shipment: the trip, and the loads' ids it keeps for later
/// changes (`load`, the first, as before shipments had several).
fn receipt(s: &Session, trip: i64, loads: &[i64]) -> Receipt {
    Receipt {
        downstream_reference: trip.to_string(),
        passengers: vec![],
        message: Some("İŞLEM BAŞARILI".into()),
        state: serde_json::json!({ "load": loads.first(), "loads": loads, "environment": s.env }),
    }
}

/// The shipment's trip, then its loads (see [`crate::loads`]: a progress carried from an
/// earlier submission of the shipment, edited since or not, is brought in step).
pub(crate) fn advance(s: &Session, c: &Cargo, progress: &Value) -> AdapterResult<Step> {
    let mut p: CargoProgress = load(progress)?;
    // Checked before the trip is declared, so a load that cannot be sent leaves nothing behind.
    let wanted = load_inputs(c, s.reference)?;
    let Some(trip) = p.trip else {
        let input = trip_input(c, s.reference);
        let r =
            accepted(s.call(Service::Esya, &w::YeniSeferEkleV3 { wsuser: s.wsuser(), sefer_bilgileri_input: input })?)?;
        p.trip = Some(
            r.sefer_id.ok_or_else(|| AdapterError::Transient("U-ETDS accepted the trip but gave no seferId".into()))?,
        );
        return continue_with(&p, p.trip);
    };
    if p.loads.step(s, trip, &wanted)? {
        p.load = p.loads.first();
        return continue_with(&p, Some(trip));
    }
    let ids =
        p.loads.in_step(&wanted).ok_or_else(|| AdapterError::Transient("the loads are not in step yet".into()))?;
    Ok(Step::Done { receipt: receipt(s, trip, &ids) })
}

pub(crate) fn reconcile(s: &Session, c: &Cargo, progress: &Value) -> AdapterResult<Step> {
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
    let trip = p.trip.unwrap_or_default();
    let wanted = load_inputs(c, s.reference)?;
    p.loads.look_up(&detail(s, trip)?, |t| load_index(s, t), &wanted);
    p.load = p.loads.first();
    match p.loads.in_step(&wanted) {
        Some(ids) => Ok(Step::Done { receipt: receipt(s, trip, &ids) }),
        None => continue_with(&p, Some(trip)),
    }
}

fn detail(s: &Session, trip: i64) -> AdapterResult<w::EsyaSeferDetayiSonucV3> {
    accepted(s.call(Service::Esya, &w::SeferDetayiV3 { wsuser: s.wsuser(), sefer_id: trip })?)
}

pub(crate) fn cancel(s: &Session, c: &Cancellation) -> AdapterResult<Step> {
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

pub(crate) fn reconcile_cancel(s: &Session, c: &Cancellation, progress: &Value) -> AdapterResult<Step> {
    let id = number(&c.downstream_reference, "the goods trip reference")?;
    if trip_cancelled(s, id)? {
        Ok(cancelled(c))
    } else {
        continue_with(progress, Some(id))
    }
}

/// What U-ETDS holds now of a delivered goods trip (drift checks), with the sender's reference
/// it was declared under: one detail call. A trip whose every load was cancelled counts as
/// cancelled (a shipment's loads are all it has on the trip).
pub(crate) fn inspect(s: &Session, reference: &str) -> AdapterResult<(Observed, Option<String>)> {
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

/// How far a re-activation got: the trip first, then each of its loads cancelled too.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ReactivationProgress {
    trip_active: bool,
    /// The loads re-activated already: one U-ETDS still shows cancelled is not asked again.
    #[serde(default)]
    loads_active: Vec<i64>,
}

/// The loads' ids a delivery kept (`loads`; `load` alone before shipments had several).
fn kept_loads(state: &Value) -> Vec<i64> {
    match state.get("loads").and_then(Value::as_array) {
        Some(ids) => ids.iter().filter_map(Value::as_i64).collect(),
        None => state.get("load").and_then(Value::as_i64).into_iter().collect(),
    }
}

/// The trip and our loads as U-ETDS holds them: whether the trip is active, and each load's
/// id and whether it is active. Our loads are those the delivery kept (their `yukId`s), else
/// those carrying a tag of this notification's; a kept load U-ETDS does not list is an error.
fn held(s: &Session, trip: i64, kept: &[i64]) -> AdapterResult<(bool, Vec<(i64, bool)>)> {
    let d = detail(s, trip)?;
    let t = d.sefer_detayi.ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let listed = |y: &w::EsyaSeferYukListesi| Some((y.yuk_id?, !is_cancelled(y.durum.as_deref())));
    let loads: Vec<(i64, bool)> = if kept.is_empty() {
        d.yuk_listesi
            .iter()
            .filter(|y| y.firma_yuk_no.as_deref().is_some_and(|n| load_index(s, n).is_some()))
            .filter_map(listed)
            .collect()
    } else {
        let found: Vec<(i64, bool)> =
            d.yuk_listesi.iter().filter_map(listed).filter(|(id, _)| kept.contains(id)).collect();
        if let Some(missing) = kept.iter().find(|id| !found.iter().any(|(f, _)| f == *id)) {
            return Err(AdapterError::Permanent(format!(
                "U-ETDS's goods trip {trip} does not list this shipment's load {missing}; check it on U-ETDS's portal"
            )));
        }
        found
    };
    Ok((!is_cancelled(t.durum.as_deref()), loads))
}

/// Re-activate a cancelled goods trip (`seferAktifEtV3`), then each of its loads U-ETDS holds
/// cancelled too (`yukAktifEtV3`): one change per call. A refusal of what is active already
/// (re-activated by hand) is done.
pub(crate) fn reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&r.downstream_reference, "the goods trip reference")?;
    let kept = kept_loads(&r.downstream_state);
    let mut p: ReactivationProgress = load(progress)?;
    if !p.trip_active {
        match accepted(s.call(Service::Esya, &w::SeferAktifEtV3 { wsuser: s.wsuser(), sefer_id: trip })?) {
            Err(AdapterError::Permanent(_)) if held(s, trip, &kept)?.0 => {}
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        p.trip_active = true;
        return continue_with(&p, Some(trip));
    }
    let (_, loads) = held(s, trip, &kept)?;
    // Never "done" without a load: they may be cancelled still.
    if loads.is_empty() {
        return Err(AdapterError::Permanent(format!(
            "U-ETDS's goods trip {trip} is active again, but its loads are not found there to check; \
             re-activate them on U-ETDS's portal if they are cancelled"
        )));
    }
    let Some((load_id, _)) = loads.into_iter().find(|(_, active)| !active) else {
        return Ok(cancelled(r));
    };
    if p.loads_active.contains(&load_id) {
        return Err(AdapterError::Permanent(format!(
            "U-ETDS accepted re-activating load {load_id} of goods trip {trip} but still shows it cancelled; \
             check it on U-ETDS's portal"
        )));
    }
    match accepted(s.call(Service::Esya, &w::YukAktifEtV3 { wsuser: s.wsuser(), yuk_id: load_id })?) {
        Err(AdapterError::Permanent(_)) if held(s, trip, &[load_id])?.1.iter().all(|(_, a)| *a) => {}
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    p.loads_active.push(load_id);
    continue_with(&p, Some(trip))
}

/// What a re-activation whose last call's outcome is unknown achieved, read from the trip.
pub(crate) fn reconcile_reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&r.downstream_reference, "the goods trip reference")?;
    let mut p: ReactivationProgress = load(progress)?;
    let (trip_active, loads) = held(s, trip, &kept_loads(&r.downstream_state))?;
    p.trip_active = trip_active;
    if trip_active && !loads.is_empty() && loads.iter().all(|(_, active)| *active) {
        return Ok(cancelled(r));
    }
    continue_with(&p, Some(trip))
}

/// How far a goods amendment got, and what it read of the delivery once.
#[derive(Debug, Default, Serialize, Deserialize)]
struct AmendmentProgress {
    /// The trip's loads were read (once, at the start).
    #[serde(default)]
    read: bool,
    /// The trip's tag at U-ETDS (`firmaSeferNo`): an edit sends it back, so the trip stays ours.
    #[serde(default)]
    trip_tag: Option<String>,
    /// The tags loads are made from (`<base>`, `<base>-2`, …): the first load's first (new
    /// loads are tagged from it), then any other a delivered load carries (a shipment sent
    /// again after a failure holds loads tagged from two submissions).
    #[serde(default)]
    bases: Vec<String>,
    /// A fingerprint of the trip's fields as last sent by `seferDuzenleV3`, when sent (a
    /// progress carried from a failed amendment says what U-ETDS holds since).
    #[serde(default)]
    trip_sent_as: Option<String>,
    #[serde(flatten)]
    loads: Loads,
}

/// The place in the shipment a tag names, under any of `bases`.
fn index_among(bases: &[String], tag: &str) -> Option<usize> {
    bases.iter().find_map(|b| index_under(b, tag))
}

/// A delivered shipment changed: the trip's loads read once (`seferDetayiV3`: every active
/// load tagged as the shipment's, those the delivery kept with what was delivered, any other
/// as not known), the trip edited in place (`seferDuzenleV3`) when its own fields differ, then
/// the loads brought in step one call at a time (see [`crate::loads`]). An edit sets fields to
/// values, so one whose outcome is unknown is made again.
pub(crate) fn advance_amendment(s: &Session, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let g = a.goods.as_ref().ok_or_else(|| AdapterError::Permanent("a goods amendment without its shipment".into()))?;
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    let mut p: AmendmentProgress = load(progress)?;
    if !p.read {
        read_delivery(s, trip, a, g, &mut p)?;
        return continue_with(&p, Some(trip));
    }
    let trip_tag = p.trip_tag.as_deref().unwrap_or(s.reference);
    let now = trip_input(&g.now, trip_tag);
    let trip_due = match &p.trip_sent_as {
        Some(sent) => *sent != fingerprint(&now),
        None => trip_input(&g.held, trip_tag) != now,
    };
    if trip_due {
        p.trip_sent_as = Some(fingerprint(&now));
        let op = w::SeferDuzenleV3 { wsuser: s.wsuser(), sefer_id: trip, sefer_bilgileri_input: now };
        accepted(s.call(Service::Esya, &op)?)?;
        return continue_with(&p, Some(trip));
    }
    let wanted = load_inputs(&g.now, p.bases.first().map_or(s.reference, String::as_str))?;
    if p.loads.step(s, trip, &wanted)? {
        return continue_with(&p, Some(trip));
    }
    let ids =
        p.loads.in_step(&wanted).ok_or_else(|| AdapterError::Transient("the loads are not in step yet".into()))?;
    // The receipt keeps the loads the shipment has now, for its next change.
    let mut state = a.downstream_state.clone();
    if let Some(o) = state.as_object_mut() {
        o.insert("load".into(), ids.first().copied().into());
        o.insert("loads".into(), ids.into());
    }
    Ok(Step::Done {
        receipt: Receipt {
            downstream_reference: trip.to_string(),
            passengers: vec![],
            message: Some("İŞLEM BAŞARILI".into()),
            state,
        },
    })
}

/// Read what U-ETDS holds of the delivered trip into the amendment's progress: each load the
/// delivery kept at its place in the receipt (the shipment's order) with what was delivered
/// (one withdrawn by hand since is missing, and declared again); any other active load tagged
/// as the shipment's as not known (an earlier, failed amendment's), to be edited or withdrawn.
fn read_delivery(
    s: &Session,
    trip: i64,
    a: &Amendment,
    g: &tns_adapter::GoodsChange,
    p: &mut AmendmentProgress,
) -> AdapterResult<()> {
    let d = detail(s, trip)?;
    let t = d
        .sefer_detayi
        .as_ref()
        .ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let kept = kept_loads(&a.downstream_state);
    let delivered = load_inputs(&g.held, "")?;
    let mut loads = Loads::default();
    let mut bases: Vec<String> = Vec::new();
    for (index, id) in kept.iter().enumerate() {
        let y = d.yuk_listesi.iter().find(|y| y.yuk_id == Some(*id)).ok_or_else(|| {
            AdapterError::Permanent(format!(
                "U-ETDS's goods trip {trip} does not list this shipment's load {id}; check it on U-ETDS's portal"
            ))
        })?;
        let tag = y.firma_yuk_no.clone().unwrap_or_default();
        let base = match index {
            0 => Some(tag.clone()),
            n => tag.strip_suffix(&format!("-{}", n + 1)).map(str::to_string),
        };
        bases.extend(base.filter(|b| !b.is_empty() && !bases.contains(b)));
        if !is_cancelled(y.durum.as_deref()) {
            let sent = delivered.get(index).map(sent_of).unwrap_or_default();
            loads.held.push(HeldLoad { index, id: *id, tag, sent });
        }
    }
    // New loads are tagged from the first load's tag (else the trip's, which a declaration
    // gives the first load too).
    if bases.is_empty() {
        bases.insert(0, t.firma_sefer_no.clone().unwrap_or_else(|| s.reference.to_string()));
    }
    let mut others = Loads::default();
    others.look_up(&d, |tag| index_among(&bases, tag), &[]);
    loads.held.extend(others.held.into_iter().filter(|h| !kept.contains(&h.id)));
    p.bases = bases;
    p.read = true;
    p.trip_tag = t.firma_sefer_no.clone();
    p.loads = loads;
    Ok(())
}

/// An amendment whose last call's outcome is unknown: the trip's loads are read again by their
/// tags (an addition is then not made twice; an edit is made again, as it sets the same
/// values).
pub(crate) fn reconcile_amendment(s: &Session, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    let mut p: AmendmentProgress = load(progress)?;
    if let (true, Some(g)) = (p.read, a.goods.as_ref()) {
        let wanted = load_inputs(&g.now, p.bases.first().map_or(s.reference, String::as_str))?;
        let bases = p.bases.clone();
        p.loads.look_up(&detail(s, trip)?, |tag| index_among(&bases, tag), &wanted);
    }
    continue_with(&p, Some(trip))
}

pub(crate) fn report(s: &Session, id: i64) -> AdapterResult<Document> {
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

    #[test]
    fn screening_names_what_u_etds_cannot_take() {
        let stop = serde_json::json!({"date": "2026-12-02", "time": "08:30", "city_id": 34, "district_id": 1421});
        let party = serde_json::json!({"tax_number": "4540536920", "name": "A"});
        let mut c: Cargo = serde_json::from_value(serde_json::json!({
            "plate": "34ABC123", "driver": null, "transport_type": 1, "cargo_type": 7, "transport_mode": 1,
            "amount": 10.0, "unit": "M3", "sender": party, "receiver": party, "loading": stop, "unloading": stop,
        }))
        .unwrap();
        let fields = |c: &Cargo| screen(c).into_iter().map(|p| p.field).collect::<Vec<_>>();
        assert_eq!(fields(&c), ["cargo_unit"]);
        c.unit = "KG".into();
        assert!(fields(&c).is_empty());
        c.transport_type = 2;
        c.items = c.loads();
        c.items[0].unit = "M3".into();
        assert_eq!(fields(&c), ["transport_type", "items[0].cargo_unit"]);
    }
}
