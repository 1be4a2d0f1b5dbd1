//! Field types: each parses one request value by one rule, and describes that same rule in the
//! OpenAPI document. A string rule is a regular expression whose source text goes into the
//! document verbatim and is also what the value is matched with here, so a value the document
//! accepts is a value the API accepts, and the other way round. Rules JSON Schema cannot state
//! (check digits, reference data) are named by a `format` or an `enum` instead.
//!
//! Patterns stay inside the dialect ECMA-262, Python's `re` and Rust's `regex` read alike:
//! anchored, explicit character classes (`\uXXXX`, never `\s` or `\d`), no look-around.
//!
//! A field type deserializes with its rule applied, so a bad value is a 422 naming the field's
//! path (`passengers[3].identity_number`) before any handler runs.

use std::{borrow::Cow, fmt, marker::PhantomData, sync::LazyLock};

use chrono::{Datelike, NaiveDate, NaiveTime};
use regex::Regex;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value};
use utoipa::openapi::{schema::Schema, Object, RefOr};

/// A compiled rule and its source text.
pub struct Pattern {
    source: &'static str,
    compiled: LazyLock<Regex>,
}

impl Pattern {
    pub fn source(&self) -> &'static str {
        self.source
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.compiled.is_match(s)
    }
}

/// Declare a [`Pattern`] static from a literal (or `concat!` of literals).
macro_rules! pattern {
    ($(#[$m:meta])* $vis:vis $name:ident = $src:expr) => {
        $(#[$m])*
        $vis static $name: $crate::domain::fields::Pattern = $crate::domain::fields::Pattern::new($src, || {
            regex::Regex::new($src).expect("field patterns compile")
        });
    };
}
pub(crate) use pattern;

impl Pattern {
    #[doc(hidden)]
    pub const fn new(source: &'static str, build: fn() -> Regex) -> Pattern {
        Pattern { source, compiled: LazyLock::new(build) }
    }
}

/// Control characters (Unicode `Cc`) and whitespace (Unicode `White_Space`): what trimming
/// removes, and what a text must have something besides.
macro_rules! blank {
    () => {
        r"\u0000-\u0020\u007F-\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000"
    };
}
pub(crate) use blank;

/// The characters outside XML 1.0's `Char` that are not control characters: U+FFFE and U+FFFF.
/// (Surrogates, the only others, cannot occur in a decoded string.) Text that reaches U-ETDS
/// travels in a SOAP document, which cannot carry them: a call with one fails downstream.
macro_rules! not_xml {
    () => {
        r"\uFFFE\uFFFF"
    };
}

pattern!(
    /// Free text: no control characters nor characters XML cannot carry, at least one character
    /// that is not whitespace.
    TEXT = concat!(
        r"^[^\u0000-\u001F\u007F-\u009F",
        not_xml!(),
        r"]*[^",
        blank!(),
        not_xml!(),
        r"][^\u0000-\u001F\u007F-\u009F",
        not_xml!(),
        r"]*$"
    )
);

/// A JSON Schema (as JSON) in a utoipa schema: every keyword is carried as an extension, which
/// utoipa writes out flattened, so keywords its model lacks (`not`, `if`, `anyOf` beside
/// others) survive.
pub fn raw_schema(schema: Value) -> RefOr<Schema> {
    let mut object = Object::new();
    // No `type` of utoipa's own: the JSON says it, or (an `anyOf`) has none.
    object.schema_type = utoipa::openapi::schema::SchemaType::AnyValue;
    if let Value::Object(map) = schema {
        object.extensions = Some(map.into_iter().collect());
    }
    RefOr::T(Schema::Object(object))
}

/// A request value with a rule: its component name and JSON Schema in the document, and the
/// parser that applies the rule.
pub trait Field: Sized {
    /// The component name in the OpenAPI document.
    fn name() -> Cow<'static, str>;
    /// The rule, as JSON Schema.
    fn json_schema() -> Value;
    /// Parse a JSON value; `Err` carries the reason shown after the field's name.
    fn from_json(v: Value) -> Result<Self, String>;
}

/// serde and utoipa for a [`Field`]: deserializing applies the rule; the schema is the rule's.
macro_rules! field_impls {
    ($t:ident $(<$(const $c:ident: $ct:ty),+>)?) => {
        impl<'de $($(, const $c: $ct)+)?> serde::Deserialize<'de> for $t $(<$($c),+>)? {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = serde_json::Value::deserialize(d)?;
                <Self as $crate::domain::fields::Field>::from_json(v).map_err(serde::de::Error::custom)
            }
        }
        impl $(<$(const $c: $ct),+>)? utoipa::PartialSchema for $t $(<$($c),+>)? {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $crate::domain::fields::raw_schema(<Self as $crate::domain::fields::Field>::json_schema())
            }
        }
        impl $(<$(const $c: $ct),+>)? utoipa::ToSchema for $t $(<$($c),+>)? {
            fn name() -> std::borrow::Cow<'static, str> {
                <Self as $crate::domain::fields::Field>::name()
            }
        }
    };
}
pub(crate) use field_impls;

/// Declare a string field checked by a [`Pattern`] (and at most `max` characters, as JSON
/// Schema counts them), stored as `normalize` makes it: the type, its parser, its schema (the
/// pattern's source, `maxLength`, and the extra keywords given), serde, `as_str`, `into_inner`
/// and `stored`. `also` is a further check the schema names by a `format` (check digits).
macro_rules! string_field {
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident as $component:literal {
            pattern: $pattern:expr,
            max: $max:expr,
            error: $error:expr,
            normalize: $normalize:expr,
            $(also: $also:expr,)?
            schema: { $($schema:tt)* } $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq)]
        $vis struct $name(String);

        impl $name {
            pub fn parse(raw: &str) -> Result<$name, String> {
                let max: Option<usize> = $max;
                let fits = max.is_none_or(|m| raw.chars().count() <= m) && $pattern.is_match(raw);
                $(let fits = fits && ($also)(raw);)?
                if !fits {
                    return Err(String::from($error));
                }
                Ok($name(($normalize)(raw)))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_inner(self) -> String {
                self.0
            }

            /// A value read back from the database, where it was stored after parsing.
            pub fn stored(s: String) -> Self {
                $name(s)
            }
        }

        impl $crate::domain::fields::Field for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                $component.into()
            }
            fn json_schema() -> serde_json::Value {
                let mut schema = serde_json::json!({$($schema)*});
                if !schema.get("anyOf").is_some() {
                    schema["type"] = serde_json::json!("string");
                    schema["pattern"] = serde_json::json!($pattern.source());
                }
                let max: Option<usize> = $max;
                if let Some(m) = max {
                    schema["maxLength"] = serde_json::json!(m);
                }
                schema
            }
            fn from_json(v: serde_json::Value) -> Result<Self, String> {
                Self::parse(&$crate::domain::fields::string(v)?)
            }
        }
        $crate::domain::fields::field_impls!($name);

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        // Values of these types may be credentials; their text stays out of logs.
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({} characters)", stringify!($name), self.0.chars().count())
            }
        }
    };
}
pub(crate) use string_field;

/// The text unchanged.
pub fn as_given(raw: &str) -> String {
    raw.to_string()
}

/// The text upper-cased (ASCII).
pub fn upper(raw: &str) -> String {
    raw.to_ascii_uppercase()
}

/// A string value, or the reason it is not one.
pub fn string(v: Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(format!("must be a string, not {}", kind(&other))),
    }
}

/// An integer value within `i64`, or the reason it is not one. As JSON Schema counts them,
/// `2.0` is the integer 2.
pub fn integer(v: &Value) -> Result<i64, String> {
    whole(v).ok_or_else(|| match v {
        Value::Number(_) => "must be a whole number within 64 bits".to_string(),
        other => format!("must be an integer, not {}", kind(other)),
    })
}

/// The integer a JSON number is, if it is one (`2.0` included).
pub fn whole(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        let f = v.as_f64()?;
        // Below 2^63 and integral: exactly an i64.
        (f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18).then_some(f as i64)
    })
}

/// Deserializes an integer from JSON (`2.0` counts, as in JSON Schema) or from the text of a
/// query string (serde_urlencoded parses it when asked for an i64).
struct IntegerVisitor;

impl de::Visitor<'_> for IntegerVisitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom("must be a whole number within 64 bits"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        whole(&serde_json::json!(v)).ok_or_else(|| E::custom("must be an integer"))
    }
}

/// An integer, by [`IntegerVisitor`].
pub fn deserialize_integer<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    d.deserialize_i64(IntegerVisitor)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Text of 1 to `MAX` characters (counted as Unicode scalar values, as JSON Schema counts
/// them), not blank, without control characters or characters XML cannot carry; stored trimmed.
#[derive(Clone, PartialEq, Eq)]
pub struct Text<const MAX: usize>(String);

impl<const MAX: usize> Text<MAX> {
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.chars().count() > MAX || !TEXT.is_match(raw) {
            return Err(format!(
                "must be 1–{MAX} characters, not only whitespace, without control characters or U+FFFE/U+FFFF"
            ));
        }
        Ok(Text(raw.trim().to_string()))
    }

    /// A value read back from the database, where it was stored by [`Text::parse`].
    pub fn stored(s: String) -> Self {
        Text(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl<const MAX: usize> Field for Text<MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("Text{MAX}"))
    }
    fn json_schema() -> Value {
        json!({"type": "string", "pattern": TEXT.source(), "maxLength": MAX,
               "description": format!("1–{MAX} characters, not only whitespace, no control characters nor U+FFFE/U+FFFF; \
                                       stored trimmed.")})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::parse(&string(v)?)
    }
}
field_impls!(Text<const MAX: usize>);

// Sizes in use, as plain types (utoipa's derive reads a field's type without generics).
pub type Text50 = Text<50>;
pub type Text100 = Text<100>;
pub type Text200 = Text<200>;
pub type Text500 = Text<500>;

impl<const MAX: usize> Serialize for Text<MAX> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<const MAX: usize> fmt::Debug for Text<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Any string of at most `MAX` characters without NUL, taken as given: credentials that are
/// looked up, not stored (a wrong one is a 401, not a 422). NUL is refused because no text the
/// database holds can contain it: such a lookup could only fail.
#[derive(Clone, PartialEq, Eq)]
pub struct Opaque<const MAX: usize>(String);

impl<const MAX: usize> Opaque<MAX> {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl<const MAX: usize> Field for Opaque<MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("String{MAX}"))
    }
    fn json_schema() -> Value {
        json!({"type": "string", "maxLength": MAX, "pattern": r"^[^\u0000]*$"})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        let s = string(v)?;
        if s.chars().count() > MAX {
            return Err(format!("must be at most {MAX} characters"));
        }
        if s.contains('\0') {
            return Err("must not contain NUL characters".into());
        }
        Ok(Opaque(s))
    }
}
field_impls!(Opaque<const MAX: usize>);

pub type Opaque64 = Opaque<64>;
pub type Opaque254 = Opaque<254>;
pub type Opaque256 = Opaque<256>;
pub type Opaque1024 = Opaque<1024>;

impl<const MAX: usize> fmt::Debug for Opaque<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Credentials live in these: never in a log.
        f.write_str("Opaque(***)")
    }
}

pattern!(
    /// Free text over lines: like [`TEXT`], but tabs and line breaks are allowed.
    PROSE = concat!(
        r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F",
        not_xml!(),
        r"]*[^",
        blank!(),
        not_xml!(),
        r"][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F",
        not_xml!(),
        r"]*$"
    )
);

/// Text of several lines, 1 to `MAX` characters: like [`Text`], with tabs and line breaks.
#[derive(Clone, PartialEq, Eq)]
pub struct Prose<const MAX: usize>(String);

impl<const MAX: usize> Prose<MAX> {
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.chars().count() > MAX || !PROSE.is_match(raw) {
            return Err(format!(
                "must be 1–{MAX} characters, not only whitespace, without U+FFFE/U+FFFF or control characters other than tabs \
                 and line breaks"
            ));
        }
        Ok(Prose(raw.trim().to_string()))
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl<const MAX: usize> Field for Prose<MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("Prose{MAX}"))
    }
    fn json_schema() -> Value {
        json!({"type": "string", "pattern": PROSE.source(), "maxLength": MAX,
               "description": format!("1–{MAX} characters over any number of lines, not only whitespace; stored trimmed.")})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::parse(&string(v)?)
    }
}
field_impls!(Prose<const MAX: usize>);

pub type Prose10000 = Prose<10000>;

impl<const MAX: usize> fmt::Debug for Prose<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

pattern!(
    /// `YYYY-MM-DD`, a real calendar day of the years 2000–2100 (2000 is a leap year, 2100 is not).
    pub DATE = concat!(
        r"^(?:(?:20[0-9]{2}|2100)-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)",
        r"|02-(?:0[1-9]|1[0-9]|2[0-8]))|20(?:[02468][048]|[13579][26])-02-29)$"
    )
);
pattern!(
    /// `HH:MM`, 24-hour.
    pub TIME = r"^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"
);

/// Declare a chrono value written as text: checked by its [`Pattern`] (which makes the
/// document exact), parsed with `fmt`, serialized back the same way.
macro_rules! chrono_field {
    ($(#[$m:meta])* $name:ident($inner:ty) as $component:literal, $pattern:ident, $fmt:literal, $error:literal,
     $description:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub struct $name(pub $inner);

        impl $name {
            pub fn parse(raw: &str) -> Result<$name, String> {
                let bad = || String::from($error);
                if !$pattern.is_match(raw) {
                    return Err(bad());
                }
                <$inner>::parse_from_str(raw, $fmt).map($name).map_err(|_| bad())
            }
        }

        impl Field for $name {
            fn name() -> Cow<'static, str> {
                $component.into()
            }
            fn json_schema() -> Value {
                json!({"type": "string", "pattern": $pattern.source(), "description": $description})
            }
            fn from_json(v: Value) -> Result<Self, String> {
                Self::parse(&string(v)?)
            }
        }
        field_impls!($name);

        /// A stored value, read back as it was written.
        impl From<$inner> for $name {
            fn from(v: $inner) -> $name {
                $name(v)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&self.0.format($fmt))
            }
        }
    };
}

chrono_field!(
    /// A calendar date, `YYYY-MM-DD`, years 2000–2100.
    Day(NaiveDate) as "Date", DATE, "%Y-%m-%d", "must be a date YYYY-MM-DD (years 2000–2100)",
    "A calendar date YYYY-MM-DD, years 2000–2100."
);
chrono_field!(
    /// A time of day, `HH:MM` (24-hour).
    Time(NaiveTime) as "Time", TIME, "%H:%M", "must be a time HH:MM (24-hour)", "A time of day HH:MM, 24-hour."
);

/// An integer rule with bounds: a named component of the document.
pub trait Bounds {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    fn min() -> i64;
    fn max() -> i64;
}

/// An integer within the bounds `B` names.
pub struct Int<B>(i64, PhantomData<B>);

impl<B> Clone for Int<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Int<B> {}
impl<B> PartialEq for Int<B> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<B> fmt::Debug for Int<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<B: Bounds> Int<B> {
    pub fn new(v: i64) -> Result<Self, String> {
        if (B::min()..=B::max()).contains(&v) {
            Ok(Int(v, PhantomData))
        } else {
            Err(format!("must be between {} and {}", B::min(), B::max()))
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl<B> Int<B> {
    /// A value read back from the database, where it was stored after [`Int::new`].
    pub fn stored(v: i64) -> Self {
        Int(v, PhantomData)
    }
}

impl<B: Bounds> Field for Int<B> {
    fn name() -> Cow<'static, str> {
        B::NAME.into()
    }
    fn json_schema() -> Value {
        json!({"type": "integer", "minimum": B::min(), "maximum": B::max(), "description": B::DESCRIPTION})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::new(integer(&v)?)
    }
}

impl<'de, B: Bounds> Deserialize<'de> for Int<B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Int::new(deserialize_integer(d)?).map_err(de::Error::custom)
    }
}

impl<B: Bounds> utoipa::PartialSchema for Int<B> {
    fn schema() -> RefOr<Schema> {
        raw_schema(<Self as Field>::json_schema())
    }
}

impl<B: Bounds> utoipa::ToSchema for Int<B> {
    fn name() -> Cow<'static, str> {
        B::NAME.into()
    }
}

impl<B> Serialize for Int<B> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(self.0)
    }
}

/// Declare an integer field type with bounds: `bounds!(Name / NameRange, min, max, "description")`
/// makes `Name`, an [`Int`] within the marker `NameRange`'s bounds. (utoipa's derive sees the
/// alias as a plain type, so fields can name it without generics.)
macro_rules! bounds {
    ($(#[$m:meta])* $name:ident / $range:ident, $min:expr, $max:expr, $doc:literal) => {
        #[doc(hidden)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        // Public where the type is (a test module's is not).
        #[allow(unreachable_pub)]
        pub struct $range;
        impl $crate::domain::fields::Bounds for $range {
            const NAME: &'static str = stringify!($name);
            const DESCRIPTION: &'static str = $doc;
            fn min() -> i64 {
                $min
            }
            fn max() -> i64 {
                $max
            }
        }
        $(#[$m])*
        #[allow(unreachable_pub)]
        pub type $name = $crate::domain::fields::Int<$range>;
    };
}
pub(crate) use bounds;

bounds!(
    /// The id of a record the organization keeps (a vehicle, a person, a subscription, …).
    RecordId / RecordIdRange, 1, i64::MAX, "The id of a record of the organization."
);
/// The longest page a list gives.
pub const MAX_LIMIT: i64 = 200;

bounds!(
    /// List page size.
    Limit / LimitRange, 1, MAX_LIMIT, "Page size, 1–200 (default 50)."
);

/// A non-negative amount below a bound, written with up to the decimals the column keeps.
pub trait Ceiling {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    /// Exclusive upper bound.
    const BELOW: f64;
}

/// Declare an amount field type: `ceiling!(Name / NameCeiling, below, "description")` makes
/// `Name`, an [`Amount`] non-negative and below `below`.
#[macro_export]
macro_rules! ceiling {
    ($(#[$m:meta])* $name:ident / $marker:ident, $below:expr, $doc:literal) => {
        #[doc(hidden)]
        // Public where the type is (a test module's is not).
        #[allow(unreachable_pub)]
        pub struct $marker;
        impl $crate::domain::fields::Ceiling for $marker {
            const NAME: &'static str = stringify!($name);
            const DESCRIPTION: &'static str = $doc;
            const BELOW: f64 = $below;
        }
        $(#[$m])*
        #[allow(unreachable_pub)]
        pub type $name = $crate::domain::fields::Amount<$marker>;
    };
}
pub use crate::ceiling;

/// A non-negative number below `C::BELOW`.
pub struct Amount<C>(f64, PhantomData<C>);

impl<C> Clone for Amount<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C> Copy for Amount<C> {}
impl<C> PartialEq for Amount<C> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<C> fmt::Debug for Amount<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<C: Ceiling> Amount<C> {
    pub fn new(v: f64) -> Result<Self, String> {
        if v.is_finite() && v >= 0.0 && v < C::BELOW {
            Ok(Amount(v, PhantomData))
        } else {
            Err(format!("must be a non-negative number below {}", C::BELOW))
        }
    }
}

impl<C> Amount<C> {
    pub fn get(self) -> f64 {
        self.0
    }

    pub fn stored(v: f64) -> Self {
        Amount(v, PhantomData)
    }
}

impl<C: Ceiling> Field for Amount<C> {
    fn name() -> Cow<'static, str> {
        C::NAME.into()
    }
    fn json_schema() -> Value {
        json!({"type": "number", "minimum": 0, "exclusiveMaximum": C::BELOW, "description": C::DESCRIPTION})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        match v.as_f64() {
            Some(n) => Self::new(n),
            None => Err(format!("must be a number, not {}", kind(&v))),
        }
    }
}

impl<'de, C: Ceiling> Deserialize<'de> for Amount<C> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Self::from_json(v).map_err(de::Error::custom)
    }
}

impl<C: Ceiling> utoipa::PartialSchema for Amount<C> {
    fn schema() -> RefOr<Schema> {
        raw_schema(<Self as Field>::json_schema())
    }
}

impl<C: Ceiling> utoipa::ToSchema for Amount<C> {
    fn name() -> Cow<'static, str> {
        C::NAME.into()
    }
}

impl<C> Serialize for Amount<C> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

pattern!(
    /// `next_cursor` of a list page: the position after which the next page starts.
    CURSOR = r"^(?:0|[1-9][0-9]{0,17})$"
);

/// A list position (`next_cursor` of the previous page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor(pub i64);

impl Cursor {
    pub fn parse(raw: &str) -> Result<Cursor, String> {
        let bad = || "is not a cursor this API issued; pass `next_cursor` back unchanged".to_string();
        if !CURSOR.is_match(raw) {
            return Err(bad());
        }
        raw.parse().map(Cursor).map_err(|_| bad())
    }

    pub fn encode(id: i64) -> String {
        id.to_string()
    }
}

impl Field for Cursor {
    fn name() -> Cow<'static, str> {
        "Cursor".into()
    }
    fn json_schema() -> Value {
        json!({"type": "string", "pattern": CURSOR.source(),
               "description": "`next_cursor` of the previous page, passed back unchanged."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        Self::parse(&string(v)?)
    }
}
field_impls!(Cursor);

pattern!(
    /// `YYYY-MM`.
    pub MONTH = r"^[0-9]{4}-(?:0[1-9]|1[0-2])$"
);

/// A calendar month, `YYYY-MM` (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthField {
    pub year: i32,
    pub month: u32,
}

impl Field for MonthField {
    fn name() -> Cow<'static, str> {
        "Month".into()
    }
    fn json_schema() -> Value {
        json!({"type": "string", "pattern": MONTH.source(), "description": "A calendar month YYYY-MM (UTC)."})
    }
    fn from_json(v: Value) -> Result<Self, String> {
        let s = string(v)?;
        if !MONTH.is_match(&s) {
            return Err("must be YYYY-MM".into());
        }
        Ok(MonthField { year: s[..4].parse().expect("four digits"), month: s[5..].parse().expect("two digits") })
    }
}
field_impls!(MonthField);

/// A date of this calendar year or later is plausible for a vehicle's model year up to next
/// year's models; the bound moves with the calendar.
pub fn next_year() -> i64 {
    i64::from(chrono::Utc::now().year()) + 1
}

/// Declare a closed set of string values as an enum: serde names, `as_str`, `ALL`, and its
/// schema (`enum`) in the document.
macro_rules! str_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $($(#[$vm])* #[serde(rename = $text)] $variant),+
        }

        // By hand: utoipa's derive does not see serde's renames through this macro.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                let doc: &[&str] = &[$(stringify!($m)),*];
                let description = doc
                    .iter()
                    .filter_map(|m| m.strip_prefix("doc = "))
                    // `r" text"`: the literal's quotes (and raw-string prefix) off.
                    .map(|d| d.trim_start_matches('r').trim_matches('"').trim())
                    .collect::<Vec<_>>()
                    .join(" ");
                $crate::domain::fields::raw_schema(serde_json::json!({
                    "type": "string",
                    "enum": [$($text),+],
                    "description": description,
                }))
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        // Stored as text; the column's CHECK constraint holds the same set.
        impl sqlx::Type<sqlx::Postgres> for $name {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::Type<sqlx::Postgres>>::type_info()
            }
            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $name {
            fn decode(v: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let s = <&str as sqlx::Decode<sqlx::Postgres>>::decode(v)?;
                $name::parse(s).ok_or_else(|| format!("unknown {} `{s}` in the database", stringify!($name)).into())
            }
        }

        impl sqlx::Encode<'_, sqlx::Postgres> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut sqlx::postgres::PgArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<sqlx::Postgres>>::encode_by_ref(&self.as_str(), buf)
            }
        }

        impl sqlx::postgres::PgHasArrayType for $name {
            fn array_type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::postgres::PgHasArrayType>::array_type_info()
            }
        }
    };
}
pub(crate) use str_enum;

/// XML 1.0's `Char` production: what a SOAP document can carry.
#[cfg(test)]
pub(crate) fn is_xml_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// True when `pattern` admits every character it admits inside a text only if XML can carry
/// it; checked over every Unicode scalar value, so the rule cannot miss one.
#[cfg(test)]
pub(crate) fn admits_only_xml(pattern: &Pattern) -> Result<(), char> {
    match ('\0'..=char::MAX).find(|c| pattern.is_match(&format!("a{c}b")) && !is_xml_char(*c)) {
        Some(c) => Err(c),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    bounds!(Hours / HoursRange, 1, 72, "hours");

    #[test]
    fn texts_carry_only_what_xml_can() {
        assert_eq!(admits_only_xml(&TEXT), Ok(()));
        assert_eq!(admits_only_xml(&PROSE), Ok(()));
        for bad in ["Ay\u{FFFE}şe", "\u{FFFF}", "a\u{FFFF}", "\u{FFFE} "] {
            assert!(Text::<50>::parse(bad).is_err(), "{bad:?}");
            assert!(Prose::<50>::parse(bad).is_err(), "{bad:?}");
        }
        // What XML does carry still passes: the last characters before and after the gap, and
        // those beyond the Basic Multilingual Plane.
        for ok in ["\u{FFFD}", "a\u{E000}b", "\u{D7FF}", "\u{10000}", "Ayşe \u{1F68C}", "\u{10FFFF}"] {
            assert!(Text::<50>::parse(ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn text_rule() {
        type T = Text<7>;
        assert_eq!(T::parse("  Ayşe ").unwrap().as_str(), "Ayşe", "stored trimmed");
        assert!(T::parse("Ayşeğüö").is_ok(), "seven characters, not bytes");
        for bad in ["", "   ", "\u{3000}\u{00a0}", "a\u{0}b", "ab\ncd", "too long", "\u{85}"] {
            assert!(T::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Prose::<30>::parse(" line one\n\tline two\r\n").unwrap().into_inner(), "line one\n\tline two");
        for bad in ["\n\n", "a\u{7}b", "a\u{0}"] {
            assert!(Prose::<20>::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dates_and_times() {
        for ok in ["2000-02-29", "2024-02-29", "2026-12-31", "2100-12-31", "2026-04-30"] {
            assert!(Day::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["2100-02-29", "2026-02-29", "2026-04-31", "1999-12-31", "2101-01-01", "2026-1-01", "2026-01-01\n"] {
            assert!(Day::parse(bad).is_err(), "{bad}");
        }
        // The pattern alone agrees with the calendar on every day of 2000–2100.
        let mut d = NaiveDate::from_ymd_opt(1999, 12, 1).unwrap();
        while d < NaiveDate::from_ymd_opt(2101, 2, 1).unwrap() {
            let s = d.format("%Y-%m-%d").to_string();
            assert_eq!(DATE.is_match(&s), (2000..=2100).contains(&d.year()), "{s}");
            d = d.succ_opt().unwrap();
        }
        assert!(!DATE.is_match("2026-02-30") && !DATE.is_match("2026-00-10") && !DATE.is_match("2026-13-01"));
        assert!(Time::parse("00:00").is_ok() && Time::parse("23:59").is_ok());
        for bad in ["24:00", "9:30", "09:60", "09:30:00"] {
            assert!(Time::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ints_amounts_cursors() {
        assert!(Hours::new(0).is_err() && Hours::new(73).is_err() && Hours::new(72).is_ok());
        let parsed: Result<Hours, _> = serde_json::from_str("1.5");
        assert!(parsed.is_err());
        assert_eq!(Cursor::parse("42").unwrap(), Cursor(42));
        for bad in ["", "-1", "01", "1e3", "9999999999999999999"] {
            assert!(Cursor::parse(bad).is_err(), "{bad}");
        }
        ceiling!(Below / BelowCeiling, 1_000_000_000.0, "test");
        // Parsed with correct rounding: the largest double below the bound is not the bound.
        let near: Result<Below, _> = serde_json::from_str("999999999.9999999");
        assert!(near.is_ok());
        let at: Result<Below, _> = serde_json::from_str("1000000000");
        assert!(at.is_err());
    }

    #[test]
    fn schemas_carry_the_rule() {
        let s = serde_json::to_value(<Text<50> as utoipa::PartialSchema>::schema()).unwrap();
        assert_eq!(s["pattern"], TEXT.source());
        assert_eq!(s["maxLength"], 50);
        assert_eq!(<Text<50> as utoipa::ToSchema>::name(), "Text50");
    }
}
