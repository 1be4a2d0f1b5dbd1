//! `/portal/personnel`: create, list, get, partial update, delete (retire).

use crate::v1::{
    answers::PersonOut,
    openapi::{patch_schema, AcrossFields},
    registry::{registry_endpoints, registry_store, Registry},
};
pub use tns_core::domain::person::PersonIn;
use tns_core::domain::{kinds::RegistryStatus, national::identity_rule, person::NewPerson, Invalid};
use tns_core::ids::PersonId;
use tns_store::{self as db, personnel::Person, retire::Retirable};

patch_schema!(PersonPatch, PersonIn);

impl AcrossFields for PersonIn {
    fn json_rules() -> serde_json::Value {
        identity_rule()
    }
}

pub struct Personnel;

impl Registry for Personnel {
    type Id = PersonId;
    type Record = Person;
    type Answer = PersonOut;
    type Input = PersonIn;
    type Value = NewPerson;
    const KIND: &'static str = "person";
    const UNIQUE_KEY: &'static str = db::personnel::IDENTITY_KEY;

    fn retirable(id: PersonId) -> Retirable {
        Retirable::Person(id)
    }

    fn parse(input: PersonIn) -> Result<NewPerson, Invalid> {
        input.try_into()
    }
    fn duplicate(f: &NewPerson) -> String {
        format!("an active person with identity number {} already exists", f.identity.number())
    }
    fn is_active(r: &Person) -> bool {
        r.status == RegistryStatus::Active
    }
    registry_store!(db::personnel, PersonId, Person, NewPerson);
}

registry_endpoints! {
    registry: Personnel, answer: PersonOut, input: PersonIn, patch: PersonPatch, tag: "personnel",
    path: "/portal/personnel", one: "/portal/personnel/{id}";
    /// Register a person. Scope `journeys:write`.
    create: "create_person", duplicate: "identity number already registered";
    /// Active personnel, newest first. Scope `journeys:read`.
    list: "list_personnel";
    /// One person (also a retired one, status `inactive`). Scope `journeys:read`.
    get: "get_person";
    /// Change any subset of fields (`null` clears an optional one); answers the whole record.
    /// Scope `journeys:write`.
    update: "update_person", duplicate: "Another active person has this identity number";
    /// Delete a person; one that journeys or cargo refer to is kept as `inactive` and leaves the
    /// list. Scope `journeys:write`.
    delete: "delete_person";
}
