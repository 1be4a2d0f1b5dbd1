//! `/portal/vehicles`: create, list, get, partial update, delete (retire).

use crate::v1::{
    answers::VehicleOut,
    openapi::patch_schema,
    registry::{registry_endpoints, registry_store, Registry},
};
pub use tns_core::domain::vehicle::VehicleIn;
use tns_core::domain::{kinds::RegistryStatus, vehicle::NewVehicle, Invalid};
use tns_core::ids::VehicleId;
use tns_store::{self as db, retire::Retirable, vehicles::Vehicle};

patch_schema!(VehiclePatch, VehicleIn);

pub struct Vehicles;

impl Registry for Vehicles {
    type Id = VehicleId;
    type Record = Vehicle;
    type Answer = VehicleOut;
    type Input = VehicleIn;
    type Value = NewVehicle;
    const KIND: &'static str = "vehicle";
    const UNIQUE_KEY: &'static str = db::vehicles::PLATE_KEY;

    fn retirable(id: VehicleId) -> Retirable {
        Retirable::Vehicle(id)
    }

    fn parse(input: VehicleIn) -> Result<NewVehicle, Invalid> {
        Ok(input.into())
    }
    fn duplicate(f: &NewVehicle) -> String {
        format!("an active vehicle with plate {} already exists", f.plate)
    }
    fn is_active(r: &Vehicle) -> bool {
        r.status == RegistryStatus::Active
    }
    registry_store!(db::vehicles, VehicleId, Vehicle, NewVehicle);
}

registry_endpoints! {
    registry: Vehicles, answer: VehicleOut, input: VehicleIn, patch: VehiclePatch, tag: "vehicles",
    path: "/portal/vehicles", one: "/portal/vehicles/{id}";
    /// Register a vehicle. Scope `journeys:write`.
    create: "create_vehicle", duplicate: "plate already registered";
    /// Active vehicles, newest first. Scope `journeys:read`.
    list: "list_vehicles";
    /// One vehicle (also a retired one, status `inactive`). Scope `journeys:read`.
    get: "get_vehicle";
    /// Change any subset of fields (`null` clears an optional one); answers the whole record.
    /// Scope `journeys:write`.
    update: "update_vehicle", duplicate: "Another active vehicle has this plate";
    /// Delete a vehicle; one that journeys or cargo refer to is kept as `inactive` and leaves
    /// the list. Scope `journeys:write`.
    delete: "delete_vehicle";
}
