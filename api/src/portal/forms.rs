//! Forms built from the API's own document: a record's form has a field for each property of its
//! request schema (`VehicleIn`, `PersonIn`, …), of the kind the schema says (a choice for an
//! enum, a number, text with its length), and what is typed is turned into the JSON the API
//! takes and parsed by the API's own parser. So a form asks for exactly what the API accepts
//! and refuses what it refuses, with the same message, next to the field it names.

use std::{collections::BTreeMap, sync::OnceLock};

use maud::{html, Markup};
use serde_json::{Map, Value};

use super::i18n::{field_label, Lang, Msg};
use crate::{error::ApiError, v1::openapi_document};

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    Text {
        max: Option<u64>,
    },
    Integer {
        min: Option<i64>,
        max: Option<i64>,
    },
    /// A number with decimals (an amount).
    Number,
    Choice(Vec<String>),
    Flag,
    /// A list of words (baggage barcodes), typed separated by spaces or commas.
    List,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FieldSpec {
    pub name: String,
    pub kind: Kind,
    pub required: bool,
    pub hint: Option<String>,
    /// A place the member picks by typing its name (a province or a district id).
    pub picker: Option<Picker>,
}

/// What a place field's type-ahead looks up (`GET /reference/places`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Picker {
    City,
    /// A district or airport, of the province typed in `city_field` when the form has one.
    District {
        city_field: Option<String>,
    },
}

impl Picker {
    fn kind(&self) -> &'static str {
        match self {
            Picker::City => "city",
            Picker::District { .. } => "district",
        }
    }
}

/// The picker of property `name`, from the reference type its schema names: a province
/// (`CityId`) or a place (`PlaceId`, whose province is the sibling `…_city_id`).
fn picker(props: &Map<String, Value>, name: &str, p: &Value) -> Option<Picker> {
    let refs = std::iter::once(p)
        .chain(["oneOf", "anyOf"].iter().flat_map(|k| p[*k].as_array().into_iter().flatten()))
        .filter_map(|v| v["$ref"].as_str())
        .map(|r| r.rsplit('/').next().unwrap_or_default());
    for r in refs {
        match r {
            "CityId" => return Some(Picker::City),
            "PlaceId" => {
                let city = name.strip_suffix("_district_id").map(|stem| format!("{stem}_city_id"));
                return Some(Picker::District { city_field: city.filter(|c| props.contains_key(c)) });
            }
            _ => {}
        }
    }
    None
}

/// The fields of request schema `schema` (a component of the document), in its order.
pub(super) fn fields(schema: &str) -> &'static [FieldSpec] {
    static FORMS: OnceLock<BTreeMap<String, Vec<FieldSpec>>> = OnceLock::new();
    let forms = FORMS.get_or_init(|| {
        let doc: Value = serde_json::from_str(openapi_document()).expect("the document is JSON");
        let schemas = doc["components"]["schemas"].as_object().cloned().unwrap_or_default();
        schemas.iter().map(|(name, s)| (name.clone(), specs(&schemas, s))).collect()
    });
    forms.get(schema).map(Vec::as_slice).unwrap_or_else(|| panic!("no schema {schema} in the document"))
}

fn specs(schemas: &Map<String, Value>, schema: &Value) -> Vec<FieldSpec> {
    let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(props) = schema["properties"].as_object() else { return vec![] };
    props
        .iter()
        // A list of objects (a shipment's further loads) is no field of a form: edits leave it as
        // it is.
        .filter(|(_, raw)| {
            let p = resolve(schemas, raw);
            !(p["type"] == "array" && (p["items"]["$ref"].is_string() || p["items"]["type"] == "object"))
        })
        .map(|(name, raw)| {
            let p = resolve(schemas, raw);
            FieldSpec {
                name: name.clone(),
                kind: kind(&p),
                required: required.contains(&name.as_str()),
                hint: p["description"].as_str().map(|d| d.lines().next().unwrap_or(d).to_string()),
                picker: picker(props, name, raw),
            }
        })
        .collect()
}

/// A property's own schema: `$ref`s followed, a nullable one's non-null alternative taken.
fn resolve(schemas: &Map<String, Value>, p: &Value) -> Value {
    if let Some(r) = p["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or_default();
        let mut target = schemas.get(name).map(|t| resolve(schemas, t)).unwrap_or(Value::Null);
        // The property's own description says more than the type's.
        if let (Some(obj), Some(d)) = (target.as_object_mut(), p.get("description")) {
            obj.insert("description".into(), d.clone());
        }
        return target;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = p[key].as_array() {
            if let Some(one) = alts.iter().find(|a| a["type"] != "null") {
                let mut s = resolve(schemas, one);
                if let (Some(obj), Some(d)) = (s.as_object_mut(), p.get("description")) {
                    obj.entry("description").or_insert(d.clone());
                }
                return s;
            }
        }
    }
    p.clone()
}

fn kind(p: &Value) -> Kind {
    // A list of words is a choice; a list of ids (provinces, places) is a number to type.
    if let Some(values) = p["enum"].as_array().filter(|v| !v.is_empty() && v.iter().all(Value::is_string)) {
        return Kind::Choice(values.iter().filter_map(|v| v.as_str().map(String::from)).collect());
    }
    let ty = match &p["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("string").to_string(),
        _ => "string".into(),
    };
    match ty.as_str() {
        "integer" => Kind::Integer { min: p["minimum"].as_i64(), max: p["maximum"].as_i64() },
        "boolean" => Kind::Flag,
        "number" => Kind::Number,
        // A list of ids (the crew) is chosen, not typed: its form says how.
        "array" if p["items"]["type"] != "integer" => Kind::List,
        _ => Kind::Text { max: p["maxLength"].as_u64() },
    }
}

/// What was typed into a form, by field name (empty fields left out).
pub(super) type Typed = BTreeMap<String, String>;

/// The typed values of `specs` out of a form body's pairs (unknown names ignored: the form
/// only sends its own).
pub(super) fn typed(specs: &[FieldSpec], pairs: Vec<(String, String)>) -> Typed {
    pairs
        .into_iter()
        .filter(|(k, v)| !v.trim().is_empty() && specs.iter().any(|s| &s.name == k))
        .map(|(k, v)| (k, v.trim().to_string()))
        .collect()
}

/// The JSON the API takes for what was typed: numbers as numbers where the field is one (text
/// that is not a number stays text, for the API's parser to refuse naming the field), flags as
/// booleans. With `clear`, fields left empty are `null` (a merge patch's "remove").
pub(super) fn json(specs: &[FieldSpec], typed: &Typed, clear: bool) -> Value {
    let mut out = Map::new();
    for spec in specs {
        let value = match (typed.get(&spec.name), &spec.kind) {
            (Some(v), Kind::Integer { .. }) => {
                v.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(v.as_str()))
            }
            (Some(v), Kind::Number) => v
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or_else(|| Value::from(v.as_str())),
            (Some(v), Kind::Flag) => Value::Bool(v == "on" || v == "true"),
            (Some(v), Kind::List) => v.split([',', ' ', '\t']).filter(|w| !w.is_empty()).map(Value::from).collect(),
            (None, Kind::List) if clear && !spec.required => Value::Array(vec![]),
            (Some(v), _) => Value::from(v.as_str()),
            (None, Kind::Flag) => Value::Bool(false),
            (None, _) if clear && !spec.required => Value::Null,
            (None, _) => continue,
        };
        out.insert(spec.name.clone(), value);
    }
    Value::Object(out)
}

/// The field an API error names, and its message, to show beside it; `None` for an error that
/// names no field of this form.
pub(super) fn field_error(specs: &[FieldSpec], e: &ApiError) -> Option<(String, String)> {
    let (field, reason) = match e {
        ApiError::Validation { field, reason } => (field.clone(), reason.clone()),
        ApiError::Conflict(_, detail) => {
            let (field, rest) = detail.split_once(": ")?;
            (field.to_string(), rest.to_string())
        }
        _ => return None,
    };
    specs.iter().any(|s| s.name == field).then_some((field, reason))
}

/// The inputs of a form: each field labelled, its value kept, its error (if any) beside it and
/// linked to it for assistive technology.
pub(super) fn inputs(lang: Lang, specs: &[FieldSpec], typed: &Typed, error: Option<&(String, String)>) -> Markup {
    html! {
        @for spec in specs {
            @let id = format!("f-{}", spec.name);
            @let err = error.filter(|(f, _)| *f == spec.name).map(|(_, r)| r);
            @let described = [spec.hint.as_ref().map(|_| format!("{id}-hint")), err.map(|_| format!("{id}-error"))]
                .into_iter().flatten().collect::<Vec<_>>().join(" ");
            @let value = typed.get(&spec.name).map(String::as_str);
            div.field {
                label for=(id) {
                    (field_label(lang, &spec.name))
                    @if spec.required { " " span.muted { "(" (lang.t(Msg::Required)) ")" } }
                }
                @match &spec.kind {
                    Kind::Choice(options) => {
                        select #(id) name=(spec.name) required[spec.required]
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)] {
                            @if !spec.required || value.is_none() { option value="" { "—" } }
                            @for o in options {
                                option value=(o) selected[value == Some(o.as_str())] { (o) }
                            }
                        }
                    }
                    Kind::Flag => {
                        input #(id) type="checkbox" name=(spec.name) checked[value.is_some()]
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                    }
                    Kind::Integer { .. } if spec.picker.is_some() => {
                        @let picker = spec.picker.as_ref().expect("matched");
                        @let city_field = match picker { Picker::District { city_field } => city_field.as_deref(), Picker::City => None };
                        // Text, so that a name can be typed; the options' values are the ids.
                        input #(id) type="text" name=(spec.name) value=[value] required[spec.required]
                            autocomplete="off" list=(format!("{id}-options"))
                            data-picker=(picker.kind()) data-city-field=[city_field]
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                        datalist #(format!("{id}-options")) {}
                    }
                    Kind::Integer { min, max } => {
                        input #(id) type="number" inputmode="numeric" name=(spec.name) value=[value]
                            min=[min] max=[max] required[spec.required]
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                    }
                    Kind::Number => {
                        input #(id) type="text" inputmode="decimal" name=(spec.name) value=[value] required[spec.required]
                            autocomplete="off"
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                    }
                    Kind::List => {
                        input #(id) type="text" name=(spec.name) value=[value] required[spec.required] autocomplete="off"
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                    }
                    Kind::Text { max } => {
                        input #(id) type="text" name=(spec.name) value=[value] maxlength=[max] required[spec.required]
                            autocomplete="off"
                            aria-invalid=[err.map(|_| "true")] aria-describedby=[(!described.is_empty()).then_some(&described)];
                    }
                }
                @if let Some(h) = &spec.hint { p.hint id=(format!("{id}-hint")) { (h) } }
                @if let Some(r) = err { p.error-text id=(format!("{id}-error")) { (r) } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, kind: Kind, required: bool) -> FieldSpec {
        FieldSpec { name: name.into(), kind, required, hint: None, picker: None }
    }

    #[test]
    fn typed_values_become_the_json_the_api_takes() {
        let specs = [
            spec("plate", Kind::Text { max: None }, true),
            spec("capacity", Kind::Integer { min: None, max: None }, false),
            spec("brand", Kind::Text { max: Some(50) }, false),
        ];
        let typed = typed(
            &specs,
            vec![
                ("plate".into(), " 34 ABC 1 ".into()),
                ("capacity".into(), "46".into()),
                ("brand".into(), "".into()),
                ("x".into(), "y".into()),
            ],
        );
        assert_eq!(json(&specs, &typed, false), serde_json::json!({"plate": "34 ABC 1", "capacity": 46}));
        assert_eq!(json(&specs, &typed, true), serde_json::json!({"plate": "34 ABC 1", "capacity": 46, "brand": null}));
        // Not a number: left as text, for the API's parser to refuse naming the field.
        let bad = super::typed(&specs, vec![("capacity".into(), "lots".into())]);
        assert_eq!(json(&specs, &bad, false), serde_json::json!({"capacity": "lots"}));
    }

    #[test]
    fn the_vehicle_form_follows_the_document() {
        let specs = fields("VehicleIn");
        let plate = specs.iter().find(|s| s.name == "plate").unwrap();
        assert!(plate.required);
        let ty = specs.iter().find(|s| s.name == "vehicle_type").unwrap();
        assert!(matches!(&ty.kind, Kind::Choice(o) if !o.is_empty()), "{ty:?}");
        let cap = specs.iter().find(|s| s.name == "capacity").unwrap();
        assert!(matches!(cap.kind, Kind::Integer { .. }) && !cap.required, "{cap:?}");
    }

    #[test]
    fn a_shipments_places_are_picked_by_name() {
        let specs = fields("CargoIn");
        let spec = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(spec("loading_city_id").picker, Some(Picker::City));
        assert!(matches!(spec("loading_city_id").kind, Kind::Integer { .. }), "{:?}", spec("loading_city_id"));
        assert_eq!(
            spec("unloading_district_id").picker,
            Some(Picker::District { city_field: Some("unloading_city_id".into()) })
        );
        assert!(matches!(spec("unloading_district_id").kind, Kind::Integer { .. }));
        assert_eq!(spec("cargo_unit").picker, None);
        assert_eq!(spec("cargo_amount").kind, Kind::Number);
        let typed = typed(specs, vec![("cargo_amount".into(), "1250.5".into())]);
        assert_eq!(json(specs, &typed, false), serde_json::json!({"cargo_amount": 1250.5}));
        assert!(matches!(&spec("cargo_unit").kind, Kind::Choice(o) if o.contains(&"KG".to_string())));
    }
}
