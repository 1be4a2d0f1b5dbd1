//! The reference data's tables (`ref_cities`, `ref_districts`): shipped by a migration, read
//! once at start-up into [`RefData`].

use sqlx::PgPool;
use tns_core::refdata::{City, District, RefData};

pub async fn load(db: &PgPool) -> sqlx::Result<RefData> {
    let cities: Vec<City> = sqlx::query_as("SELECT id, name FROM ref_cities ORDER BY id").fetch_all(db).await?;
    let districts: Vec<District> =
        sqlx::query_as("SELECT id, city_id, name, kind FROM ref_districts ORDER BY city_id, kind DESC, name, id")
            .fetch_all(db)
            .await?;
    Ok(RefData::new(cities, districts))
}
