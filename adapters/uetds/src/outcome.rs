//! How U-ETDS's answers become the contract's errors.
//!
//! - No answer, an HTTP 5xx, 408 or 429, an answer that is not the expected SOAP envelope (a
//!   gateway's HTML page), or a SOAP fault of the service's side (`Server` / `Receiver`):
//!   **transient** (try again; the host reconciles first, since a write may have gone through).
//! - A SOAP fault of the request's side (`Client` / `Sender`: the request was refused before it
//!   was processed, so failing never hides a write), and any fault saying the operation is unknown
//!   or the request breaks the schema: **permanent**, with the service's message. Sending the
//!   same request again cannot help.
//! - A fault TNS cannot place (another or no fault code, or a service-side fault quoting a
//!   program error such as `java.lang.NullPointerException` or `ORA-…`, which the same request
//!   is likely to meet again): **suspect**, tried again, and failed once the same fault comes
//!   three attempts in a row.
//! - HTTP 401/403 or another 4xx from the gateway (a wrong address), wrong web-service credentials, a caller IP
//!   that is not on the firm's allow-list: **configuration** (the customer or the operator
//!   must act; retrying will not help).
//! - Any other `sonucKodu` ≠ 0: **permanent**, with U-ETDS's own message. No public source
//!   lists the codes; the only other documented one, 88 (some passengers refused), is read per
//!   passenger where it applies.

use tns_adapter::AdapterError;

use crate::wire::{arizi, esya, CallError, GenelIslemSonuc, GenelPdfSonuc};

pub(crate) fn transport(service: &str, e: CallError) -> AdapterError {
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
            "U-ETDS {service} answered HTTP {status} ({detail}): the service address may be wrong (TNS_ADAPTER_UETDS_*)"
        )),
        CallError::Fault { code, message } => fault(service, &code, &message),
        CallError::Malformed(detail) => {
            AdapterError::Transient(format!("U-ETDS {service} answered something unreadable: {detail}"))
        }
    }
}

/// Words (lower-cased) of faults that refuse the request itself: an operation the service does
/// not have, or a body its schema rejects (JAX-WS, CXF and Axis phrasings).
const REFUSED_REQUEST: &[&str] = &[
    "cannot find dispatch method",
    "no such operation",
    "unknown operation",
    "is not a valid operation",
    "no operation",
    "unmarshalling error",
    "unexpected element",
    "cvc-",
    "xml reader error",
    "not valid against",
];

/// Words (lower-cased) of a program error on the service's side, which the same request is
/// likely to meet again.
const PROGRAM_ERROR: &[&str] =
    &["java.lang.", "nullpointerexception", "numberformatexception", "classcastexception", "ora-0", "ora-1", "ora-2"];

/// A SOAP fault, by whose side it names (SOAP 1.1 `Client`/`Server`, 1.2 `Sender`/`Receiver`,
/// each possibly with a dotted sub-code) and what its message says (see the module's comment).
fn fault(service: &str, code: &str, message: &str) -> AdapterError {
    let text = format!("U-ETDS {service} answered a SOAP fault {code}: {message}");
    let lower = message.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    match code.split('.').next().unwrap_or(code) {
        "Client" | "Sender" if is_configuration(message) => AdapterError::Configuration(text),
        "Client" | "Sender" => AdapterError::Permanent(text),
        _ if has(REFUSED_REQUEST) => AdapterError::Permanent(text),
        "Server" | "Receiver" if has(PROGRAM_ERROR) => AdapterError::Suspect(text),
        "Server" | "Receiver" => AdapterError::Transient(text),
        _ => AdapterError::Suspect(text),
    }
}

/// True when U-ETDS's message says the caller is not who it claims or not allowed in: wrong
/// user name or password, or an IP address missing from the firm's allow-list.
pub(crate) fn is_configuration(message: &str) -> bool {
    let upper = message.to_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_alphanumeric()).collect();
    upper.contains("KULLANICI ADI")
        || upper.contains("ŞIFRE")
        || upper.contains("ŞİFRE")
        || upper.contains("SIFRE")
        || words.contains(&"IP")
}

/// A business refusal: U-ETDS's code and message, as the customer will read it.
pub(crate) fn refused(code: i32, message: Option<&str>) -> AdapterError {
    let message = message.unwrap_or("no message").trim();
    let text = format!("U-ETDS refused ({code}): {message}");
    if is_configuration(message) {
        AdapterError::Configuration(text)
    } else {
        AdapterError::Permanent(text)
    }
}

/// A result that carries `sonucKodu` and `sonucMesaji`.
pub(crate) trait Coded {
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
    arizi::IpListeleSonuc,
    arizi::MuayeneSorguSonuc,
    arizi::MesSorguSonuc,
    arizi::KimlikDogrulaSonuc,
    arizi::SeyahatIzinKontrolSonuc,
    esya::EsyaSeferEkleSonucV3,
    esya::EsyaYeniYukEkleSonucV3,
    esya::EsyaSeferDetayiSonucV3,
    esya::EsyaSeferListesiSonucV3,
    esya::EsyaParamIptalTuruSonuc,
    esya::EsyaParamYukBirimiSonuc,
    esya::EsyaParamMuafiyetTuruSonuc,
    esya::EsyaParamTehlikeliMaddeTasimaSekliSonuc,
    esya::EsyaParamTasimaTuruSonuc,
    esya::EsyaParamEsyaTurSonuc,
);

/// The result when U-ETDS accepted (code 0), else its refusal.
pub(crate) fn accepted<T: Coded>(r: T) -> Result<T, AdapterError> {
    if r.code() == 0 {
        Ok(r)
    } else {
        Err(refused(r.code(), r.message()))
    }
}

/// True when U-ETDS describes a record as cancelled (`İptal`).
pub(crate) fn is_cancelled(state: Option<&str>) -> bool {
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
        let fault = |code: &str, message: &str| {
            transport("arizi", CallError::Fault { code: code.into(), message: message.into() })
        };
        assert!(matches!(fault("Server", "Servis geçici olarak kullanılamıyor"), AdapterError::Transient(_)));
        assert!(matches!(fault("Receiver", "timeout talking to MERNIS"), AdapterError::Transient(_)));
        assert!(matches!(fault("Client", "Unmarshalling Error: cvc-complex-type.2.4.a"), AdapterError::Permanent(_)));
        assert!(matches!(fault("Sender", "bad request"), AdapterError::Permanent(_)));
        assert!(matches!(fault("Client.Authentication", "x"), AdapterError::Permanent(_)));
        assert!(matches!(fault("Client", "Bu IP adresinden erişim yok"), AdapterError::Configuration(_)));
        assert!(matches!(
            fault("Server", "Cannot find dispatch method for {http://uetds.unetws.udhb.gov.tr/}seferEkleX"),
            AdapterError::Permanent(_)
        ));
        assert!(matches!(
            fault("Server", "Unmarshalling Error: unexpected element (uri:\"\", local:\"x\")"),
            AdapterError::Permanent(_)
        ));
        assert!(matches!(fault("Server", "java.lang.NullPointerException"), AdapterError::Suspect(_)));
        assert!(matches!(fault("Server", "ORA-00001: unique constraint violated"), AdapterError::Suspect(_)));
        assert!(matches!(fault("VersionMismatch", "x"), AdapterError::Suspect(_)));
        assert!(matches!(fault("", "x"), AdapterError::Suspect(_)));
        // The service's own words, "IP" among them, do not make a service-side fault the caller's.
        assert!(matches!(fault("Server", "IP havuzu dolu, daha sonra deneyin"), AdapterError::Transient(_)));
        assert!(matches!(transport("arizi", CallError::Malformed("html".into())), AdapterError::Transient(_)));
        assert!(is_cancelled(Some("İptal")) && is_cancelled(Some("IPTAL EDILDI")) && !is_cancelled(Some("Geçerli")));
    }
}
