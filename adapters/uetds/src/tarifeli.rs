//! Scheduled passenger trips (tarifeli), as a [`TripService`]. **Provisional**: the scheduled
//! service's WSDL is not public. This module follows the operation names the Ministry's
//! integration material shows for it (`seferEkle`, `personelEkle`, `personelIptal`,
//! `yolcuBiletEkle`, `yolcuBiletIptalUetdsBiletRefNoIle`, `seferIptal`, `bildirimOzeti`), the
//! trip fields known from it (`aracPlaka`, `unetGuzergahKodu`, `hareketTarihi`, …) and, for
//! the shapes nothing shows, the non-scheduled service's. The namespace, the SOAPAction
//! prefix, each operation's element name and the service's address are configuration
//! (`TNS_ADAPTER_UETDS_TARIFELI_*`, `TNS_ADAPTER_UETDS_ENDPOINTS`), so the real ones can be set
//! without a new build once the WSDL is known. Not available here: changing a delivered trip's
//! own fields (cancel and notify again) and the report.

use chrono::NaiveDate;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use tns_adapter::{AdapterError, AdapterResult, Journey, Passenger, Person, Trip};

use crate::{
    arizi::{add_crew_request, list_request, remove_crew_request, summary_of},
    config::Service,
    outcome::{self, accepted, Coded},
    progress::Pax,
    trips::{Summary, TripService},
    wire::{arizi as w, GenelIslemSonuc, WsUser, NAMESPACE},
    Session,
};

/// The SOAPAction prefix when none is configured (the shape the services' shared operations use).
const ACTION_PREFIX: &str = "http://uetds.unetws.udhb.gov.tr/uetdsyts/";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SeferEkle {
    wsuser: WsUser,
    tarifeli_sefer_bilgileri_input: TripInput,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TripInput {
    arac_plaka: String,
    unet_guzergah_kodu: i64,
    /// `YYYY-MM-DD` (an `xs:date`).
    hareket_tarihi: String,
    hareket_saati: String,
    seyahat_suresi: i64,
    firma_sefer_no: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct YolcuBiletEkle {
    wsuser: WsUser,
    uetds_sefer_referans_no: i64,
    yolcu_bilet_bilgileri_input: TicketInput,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TicketInput {
    uyruk_ulke: String,
    tc_kimlik_pasaport_no: String,
    cinsiyet: String,
    adi: String,
    soyadi: String,
    binis_yer_kodu: i64,
    inis_yer_kodu: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    koltuk_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bilet_seri_no: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tutar: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    telefon_no: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TicketResult {
    sonuc_kodu: i32,
    sonuc_mesaji: Option<String>,
    uetds_bilet_ref_no: Option<i64>,
}

impl Coded for TicketResult {
    fn code(&self) -> i32 {
        self.sonuc_kodu
    }
    fn message(&self) -> Option<&str> {
        self.sonuc_mesaji.as_deref()
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct BiletIptal {
    wsuser: WsUser,
    uetds_sefer_referans_no: i64,
    uetds_bilet_ref_no: i64,
    iptal_aciklama: String,
}

/// The scheduled service, for one submission.
pub(crate) struct Tarifeli<'a>(pub &'a Session<'a>);

impl Tarifeli<'_> {
    /// One call of operation `op` (our name; the element name may be configured).
    fn call<B: Serialize, R: DeserializeOwned>(&self, op: &str, body: &B) -> AdapterResult<R> {
        let s = self.0;
        let names = &s.cfg.tarifeli;
        let name = names.operations.get(op).map_or(op, String::as_str);
        let namespace = names.namespace.as_deref().unwrap_or(NAMESPACE);
        let action = format!("{}{name}", names.action_prefix.as_deref().unwrap_or(ACTION_PREFIX));
        s.transport
            .call_dynamic(&s.cfg.url(Service::Tarifeli, s.env), &s.user, namespace, name, &action, body)
            .map_err(|e| outcome::transport(Service::Tarifeli.label(), e))
    }
}

impl TripService for Tarifeli<'_> {
    fn add_trip(&self, j: &Journey) -> AdapterResult<i64> {
        let s = self.0;
        let ctx =
            j.tarifeli.as_ref().ok_or_else(|| AdapterError::Permanent("a scheduled trip needs its context".into()))?;
        let op = SeferEkle {
            wsuser: s.wsuser(),
            tarifeli_sefer_bilgileri_input: TripInput {
                arac_plaka: j.plate.clone(),
                unet_guzergah_kodu: ctx.unet_guzergah_kodu,
                hareket_tarihi: j.departure.date.clone(),
                hareket_saati: j.departure.time.clone(),
                seyahat_suresi: ctx.seyahat_suresi_saat,
                firma_sefer_no: s.reference.to_string(),
            },
        };
        let r: w::AriziSeferBildirSonuc = accepted(self.call("seferEkle", &op)?)?;
        r.uetds_sefer_referans_no
            .ok_or_else(|| AdapterError::Transient("U-ETDS accepted the trip but gave no reference".into()))
    }

    fn update_trip(&self, _trip: i64, _t: &Trip, _firma_sefer_no: &str) -> AdapterResult<Option<i64>> {
        Err(AdapterError::Permanent(
            "a scheduled trip's own fields cannot be changed through TNS yet; cancel the journey and notify a new one"
                .into(),
        ))
    }

    fn report_no_show(&self, _trip: i64, _x: &tns_adapter::NoShow) -> AdapterResult<()> {
        Err(AdapterError::Permanent(
            "a scheduled trip's no-show cannot be reported through TNS yet (the scheduled service's operation is not \
             published)"
                .into(),
        ))
    }

    fn reactivate_trip(&self, _trip: i64, _reason: &str) -> AdapterResult<()> {
        Err(AdapterError::Permanent(
            "a cancelled scheduled trip cannot be re-activated through TNS yet (the scheduled service's operation is \
             not published); notify it anew"
                .into(),
        ))
    }

    fn has_groups(&self) -> bool {
        false
    }

    fn add_group(&self, _trip: i64, _t: &Trip) -> AdapterResult<i64> {
        Err(AdapterError::Permanent("the scheduled service has no passenger groups".into()))
    }

    fn find_group(&self, _trip: i64) -> AdapterResult<Option<i64>> {
        Ok(None)
    }

    fn add_crew(&self, trip: i64, crew: &[&Person]) -> AdapterResult<()> {
        accepted::<GenelIslemSonuc>(self.call("personelEkle", &add_crew_request(self.0, trip, crew))?).map(|_| ())
    }

    fn remove_crew(&self, trip: i64, p: &Person) -> AdapterResult<()> {
        accepted::<GenelIslemSonuc>(self.call("personelIptal", &remove_crew_request(self.0, trip, p))?).map(|_| ())
    }

    /// One ticket per call: the service shows no batch operation.
    fn batch(&self) -> usize {
        1
    }

    fn add_passengers(&self, trip: i64, _group: Option<i64>, batch: &[&Passenger]) -> AdapterResult<Vec<Pax>> {
        let s = self.0;
        batch
            .iter()
            .map(|p| {
                let op = YolcuBiletEkle {
                    wsuser: s.wsuser(),
                    uetds_sefer_referans_no: trip,
                    yolcu_bilet_bilgileri_input: TicketInput {
                        uyruk_ulke: p.person.country().to_string(),
                        tc_kimlik_pasaport_no: p.person.identity_number.clone(),
                        cinsiyet: p.person.gender.clone(),
                        adi: p.person.first_name.clone(),
                        soyadi: p.person.last_name.clone(),
                        binis_yer_kodu: p.boarding_place_code.into(),
                        inis_yer_kodu: p.destination_place_code.into(),
                        koltuk_no: p.seat_no.clone(),
                        bilet_seri_no: p.ticket_serial_no.clone(),
                        tutar: p.amount.map(|a| format!("{a:.2}")),
                        telefon_no: p.person.phone.clone(),
                    },
                };
                let r: TicketResult = self.call("yolcuBiletEkle", &op)?;
                Ok(match r.sonuc_kodu {
                    0 => Pax::accepted(r.uetds_bilet_ref_no),
                    _ if outcome::is_configuration(r.message().unwrap_or("")) => {
                        return Err(outcome::refused(r.code(), r.message()))
                    }
                    code => Pax::refused(code, r.message(), &self.0.secrets),
                })
            })
            .collect()
    }

    fn cancel_passenger(&self, trip: i64, reference: i64) -> AdapterResult<()> {
        let s = self.0;
        let op = BiletIptal {
            wsuser: s.wsuser(),
            uetds_sefer_referans_no: trip,
            uetds_bilet_ref_no: reference,
            iptal_aciklama: format!("TNS {}: yolcu bilgisi değişti veya yolcu çıkarıldı", s.reference),
        };
        accepted::<GenelIslemSonuc>(self.call("yolcuBiletIptalUetdsBiletRefNoIle", &op)?).map(|_| ())
    }

    fn cancel_trip(&self, trip: i64, reason: &str) -> AdapterResult<()> {
        let s = self.0;
        let op =
            w::SeferIptal { wsuser: s.wsuser(), uetds_sefer_referans_no: trip, iptal_aciklama: reason.to_string() };
        accepted::<GenelIslemSonuc>(self.call("seferIptal", &op)?).map(|_| ())
    }

    fn listed(&self, plate: &str, from: NaiveDate, to: NaiveDate) -> AdapterResult<Vec<i64>> {
        let op = list_request(self.0, plate, from, to);
        let r: w::AriziSeferAraSonuc = accepted(self.call("seferBildirimListele", &op)?)?;
        Ok(r.sefer_listesi.iter().filter_map(|x| x.uetds_sefer_referans_no).collect())
    }

    fn summary(&self, trip: i64) -> AdapterResult<Summary> {
        let op = w::BildirimOzeti { wsuser: self.0.wsuser(), uetds_sefer_referans_no: trip };
        let r: w::AriziSeferBildirimOzetSonuc = accepted(self.call("bildirimOzeti", &op)?)?;
        Ok(summary_of(r))
    }

    fn session(&self) -> &Session<'_> {
        self.0
    }

    fn service(&self) -> Service {
        Service::Tarifeli
    }
}
