//! `/portal/vehicles`: create, list, get, partial update, delete (retire).

use crate::v1::{answers::VehicleOut, openapi::patch_schema, registry::registry};
use tns_core::domain::vehicle::NewVehicle;
pub use tns_core::domain::vehicle::VehicleIn;
use tns_core::ids::VehicleId;
use tns_store::{self as db, retire::Retirable, vehicles::Vehicle};

patch_schema!(VehiclePatch, VehicleIn);

registry! {
    Vehicles: VehicleId, Vehicle => VehicleOut, VehicleIn / VehiclePatch => NewVehicle;
    tag: "vehicles", one: "vehicle", unique: db::vehicles::PLATE_KEY, called "plate";
    store: db::vehicles, retired: Retirable::Vehicle;
    parse(input) { Ok(input.into()) }
    duplicate(f) { format!("an active vehicle with plate {} already exists", f.plate) }
}
