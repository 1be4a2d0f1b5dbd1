//! Reference data (MERNIS provinces, districts and airports, the ids U-ETDS uses): shipped
//! by a migration, loaded once at start-up, and served and checked from memory.

use std::{collections::HashMap, sync::OnceLock};

use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::error::ApiError;

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
    pub async fn load(db: &PgPool) -> sqlx::Result<RefData> {
        let cities: Vec<City> = sqlx::query_as("SELECT id, name FROM ref_cities ORDER BY id").fetch_all(db).await?;
        let districts: Vec<District> =
            sqlx::query_as("SELECT id, city_id, name, kind FROM ref_districts ORDER BY city_id, kind DESC, name, id")
                .fetch_all(db)
                .await?;
        Ok(RefData::new(cities, districts))
    }

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

    /// A district or airport id that exists.
    pub fn check_district(&self, field: &str, id: i32) -> Result<i32, ApiError> {
        self.district(id).map(|d| d.id).ok_or_else(|| {
            ApiError::validation(field, format!("unknown district or place id {id}; see GET /ref/districts"))
        })
    }

    /// A province id that exists, and a district of that province.
    pub fn check_city_district(
        &self,
        city_field: &str,
        city: i32,
        district_field: &str,
        district: i32,
    ) -> Result<(), ApiError> {
        if self.city(city).is_none() {
            return Err(ApiError::validation(city_field, format!("unknown province id {city}; see GET /ref/cities")));
        }
        let d = self.check_district(district_field, district)?;
        if self.district(d).is_some_and(|d| d.city_id != city) {
            return Err(ApiError::validation(district_field, format!("district {district} is not in province {city}")));
        }
        Ok(())
    }
}
