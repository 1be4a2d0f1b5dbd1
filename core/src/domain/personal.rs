//! Personal data in the JSON TNS shows beside the records themselves (a submission's frozen
//! snapshot, a webhook's payload): identity and tax numbers, names and phones of passengers,
//! crew and parties. Credentials without `journeys:read` (the scope of the records themselves)
//! see them masked, so `submissions:read` or `webhooks:read` alone does not reveal who travels.
//!
//! Past the retention period (README, "Personal data retention") it is erased: the same fields
//! are replaced by [`ERASED`], in the JSON and in the rows alike.

use serde_json::Value;

/// Fields that identify a person wherever they appear.
const PERSONAL: [&str; 6] = ["identity_number", "tax_number", "first_name", "last_name", "name", "phone"];

/// Free text from elsewhere (a downstream's error message) that may quote a person's number.
const FREE_TEXT: [&str; 4] = ["error", "error_message", "last_error", "message"];

/// What an erased name, tax number or identity number reads: no person's value (brackets are
/// outside every field's rule), so it is never taken for one, nor sent as one.
pub const ERASED: &str = "[erased]";

/// A stored identity number once erased: unique per row, as the passengers' one-per-journey and
/// the personnel's one-per-organization keys need; the store writes the same in SQL.
pub fn erased_identity(row: i64) -> String {
    format!("[erased:{row}]")
}

/// Fields whose value identifies someone and stays a string once erased ([`ERASED`]).
const ERASED_TO_MARK: [&str; 5] = ["identity_number", "tax_number", "first_name", "last_name", "name"];

/// Fields that identify someone and may be absent: erased to `null`. A ticket's serial number
/// is a key to the firm's own sale, which names the buyer; a no-show's note is about the
/// passenger.
const ERASED_TO_NULL: [&str; 3] = ["phone", "ticket_serial_no", "note"];

/// Baggage tags are keys to a passenger's bags: erased to an empty list.
const ERASED_TO_EMPTY: [&str; 2] = ["baggage", "barcodes"];

/// Free text that may quote a person's number: a downstream's message, a cancellation's reason.
const ERASED_TEXT: [&str; 5] = ["error", "error_message", "last_error", "message", "reason"];

/// The identifying values in `v` (identity and tax numbers, phones), at any depth: what a
/// downstream's message about it may quote, for [`erase_text`].
pub fn identifiers(v: &Value) -> Vec<String> {
    let mut out = vec![];
    collect(v, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(s) if ["identity_number", "tax_number", "phone"].contains(&key.as_str()) => {
                        // Shorter values would match inside unrelated words and numbers.
                        if s.chars().count() >= 5 && s != ERASED {
                            out.push(s.clone());
                        }
                    }
                    other => collect(other, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
        _ => {}
    }
}

/// `text` with each of `known` and every run of 10 or more digits (an identity, tax or phone
/// number) replaced by [`ERASED`]; the rest of the message stays.
pub fn erase_text(text: &str, known: &[String]) -> String {
    let mut out = text.to_string();
    for k in known {
        out = out.replace(k.as_str(), ERASED);
    }
    let mut erased = String::with_capacity(out.len());
    let mut run = String::new();
    let flush = |run: &mut String, erased: &mut String| {
        erased.push_str(if run.len() >= 10 { ERASED } else { run });
        run.clear();
    };
    for c in out.chars() {
        if c.is_ascii_digit() {
            run.push(c);
        } else {
            flush(&mut run, &mut erased);
            erased.push(c);
        }
    }
    flush(&mut run, &mut erased);
    erased
}

/// Erase every personal field in `v`, at any depth, keeping its shape (a string stays a
/// string, so what was sent still reads as the contract's types) and everything else: places,
/// seats, amounts, counts, references. Free text keeps its words, without `known` and long
/// numbers. Erasing twice changes nothing more.
pub fn erase_personal(v: &mut Value, known: &[String]) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let key = key.as_str();
                match value {
                    Value::String(s) if ERASED_TO_MARK.contains(&key) => *s = ERASED.to_string(),
                    Value::String(_) if ERASED_TO_NULL.contains(&key) => *value = Value::Null,
                    Value::Array(_) if ERASED_TO_EMPTY.contains(&key) => *value = Value::Array(vec![]),
                    Value::String(s) if ERASED_TEXT.contains(&key) => *s = erase_text(s, known),
                    other => erase_personal(other, known),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| erase_personal(i, known)),
        _ => {}
    }
}

/// Mask every run of 10 or more digits in `text` (an identity, tax or phone number quoted in a
/// message), keeping its first and last two digits.
pub fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 10 {
            out.push_str(&mask("identity_number", run));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Keep the first and last two characters of a number and the first letter of a name: enough
/// to tell records apart, not to identify anyone.
fn mask(key: &str, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    match key {
        "identity_number" | "tax_number" | "phone" if chars.len() > 4 => {
            let (head, tail): (String, String) =
                (chars[..2].iter().collect(), chars[chars.len() - 2..].iter().collect());
            format!("{head}{}{tail}", "*".repeat(chars.len() - 4))
        }
        _ => chars.first().map(|c| format!("{c}***")).unwrap_or_default(),
    }
}

/// Mask every personal field in `v`, at any depth.
pub fn mask_personal(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    // Nothing is left to hide in an erased value, and masked it would no longer read so.
                    Value::String(s) if s == ERASED => {}
                    Value::String(s) if PERSONAL.contains(&key.as_str()) => *s = mask(key, s),
                    Value::String(s) if FREE_TEXT.contains(&key.as_str()) => *s = mask_numbers(s),
                    other => mask_personal(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_personal),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn masks_numbers_quoted_in_messages() {
        assert_eq!(mask_numbers("17291716060 TC KIMLIK NO HATALI"), "17*******60 TC KIMLIK NO HATALI");
        assert_eq!(mask_numbers("kod 88, plaka 34ABC123, sefer 123456789"), "kod 88, plaka 34ABC123, sefer 123456789");
        let mut v = json!({"error_message": "yolcu 17291716060: hata", "downstream_reference": "12345678901"});
        mask_personal(&mut v);
        assert_eq!(v["error_message"], "yolcu 17*******60: hata");
        assert_eq!(v["downstream_reference"], "12345678901", "references are not people");
    }

    #[test]
    fn erases_people_at_any_depth_keeping_shape_and_the_rest() {
        let mut v = json!({
            "plate": "34ABC123",
            "crew": [{"role": "driver", "identity_number": "17291716060", "first_name": "Mehmet", "last_name": "Demir",
                      "gender": "E", "nationality": null, "phone": "5320000000"}],
            "passengers": [{"key": "7", "person": {"identity_number": "U1234567", "first_name": "John", "gender": "E"},
                            "seat_no": "3", "ticket_serial_no": "A-1", "amount": 450.5, "baggage": ["BG1", "BG2"]}],
            "sender": {"tax_number": "4540536920", "name": "Gönderen A.Ş."},
            "baggage_held": [{"key": "7", "identity_number": "U1234567", "seat_no": "3", "barcodes": ["BG1"]}],
            "reason": "yolcu U1234567 gelmedi, tel 05320000000",
        });
        let known = identifiers(&v);
        assert_eq!(known, ["17291716060", "4540536920", "5320000000", "U1234567"]);
        erase_personal(&mut v, &known);
        assert_eq!(v["crew"][0]["identity_number"], ERASED);
        assert_eq!((v["crew"][0]["first_name"].as_str(), v["crew"][0]["phone"].as_null()), (Some(ERASED), Some(())));
        assert_eq!(v["passengers"][0]["person"]["identity_number"], ERASED);
        assert_eq!(v["passengers"][0]["ticket_serial_no"], Value::Null);
        assert_eq!(v["passengers"][0]["baggage"], json!([]));
        assert_eq!(v["baggage_held"][0]["barcodes"], json!([]));
        assert_eq!(v["sender"], json!({"tax_number": ERASED, "name": ERASED}));
        assert_eq!(v["reason"], "yolcu [erased] gelmedi, tel 0[erased]");
        assert_eq!(v["crew"][0]["gender"], "E", "what is not identifying stays");
        assert_eq!((v["plate"].as_str(), v["passengers"][0]["seat_no"].as_str()), (Some("34ABC123"), Some("3")));
        assert_eq!(v["passengers"][0]["amount"], 450.5);
        let text = v.to_string();
        for gone in ["17291716060", "U1234567", "Mehmet", "Demir", "John", "5320000000", "A-1", "BG1", "Gönderen"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
        let once = v.clone();
        let again = identifiers(&v);
        erase_personal(&mut v, &again);
        assert_eq!(v, once, "erasing again changes nothing");
        let mut masked = v.clone();
        mask_personal(&mut masked);
        assert_eq!(masked, v, "an erased value reads the same masked");
    }

    #[test]
    fn erased_text_keeps_the_words() {
        assert_eq!(erase_text("17291716060 TC KIMLIK NO HATALI", &[]), "[erased] TC KIMLIK NO HATALI");
        assert_eq!(erase_text("kod 88, sefer 123456789", &[]), "kod 88, sefer 123456789");
        assert_eq!(erase_text("pasaport U1234567 hatali", &["U1234567".into()]), "pasaport [erased] hatali");
    }

    #[test]
    fn masks_people_at_any_depth_and_keeps_the_rest() {
        let mut v = json!({
            "plate": "34ABC123",
            "crew": [{"identity_number": "17291716060", "first_name": "Mehmet", "last_name": "Demir", "phone": "5320000000"}],
            "passengers": [{"key": "7", "person": {"identity_number": "U1234567", "first_name": "John"}, "seat_no": "3"}],
            "sender": {"tax_number": "4540536920", "name": "Gönderen A.Ş."},
            "removed": [{"key": "9", "identity_number": "10000000146"}],
        });
        mask_personal(&mut v);
        assert_eq!(v["crew"][0]["identity_number"], "17*******60");
        assert_eq!(v["crew"][0]["first_name"], "M***");
        assert_eq!(v["crew"][0]["phone"], "53******00");
        assert_eq!(v["passengers"][0]["person"]["identity_number"], "U1****67");
        assert_eq!(v["sender"]["name"], "G***");
        assert_eq!(v["removed"][0]["identity_number"], "10*******46");
        assert_eq!((v["plate"].as_str(), v["passengers"][0]["seat_no"].as_str()), (Some("34ABC123"), Some("3")));
        let text = v.to_string();
        assert!(!text.contains("17291716060") && !text.contains("Mehmet") && !text.contains("Demir"));
    }
}
