//! What crosses the adapter boundary, as JSON. The work items are snapshots: the API freezes
//! them on the submission row at submit, so what was sent stays auditable.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::AdapterError;

/// What a plugin says of itself when it is loaded. The host, the API, the portal and the
/// OpenAPI document learn everything they know of a downstream from this: nothing outside the
/// plugin's crate names it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    /// The name organizations choose it by (`adapter` in `PUT /portal/downstream`) and its
    /// settings' prefix (`TNS_ADAPTER_<NAME>_…`): see [`Description::name_is_valid`].
    pub name: String,
    pub version: String,
    /// Its name for people (the portal's choice, the OpenAPI document).
    #[serde(default)]
    pub title: Text,
    /// One sentence on what it is, for the same readers.
    #[serde(default)]
    pub summary: Text,
    /// Organizations that have chosen no downstream submit here. At most one loaded plugin may
    /// say so; with none, such an organization must choose before it submits.
    #[serde(default)]
    pub default: bool,
    /// The records it takes submissions of.
    #[serde(default)]
    pub accepts: Vec<Records>,
    /// What an organization gives to use it (none: it needs no account).
    #[serde(default)]
    pub credentials: Vec<CredentialField>,
    /// The settings it reads, each from `TNS_ADAPTER_<NAME>_<suffix>` (`tns env` lists them).
    #[serde(default)]
    pub settings: Vec<String>,
}

impl Description {
    /// A name is lowercase ASCII letters and digits, starting with a letter, at most 32 long:
    /// it is a JSON value, a path of the plugin's settings and part of environment variables'
    /// names (`_` would make `TNS_ADAPTER_<NAME>_<SUFFIX>` ambiguous).
    pub fn name_is_valid(name: &str) -> bool {
        name.len() <= 32
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    }

    /// The prefix of its settings' environment variables.
    pub fn settings_prefix(name: &str) -> String {
        format!("TNS_ADAPTER_{}_", name.to_ascii_uppercase())
    }

    pub fn accepts(&self, records: Records) -> bool {
        self.accepts.contains(&records)
    }

    /// Why the host cannot use this description, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        // The host's own variables share the prefix: `TNS_ADAPTER_DIR` is not plugin `dir`'s.
        if !Description::name_is_valid(&self.name) || ["dir", "concurrency", "timeout"].contains(&self.name.as_str()) {
            return Err(format!(
                "`{}` is not an adapter name (lowercase letters and digits, starting with a letter, at most 32; not dir, concurrency or timeout)",
                self.name
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &self.credentials {
            if !CredentialField::name_is_valid(&f.name) || !seen.insert(f.name.as_str()) {
                return Err(format!("credential field `{}`: not a field name, or named twice", f.name));
            }
            if !(1..=1024).contains(&f.max_len)
                || f.choices.iter().any(|c| c.is_empty() || c.chars().count() > f.max_len)
            {
                return Err(format!("credential field `{}`: max_len must be 1-1024 and fit its choices", f.name));
            }
            if let Some(p) = &f.pattern {
                if let Err(e) = regex::Regex::new(p) {
                    return Err(format!("credential field `{}`: pattern: {e}", f.name));
                }
                if ["\\x{", "\\p", "\\P", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "(?"].iter().any(|x| p.contains(x))
                {
                    return Err(format!(
                        "credential field `{}`: pattern outside the dialect JSON Schema readers share",
                        f.name
                    ));
                }
            }
        }
        if let Some(s) = self
            .settings
            .iter()
            .find(|s| s.is_empty() || !s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        {
            return Err(format!("setting `{s}`: not an environment variable suffix"));
        }
        Ok(())
    }
}

/// The two kinds of record an organization submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Records {
    Journeys,
    Cargo,
}

/// A text for people, in the portal's languages (Turkish falls back to English).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    pub en: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tr: String,
}

impl Text {
    pub fn new(en: &str, tr: &str) -> Text {
        Text { en: en.into(), tr: tr.into() }
    }

    /// In `lang` (`tr` or `en`).
    pub fn get(&self, lang: &str) -> &str {
        if lang == "tr" && !self.tr.is_empty() {
            &self.tr
        } else {
            &self.en
        }
    }
}

/// One field of what an organization gives to use a downstream (a user name, a password, an
/// environment): a string field of `PUT /portal/downstream`'s body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialField {
    /// The JSON field's name: lowercase ASCII letters, digits and `_`; not a name the API's
    /// downstream setting has of its own (`adapter`, `available`, `adapters`, `secrets_set`,
    /// `updated_at`).
    pub name: String,
    /// Its label for people.
    #[serde(default)]
    pub title: Text,
    /// What the value must be, for people: the 422's detail when it is not, the form's hint.
    #[serde(default)]
    pub hint: Text,
    /// Sealed at rest and never shown again (a password); the others are shown back.
    #[serde(default)]
    pub secret: bool,
    /// When not empty, the value is one of these.
    #[serde(default)]
    pub choices: Vec<String>,
    /// When set, the whole value matches this regular expression, written in the dialect JSON
    /// Schema readers share (ECMA-262, Python and the `regex` crate alike: characters as
    /// `\uXXXX`; no `\x{…}`, `\p`, `\d`, `\w`, `\s`, look-around or inline flags): the OpenAPI
    /// document states it for clients.
    #[serde(default)]
    pub pattern: Option<String>,
    /// The longest value taken, in characters (1–1024).
    pub max_len: usize,
}

impl CredentialField {
    pub fn name_is_valid(name: &str) -> bool {
        !["adapter", "available", "adapters", "secrets_set", "updated_at"].contains(&name)
            && (1..=64).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }
}

/// What the host hands a plugin when it creates it. The plugin parses its own settings and
/// refuses (a `configuration` error naming the variable) what it cannot use: a process whose
/// plugin refuses its configuration does not start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginConfig {
    /// Its `TNS_ADAPTER_<NAME>_*` variables, by suffix (`BASE_URL`).
    #[serde(default)]
    pub vars: std::collections::BTreeMap<String, String>,
    /// The prefix the suffixes had, for naming a variable in an error.
    #[serde(default)]
    pub prefix: String,
    /// A developer's machine (`tns dev`): defaults may be laxer (plain http to a simulator).
    #[serde(default)]
    pub dev: bool,
    /// How long the host waits for one call before its outcome counts as unknown.
    #[serde(default)]
    pub call_timeout_ms: u64,
}

impl PluginConfig {
    /// What `create` was handed (empty or `null`: no settings at all, as in a plugin's own
    /// unit tests).
    pub fn from_json(raw: &[u8]) -> Result<PluginConfig, AdapterError> {
        if raw.is_empty() || raw == b"null" {
            return Ok(PluginConfig::default());
        }
        serde_json::from_slice(raw)
            .map_err(|e| AdapterError::Configuration(format!("the host's configuration is malformed: {e}")))
    }

    pub fn get(&self, suffix: &str) -> Option<&str> {
        self.vars.get(suffix).map(String::as_str)
    }

    /// The whole name of a variable, for an error.
    pub fn var(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    /// A `configuration` error naming the variable.
    pub fn bad(&self, suffix: &str, reason: &str) -> AdapterError {
        AdapterError::Configuration(format!("{}: {reason}", self.var(suffix)))
    }

    /// Variables given that the plugin does not read (a typo must not pass silently).
    pub fn unknown(&self, known: &[&str]) -> Result<(), AdapterError> {
        match self.vars.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(AdapterError::Configuration(format!(
                "{}: this adapter has no such setting (it reads {})",
                self.var(k),
                known.iter().map(|s| self.var(s)).collect::<Vec<_>>().join(", ")
            ))),
            None => Ok(()),
        }
    }
}

/// Which of the downstream's environments an organization's credentials belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    #[default]
    Test,
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Test => "test",
            Environment::Production => "production",
        }
    }
}

/// The organization's own downstream credentials: the fields its plugin's
/// [`Description::credentials`] names, secret ones included, in the clear for one call.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Credentials {
    pub fields: std::collections::BTreeMap<String, String>,
}

impl Credentials {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

impl std::fmt::Debug for Credentials {
    /// The names only: which of them are secret is the plugin's knowledge.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.fields.keys()).finish()
    }
}

/// A field the downstream would refuse in a piece of work, found before it is queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The field as the API names it (`cargo_unit`, `items[0].cargo_unit`).
    pub field: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    /// `YYYY-MM-DD`
    pub date: String,
    /// `HH:MM`
    pub time: String,
    /// MERNIS province code (0 abroad).
    pub city_id: i32,
    /// MERNIS district code (or an airport's 99xxx code; 0 abroad).
    pub district_id: i32,
    /// The district's (or airport's) name, as the reference data has it; abroad, the place's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    /// A stop abroad's two-letter country code; `None` in Türkiye.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
}

impl Stop {
    /// The stop's country code as the downstream wants it: `TR` unless abroad.
    pub fn country(&self) -> &str {
        self.country.as_deref().unwrap_or("TR")
    }
}

/// A scheduled trip's context: the firm's approved route and timetable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tarifeli {
    pub firma_id: i64,
    pub unet_guzergah_kodu: i64,
    pub kalkis_yer_id: i64,
    pub varis_yer_id: i64,
    pub seyahat_suresi_saat: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// `driver`, `host`, `guide` or `other` for crew; `passenger` for passengers.
    pub role: String,
    pub identity_number: String,
    pub first_name: String,
    pub last_name: String,
    /// `E` or `K`.
    pub gender: String,
    /// Two-letter country code; `TR` when absent.
    pub nationality: Option<String>,
    pub phone: Option<String>,
}

impl Person {
    /// A person of `role` with no nationality given (so `TR`) and no phone.
    pub fn new(role: &str, identity_number: &str, first_name: &str, last_name: &str, gender: &str) -> Person {
        Person {
            role: role.into(),
            identity_number: identity_number.into(),
            first_name: first_name.into(),
            last_name: last_name.into(),
            gender: gender.into(),
            nationality: None,
            phone: None,
        }
    }

    /// The nationality as the downstream wants it: `TR` when none was given.
    pub fn country(&self) -> &str {
        self.nationality.as_deref().unwrap_or("TR")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passenger {
    /// Our passenger id, echoed in per-passenger results.
    pub key: String,
    pub person: Person,
    pub boarding_place_code: i32,
    pub destination_place_code: i32,
    pub seat_no: Option<String>,
    pub ticket_serial_no: Option<String>,
    pub amount: Option<f64>,
    /// The passenger's baggage barcodes, declared once the passenger is accepted. Not part of
    /// the passenger's entry downstream: a change of baggage alone changes no entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baggage: Vec<String>,
}

impl Passenger {
    /// The passenger's entry downstream: everything but the baggage.
    pub fn entry(&self) -> Passenger {
        Passenger { baggage: vec![], ..self.clone() }
    }

    /// The passenger's baggage as the downstream knows it, when there is any.
    pub fn bags(&self) -> Option<Bags> {
        (!self.baggage.is_empty()).then(|| Bags {
            key: self.key.clone(),
            identity_number: self.person.identity_number.clone(),
            seat_no: self.seat_no.clone(),
            barcodes: self.baggage.clone(),
        })
    }
}

/// One passenger's baggage, as the downstream knows it: by the passenger's identity and seat
/// (U-ETDS has no baggage reference).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bags {
    /// Our passenger id.
    pub key: String,
    pub identity_number: String,
    pub seat_no: Option<String>,
    pub barcodes: Vec<String>,
}

/// A trip's own fields: the vehicle and when and where it goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trip {
    pub plate: String,
    pub departure: Stop,
    pub arrival: Stop,
}

/// A journey as notified at first: the trip, its crew and its passengers. A scheduled trip
/// (`tarifeli`) carries its context; a non-scheduled one (arızi) does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journey {
    pub plate: String,
    pub departure: Stop,
    pub arrival: Stop,
    pub tarifeli: Option<Tarifeli>,
    pub crew: Vec<Person>,
    pub passengers: Vec<Passenger>,
}

impl Journey {
    pub fn trip(&self) -> Trip {
        Trip { plate: self.plate.clone(), departure: self.departure.clone(), arrival: self.arrival.clone() }
    }

    pub fn kind(&self) -> Kind {
        if self.tarifeli.is_some() {
            Kind::Scheduled
        } else {
            Kind::NonScheduled
        }
    }
}

/// Which downstream service a notification belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A scheduled passenger trip (tarifeli).
    Scheduled,
    /// A non-scheduled passenger trip (tarifesiz, arızi).
    NonScheduled,
    /// A goods shipment (eşya).
    Goods,
}

/// A passenger whose details changed since the downstream accepted them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedPassenger {
    /// The passenger as they are now.
    #[serde(flatten)]
    pub passenger: Passenger,
    /// The downstream's reference of the passenger as accepted before, when it gave one
    /// (U-ETDS has no passenger update: the old entry is cancelled by it, the new one added).
    #[serde(default)]
    pub previous_reference: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedPassenger {
    pub key: String,
    pub identity_number: String,
    /// The downstream's reference of that passenger, when it gave one.
    pub downstream_reference: Option<String>,
}

/// The changes to an already delivered journey: only the difference since its delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Amendment {
    /// The delivered journey's downstream reference.
    pub downstream_reference: String,
    /// What the adapter kept of the delivered notification ([`Receipt::state`]).
    #[serde(default)]
    pub downstream_state: Value,
    #[serde(default = "Amendment::default_kind")]
    pub kind: Kind,
    /// The trip's fields as they are now, when they changed since the delivery.
    #[serde(default)]
    pub trip: Option<Trip>,
    /// With `trip`: the trip's fields as the downstream holds them (what changed is the
    /// difference: a vehicle swap when it is the plate alone).
    #[serde(default)]
    pub previous_trip: Option<Trip>,
    #[serde(default)]
    pub crew_added: Vec<Person>,
    #[serde(default)]
    pub crew_removed: Vec<Person>,
    pub added: Vec<Passenger>,
    pub changed: Vec<ChangedPassenger>,
    pub removed: Vec<RemovedPassenger>,
    /// The baggage the downstream holds before the amendment, per passenger entry (the
    /// adapter withdraws an entry's baggage before cancelling the entry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baggage_held: Vec<Bags>,
    /// The baggage the passengers have now (added to an added or changed passenger once the
    /// downstream accepts them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baggage: Vec<Bags>,
    /// A goods shipment's change (kind `goods`): the shipment as the downstream holds it and
    /// as it is now. The journey fields above stay empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goods: Option<Box<GoodsChange>>,
}

/// Dangerous goods, as a shipment carries them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DangerousGoods {
    /// The UN number (four digits).
    pub un_number: String,
    /// `packaged`, `tank` or `bulk`.
    pub packaging: String,
    /// The downstream's code of the exemption they travel under, when one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption: Option<String>,
}

/// A delivered goods shipment as the downstream holds it and as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoodsChange {
    pub held: Cargo,
    pub now: Cargo,
}

impl Amendment {
    fn default_kind() -> Kind {
        Kind::NonScheduled
    }

    pub fn is_empty(&self) -> bool {
        self.trip.is_none()
            && self.crew_added.is_empty()
            && self.crew_removed.is_empty()
            && self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && same_bags(&self.baggage_held, &self.baggage)
            && self.goods.as_ref().is_none_or(|g| g.held == g.now)
    }
}

/// True when two lists of baggage hold the same barcodes for the same passenger entries, in
/// any order.
pub fn same_bags(a: &[Bags], b: &[Bags]) -> bool {
    use std::collections::BTreeMap;
    let index = |l: &[Bags]| -> BTreeMap<String, (String, Option<String>, std::collections::BTreeSet<String>)> {
        l.iter()
            .filter(|x| !x.barcodes.is_empty())
            .map(|x| {
                (x.key.clone(), (x.identity_number.clone(), x.seat_no.clone(), x.barcodes.iter().cloned().collect()))
            })
            .collect()
    };
    index(a) == index(b)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    pub tax_number: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cargo {
    pub plate: String,
    /// Dangerous goods: what they are and how they are carried; absent for other goods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous: Option<DangerousGoods>,
    pub driver: Option<Person>,
    /// A second driver taking turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_driver: Option<Person>,
    /// The trailer's plate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailer_plate: Option<String>,
    pub transport_type: i16,
    pub cargo_type: i32,
    pub transport_mode: i16,
    pub amount: f64,
    /// `KG`, `TON`, `ADET`, `M3` or `LITRE`.
    pub unit: String,
    pub sender: Party,
    pub receiver: Party,
    pub loading: Stop,
    pub unloading: Stop,
    /// More loads on the same trip, besides the shipment's own (its fields above), loaded and
    /// unloaded where and when it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Load>,
}

/// One load of a goods trip: what is carried and between whom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub cargo_type: i32,
    pub amount: f64,
    /// As [`Cargo::unit`].
    pub unit: String,
    pub sender: Party,
    pub receiver: Party,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerous: Option<DangerousGoods>,
}

impl Cargo {
    /// Every load of the trip, the shipment's own first.
    pub fn loads(&self) -> Vec<Load> {
        let own = Load {
            cargo_type: self.cargo_type,
            amount: self.amount,
            unit: self.unit.clone(),
            sender: self.sender.clone(),
            receiver: self.receiver.clone(),
            dangerous: self.dangerous.clone(),
        };
        std::iter::once(own).chain(self.items.iter().cloned()).collect()
    }
}

/// Withdraw a delivered notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cancellation {
    pub kind: Kind,
    pub downstream_reference: String,
    #[serde(default)]
    pub downstream_state: Value,
    pub reason: String,
    /// The downstream's code for why (one of its cancel kinds), where it takes one; its
    /// configured default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_kind: Option<String>,
}

/// Re-activate a cancelled notification: the same fields as its cancellation (the reference,
/// what the adapter kept, the reason given downstream).
pub type Reactivation = Cancellation;

/// A passenger of a delivered journey did not come: told by seat and identity (or passport)
/// number, as the downstream knows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoShow {
    pub kind: Kind,
    /// The journey's downstream reference.
    pub downstream_reference: String,
    #[serde(default)]
    pub downstream_state: Value,
    /// Our passenger id.
    pub key: String,
    pub identity_number: String,
    pub seat_no: String,
    pub note: Option<String>,
}

/// The work of one submission, by operation. The operation is stored beside the snapshot on
/// the submission row, so the snapshot itself is the variant's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "operation", content = "snapshot", rename_all = "snake_case")]
pub enum Work {
    Journey(Journey),
    Amendment(Amendment),
    Cargo(Cargo),
    Cancel(Cancellation),
    Reactivate(Reactivation),
    NoShow(NoShow),
}

impl Work {
    /// Rebuild the work from the stored operation name and snapshot.
    pub fn from_parts(operation: &str, snapshot: Value) -> serde_json::Result<Work> {
        serde_json::from_value(serde_json::json!({ "operation": operation, "snapshot": snapshot }))
    }

    /// The same from the snapshot's stored text, read straight into the work without building
    /// a `Value` first (the scheduler does this for every claimed submission).
    pub fn from_stored(operation: &str, snapshot: &serde_json::value::RawValue) -> serde_json::Result<Work> {
        #[derive(Serialize)]
        struct Parts<'a> {
            operation: &'a str,
            snapshot: &'a serde_json::value::RawValue,
        }
        serde_json::from_str(&serde_json::to_string(&Parts { operation, snapshot })?)
    }

    pub fn kind(&self) -> Kind {
        match self {
            Work::Journey(j) => j.kind(),
            Work::Amendment(a) => a.kind,
            Work::Cargo(_) => Kind::Goods,
            Work::Cancel(c) | Work::Reactivate(c) => c.kind,
            Work::NoShow(n) => n.kind,
        }
    }
}

/// One submission's work as the adapter gets it on every call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Our reference for this submission (`tns-<id>`): stable across attempts, sent downstream
    /// where the downstream keeps a reference of the sender's, how lookups find it.
    pub reference: String,
    pub credentials: Option<Credentials>,
    pub work: Work,
    /// What earlier calls for this submission achieved, as this adapter described it in
    /// [`Step::Continue`]; `null` before the first call.
    #[serde(default)]
    pub progress: Value,
    /// Our references of earlier submissions of the same record whose progress this one
    /// continues (they failed after the downstream took part of them): what the downstream
    /// holds under those references is this notification's too.
    #[serde(default)]
    pub earlier_references: Vec<String>,
    /// The Türkiye calendar day (`YYYY-MM-DD`) the first of this submission and the earlier
    /// ones it continues was made: an uncertain write may have reached the downstream any day
    /// since, which a look-up by notification day needs.
    #[serde(default)]
    pub since: Option<String>,
    /// The downstream's reference this submission already has (recorded from an earlier call,
    /// or given by an operator who found it there): a look-up checks it first.
    #[serde(default)]
    pub downstream_reference: Option<String>,
}

impl Notification {
    /// True when the downstream holds `reference` as one of this notification's.
    pub fn is_ours(&self, reference: &str) -> bool {
        self.reference == reference || self.earlier_references.iter().any(|r| r == reference)
    }
}

/// What one call achieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// More calls are needed. The host records `progress` before it calls again, so a retry
    /// (even on another scheduler) continues from here instead of repeating what was done.
    /// `downstream_reference` is the reference the downstream gave so far, once it gave one:
    /// kept on the submission even if it fails later, so what the downstream holds can still be
    /// cancelled.
    Continue {
        progress: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        downstream_reference: Option<String>,
    },
    /// The notification is complete.
    Done { receipt: Receipt },
}

/// Check an organization's credentials before they are saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialsCheck {
    pub credentials: Credentials,
}

/// Whom the downstream knows the credentials as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub username: String,
    /// The firm's registered name, when the downstream gives it.
    pub name: Option<String>,
    pub message: Option<String>,
}

/// The downstream's list of caller addresses an organization's credentials are accepted from
/// (U-ETDS: each firm registers the addresses it calls from), and a change of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowListRequest {
    pub credentials: Credentials,
    #[serde(default)]
    pub change: Option<AllowListChange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum AllowListChange {
    /// An address, or a range from `first` to `last`.
    Add { first: String, last: Option<String> },
    /// The entry with this downstream id.
    Remove { id: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowList {
    pub entries: Vec<AllowedAddress>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedAddress {
    /// The downstream's id of the entry (what removing it takes).
    pub id: String,
    pub first: String,
    pub last: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRequest {
    pub credentials: Option<Credentials>,
    pub kind: Kind,
    pub downstream_reference: String,
    #[serde(default)]
    pub downstream_state: Value,
}

/// Ask what the downstream holds now of a delivered notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectRequest {
    pub credentials: Option<Credentials>,
    pub kind: Kind,
    pub downstream_reference: String,
    #[serde(default)]
    pub downstream_state: Value,
    /// Our references the notification was sent under (`tns-<id>`): where the downstream
    /// keeps the sender's reference, the record it holds must carry one of them.
    #[serde(default)]
    pub references: Vec<String>,
}

/// What the downstream holds of a notification, in the fields TNS compares with what it
/// delivered (which TNS states in this shape too); `None` where the downstream does not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Observed {
    pub cancelled: bool,
    pub plate: Option<String>,
    /// `YYYY-MM-DD`
    pub departure_date: Option<String>,
    /// `HH:MM`
    pub departure_time: Option<String>,
    /// Passengers held and not cancelled.
    pub passengers: Option<u32>,
    /// Crew held and not cancelled.
    pub crew: Option<u32>,
}

/// A check made with the downstream before a notification is submitted (a pre-flight
/// check), with the organization's credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRequest {
    pub credentials: Option<Credentials>,
    pub check: Check,
}

/// What a pre-flight check asks the downstream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// The vehicle's periodic inspection is valid on `date` (`YYYY-MM-DD`).
    VehicleInspection { plate: String, date: String },
    /// The vehicle is on the firm's authorisation certificate, valid on `date`.
    Authorisation { plate: String, date: String },
    /// The driver holds a professional qualification certificate.
    Qualification { identity_number: String },
    /// A Turkish identity number belongs to the person of that name.
    Identity { identity_number: String, first_name: String, last_name: String },
    /// The passenger holds a travel permit.
    TravelPermit { identity_number: String },
}

/// The downstream's answer to a pre-flight check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub passed: bool,
    /// What the downstream said (why it failed), without personal data.
    pub detail: Option<String>,
}

/// Ask the downstream for the code lists it publishes (the codes some of its fields take),
/// with the credentials of the account the platform reads them with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeListsRequest {
    pub credentials: Option<Credentials>,
}

/// One of the downstream's code lists, under the platform's name for it (`trip_cancel_kinds`,
/// `goods_units`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeList {
    pub name: String,
    pub codes: Vec<Code>,
}

/// A code and what it means, as the downstream words it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Code {
    pub code: String,
    pub name: String,
}

/// One passenger's outcome. U-ETDS stores the accepted ones of a partly failed batch (its
/// code 88); only the failed ones may be sent again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassengerResult {
    pub key: String,
    pub downstream_reference: Option<String>,
    /// Why the downstream refused this passenger; `None` when accepted.
    pub error: Option<String>,
}

/// What the downstream answered for a completed notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub downstream_reference: String,
    pub passengers: Vec<PassengerResult>,
    pub message: Option<String>,
    /// What this adapter needs to change or cancel the notification later (U-ETDS: the
    /// passenger group of a trip); handed back in [`Amendment::downstream_state`].
    #[serde(default)]
    pub state: Value,
}

impl Receipt {
    /// True when some passengers were refused (a partial success).
    pub fn is_partial(&self) -> bool {
        self.passengers.iter().any(|p| p.error.is_some())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    pub content_type: String,
    /// Base64 of the document's bytes.
    pub base64: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn work_round_trips_through_operation_and_snapshot() {
        let c = Cancellation {
            kind: Kind::Goods,
            downstream_reference: "1".into(),
            downstream_state: Value::Null,
            reason: "r".into(),
            cancel_kind: Some("2".into()),
        };
        let v = serde_json::to_value(Work::Cancel(c.clone())).unwrap();
        assert_eq!(v["operation"], "cancel");
        assert_eq!(Work::from_parts("cancel", v["snapshot"].clone()).unwrap(), Work::Cancel(c.clone()));
        // The scheduler's way, from the stored text, reads the same work.
        let stored = serde_json::value::RawValue::from_string(v["snapshot"].to_string()).unwrap();
        assert_eq!(Work::from_stored("cancel", &stored).unwrap(), Work::Cancel(c));
        assert!(Work::from_stored("no_such_operation", &stored).is_err());
        // A cancellation queued before the field existed still reads, without one.
        let old = json!({"kind": "goods", "downstream_reference": "1", "reason": "r"});
        let Work::Cancel(c) = Work::from_parts("cancel", old).unwrap() else { panic!() };
        assert_eq!(c.cancel_kind, None);
    }

    #[test]
    fn amendments_stored_before_trip_and_crew_changes_still_read() {
        let old = json!({"downstream_reference": "T1", "added": [], "changed": [], "removed": []});
        let Work::Amendment(a) = Work::from_parts("amendment", old).unwrap() else { panic!() };
        assert_eq!(a.kind, Kind::NonScheduled);
        assert!(a.is_empty());
    }
}
