//! A goods trip's loads brought in step with a shipment, one call at a time: what U-ETDS
//! holds is kept in the progress (each load's place in the shipment, read from its tag, its
//! `yukId`, its tag and a fingerprint of what it holds), and each step compares it with what
//! the shipment wants now. A declaration, a shipment sent again after a failure (possibly
//! edited since), and an amendment all take the same steps, so a progress carried from an
//! earlier submission is never trusted beyond what it records:
//!
//! 1. a load held beyond the shipment's last (or a second one at a place) is withdrawn
//!    (`yukIptalEtV3`);
//! 2. a held load whose fingerprint differs from what is wanted is edited (`yukDuzenleV3`,
//!    with the tag it carries);
//! 3. the loads not held are added in one call (`sefereYukEkleV3`).
//!
//! After a call whose outcome is unknown, [`Loads::look_up`] reads the trip's loads by their
//! tags before anything is sent again, so no load is declared twice.

use serde::{Deserialize, Serialize};
use tns_adapter::{AdapterError, AdapterResult};

use crate::{
    config::Service,
    fingerprint,
    outcome::{accepted, is_cancelled, refused},
    wire::{esya as w, soap::EXCERPT},
    Session,
};

/// A load U-ETDS holds of the shipment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HeldLoad {
    /// Its place in the shipment (0: the shipment's own), read from its tag.
    pub index: usize,
    pub id: i64,
    /// The tag (`firmaYukNo`) it carries, sent back with an edit.
    pub tag: String,
    /// A fingerprint of what it holds, the tag left out ([`sent_of`]); empty when not known,
    /// so that it is edited to be sure.
    #[serde(default)]
    pub sent: String,
}

/// The loads part of a goods progress.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Loads {
    #[serde(default)]
    pub held: Vec<HeldLoad>,
    /// U-ETDS refused a load while taking others (what it took is recorded first): the next
    /// step of the same submission fails with its words; one that sends the shipment again
    /// tries the load again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refused: Option<Refusal>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Refusal {
    /// Our reference of the submission it refused.
    by: String,
    error: AdapterError,
}

/// The fingerprint of a load's input, its tag left out (tags differ between submissions of one
/// shipment; what the load holds does not).
pub(crate) fn sent_of(input: &w::EsyaYukBilgileriInputV3) -> String {
    let mut untagged = input.clone();
    untagged.firma_yuk_no = None;
    fingerprint(&untagged)
}

impl Loads {
    /// The first load's id, when held (what a progress written before shipments had several
    /// loads calls `load`).
    pub(crate) fn first(&self) -> Option<i64> {
        self.held.iter().find(|h| h.index == 0).map(|h| h.id)
    }

    /// The ids of the wanted loads, in order, when U-ETDS holds each as wanted and nothing more.
    pub(crate) fn in_step(&self, wanted: &[w::EsyaYukBilgileriInputV3]) -> Option<Vec<i64>> {
        if self.held.len() != wanted.len() {
            return None;
        }
        (0..wanted.len())
            .map(|i| self.held.iter().find(|h| h.index == i && h.sent == sent_of(&wanted[i])).map(|h| h.id))
            .collect()
    }

    /// Make the next call that brings the trip's loads nearer to `wanted` (tagged inputs, in
    /// the shipment's order). `Ok(true)` when the progress must be recorded and the loads looked
    /// at again; `Ok(false)` when they are in step.
    pub(crate) fn step(
        &mut self,
        s: &Session,
        trip: i64,
        wanted: &[w::EsyaYukBilgileriInputV3],
    ) -> AdapterResult<bool> {
        if let Some(r) = self.refused.take() {
            if r.by == s.reference {
                return Err(r.error);
            }
        }
        let extra = self
            .held
            .iter()
            .enumerate()
            .find(|(k, h)| h.index >= wanted.len() || self.held[..*k].iter().any(|o| o.index == h.index))
            .map(|(k, _)| k);
        if let Some(k) = extra {
            withdraw(s, trip, self.held[k].id)?;
            self.held.remove(k);
            return Ok(true);
        }
        if let Some(h) = self.held.iter_mut().find(|h| h.sent != sent_of(&wanted[h.index])) {
            let mut input = wanted[h.index].clone();
            input.firma_yuk_no = Some(h.tag.clone());
            let op = w::YukDuzenleV3 { wsuser: s.wsuser(), yuk_id: h.id, yuk_bilgileri_input: input };
            accepted(s.call(Service::Esya, &op)?)?;
            h.sent = sent_of(&wanted[h.index]);
            return Ok(true);
        }
        let missing: Vec<usize> = (0..wanted.len()).filter(|i| !self.held.iter().any(|h| h.index == *i)).collect();
        if missing.is_empty() {
            return Ok(false);
        }
        self.add(s, trip, wanted, &missing)?;
        Ok(self.in_step(wanted).is_none())
    }

    /// Add the loads at `missing` in one call. Each answer is matched by its tag, else by its
    /// place in the call (`sira`, counted from 1, or from 0 when an answer counts so).
    fn add(
        &mut self,
        s: &Session,
        trip: i64,
        wanted: &[w::EsyaYukBilgileriInputV3],
        missing: &[usize],
    ) -> AdapterResult<()> {
        let list = missing.iter().map(|i| wanted[*i].clone()).collect();
        let r = s.call(
            Service::Esya,
            &w::SefereYukEkleV3 { wsuser: s.wsuser(), sefer_id: trip, yuk_bilgileri_input_list: list },
        )?;
        if r.uetds_esya_sonuc.is_empty() {
            accepted(r)?;
            return Err(AdapterError::Transient("U-ETDS accepted the loads but gave no result".into()));
        }
        let from_zero = r.uetds_esya_sonuc.iter().any(|y| y.sira == 0);
        let (mut refusal, mut took) = (None, false);
        for y in &r.uetds_esya_sonuc {
            let by_tag = y
                .firma_yuk_no
                .as_deref()
                .and_then(|t| missing.iter().copied().find(|i| wanted[*i].firma_yuk_no.as_deref() == Some(t)));
            let place = usize::try_from(y.sira).ok().and_then(|n| if from_zero { Some(n) } else { n.checked_sub(1) });
            let Some(i) = by_tag.or_else(|| place.and_then(|n| missing.get(n).copied())) else { continue };
            match (y.sonuc_kodu, y.yuk_id) {
                (0, Some(id)) if !self.held.iter().any(|h| h.index == i) => {
                    let tag = wanted[i].firma_yuk_no.clone().unwrap_or_default();
                    self.held.push(HeldLoad { index: i, id, tag, sent: sent_of(&wanted[i]) });
                    took = true;
                }
                (0, _) => {}
                (code, _) => {
                    let words = y.sonuc_mesaji.as_deref().map(|m| s.secrets.excerpt(m, EXCERPT));
                    refusal.get_or_insert_with(|| refused(code, words.as_deref()));
                }
            }
        }
        match refusal {
            Some(error) if took => {
                self.refused = Some(Refusal { by: s.reference.to_string(), error });
                Ok(())
            }
            Some(error) => Err(error),
            None if missing.iter().any(|i| !self.held.iter().any(|h| h.index == *i)) => {
                Err(AdapterError::Transient("U-ETDS answered the loads without each one's id".into()))
            }
            None => Ok(()),
        }
    }

    /// What the trip holds after a call whose outcome is unknown: held loads U-ETDS no longer
    /// lists as active are dropped; its active loads carrying a tag `index_of` reads are held
    /// (with what is wanted when the tag is the one a load would be sent with now, else as not
    /// known, to be edited).
    pub(crate) fn look_up(
        &mut self,
        d: &w::EsyaSeferDetayiSonucV3,
        index_of: impl Fn(&str) -> Option<usize>,
        wanted: &[w::EsyaYukBilgileriInputV3],
    ) {
        let active: Vec<&w::EsyaSeferYukListesi> =
            d.yuk_listesi.iter().filter(|y| !is_cancelled(y.durum.as_deref())).collect();
        self.held.retain(|h| active.iter().any(|y| y.yuk_id == Some(h.id)));
        for y in active {
            let (Some(id), Some(tag)) = (y.yuk_id, y.firma_yuk_no.as_deref()) else { continue };
            let Some(index) = index_of(tag) else { continue };
            if self.held.iter().any(|h| h.id == id) {
                continue;
            }
            let sent = match wanted.get(index) {
                Some(input) if input.firma_yuk_no.as_deref() == Some(tag) => sent_of(input),
                _ => String::new(),
            };
            self.held.push(HeldLoad { index, id, tag: tag.to_string(), sent });
        }
    }
}

/// Withdraw load `id` of `trip` (`yukIptalEtV3`); refused because it is withdrawn already (by
/// hand): done.
fn withdraw(s: &Session, trip: i64, id: i64) -> AdapterResult<()> {
    let op = w::YukIptalEtV3 {
        wsuser: s.wsuser(),
        yuk_id: id,
        yuk_iptal_tur_kodu: s.cfg.load_cancel_code.to_string(),
        yuk_iptal_aciklama: "Yük sevkiyattan çıkarıldı".into(),
    };
    match accepted(s.call(Service::Esya, &op)?) {
        Err(AdapterError::Permanent(_)) if !active(s, trip, id)? => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}

fn active(s: &Session, trip: i64, id: i64) -> AdapterResult<bool> {
    let d = accepted(s.call(Service::Esya, &w::SeferDetayiV3 { wsuser: s.wsuser(), sefer_id: trip })?)?;
    Ok(d.yuk_listesi.iter().any(|y| y.yuk_id == Some(id) && !is_cancelled(y.durum.as_deref())))
}

/// The place in the shipment a tag names: `base` itself is the first load, `base-n` the n-th.
pub(crate) fn index_under(base: &str, tag: &str) -> Option<usize> {
    if tag == base {
        return Some(0);
    }
    let n: usize = tag.strip_prefix(base)?.strip_prefix('-')?.parse().ok()?;
    (n >= 2).then(|| n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_place_under_their_base() {
        assert_eq!(index_under("tns-7", "tns-7"), Some(0));
        assert_eq!(index_under("tns-7", "tns-7-2"), Some(1));
        assert_eq!(index_under("tns-7", "tns-7-12"), Some(11));
        for other in ["tns-70", "tns-7-1", "tns-7-", "tns-7-x", "tns-8-2", "tns"] {
            assert_eq!(index_under("tns-7", other), None, "{other}");
        }
    }
}
