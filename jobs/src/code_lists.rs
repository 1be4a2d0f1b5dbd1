//! The code lists job: reads the downstream's code lists (why a trip or load is cancelled,
//! goods types and units, how dangerous goods travel) with the account of the platform's
//! reference organization, and keeps them for the API to serve and check against. Read daily;
//! while the downstream cannot be read, hourly, and the lists kept meanwhile (the last good
//! copy, or the shipped one) stay in place.

use std::{sync::Arc, time::Duration};

use sqlx::PgPool;
use tns_adapter::{Adapter, CodeListsRequest};
use tns_adapter_host::Plugins;
use tns_core::{
    domain::code_lists::{Code, CodeListName},
    sealing::DataKey,
};
use tns_store::code_lists as store;

/// How long a read copy is kept before it is read again.
const FRESH_FOR: Duration = Duration::from_secs(23 * 3600);

/// The downstream calls one reading makes at most (U-ETDS: nine lists).
const LISTS_ASKED: u32 = 10;

/// What the job needs beside the database.
pub struct CodeListRefresh {
    /// The organization whose downstream account reads the lists (`TNS_REFERENCE_ORG`).
    pub org: i64,
    adapters: Arc<Plugins>,
    data_key: DataKey,
    timeout: Duration,
}

impl CodeListRefresh {
    pub fn new(org: i64, adapters: Arc<Plugins>, data_key: DataKey, timeout: Duration) -> CodeListRefresh {
        CodeListRefresh { org, adapters, data_key, timeout }
    }

    /// Read the lists when one has not been answered for a day (or ever); how many lists
    /// changed.
    pub async fn run(&self, db: &PgPool) -> anyhow::Result<u64> {
        if !store::due(db, FRESH_FOR).await? {
            return Ok(0);
        }
        self.refresh(db).await
    }

    /// Read the lists now; how many lists changed. A reference organization without a
    /// downstream, or whose adapter this process lacks, is a configuration error.
    pub async fn refresh(&self, db: &PgPool) -> anyhow::Result<u64> {
        let Some(org) = tns_store::accounts::org_id(db, self.org).await? else {
            anyhow::bail!("there is no reference organization {} (TNS_REFERENCE_ORG)", self.org);
        };
        let Some(setting) = tns_store::downstream::get(db, org).await? else {
            anyhow::bail!("the reference organization {} has chosen no downstream", self.org);
        };
        let Some(adapter) = self.adapters.get(&setting.adapter) else {
            anyhow::bail!("the reference organization's adapter {} is not installed on the jobs role", setting.adapter);
        };
        let credentials = crate::downstream::credentials(db, &self.data_key, org, &setting.adapter)
            .await?
            .map_err(|e| anyhow::anyhow!("the reference organization's credentials: {e}"))?;
        let req = CodeListsRequest { credentials };
        // One call asks every list in turn, each within the adapter's own call timeout.
        let deadline = self.timeout * LISTS_ASKED;
        let lists = crate::downstream::within(deadline, move || adapter.code_lists(&req))
            .await
            .map_err(|e| anyhow::anyhow!("the downstream's code lists: {e}"))?;
        let mut known = Vec::new();
        for list in lists {
            match CodeListName::parse(&list.name) {
                Some(name) => {
                    known.push((name, list.codes.into_iter().map(|c| Code { code: c.code, name: c.name }).collect()))
                }
                None => {
                    tracing::warn!(list = %list.name, "the adapter answered a code list TNS does not know; left out")
                }
            }
        }
        Ok(store::replace(db, known).await?)
    }
}
