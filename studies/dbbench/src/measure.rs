//! What every benchmark here shares: the three ways of reaching the database, their pools
//! (set up like the stacks': every connection opened up front, no checks on checkout), the
//! runtime, latency histograms.

use std::time::Duration;

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// How a unit of work reaches the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// sqlx's async pool, one tokio task per worker.
    SqlxTasks,
    /// diesel + r2d2, each call handed to tokio's blocking pool from a task per worker.
    DieselSpawnBlocking,
    /// diesel + r2d2 on a fixed set of OS threads, one per worker.
    DieselThreads,
}

impl Access {
    /// Each style, in the order of the page's columns and legend.
    pub const ALL: [Access; 3] =
        [Access::SqlxTasks, Access::DieselSpawnBlocking, Access::DieselThreads];

    /// Its name in results and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Access::SqlxTasks => "sqlx_tasks",
            Access::DieselSpawnBlocking => "diesel_spawn_blocking",
            Access::DieselThreads => "diesel_threads",
        }
    }
}

/// A diesel pool of PostgreSQL connections.
pub type DieselPool = Pool<ConnectionManager<diesel::PgConnection>>;

/// A sqlx pool of exactly `size` connections, all open before it is returned.
pub async fn sqlx_pool(url: &str, size: u32) -> Result<sqlx::PgPool, sqlx::Error> {
    sqlx_pool_with(url.parse()?, size).await
}

/// A sqlx pool of any database, of exactly `size` connections made with `options`, all open
/// before it is returned.
pub async fn sqlx_pool_with<DB: sqlx::Database>(
    options: <DB::Connection as sqlx::Connection>::Options,
    size: u32,
) -> Result<sqlx::Pool<DB>, sqlx::Error> {
    sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(size)
        .min_connections(size)
        .test_before_acquire(false)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(options)
        .await
}

/// A diesel + r2d2 pool of exactly `size` connections, all open before it is returned.
pub fn diesel_pool(url: &str, size: u32) -> Result<DieselPool, String> {
    diesel_pool_with(ConnectionManager::new(url), size, None)
}

/// A diesel + r2d2 pool of any database, of exactly `size` connections, each set up by
/// `customizer` when given, all open before it is returned.
pub fn diesel_pool_with<C: diesel::r2d2::R2D2Connection + 'static>(
    manager: ConnectionManager<C>,
    size: u32,
    customizer: Option<Box<dyn CustomizeConnection<C, diesel::r2d2::Error>>>,
) -> Result<Pool<ConnectionManager<C>>, String> {
    let mut builder = Pool::builder()
        .max_size(size)
        .min_idle(Some(size))
        .test_on_check_out(false)
        .idle_timeout(None)
        .max_lifetime(None)
        .connection_timeout(Duration::from_secs(30));
    if let Some(customizer) = customizer {
        builder = builder.connection_customizer(customizer);
    }
    builder.build(manager).map_err(|e| format!("diesel pool: {e}"))
}

/// The multi-thread runtime async work runs on: one worker per CPU, as the stacks.
pub fn runtime() -> tokio::runtime::Runtime {
    runtime_with(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A multi-thread runtime with `workers` workers.
pub fn runtime_with(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .enable_all()
        .build()
        .expect("building a runtime")
}

/// An empty latency histogram, µs, 1 µs to 60 s at 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds")
}

/// Records `elapsed` in `histogram` (saturating at its top).
pub fn record(histogram: &mut Histogram<u64>, elapsed: Duration) {
    histogram.saturating_record(elapsed.as_micros().clamp(1, 60_000_000) as u64);
}
