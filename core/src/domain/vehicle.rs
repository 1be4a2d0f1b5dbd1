//! A vehicle of an organization's registry, as a request states it ([`VehicleIn`]: each field
//! parsed by its own type) and as the value stored ([`NewVehicle`]). No rule spans a vehicle's
//! fields, so parsing the request is all there is to it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    fields::{Text, Text50},
    kinds::VehicleType,
    national::{Capacity, ModelYear, Phone, Plate},
};

/// A vehicle as sent on create; any subset of it on update.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VehicleIn {
    pub plate: Plate,
    pub vehicle_type: VehicleType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<Text50>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Text50>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_year: Option<ModelYear>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Contact phone of the vehicle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
}

/// A vehicle whose every field holds its rule, in the shapes the registry keeps: what a row
/// reads and an answer shows of it.
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
#[schema(as = VehicleFields, description = "A vehicle's fields, as stored: the plate normalized, `null` where unset.")]
pub struct NewVehicle {
    /// Normalized (upper case, no spaces).
    pub plate: String,
    pub vehicle_type: VehicleType,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub model_year: Option<i32>,
    pub capacity: Option<i32>,
    pub phone: Option<String>,
}

impl From<VehicleIn> for NewVehicle {
    fn from(v: VehicleIn) -> Self {
        NewVehicle {
            plate: v.plate.into_inner(),
            vehicle_type: v.vehicle_type,
            brand: v.brand.map(Text::into_inner),
            model: v.model.map(Text::into_inner),
            // The bounds of these fields' types fit the columns.
            model_year: v.model_year.map(|y| y.get() as i32),
            capacity: v.capacity.map(|c| c.get() as i32),
            phone: v.phone.map(Phone::into_inner),
        }
    }
}
