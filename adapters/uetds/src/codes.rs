//! The goods service's code lists, under the platform's names for them: the trip and load
//! cancel kinds (`seferIptalTurleri`, `iptalTurleri`), the transport types
//! (`paramTasimaTurleri`), the goods types and quantity units of each transport type
//! (`paramYukTuru`, `paramYukBirimi`: 1 dangerous goods, 2 other), how dangerous goods are
//! carried (`paramTehlikeliMaddeTasimaSekli`) and their exemptions
//! (`paramTehlikeMaddeMuafiyetTurleri`).
//!
//! Each list is asked on its own: one U-ETDS refuses or does not answer is left out (the
//! platform keeps what it had), and only when none came back is the run an error.

use tns_adapter::{AdapterResult, Code, CodeList};

use crate::{
    config::Service,
    outcome::accepted,
    wire::{esya as w, Operation},
    Session,
};

/// The transport type code of dangerous goods, and of the others.
const DANGEROUS: &str = "1";
const OTHER: &str = "2";

/// A list's entries as U-ETDS gives them: a code and its wording, either possibly missing.
type Entries = Vec<(Option<String>, Option<String>)>;

pub(crate) fn code_lists(s: &Session) -> AdapterResult<Vec<CodeList>> {
    let pairs = |items: Vec<w::Parametre>| items.into_iter().map(|p| (p.kodu, p.aciklama)).collect::<Vec<_>>();
    let asked: [(&str, AdapterResult<Entries>); 9] = [
        ("trip_cancel_kinds", ask(s, &w::SeferIptalTurleri { wsuser: s.wsuser() }, |r| pairs(r.iptal_turu_listesi))),
        ("load_cancel_kinds", ask(s, &w::IptalTurleri { wsuser: s.wsuser() }, |r| pairs(r.iptal_turu_listesi))),
        ("transport_kinds", ask(s, &w::ParamTasimaTurleri { wsuser: s.wsuser() }, |r| pairs(r.tasima_turu_listesi))),
        ("goods_types", goods_types(s, OTHER)),
        ("dangerous_goods_types", goods_types(s, DANGEROUS)),
        ("goods_units", units(s, OTHER)),
        ("dangerous_goods_units", units(s, DANGEROUS)),
        (
            "dangerous_packaging",
            ask(s, &w::ParamTehlikeliMaddeTasimaSekli { wsuser: s.wsuser() }, |r| {
                pairs(r.tehlikeli_madde_tasima_sekli_listesi)
            }),
        ),
        (
            "dangerous_exemptions",
            ask(s, &w::ParamTehlikeMaddeMuafiyetTurleri { wsuser: s.wsuser() }, |r| pairs(r.muafiyet_turu_listesi)),
        ),
    ];
    let mut lists = Vec::new();
    let mut first_error = None;
    for (name, answer) in asked {
        match answer {
            Ok(items) => lists.push(CodeList { name: name.into(), codes: codes(s, items) }),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (lists.is_empty(), first_error) {
        (true, Some(e)) => Err(e),
        _ => Ok(lists),
    }
}

fn ask<O: Operation>(s: &Session, op: &O, items: impl FnOnce(O::Return) -> Entries) -> AdapterResult<Entries>
where
    O::Return: crate::outcome::Coded,
{
    Ok(items(accepted(s.call(Service::Esya, op)?)?))
}

fn goods_types(s: &Session, transport: &str) -> AdapterResult<Entries> {
    let op = w::ParamYukTuru { wsuser: s.wsuser(), tasima_turu_kodu: transport.into() };
    ask(s, &op, |r| r.yuk_tur_listesi.into_iter().map(|t| (t.id.map(|id| id.to_string()), t.adi)).collect())
}

fn units(s: &Session, transport: &str) -> AdapterResult<Entries> {
    let op = w::ParamYukBirimi { wsuser: s.wsuser(), tasima_turu_kodu: transport.into() };
    ask(s, &op, |r| r.param_yuk_birimi_listesi.into_iter().map(|p| (p.kodu, p.aciklama)).collect())
}

/// The entries that carry a code (an empty, nil entry is skipped), trimmed, each code once,
/// the texts masked as every text of U-ETDS's is.
fn codes(s: &Session, items: Entries) -> Vec<Code> {
    let mut out: Vec<Code> = Vec::new();
    for (code, name) in items {
        let Some(code) = code.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()) else { continue };
        if out.iter().any(|c| c.code == code) {
            continue;
        }
        let name = name.map(|n| n.trim().to_string()).unwrap_or_default();
        out.push(Code { code: s.secrets.excerpt(&code, 40), name: s.secrets.excerpt(&name, 200) });
    }
    out
}
