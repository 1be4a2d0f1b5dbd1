//! Reference data (MERNIS provinces, districts and airports, the ids U-ETDS uses): shipped
//! by a migration, loaded once at start-up, and served and checked from memory.

use std::{collections::HashMap, sync::OnceLock};

use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct City {
    pub id: i32,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct District {
    pub id: i32,
    pub city_id: i32,
    pub name: String,
    /// `district`, or `airport` for an airport code U-ETDS accepts in the same place.
    pub kind: String,
}

#[derive(Debug, Default)]
pub struct RefData {
    pub cities: Vec<City>,
    pub districts: Vec<District>,
    district_at: HashMap<i32, usize>,
    city_at: HashMap<i32, usize>,
}

/// The reference data of this process, once installed. It is the same in every database of a
/// build (a migration ships it), so one copy serves every request, the field parsers and the
/// OpenAPI document's enums.
static INSTALLED: OnceLock<&'static RefData> = OnceLock::new();

/// Make `data` the process's reference data (the first call wins) and return it.
pub fn install(data: RefData) -> &'static RefData {
    INSTALLED.get_or_init(|| Box::leak(Box::new(data)))
}

/// The installed reference data, if start-up has loaded it.
pub fn installed() -> Option<&'static RefData> {
    INSTALLED.get().copied()
}

impl RefData {
    pub fn new(cities: Vec<City>, districts: Vec<District>) -> RefData {
        let district_at = districts.iter().enumerate().map(|(i, d)| (d.id, i)).collect();
        let city_at = cities.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        RefData { cities, districts, district_at, city_at }
    }

    pub fn district(&self, id: i32) -> Option<&District> {
        self.district_at.get(&id).map(|i| &self.districts[*i])
    }

    pub fn city(&self, id: i32) -> Option<&City> {
        self.city_at.get(&id).map(|i| &self.cities[*i])
    }
}
