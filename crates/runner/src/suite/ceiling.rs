//! The database ceiling: a scenario's statements issued straight through a store over a
//! pool, with no HTTP and no JSON — once through each driver the stacks use, since neither
//! bounds the other (a 50-row `bookList` costs the server 10–11 µs of CPU through diesel and
//! libpq, 30–32 µs through sqlx: docs/findings.md, "Database access without HTTP"; the diesel stacks reached a median
//! 106% of a sqlx-only ceiling at `bookList500`).

use std::sync::Arc;
use std::time::Duration;

use bookstore_domain::store::{PoolSettings, Store};
use bookstore_store_diesel::{DieselStore, SpawnBlocking};
use bookstore_store_sqlx::SqlxStore;

use bookstore_client::engine::{
    self, Client, Done, ErrorKind, LoadPlan, LoadReport, Picker, WindowHooks,
};
use bookstore_client::scenario::{Scenario, ScenarioLoad};

/// The store a database ceiling goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    /// sqlx's PostgreSQL driver on the client's runtime.
    Sqlx,
    /// diesel over libpq with an r2d2 pool, each call on tokio's blocking pool (as
    /// axum-serde-diesel runs it).
    Diesel,
}

impl Driver {
    pub(crate) const ALL: [Driver; 2] = [Driver::Sqlx, Driver::Diesel];

    /// As the results name it (`driver`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Driver::Sqlx => "sqlx",
            Driver::Diesel => "diesel",
        }
    }
}

/// One client thread's share of the pool and the scenario to run.
pub(crate) struct StoreClient<S> {
    settings: PoolSettings,
    scenario: Scenario,
    load: Arc<ScenarioLoad>,
    store: Option<S>,
}

/// Where a ceiling's client threads open their share of the pool.
pub(crate) struct StorePool {
    pub(crate) url: String,
    /// Connections each client thread opens.
    pub(crate) per_thread: u32,
}

/// One window of `scenario`'s statements through `driver`'s store.
pub(crate) fn run(
    driver: Driver,
    plan: &LoadPlan,
    pool: StorePool,
    scenario: Scenario,
    load: Arc<ScenarioLoad>,
    hooks: &mut dyn WindowHooks,
) -> Result<LoadReport, String> {
    fn with<S: Store + 'static>(
        plan: &LoadPlan,
        pool: StorePool,
        scenario: Scenario,
        load: Arc<ScenarioLoad>,
        hooks: &mut dyn WindowHooks,
    ) -> Result<LoadReport, String> {
        let client =
            move |_| StoreClient::<S>::new(&pool.url, pool.per_thread, scenario, Arc::clone(&load));
        engine::run(plan, client, hooks)
    }
    match driver {
        Driver::Sqlx => with::<SqlxStore>(plan, pool, scenario, load, hooks),
        Driver::Diesel => with::<DieselStore<SpawnBlocking>>(plan, pool, scenario, load, hooks),
    }
}

impl<S> StoreClient<S> {
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

impl<S: Store + 'static> Client for StoreClient<S> {
    type Connection = ();

    async fn start(&mut self) -> Result<(), String> {
        // Opened here, in this thread's runtime, so the pool's sockets are driven by it.
        self.store = Some(S::open(&self.settings).await.map_err(|e| e.to_string())?);
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
