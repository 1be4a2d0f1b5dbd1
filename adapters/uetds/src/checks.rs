//! Pre-flight checks with U-ETDS's own services, all on the non-scheduled service's address
//! (one WSDL holds them): the vehicle's inspection (`aracMuayeneSorgula`: valid until a day),
//! the authorisation certificate the plate is on (`yetkiBelgesiKontrol`), a driver's
//! professional qualification (`meslekiYeterlilikSorgula`: the certificates listed), a T.C.
//! identity number against the name (`kimlikDogrulama`: `isUygun`) and a passenger's travel
//! permit (`seyahatIzinKontrol`).
//!
//! U-ETDS refusing what was asked ("no certificate for this plate") is a finding that did not
//! pass; a refusal of the caller (credentials, addresses) or no answer is an error: the check
//! could not be made, and says nothing about the vehicle or the person.

use chrono::NaiveDate;
use tns_adapter::{AdapterError, AdapterResult, Check, Finding};

use crate::{
    config::Service,
    iso_day,
    outcome::refused,
    wire::{arizi as w, soap::EXCERPT},
    Session,
};

pub(crate) fn check(s: &Session, c: &Check) -> AdapterResult<Finding> {
    let finding = match c {
        Check::VehicleInspection { plate, date } => {
            let r = s.call(Service::Arizi, &w::AracMuayeneSorgula { wsuser: s.wsuser(), plaka: plate.clone() })?;
            if r.sonuc_kodu != 0 {
                return refusal(s, r.sonuc_kodu, r.sonuc_mesaji);
            }
            valid_on("the vehicle's inspection", r.muayene_gecerlilik_tarihi.as_deref(), date)?
        }
        Check::Authorisation { plate, date } => {
            let r = s.call(Service::Arizi, &w::YetkiBelgesiKontrol { wsuser: s.wsuser(), plaka: plate.clone() })?;
            if r.sonuc_kodu != 0 {
                return refusal(s, r.sonuc_kodu, r.sonuc_mesaji);
            }
            let what = format!("the authorisation certificate {}", r.belge_turu.as_deref().unwrap_or_default());
            match r.belge_gecerlilik_tarihi.as_deref() {
                Some(until) => valid_on(what.trim_end(), Some(until), date)?,
                None => Finding { passed: true, detail: None },
            }
        }
        Check::Qualification { identity_number } => {
            let op = w::MeslekiYeterlilikSorgula { wsuser: s.wsuser(), kimlik_no: identity_number.clone() };
            let r = s.call(Service::Arizi, &op)?;
            if r.sonuc_kodu != 0 {
                return refusal(s, r.sonuc_kodu, r.sonuc_mesaji);
            }
            let held: Vec<String> = r.belge_listesi.into_iter().flatten().filter(|b| !b.trim().is_empty()).collect();
            match held.is_empty() {
                true => Finding {
                    passed: false,
                    detail: Some("U-ETDS lists no professional qualification certificate for the driver".into()),
                },
                false => Finding { passed: true, detail: Some(format!("certificates: {}", held.join(", "))) },
            }
        }
        Check::Identity { identity_number, first_name, last_name } => {
            let input = w::KimlikBilgileriInput {
                kimlik_no: identity_number.clone(),
                adi: first_name.clone(),
                soyadi: last_name.clone(),
            };
            let r =
                s.call(Service::Arizi, &w::KimlikDogrulama { wsuser: s.wsuser(), kimlik_bilgileri_input: input })?;
            if r.sonuc_kodu != 0 {
                return refusal(s, r.sonuc_kodu, r.sonuc_mesaji);
            }
            match r.is_uygun {
                true => Finding { passed: true, detail: None },
                false => Finding {
                    passed: false,
                    detail: Some("U-ETDS says the identity number does not belong to the person of that name".into()),
                },
            }
        }
        Check::TravelPermit { identity_number } => {
            let op = w::SeyahatIzinKontrol { wsuser: s.wsuser(), tc_kimlik_no: identity_number.clone() };
            let r = s.call(Service::Arizi, &op)?;
            if r.sonuc_kodu != 0 {
                return refusal(s, r.sonuc_kodu, r.sonuc_mesaji);
            }
            Finding { passed: true, detail: None }
        }
    };
    Ok(finding)
}

/// U-ETDS's refusal of what was asked, as a finding; of the caller, as an error.
fn refusal(s: &Session, code: i32, message: Option<String>) -> AdapterResult<Finding> {
    match refused(code, message.as_deref()) {
        AdapterError::Permanent(m) => Ok(Finding { passed: false, detail: Some(clean(s, &m)) }),
        other => Err(other),
    }
}

/// A text of U-ETDS's fit to keep and show: the credentials masked, long numbers (identity
/// numbers it may quote) left out, shortened.
fn clean(s: &Session, text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        out.push_str(if digits.len() >= 9 { "…" } else { &digits });
        digits.clear();
        out.push(c);
    }
    s.secrets.excerpt(out.trim_end(), EXCERPT)
}

/// Whether `what`, valid until `until` (a day in any form U-ETDS writes one), is valid on
/// `date`; an answer without a readable day could not be checked.
fn valid_on(what: &str, until: Option<&str>, date: &str) -> AdapterResult<Finding> {
    let day = |t: &str| NaiveDate::parse_from_str(t, "%Y-%m-%d").ok();
    let on = day(date).ok_or_else(|| AdapterError::Permanent(format!("{date:?} is not a day (YYYY-MM-DD)")))?;
    let Some(last) = until.and_then(iso_day).as_deref().and_then(day) else {
        return Err(AdapterError::Transient(format!("U-ETDS gave no readable day until which {what} is valid")));
    };
    Ok(if last >= on {
        Finding { passed: true, detail: Some(format!("{what} is valid until {last}")) }
    } else {
        Finding { passed: false, detail: Some(format!("{what} was valid until {last}, before the trip's day {on}")) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_read_from_either_way_of_writing_a_day() {
        let f = valid_on("x", Some("01/12/2026"), "2026-12-01").unwrap();
        assert!(f.passed, "{f:?}");
        let f = valid_on("x", Some("2026-11-30T00:00:00+03:00"), "2026-12-01").unwrap();
        assert!(!f.passed && f.detail.unwrap().contains("2026-11-30"));
        assert!(matches!(valid_on("x", None, "2026-12-01"), Err(AdapterError::Transient(_))));
    }
}
