//! A crew member of an organization's personnel registry, as a request states it
//! ([`PersonIn`]: each field parsed by its own type) and as a value whose rule across fields
//! holds ([`NewPerson`]: its [`Identity`]).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    fields::Text,
    kinds::{Gender, RoleType},
    national::{Address, HesCode, IdentityNumber, Individual, Nationality, PersonName, Phone},
    Invalid,
};

/// A crew member as sent on create; any subset of it on update.
///
/// Rule across fields: a Turkish national (`nationality` absent or `TR`) has a T.C. identity
/// number with valid check digits.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonIn {
    pub identity_number: IdentityNumber,
    pub first_name: PersonName,
    pub last_name: PersonName,
    pub gender: Gender,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nationality: Option<Nationality>,
    pub role_type: RoleType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    /// Health-code value (HES), an obsolete field U-ETDS still carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hes_code: Option<HesCode>,
}

/// A crew member whose every rule holds, in the shapes the registry keeps: what a row reads
/// and an answer shows of them. Personal data, so not `Debug`: nothing can print it by accident.
#[derive(Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(as = PersonFields, description = "A crew member's fields, as stored: `null` where unset.")]
pub struct NewPerson {
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub who: Individual,
    pub role_type: RoleType,
    pub phone: Option<String>,
    pub address: Option<String>,
    pub hes_code: Option<String>,
}

impl TryFrom<PersonIn> for NewPerson {
    type Error = Invalid;

    fn try_from(p: PersonIn) -> Result<NewPerson, Invalid> {
        Ok(NewPerson {
            who: Individual::parse(p.identity_number, p.nationality, p.first_name, p.last_name, p.gender)?,
            role_type: p.role_type,
            phone: p.phone.map(Phone::into_inner),
            address: p.address.map(Text::into_inner),
            hes_code: p.hes_code.map(Text::into_inner),
        })
    }
}
