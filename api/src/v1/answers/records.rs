//! The records an organization writes: the registries', journeys' with their passengers, and
//! shipments'.

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
/// uses), what else its row shows, and its stamp.
macro_rules! record_answer {
    ($(#[$doc:meta])* $out:ident as $schema:ident from $row:ident($id:ty) {
        $value:ident: $value_ty:ty, $($(#[$field_doc:meta])* $field:ident: $ty:ty,)*
    }) => {
        tns_http::answer! {
            $(#[$doc])*
            $out as $schema from $row {
                #[schema(value_type = i64)]
                id: $id,
                #[serde(flatten)]
                $value: $value_ty,
                $($(#[$field_doc])* $field: $ty,)*
                #[serde(flatten)]
                stamp: Stamp,
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
