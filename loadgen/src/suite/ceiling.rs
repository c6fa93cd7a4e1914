//! The database ceiling: a scenario's statements issued straight through the sqlx store
//! over a pool, at the same concurrency, with no HTTP and no JSON.

use std::sync::Arc;
use std::time::Duration;

use bookstore_domain::store::{PoolSettings, Store};
use bookstore_store_sqlx::SqlxStore;

use crate::engine::{Client, Done, ErrorKind, Picker};
use crate::scenario::{Scenario, ScenarioLoad};

/// One client thread's share of the pool and the scenario to run.
pub(crate) struct StoreClient {
    settings: PoolSettings,
    scenario: Scenario,
    load: Arc<ScenarioLoad>,
    store: Option<SqlxStore>,
}

impl StoreClient {
    /// A client opening `connections` of the pool on `database_url`.
    pub(crate) fn new(
        database_url: &str,
        connections: u32,
        scenario: Scenario,
        load: Arc<ScenarioLoad>,
    ) -> Self {
        let settings = PoolSettings {
            database_url: database_url.to_owned(),
            max_connections: connections.max(1),
            acquire_timeout: Duration::from_secs(10),
        };
        Self { settings, scenario, load, store: None }
    }
}

impl Client for StoreClient {
    type Connection = ();

    async fn start(&mut self) -> Result<(), String> {
        // Opened here, in this thread's runtime, so the pool's sockets are driven by it.
        self.store = Some(SqlxStore::open(&self.settings).await.map_err(|e| e.to_string())?);
        Ok(())
    }

    fn picker(&self, index: usize, users: usize) -> Picker {
        self.scenario.picker(index, users, self.load.len())
    }

    async fn connect(&self) -> Result<(), ErrorKind> {
        Ok(())
    }

    async fn call(&self, _: &mut (), pick: usize) -> Result<Done, ErrorKind> {
        let store = self.store.as_ref().expect("started");
        let outcome = self.scenario.call_store(store, self.load.book_id(pick)).await;
        Ok(Done { outcome, status: None, close: false })
    }
}
