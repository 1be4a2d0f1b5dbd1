//! The records an organization writes: the registries', journeys' with their passengers, and
//! shipments'.

use serde::Serialize;
use utoipa::ToSchema;

use tns_core::domain::{
    cargo::CargoFields,
    journey::StoredJourney,
    kinds::{RecordStatus, RegistryStatus},
    passenger::NewPassenger,
    person::NewPerson,
    stamp::Stamp,
    vehicle::NewVehicle,
};
use tns_core::ids::{CargoId, JourneyId, PassengerId, PersonId, VehicleId};
use tns_store::{cargo::Cargo, journeys::Journey, passengers::Passenger, personnel::Person, vehicles::Vehicle};

/// A record's answer: its id, the stored value (flattened, under the field names a request
/// uses), what else its row shows, and its stamp; built from the row field by field.
macro_rules! record_answer {
    ($(#[$doc:meta])* $out:ident as $schema:ident from $row:ident($id:ty) {
        $value:ident: $value_ty:ty, $($(#[$field_doc:meta])* $field:ident: $ty:ty,)*
    }) => {
        $(#[$doc])*
        #[derive(Serialize, ToSchema)]
        #[schema(as = $schema)]
        pub struct $out {
            #[schema(value_type = i64)]
            pub id: $id,
            #[serde(flatten)]
            pub $value: $value_ty,
            $($(#[$field_doc])* pub $field: $ty,)*
            #[serde(flatten)]
            pub stamp: Stamp,
        }

        impl From<$row> for $out {
            fn from(r: $row) -> Self {
                $out { id: r.id, $value: r.$value, $($field: r.$field,)* stamp: r.stamp }
            }
        }
    };
}

record_answer! {
    /// A vehicle of the organization's registry.
    VehicleOut as Vehicle from Vehicle(VehicleId) {
        vehicle: NewVehicle,
        /// `inactive` once deleted while journeys or cargo refer to it (it then leaves the list).
        status: RegistryStatus,
    }
}

record_answer! {
    /// A crew member of the organization's personnel registry.
    PersonOut as Person from Person(PersonId) {
        person: NewPerson,
        /// `inactive` once deleted while journeys or cargo refer to them (they then leave the list).
        status: RegistryStatus,
    }
}

record_answer! {
    /// A passenger of a journey.
    PassengerOut as Passenger from Passenger(PassengerId) {
        passenger: NewPassenger,
        #[schema(value_type = i64)]
        journey_id: JourneyId,
    }
}

record_answer! {
    /// A cargo shipment.
    CargoOut as Cargo from Cargo(CargoId) {
        shipment: CargoFields,
        /// Mirrors the latest submission: `draft` until submitted.
        status: RecordStatus,
        /// The downstream's reference, once a submission of it was delivered.
        downstream_reference: Option<String>,
    }
}

record_answer! {
    /// A journey.
    JourneyOut as Journey from Journey(JourneyId) {
        journey: StoredJourney,
        /// Mirrors the latest submission: `draft` until submitted.
        status: RecordStatus,
        /// The downstream's reference, once a submission of it was delivered; later changes to
        /// its passengers are submitted as an amendment of it.
        downstream_reference: Option<String>,
    }
}
