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
    AdapterError, AdapterResult, Amendment, Cancellation, Cargo, Document, Load, Observed, Reactivation, Receipt, Step,
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
    /// The first load's `yukId` (what a progress recorded before shipments had several
    /// loads holds; read as `loads[0]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    load: Option<i64>,
    /// Each load's `yukId` once U-ETDS took it, in the shipment's order.
    #[serde(default)]
    loads: Vec<Option<i64>>,
    /// U-ETDS refused a load while taking others (recorded first, so nothing taken is
    /// declared again): the next step of the same submission fails with its words (one that
    /// sends the shipment again tries the load again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refused: Option<Refusal>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Refusal {
    /// Our reference of the submission it refused.
    by: String,
    error: AdapterError,
}

impl CargoProgress {
    /// The loads' ids, `n` of them, as far as known.
    fn ids(&self, n: usize) -> Vec<Option<i64>> {
        let mut ids = self.loads.clone();
        if ids.is_empty() {
            ids.push(self.load);
        }
        ids.resize(n, None);
        ids
    }
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
    if s.is_ours(tag) {
        return Some(0);
    }
    let (base, n) = tag.rsplit_once('-')?;
    let n: usize = n.parse().ok()?;
    (s.is_ours(base) && n >= 2).then(|| n - 1)
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

/// Every id known: the receipt's; else the step's not done.
fn all_ids(ids: &[Option<i64>]) -> Option<Vec<i64>> {
    ids.iter().copied().collect()
}

pub fn advance(s: &Session, c: &Cargo, progress: &Value) -> AdapterResult<Step> {
    let mut p: CargoProgress = load(progress)?;
    if let Some(refused) = p.refused.take() {
        if refused.by == s.reference {
            return Err(refused.error);
        }
    }
    // Checked before the trip is declared, so a load that cannot be sent leaves nothing behind.
    let inputs = load_inputs(c, s.reference)?;
    let Some(trip) = p.trip else {
        let input = trip_input(c, s.reference);
        let r =
            accepted(s.call(Service::Esya, &w::YeniSeferEkleV3 { wsuser: s.wsuser(), sefer_bilgileri_input: input })?)?;
        p.trip = Some(
            r.sefer_id.ok_or_else(|| AdapterError::Transient("U-ETDS accepted the trip but gave no seferId".into()))?,
        );
        return continue_with(&p, p.trip);
    };
    let mut ids = p.ids(inputs.len());
    if let Some(done) = all_ids(&ids) {
        return Ok(Step::Done { receipt: receipt(s, trip, &done) });
    }
    // The loads not taken yet, in one call; each answer is matched by its tag, else its place
    // in the call (`sira`, counted from 1, or from 0 when an answer counts so).
    let (missing, list): (Vec<usize>, Vec<w::EsyaYukBilgileriInputV3>) =
        inputs.into_iter().enumerate().filter(|(i, _)| ids[*i].is_none()).unzip();
    let r = s.call(
        Service::Esya,
        &w::SefereYukEkleV3 { wsuser: s.wsuser(), sefer_id: trip, yuk_bilgileri_input_list: list },
    )?;
    if r.uetds_esya_sonuc.is_empty() {
        accepted(r)?;
        return Err(AdapterError::Transient("U-ETDS accepted the loads but gave no result".into()));
    }
    let from_zero = r.uetds_esya_sonuc.iter().any(|y| y.sira == 0);
    let mut refusal = None;
    for y in &r.uetds_esya_sonuc {
        let by_tag = y.firma_yuk_no.as_deref().and_then(|t| load_index(s, t)).filter(|i| missing.contains(i));
        let by_place =
            usize::try_from(y.sira).ok().and_then(|n| missing.get(if from_zero { n } else { n.wrapping_sub(1) }));
        let Some(i) = by_tag.or(by_place.copied()) else { continue };
        match (y.sonuc_kodu, y.yuk_id) {
            (0, Some(id)) => ids[i] = Some(id),
            (0, None) => {}
            (code, _) => {
                refusal.get_or_insert_with(|| refused(code, y.sonuc_mesaji.as_deref()));
            }
        }
    }
    match (all_ids(&ids), refusal) {
        (Some(done), _) => Ok(Step::Done { receipt: receipt(s, trip, &done) }),
        // Some taken, one refused: what was taken is recorded before the failure.
        (None, Some(e)) if ids.iter().any(Option::is_some) => {
            p.loads = ids;
            p.load = None;
            p.refused = Some(Refusal { by: s.reference.to_string(), error: e });
            continue_with(&p, Some(trip))
        }
        (None, Some(e)) => Err(e),
        (None, None) => Err(AdapterError::Transient("U-ETDS answered the loads without each one's id".into())),
    }
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
    let trip = p.trip.unwrap_or_default();
    let detail = detail(s, trip)?;
    let mut ids = p.ids(c.loads().len());
    for y in detail.yuk_listesi.iter().filter(|y| !is_cancelled(y.durum.as_deref())) {
        if let Some(i) = y.firma_yuk_no.as_deref().and_then(|t| load_index(s, t)).filter(|i| *i < ids.len()) {
            ids[i] = ids[i].or(y.yuk_id);
        }
    }
    match all_ids(&ids) {
        Some(done) => Ok(Step::Done { receipt: receipt(s, trip, &done) }),
        None => {
            p.loads = ids;
            p.load = None;
            continue_with(&p, Some(trip))
        }
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
/// cancelled (a shipment's loads are all it has on the trip).
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

/// How far a re-activation got: the trip first, then each of its loads cancelled too.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ReactivationProgress {
    trip_active: bool,
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
pub fn reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
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
    match accepted(s.call(Service::Esya, &w::YukAktifEtV3 { wsuser: s.wsuser(), yuk_id: load_id })?) {
        Err(AdapterError::Permanent(_)) if held(s, trip, &[load_id])?.1.iter().all(|(_, a)| *a) => {}
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    continue_with(&p, Some(trip))
}

/// What a re-activation whose last call's outcome is unknown achieved, read from the trip.
pub fn reconcile_reactivate(s: &Session, r: &Reactivation, progress: &Value) -> AdapterResult<Step> {
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
    /// The tags the trip and the loads carry at U-ETDS (`firmaSeferNo`, `firmaYukNo`) and the
    /// loads' `yukId`s: an edit sends the tags back, so the trip stays ours.
    tags: Option<Tags>,
    trip_sent: bool,
    /// The loads (by their place in the shipment) edited, added or withdrawn already.
    #[serde(default)]
    loads_done: Vec<usize>,
    /// The ids of loads this amendment added, by their place.
    #[serde(default)]
    added: Vec<(usize, i64)>,
    /// Before shipments had several loads: the one load edited.
    #[serde(default)]
    load_sent: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tags {
    trip: Option<String>,
    /// The first load's tag and id (also what a progress recorded before several loads holds).
    load: Option<String>,
    load_id: i64,
    /// Every delivered load's tag and id, in the shipment's order.
    #[serde(default)]
    loads: Vec<(Option<String>, i64)>,
}

impl Tags {
    fn loads(&self) -> Vec<(Option<String>, i64)> {
        match self.loads.is_empty() {
            true => vec![(self.load.clone(), self.load_id)],
            false => self.loads.clone(),
        }
    }
}

/// The delivered trip's and loads' tags and the loads' ids, read from the trip's detail (the
/// loads the delivery kept; without any kept, the trip's first).
fn tags(s: &Session, trip: i64, state: &Value) -> AdapterResult<Tags> {
    let d = detail(s, trip)?;
    let t = d.sefer_detayi.ok_or_else(|| AdapterError::Suspect("U-ETDS answered without the trip's details".into()))?;
    let kept = kept_loads(state);
    let find = |id: Option<i64>| {
        d.yuk_listesi.iter().find(|y| id.is_none_or(|id| y.yuk_id == Some(id))).ok_or_else(|| {
            AdapterError::Permanent(format!("U-ETDS's goods trip {trip} does not hold this shipment's load"))
        })
    };
    let loads: Vec<(Option<String>, i64)> = match kept.is_empty() {
        true => vec![find(None)?],
        false => kept.iter().map(|id| find(Some(*id))).collect::<AdapterResult<_>>()?,
    }
    .into_iter()
    .map(|y| {
        Ok((
            y.firma_yuk_no.clone(),
            y.yuk_id.ok_or_else(|| AdapterError::Suspect("U-ETDS listed a load without its id".into()))?,
        ))
    })
    .collect::<AdapterResult<_>>()?;
    let (load, load_id) = loads[0].clone();
    Ok(Tags { trip: t.firma_sefer_no, load, load_id, loads })
}

/// A delivered shipment changed: the trip edited in place (`seferDuzenleV3`) when its own
/// fields differ, then each load in the shipment's order: edited (`yukDuzenleV3`, with the tag
/// it was declared with) when its fields differ, added (`sefereYukEkleV3`) when the shipment
/// has more loads than delivered, withdrawn (`yukIptalEtV3`) when it has fewer. One call per
/// step. An edit sets fields to values, so one whose outcome is unknown is made again; an
/// addition or withdrawal whose outcome is unknown is looked up first.
pub fn advance_amendment(s: &Session, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let g = a.goods.as_ref().ok_or_else(|| AdapterError::Permanent("a goods amendment without its shipment".into()))?;
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    let mut p: AmendmentProgress = load(progress)?;
    let Some(tags) = p.tags.clone() else {
        p.tags = Some(tags(s, trip, &a.downstream_state)?);
        return continue_with(&p, Some(trip));
    };
    if p.load_sent && !p.loads_done.contains(&0) {
        p.loads_done.push(0);
    }
    let trip_tag = tags.trip.as_deref().unwrap_or(s.reference);
    let now = trip_input(&g.now, trip_tag);
    if !p.trip_sent && trip_input(&g.held, trip_tag) != now {
        let op = w::SeferDuzenleV3 { wsuser: s.wsuser(), sefer_id: trip, sefer_bilgileri_input: now };
        accepted(s.call(Service::Esya, &op)?)?;
        p.trip_sent = true;
        return continue_with(&p, Some(trip));
    }
    let delivered = tags.loads();
    let base = delivered[0].0.clone().unwrap_or_else(|| s.reference.to_string());
    let (held, wanted) = (g.held.loads(), g.now.loads());
    for i in 0..held.len().max(wanted.len()) {
        if p.loads_done.contains(&i) {
            continue;
        }
        let tag = delivered.get(i).and_then(|(t, _)| t.clone()).unwrap_or_else(|| load_tag(&base, i));
        let changed = match (held.get(i), wanted.get(i), delivered.get(i)) {
            (Some(h), Some(n), Some((_, id))) => {
                let now = load_input(&g.now, n, &tag)?;
                (load_input(&g.held, h, &tag)? != now).then_some(Change::Edit(*id, now))
            }
            (_, Some(n), None) => Some(Change::Add(load_input(&g.now, n, &tag)?)),
            (_, None, Some((_, id))) => Some(Change::Withdraw(*id)),
            // A load the delivery did not keep: nothing to withdraw.
            _ => None,
        };
        p.loads_done.push(i);
        let Some(change) = changed else { continue };
        match change {
            Change::Edit(id, input) => {
                let op = w::YukDuzenleV3 { wsuser: s.wsuser(), yuk_id: id, yuk_bilgileri_input: input };
                accepted(s.call(Service::Esya, &op)?)?;
            }
            Change::Add(input) => {
                let op =
                    w::SefereYukEkleV3 { wsuser: s.wsuser(), sefer_id: trip, yuk_bilgileri_input_list: vec![input] };
                let r = s.call(Service::Esya, &op)?;
                match r.uetds_esya_sonuc.first() {
                    Some(y) if y.sonuc_kodu == 0 && y.yuk_id.is_some() => {
                        p.added.push((i, y.yuk_id.unwrap_or_default()))
                    }
                    Some(y) if y.sonuc_kodu != 0 => return Err(refused(y.sonuc_kodu, y.sonuc_mesaji.as_deref())),
                    _ => {
                        accepted(r)?;
                        return Err(AdapterError::Transient("U-ETDS accepted the load but gave no id".into()));
                    }
                }
            }
            Change::Withdraw(id) => {
                let op = w::YukIptalEtV3 {
                    wsuser: s.wsuser(),
                    yuk_id: id,
                    yuk_iptal_tur_kodu: s.cfg.load_cancel_code.to_string(),
                    yuk_iptal_aciklama: "Yük sevkiyattan çıkarıldı".into(),
                };
                match accepted(s.call(Service::Esya, &op)?) {
                    // Refused because it is withdrawn already (by hand): done.
                    Err(AdapterError::Permanent(_)) if !load_active(s, trip, id)? => {}
                    Err(e) => return Err(e),
                    Ok(_) => {}
                }
            }
        }
        return continue_with(&p, Some(trip));
    }
    // The loads the shipment has now, in its order: those delivered and kept, then those added.
    let ids: Vec<i64> = (0..wanted.len())
        .filter_map(|i| {
            delivered.get(i).map(|(_, id)| *id).or_else(|| p.added.iter().find(|(j, _)| *j == i).map(|(_, id)| *id))
        })
        .collect();
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

/// One load's change in an amendment.
enum Change {
    Edit(i64, w::EsyaYukBilgileriInputV3),
    Add(w::EsyaYukBilgileriInputV3),
    Withdraw(i64),
}

fn load_active(s: &Session, trip: i64, id: i64) -> AdapterResult<bool> {
    Ok(detail(s, trip)?.yuk_listesi.iter().any(|y| y.yuk_id == Some(id) && !is_cancelled(y.durum.as_deref())))
}

/// An amendment whose last call's outcome is unknown: an edit is made again (it sets the same
/// values); an addition is looked for by its tag, and counted done when U-ETDS holds it; a
/// withdrawal is made again, and a refusal of what is withdrawn already is done.
pub fn reconcile_amendment(s: &Session, a: &Amendment, progress: &Value) -> AdapterResult<Step> {
    let trip = number(&a.downstream_reference, "the goods trip reference")?;
    let mut p: AmendmentProgress = load(progress)?;
    let (Some(tags), Some(g)) = (p.tags.clone(), a.goods.as_ref()) else {
        return continue_with(&p, Some(trip));
    };
    let delivered = tags.loads();
    let base = delivered[0].0.clone().unwrap_or_else(|| s.reference.to_string());
    let adding: Vec<usize> = (delivered.len()..g.now.loads().len()).filter(|i| !p.loads_done.contains(i)).collect();
    if adding.is_empty() {
        return continue_with(&p, Some(trip));
    }
    let d = detail(s, trip)?;
    for i in adding {
        let tag = load_tag(&base, i);
        let held =
            d.yuk_listesi.iter().find(|y| y.firma_yuk_no.as_deref() == Some(&tag) && !is_cancelled(y.durum.as_deref()));
        if let Some(id) = held.and_then(|y| y.yuk_id) {
            p.loads_done.push(i);
            p.added.push((i, id));
        }
    }
    continue_with(&p, Some(trip))
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
