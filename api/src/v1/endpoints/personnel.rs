//! `/portal/personnel`: create, list, get, partial update, delete (retire).

use crate::v1::{
    answers::PersonOut,
    openapi::{patch_schema, AcrossFields},
    registry::registry,
};
pub use tns_core::domain::person::PersonIn;
use tns_core::domain::{national::identity_rule, person::NewPerson};
use tns_core::ids::PersonId;
use tns_store::{self as db, personnel::Person, retire::Retirable};

patch_schema!(PersonPatch, PersonIn);

impl AcrossFields for PersonIn {
    fn json_rules() -> serde_json::Value {
        identity_rule()
    }
}

registry! {
    Personnel: PersonId, Person => PersonOut, PersonIn / PersonPatch => NewPerson;
    tag: "personnel", one: "person", unique: db::personnel::IDENTITY_KEY, called "identity number";
    store: db::personnel, retired: Retirable::Person;
    parse(input) { input.try_into() }
    duplicate(f) { format!("an active person with identity number {} already exists", f.who.identity.number()) }
}
