//! Non-scheduled passenger trips (tarifesiz): U-ETDS's arızi service, as a [`TripService`].
//!
//! The trip (`seferEkle`, our reference in `firmaSeferNo`; `seferGuncelle` for later
//! changes), its passenger group (`seferGrupEkle`, our reference as the group's name, start
//! and end from the departure and arrival), the crew (`personelEkle`, `personelIptal`), the
//! passengers (`yolcuEkleCoklu` in batches, code 88 kept per passenger;
//! `yolcuIptalUetdsYolcuRefNoIle`), cancellation (`seferIptal`), the report
//! (`seferDetayCiktisiAl`) and the credentials check (`kullaniciKontrol`). Reconciling reads
//! the trip list (`seferBildirimListele`), the groups (`seferGrupListesi`) and the summary
//! (`bildirimOzeti`).

use base64::Engine;
use chrono::NaiveDate;
use tns_adapter::{
    Account, AdapterError, AdapterResult, AllowList, AllowListChange, AllowedAddress, Bags, Document, Journey, NoShow,
    Passenger, Person, Stop, Trip,
};

use crate::{
    config::{Config, Service},
    login::Login,
    midnight, number,
    outcome::{self, accepted, is_cancelled},
    progress::{personnel_type, Pax, PASSENGER_BATCH},
    trips::{Summary, TripService},
    wire::{arizi as w, Transport, WsUser},
    Session,
};

/// The arızi service, for one submission.
pub(crate) struct Arizi<'a>(pub &'a Session<'a>);

fn trip_input(t: &Trip, firma_sefer_no: &str) -> w::AriziSeferBilgileriInput {
    w::AriziSeferBilgileriInput {
        arac_plaka: t.plate.clone(),
        sefer_aciklama: None,
        hareket_tarihi: midnight(&t.departure.date),
        hareket_saati: t.departure.time.clone(),
        arac_telefonu: None,
        firma_sefer_no: firma_sefer_no.to_string(),
        sefer_bitis_tarihi: midnight(&t.arrival.date),
        sefer_bitis_saati: t.arrival.time.clone(),
    }
}

fn place(s: &Stop) -> String {
    s.place.clone().unwrap_or_else(|| s.district_id.to_string())
}

/// A crew member as both passenger services take them (`seferPersonelBilgileriInput`).
fn crew_input(p: &Person) -> w::AriziSeferPersonelBilgileriInput {
    w::AriziSeferPersonelBilgileriInput {
        tur_kodu: personnel_type(p),
        uyruk_ulke: p.country().to_string(),
        tc_kimlik_pasaport_no: p.identity_number.clone(),
        cinsiyet: p.gender.clone(),
        adi: p.first_name.clone(),
        soyadi: p.last_name.clone(),
        telefon: p.phone.clone(),
        adres: None,
        hes_kodu: None,
    }
}

/// `personelEkle` of `crew` to trip `trip`, the same on both passenger services.
pub(crate) fn add_crew_request(s: &Session, trip: i64, crew: &[&Person]) -> w::PersonelEkle {
    w::PersonelEkle {
        wsuser: s.wsuser(),
        uetds_sefer_referans_no: trip,
        sefer_personel_bilgileri_input: crew.iter().map(|p| crew_input(p)).collect(),
    }
}

/// `personelIptal` of `p` from trip `trip`, the same on both passenger services.
pub(crate) fn remove_crew_request(s: &Session, trip: i64, p: &Person) -> w::PersonelIptal {
    w::PersonelIptal {
        wsuser: s.wsuser(),
        iptal_personel_input: w::PersonelIptalInput {
            personel_tc_kimlik_pasaport_no: p.identity_number.clone(),
            iptal_aciklama: Some(format!("TNS {}", s.reference)),
            uetds_sefer_referans_no: trip,
        },
    }
}

fn passenger_input(p: &Passenger, group: i64) -> w::AriziSeferYolcuBilgileriInput {
    w::AriziSeferYolcuBilgileriInput {
        uyruk_ulke: p.person.country().to_string(),
        tc_kimlik_pasaport_no: p.person.identity_number.clone(),
        cinsiyet: Some(p.person.gender.clone()),
        adi: p.person.first_name.clone(),
        soyadi: p.person.last_name.clone(),
        koltuk_no: p.seat_no.clone().unwrap_or_default(),
        telefon_no: p.person.phone.clone(),
        grup_id: group,
        hes_kodu: None,
    }
}

/// What the summary (`bildirimOzeti`, the same shape on both passenger services) says is held.
pub(crate) fn summary_of(o: w::AriziSeferBildirimOzetSonuc) -> Summary {
    Summary {
        cancelled: is_cancelled(o.sefer_durum_aciklama.as_deref()),
        firma_sefer_no: o.firma_sefer_no,
        plate: o.arac_plaka,
        departure_date: o.sefer_tarihi.as_deref().and_then(crate::iso_day),
        departure_time: o.sefer_saati,
        crew: o
            .arizi_personel_listesi
            .into_iter()
            .filter(|c| !is_cancelled(c.durum_aciklama.as_deref()))
            .filter_map(|c| c.tckimlikno)
            .collect(),
        passengers: o
            .arizi_yolcu_listesi
            .into_iter()
            .filter(|y| !is_cancelled(y.durum_aciklama.as_deref()))
            .filter_map(|y| Some((y.tckimlikno?, y.uetds_bilet_ref_no)))
            .collect(),
        baggage: o.bagaj_adedi.map(|n| n - o.iptal_bagaj_adedi.unwrap_or(0)),
    }
}

/// A passenger's baggage as U-ETDS takes it (by identity number and seat).
fn bags_input(b: &Bags) -> w::SeferBagajBilgileriInput {
    w::SeferBagajBilgileriInput {
        yolcu_tc_kimlik_pasaport_no: b.identity_number.clone(),
        koltuk_no: b.seat_no.clone().unwrap_or_default(),
        bagaj_barkod_numaralari: b.barcodes.clone(),
    }
}

/// The trip list's request of `plate`'s trips from `from` to `to` (the same on both services;
/// what the dates mean, see [`crate::lookup`]).
pub(crate) fn list_request(s: &Session, plate: &str, from: NaiveDate, to: NaiveDate) -> w::SeferBildirimListele {
    let day = |d: NaiveDate| d.format("%d/%m/%Y").to_string();
    w::SeferBildirimListele {
        wsuser: s.wsuser(),
        sefer_listele_input: w::YtsAriziSeferListeleInput {
            sefer_tarih1: day(from),
            sefer_tarih2: day(to),
            plaka: Some(plate.to_string()),
        },
    }
}

/// A trip's passenger group: from its departure to its arrival, named by the notification
/// that declared it.
fn group_input(t: &Trip, name: &str) -> w::AriziGrupBilgileriInput {
    w::AriziGrupBilgileriInput {
        grup_aciklama: format!("TNS {name}"),
        baslangic_ulke: t.departure.country().to_string(),
        baslangic_il: t.departure.city_id.into(),
        baslangic_ilce: t.departure.district_id.into(),
        baslangic_yer: Some(place(&t.departure)),
        bitis_ulke: t.arrival.country().to_string(),
        bitis_il: t.arrival.city_id.into(),
        bitis_ilce: t.arrival.district_id.into(),
        bitis_yer: place(&t.arrival),
        grup_adi: name.to_string(),
        grup_ucret: None,
    }
}

impl TripService for Arizi<'_> {
    fn add_trip(&self, j: &Journey) -> AdapterResult<i64> {
        let s = self.0;
        let input = trip_input(&j.trip(), s.reference);
        let r = accepted(
            s.call(Service::Arizi, &w::SeferEkle { wsuser: s.wsuser(), arizi_sefer_bilgileri_input: input })?,
        )?;
        r.uetds_sefer_referans_no
            .ok_or_else(|| AdapterError::Transient("U-ETDS accepted the trip but gave no reference".into()))
    }

    fn update_trip(&self, trip: i64, t: &Trip, firma_sefer_no: &str) -> AdapterResult<Option<i64>> {
        let s = self.0;
        let op = w::SeferGuncelle {
            wsuser: s.wsuser(),
            guncellenecek_sefer_referans_no: trip,
            arizi_sefer_bilgileri_input: trip_input(t, firma_sefer_no),
        };
        accepted(s.call(Service::Arizi, &op)?).map(|r| r.uetds_sefer_referans_no)
    }

    fn report_no_show(&self, trip: i64, x: &NoShow) -> AdapterResult<()> {
        let s = self.0;
        let op = w::YolcuGelmeyenBildir {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            gelmeyen_yolcu: w::AriziYolcuGelmeyenInput {
                koltuk_no: x.seat_no.clone(),
                yolcu_tc_kimlik_pasaport_no: x.identity_number.clone(),
                aciklama: x.note.clone(),
            },
        };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn has_baggage(&self) -> bool {
        true
    }

    fn add_baggage(&self, trip: i64, bags: &[Bags]) -> AdapterResult<()> {
        let s = self.0;
        let op = w::YolcuBagajEkle {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            bagaj_bilgileri: bags.iter().map(bags_input).collect(),
        };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn remove_baggage(&self, trip: i64, bags: &Bags) -> AdapterResult<()> {
        let s = self.0;
        let op =
            w::YolcuBagajIptal { wsuser: s.wsuser(), uetds_sefer_referans_no: trip, bagaj_bilgileri: bags_input(bags) };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn reactivate_trip(&self, trip: i64, reason: &str) -> AdapterResult<()> {
        let s = self.0;
        let op =
            w::SeferAktif { wsuser: s.wsuser(), uetds_sefer_referans_no: trip, aktif_aciklama: reason.to_string() };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn change_plate(&self, trip: i64, plate: &str) -> Option<AdapterResult<()>> {
        let s = self.0;
        let op = w::SeferPlakaDegistir {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            tasit_plaka_no: plate.to_string(),
        };
        Some(s.call(Service::Arizi, &op).and_then(accepted).map(|_| ()))
    }

    fn has_groups(&self) -> bool {
        true
    }

    fn add_group(&self, trip: i64, t: &Trip) -> AdapterResult<i64> {
        let s = self.0;
        let input = group_input(t, s.reference);
        let op =
            w::SeferGrupEkle { wsuser: s.wsuser(), uetds_sefer_referans_no: trip, sefer_grup_bilgileri_input: input };
        let r = accepted(s.call(Service::Arizi, &op)?)?;
        r.uetds_grup_ref_no
            .as_deref()
            .and_then(|g| g.trim().parse().ok())
            .ok_or_else(|| AdapterError::Transient("U-ETDS accepted the passenger group but gave no group id".into()))
    }

    fn update_group(&self, trip: i64, group: i64, t: &Trip, name: &str) -> AdapterResult<()> {
        let s = self.0;
        let op = w::SeferGrupGuncelle {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            grup_id: group,
            sefer_grup_bilgileri_input: group_input(t, name),
        };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn find_group(&self, trip: i64) -> AdapterResult<Option<i64>> {
        let s = self.0;
        let r = accepted(
            s.call(Service::Arizi, &w::SeferGrupListesi { wsuser: s.wsuser(), uetds_sefer_referans_no: trip })?,
        )?;
        Ok(r.grup_liste.iter().find(|g| g.grup_adi.as_deref().is_some_and(|n| s.is_ours(n))).and_then(|g| g.grup_id))
    }

    fn add_crew(&self, trip: i64, crew: &[&Person]) -> AdapterResult<()> {
        let s = self.0;
        accepted(s.call(Service::Arizi, &add_crew_request(s, trip, crew))?).map(|_| ())
    }

    fn remove_crew(&self, trip: i64, p: &Person) -> AdapterResult<()> {
        let s = self.0;
        accepted(s.call(Service::Arizi, &remove_crew_request(s, trip, p))?).map(|_| ())
    }

    fn batch(&self) -> usize {
        PASSENGER_BATCH
    }

    /// One `yolcuEkleCoklu`. A refusal of the whole batch with no per-passenger results
    /// refuses each of them, unless it says the caller is not allowed (then nothing was looked
    /// at, and the customer must act).
    fn add_passengers(&self, trip: i64, group: Option<i64>, batch: &[&Passenger]) -> AdapterResult<Vec<Pax>> {
        let s = self.0;
        let group = group.ok_or_else(|| AdapterError::Permanent("passengers need the trip's group".into()))?;
        let op = w::YolcuEkleCoklu {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            yolcu_bilgileri: batch.iter().map(|p| passenger_input(p, group)).collect(),
        };
        let r = s.call(Service::Arizi, &op)?;
        if r.uetds_yolcu_sonuc.is_empty() {
            if r.sonuc_kodu == 0 {
                return Err(AdapterError::Transient("U-ETDS accepted the passengers but gave no results".into()));
            }
            if outcome::is_configuration(r.sonuc_mesaji.as_deref().unwrap_or("")) {
                return Err(outcome::refused(r.sonuc_kodu, r.sonuc_mesaji.as_deref()));
            }
        }
        // `sira` is the item's position in the batch; its base is not published: 0 shows up only
        // when it counts from 0.
        let base = if r.uetds_yolcu_sonuc.iter().any(|y| y.sira == 0) { 0 } else { 1 };
        Ok((0..batch.len())
            .map(|i| match r.uetds_yolcu_sonuc.iter().find(|y| y.sira == i as i32 + base) {
                Some(y) if y.sonuc_kodu == 0 => Pax::accepted(y.uetds_bilet_ref_no),
                Some(y) => Pax::refused(y.sonuc_kodu, y.sonuc_mesaji.as_deref(), &s.secrets),
                None if r.sonuc_kodu == 0 => Pax::accepted(None),
                None => Pax::refused(r.sonuc_kodu, r.sonuc_mesaji.as_deref(), &s.secrets),
            })
            .collect())
    }

    fn cancel_passenger(&self, trip: i64, reference: i64) -> AdapterResult<()> {
        let s = self.0;
        let op = w::YolcuIptalUetdsYolcuRefNoIle {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            uetds_yolcu_referans_no: reference,
            iptal_aciklama: format!("TNS {}: yolcu bilgisi değişti veya yolcu çıkarıldı", s.reference),
        };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn cancel_trip(&self, trip: i64, reason: &str) -> AdapterResult<()> {
        let s = self.0;
        let op =
            w::SeferIptal { wsuser: s.wsuser(), uetds_sefer_referans_no: trip, iptal_aciklama: reason.to_string() };
        accepted(s.call(Service::Arizi, &op)?).map(|_| ())
    }

    fn listed(&self, plate: &str, from: NaiveDate, to: NaiveDate) -> AdapterResult<Vec<i64>> {
        let r = accepted(self.0.call(Service::Arizi, &list_request(self.0, plate, from, to))?)?;
        Ok(r.sefer_listesi.iter().filter_map(|x| x.uetds_sefer_referans_no).collect())
    }

    fn summary(&self, trip: i64) -> AdapterResult<Summary> {
        let s = self.0;
        let op = w::BildirimOzeti { wsuser: s.wsuser(), uetds_sefer_referans_no: trip };
        accepted(s.call(Service::Arizi, &op)?).map(summary_of)
    }

    fn session(&self) -> &Session<'_> {
        self.0
    }

    fn service(&self) -> Service {
        Service::Arizi
    }
}

pub(crate) fn report(s: &Session, trip: i64) -> AdapterResult<Document> {
    let r = accepted(
        s.call(Service::Arizi, &w::SeferDetayCiktisiAl { wsuser: s.wsuser(), uetds_sefer_referans_no: trip })?,
    )?;
    pdf(r.sonuc_pdf)
}

/// A PDF U-ETDS gave as base64 text, checked to be one.
pub(crate) fn pdf(base64: Option<String>) -> AdapterResult<Document> {
    let text: String = base64.unwrap_or_default().split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| AdapterError::Transient(format!("U-ETDS's report is not base64: {e}")))?;
    if !bytes.starts_with(b"%PDF") {
        return Err(AdapterError::Transient("U-ETDS's report is not a PDF".into()));
    }
    Ok(Document { content_type: "application/pdf".into(), base64: text })
}

/// `kullaniciKontrol`: whom U-ETDS knows the credentials as.
/// The firm's registered caller addresses after `change` (on the non-scheduled service, whose
/// list the firm's calls are checked against).
pub(crate) fn allow_list(s: &Session, change: Option<&AllowListChange>) -> AdapterResult<AllowList> {
    match change {
        Some(AllowListChange::Add { first, last }) => {
            let op = w::IpTanimla { wsuser: s.wsuser(), ip_baslangic: first.clone(), ip_bitis: last.clone() };
            accepted(s.call(Service::Arizi, &op)?)?;
        }
        Some(AllowListChange::Remove { id }) => {
            let op = w::IpSil { wsuser: s.wsuser(), ip_id: number(id, "the address entry")? };
            accepted(s.call(Service::Arizi, &op)?)?;
        }
        None => {}
    }
    let r = accepted(s.call(Service::Arizi, &w::IpListele { wsuser: s.wsuser() })?)?;
    let entries = r
        .ip_listesi
        .into_iter()
        .filter_map(|e| {
            Some(AllowedAddress { id: e.id?, first: e.ip_baslangic?, last: e.ip_bitis.filter(|l| !l.is_empty()) })
        })
        .collect();
    Ok(AllowList { entries })
}

pub(crate) fn verify(transport: &Transport, cfg: &Config, c: &Login<'_>) -> AdapterResult<Account> {
    let op = w::KullaniciKontrol { kullanici_adi: c.username.to_string(), sifre: c.password.to_string() };
    let user = WsUser::new(c.username, c.password);
    let r = transport
        .call(&cfg.url(Service::Arizi, c.environment), &user, &op)
        .map_err(|e| outcome::transport(Service::Arizi.label(), e))?;
    let r = accepted(r)?;
    Ok(Account { username: c.username.to_string(), name: r.firma_unvan, message: r.sonuc_mesaji })
}
