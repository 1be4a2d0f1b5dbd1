//! Personal data in the JSON TNS shows beside the records themselves (a submission's frozen
//! snapshot, a webhook's payload): identity and tax numbers, names and phones of passengers,
//! crew and parties. Credentials without `journeys:read` (the scope of the records themselves)
//! see them masked, so `submissions:read` or `webhooks:read` alone does not reveal who travels.

use serde_json::Value;

/// Fields that identify a person wherever they appear.
const PERSONAL: [&str; 6] = ["identity_number", "tax_number", "first_name", "last_name", "name", "phone"];

/// Free text from elsewhere (a downstream's error message) that may quote a person's number.
const FREE_TEXT: [&str; 4] = ["error", "error_message", "last_error", "message"];

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
