//! How U-ETDS's answers become the contract's errors.
//!
//! - No answer, an HTTP 5xx, 408 or 429, an answer that is not the expected SOAP envelope, or a
//!   SOAP fault from the gateway: **transient** (try again; the host reconciles first, since a write may
//!   have gone through).
//! - HTTP 401/403 or another 4xx from the gateway (a wrong address), wrong web-service credentials, a caller IP
//!   that is not on the firm's allow-list: **configuration** (the customer or the operator
//!   must act; retrying will not help).
//! - Any other `sonucKodu` ≠ 0: **permanent**, with U-ETDS's own message.

use tns_adapter::AdapterError;

use crate::wire::{arizi, esya, CallError, GenelIslemSonuc, GenelPdfSonuc};

pub fn transport(service: &str, e: CallError) -> AdapterError {
    match e {
        CallError::Unreachable { detail, .. } => AdapterError::Transient(format!("U-ETDS {service}: {detail}")),
        CallError::Http { status: 401 | 403, .. } => AdapterError::Configuration(format!(
            "U-ETDS {service} refused the web-service credentials (HTTP 401/403): check the user name (the firm's \
             UNET number) and password, set with PUT /portal/downstream"
        )),
        CallError::Http { status, detail } if status >= 500 || status == 408 || status == 429 => {
            AdapterError::Transient(format!("U-ETDS {service} answered HTTP {status}: {detail}"))
        }
        CallError::Http { status, detail } => AdapterError::Configuration(format!(
            "U-ETDS {service} answered HTTP {status} ({detail}): the service address may be wrong (TNS_UETDS_*)"
        )),
        CallError::Fault { code, message } => {
            AdapterError::Transient(format!("U-ETDS {service} answered a SOAP fault {code}: {message}"))
        }
        CallError::Malformed(detail) => {
            AdapterError::Transient(format!("U-ETDS {service} answered something unreadable: {detail}"))
        }
    }
}

/// True when U-ETDS's message says the caller is not who it claims or not allowed in: wrong
/// user name or password, or an IP address missing from the firm's allow-list.
pub fn is_configuration(message: &str) -> bool {
    let upper = message.to_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_alphanumeric()).collect();
    upper.contains("KULLANICI ADI")
        || upper.contains("ŞIFRE")
        || upper.contains("ŞİFRE")
        || upper.contains("SIFRE")
        || words.contains(&"IP")
}

/// A business refusal: U-ETDS's code and message, as the customer will read it.
pub fn refused(code: i32, message: Option<&str>) -> AdapterError {
    let message = message.unwrap_or("no message").trim();
    let text = format!("U-ETDS refused ({code}): {message}");
    if is_configuration(message) {
        AdapterError::Configuration(text)
    } else {
        AdapterError::Permanent(text)
    }
}

/// A result that carries `sonucKodu` and `sonucMesaji`.
pub trait Coded {
    fn code(&self) -> i32;
    fn message(&self) -> Option<&str>;
}

macro_rules! coded {
    ($($t:ty),* $(,)?) => {$(
        impl Coded for $t {
            fn code(&self) -> i32 {
                self.sonuc_kodu
            }
            fn message(&self) -> Option<&str> {
                self.sonuc_mesaji.as_deref()
            }
        }
    )*};
}

coded!(
    GenelIslemSonuc,
    GenelPdfSonuc,
    arizi::FirmaSonuc,
    arizi::AriziSeferBildirSonuc,
    arizi::AriziSeferAraSonuc,
    arizi::AriziGrupIslemSonuc,
    arizi::YtsYolcuCokluSonuc,
    arizi::AriziSeferBildirimOzetSonuc,
    esya::EsyaSeferEkleSonucV3,
    esya::EsyaYeniYukEkleSonucV3,
    esya::EsyaSeferDetayiSonucV3,
    esya::EsyaSeferListesiSonucV3,
);

/// The result when U-ETDS accepted (code 0), else its refusal.
pub fn accepted<T: Coded>(r: T) -> Result<T, AdapterError> {
    if r.code() == 0 {
        Ok(r)
    } else {
        Err(refused(r.code(), r.message()))
    }
}

/// True when U-ETDS describes a record as cancelled (`İptal`).
pub fn is_cancelled(state: Option<&str>) -> bool {
    state.is_some_and(|s| {
        let s = s.to_uppercase();
        s.contains("İPTAL") || s.contains("IPTAL")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert!(matches!(refused(1, Some("KULLANICI ADI YADA SIFRE HATALI")), AdapterError::Configuration(_)));
        assert!(matches!(refused(7, Some("Bu IP adresinden erişim yetkiniz yok")), AdapterError::Configuration(_)));
        assert!(matches!(refused(34, Some("Girilen plaka kayıtlı değil!")), AdapterError::Permanent(_)));
        // "İPTAL" is not the word "IP".
        assert!(matches!(refused(5, Some("Sefer iptal edilmiş")), AdapterError::Permanent(_)));
        assert!(matches!(
            transport("arizi", CallError::Http { status: 401, detail: String::new() }),
            AdapterError::Configuration(_)
        ));
        assert!(matches!(
            transport("arizi", CallError::Http { status: 503, detail: String::new() }),
            AdapterError::Transient(_)
        ));
        assert!(matches!(
            transport("arizi", CallError::Fault { code: "Server".into(), message: "x".into() }),
            AdapterError::Transient(_)
        ));
        assert!(matches!(transport("arizi", CallError::Malformed("html".into())), AdapterError::Transient(_)));
        assert!(is_cancelled(Some("İptal")) && is_cancelled(Some("IPTAL EDILDI")) && !is_cancelled(Some("Geçerli")));
    }
}
