//! The downstream's code lists: the codes some of its fields take (why a trip or load is
//! cancelled, the goods types and units, how dangerous goods travel). The platform keeps a
//! shipped copy of each and, once the jobs role can read them, the downstream's own (refreshed
//! daily); clients choose from them through `GET /ref/code-lists`.

use serde::Serialize;
use utoipa::ToSchema;

use super::fields::str_enum;

str_enum! {
    /// A code list, by the platform's name for it.
    pub enum CodeListName {
        /// Why a goods trip is cancelled (`cancel_kind` of a shipment's cancellation).
        TripCancelKinds = "trip_cancel_kinds",
        /// Why one load of a goods trip is withdrawn.
        LoadCancelKinds = "load_cancel_kinds",
        /// Transport types: dangerous goods, or other.
        TransportKinds = "transport_kinds",
        /// Goods types (`cargo_type`) of goods that are not dangerous.
        GoodsTypes = "goods_types",
        /// Goods types of dangerous goods.
        DangerousGoodsTypes = "dangerous_goods_types",
        /// Quantity units of goods that are not dangerous.
        GoodsUnits = "goods_units",
        /// Quantity units of dangerous goods.
        DangerousGoodsUnits = "dangerous_goods_units",
        /// How dangerous goods travel (packaged, tank, bulk).
        DangerousPackaging = "dangerous_packaging",
        /// Dangerous-goods exemptions (`dangerous_exemption`).
        DangerousExemptions = "dangerous_exemptions",
    }
}

str_enum! {
    /// Where a code list's codes come from.
    pub enum CodeListSource {
        /// The copy shipped with TNS (what public sources show).
        Shipped = "shipped",
        /// Read from the downstream by the jobs role.
        Downstream = "downstream",
    }
}

/// Codes one list keeps at most; a longer answer is cut.
pub const MAX_CODES: usize = 1_000;
/// Characters of a code at most.
pub const MAX_CODE_CHARS: usize = 40;
/// Characters of a code's wording at most.
pub const MAX_NAME_CHARS: usize = 200;

/// A code and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct Code {
    pub code: String,
    pub name: String,
}

/// `codes` as a list keeps them: codes and wordings trimmed and bounded, entries without a
/// code dropped, each code once (its first wording), at most [`MAX_CODES`].
pub fn bounded(codes: impl IntoIterator<Item = Code>) -> Vec<Code> {
    let cut = |s: &str, n: usize| s.trim().chars().filter(|c| !c.is_control()).take(n).collect::<String>();
    let mut out: Vec<Code> = Vec::new();
    for c in codes {
        let code = cut(&c.code, MAX_CODE_CHARS);
        if code.is_empty() || out.iter().any(|o| o.code == code) {
            continue;
        }
        out.push(Code { code, name: cut(&c.name, MAX_NAME_CHARS) });
        if out.len() == MAX_CODES {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_trimmed_bounded_and_each_code_kept_once() {
        let c = |code: &str, name: &str| Code { code: code.into(), name: name.into() };
        let long = "x".repeat(300);
        let got = bounded([c(" 1 ", "BİR"), c("", "no code"), c("1", "again"), c("2", &long)]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], c("1", "BİR"));
        assert_eq!(got[1].name.chars().count(), MAX_NAME_CHARS);
        let many = bounded((0..2_000).map(|i| c(&i.to_string(), "n")));
        assert_eq!(many.len(), MAX_CODES);
    }
}
