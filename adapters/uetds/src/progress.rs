//! What the steps of one notification achieved, kept by the host between calls (the JSON of
//! these types), and the receipt it ends with.

use std::collections::BTreeMap;

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;
use tns_adapter::{AdapterError, AdapterResult, Passenger, PassengerResult, Person};

use crate::wire::{soap::EXCERPT, Secrets};

/// Passengers sent per `yolcuEkleCoklu` call. U-ETDS publishes no limit; smaller batches also
/// keep each call well inside its timeout.
pub(crate) const PASSENGER_BATCH: usize = 100;

/// One passenger's outcome downstream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pax {
    /// U-ETDS's reference of the accepted passenger (`uetdsBiletRefNo`).
    pub reference: Option<String>,
    /// Why U-ETDS refused the passenger; `None` when accepted.
    pub error: Option<String>,
    /// A fingerprint of the passenger as sent: a passenger changed since goes again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
    /// Our reference of the submission that sent it: a refusal is final for that submission
    /// only, and a later one (continuing its progress) sends the passenger again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl Pax {
    pub(crate) fn accepted(reference: Option<i64>) -> Pax {
        Pax { reference: reference.map(|r| r.to_string()), error: None, sent: None, by: None }
    }

    /// U-ETDS's message, kept (in the progress, then the passenger's result) only as an
    /// excerpt with the credentials masked.
    pub(crate) fn refused(code: i32, message: Option<&str>, secrets: &Secrets) -> Pax {
        let error = Some(format!("{code}: {}", secrets.excerpt(message.unwrap_or("refused"), EXCERPT)));
        Pax { reference: None, error, sent: None, by: None }
    }
}

/// The progress recorded so far (`null` before the first call).
pub(crate) fn load<P: DeserializeOwned + Default>(v: &Value) -> AdapterResult<P> {
    if v.is_null() {
        return Ok(P::default());
    }
    serde_json::from_value(v.clone()).map_err(|e| AdapterError::Permanent(format!("unreadable progress: {e}")))
}

/// The per-passenger results of a receipt, in the order of `passengers`.
pub(crate) fn results<'a>(
    passengers: impl IntoIterator<Item = &'a Passenger>,
    done: &BTreeMap<String, Pax>,
) -> Vec<PassengerResult> {
    passengers
        .into_iter()
        .map(|p| {
            let d = done.get(&p.key);
            PassengerResult {
                key: p.key.clone(),
                downstream_reference: d.and_then(|d| d.reference.clone()),
                error: d.map_or_else(|| Some("not sent".into()), |d| d.error.clone()),
            }
        })
        .collect()
}

/// U-ETDS's personnel type (`turKodu`): 0 driver, 2 host, 4 other, 5 guide.
pub(crate) fn personnel_type(p: &Person) -> i32 {
    match p.role.as_str() {
        "driver" => 0,
        "host" => 2,
        "guide" => 5,
        _ => 4,
    }
}

/// The message of a completed notification: U-ETDS's own, and how many passengers it refused.
pub(crate) fn message(refused: usize, total: usize) -> Option<String> {
    Some(if refused == 0 {
        "İŞLEM BAŞARILI".into()
    } else {
        format!("{} of {total} passengers refused (U-ETDS code 88)", refused)
    })
}
