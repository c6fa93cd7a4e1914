//! `bookstore-store-diesel`: the contract's queries with diesel 2 and an r2d2 pool — the
//! blocking way — behind the same async [`Store`] interface as the sqlx store.
//!
//! Every call is handed, whole, to a thread where blocking is allowed ([`Offload`]: tokio's
//! `spawn_blocking` for axum, `actix_web::web::block` for actix): that thread checks out a
//! connection (waiting up to the acquire timeout), runs the statement(s), returns the
//! connection and sends the result back. The async worker that accepted the request only
//! waits for that result. One connection per request; checkout holds it for the whole
//! transaction.
//!
//! Pool parity (SPEC §1): r2d2 with `min_idle = max_size`, built only once every connection
//! is open; no ping per checkout — a broken connection fails its query, answers 503 and is
//! discarded by r2d2 on return — except after a lost connection: r2d2's check on checkout
//! (the `is_valid` of the store's connection manager) pings only a connection idle since a
//! query last found its connection gone ([`LostConnections`]), so that after a restart the
//! dead idle connections are closed before a request draws them, as the sqlx store does;
//! no idle timeout or maximum lifetime; diesel caches every prepared statement per
//! connection (the aggregate's and the ping's fixed texts through [`CachedSql`]: diesel
//! never caches `sql_query`); the statements are `bookstore_diesel_sql`'s, which the
//! diesel-async store runs too. libpq is built from source without TLS (`pq-sys`
//! `bundled_without_openssl`), so no system library is needed.

mod queries;

pub use bookstore_diesel_sql::CachedSql;
pub use bookstore_domain::offload::Offload;

use std::time::{Duration, Instant};

use bookstore_diesel_sql::describe;
use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
};
use bookstore_domain::store::{LostConnections, OpenError, PoolSettings, Store};
use diesel::Connection;
use diesel::pg::PgConnection;
use diesel::r2d2::{ConnectionManager, ManageConnection, Pool};

/// `tokio::task::spawn_blocking`: tokio's blocking pool, bounded by the runtime's
/// `max_blocking_threads`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpawnBlocking;

impl Offload for SpawnBlocking {
    const NAME: &'static str = "tokio::task::spawn_blocking";

    async fn run<F, T>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Error::Internal(format!("blocking task failed: {e}")))
    }
}

type PgPool = Pool<Manager>;

/// A pooled connection, and when it last went back to the pool.
struct Tracked {
    conn: PgConnection,
    idle_since: Instant,
}

/// diesel's r2d2 manager, its checkout check a ping only of connections idle since a loss.
struct Manager {
    inner: ConnectionManager<PgConnection>,
    lost: std::sync::Arc<LostConnections>,
}

impl ManageConnection for Manager {
    type Connection = Tracked;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<Tracked, Self::Error> {
        Ok(Tracked { conn: self.inner.connect()?, idle_since: Instant::now() })
    }

    fn is_valid(&self, tracked: &mut Tracked) -> Result<(), Self::Error> {
        if self.lost.suspect(tracked.idle_since.elapsed()) {
            self.inner.is_valid(&mut tracked.conn)
        } else {
            Ok(())
        }
    }

    fn has_broken(&self, tracked: &mut Tracked) -> bool {
        // Called as the connection goes back to the pool.
        tracked.idle_since = Instant::now();
        self.inner.has_broken(&mut tracked.conn)
    }
}

/// The diesel store: the r2d2 pool and where its calls run.
#[derive(Clone)]
pub struct DieselStore<O> {
    pool: PgPool,
    offload: O,
    acquire_timeout: Duration,
    lost: std::sync::Arc<LostConnections>,
}

impl<O> std::fmt::Debug for DieselStore<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselStore").field("pool", &self.pool.state()).finish()
    }
}

impl<O: Offload> DieselStore<O> {
    /// Checks out a connection on the blocking thread and runs `work` with it.
    async fn call<T, W>(&self, work: W) -> Result<T, Error>
    where
        W: FnOnce(&mut PgConnection) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let pool = self.pool.clone();
        let lost = self.lost.clone();
        let queued = Instant::now();
        let acquire_timeout = self.acquire_timeout;
        let timing = bookstore_timing::enabled();
        let (result, stamps) = self
            .offload
            .run(move || {
                let running = timing.then(Instant::now);
                // The acquire timeout counts from the request, as on the async stacks: a
                // wait for a blocking thread (busy with requests that wait for connections
                // themselves, as in a database outage) is a wait for a connection. r2d2
                // still takes an idle connection when no time is left.
                let remaining = acquire_timeout.saturating_sub(queued.elapsed());
                let mut conn = match pool.get_timeout(remaining) {
                    Ok(conn) => conn,
                    Err(e) => return (Err(Error::DbUnavailable(e.to_string())), None),
                };
                let connected = timing.then(Instant::now);
                let result = work(&mut conn.conn);
                if let Err(Error::DbUnavailable(_)) = &result {
                    lost.note();
                }
                let stamps = running.zip(connected).map(|(running, connected)| {
                    bookstore_timing::BlockingStamps { running, connected, done: Instant::now() }
                });
                (result, stamps)
            })
            .await?;
        if let Some(stamps) = stamps {
            let call = bookstore_timing::BlockingCall::from_stamps(queued, stamps, Instant::now());
            bookstore_timing::record_blocking(call);
        }
        result
    }
}

impl<O: Offload> Store for DieselStore<O> {
    const ACCESS: &'static str = "diesel";

    async fn open(settings: &PoolSettings) -> Result<Self, OpenError> {
        settings.check()?;
        let offload = O::default();
        let settings_url = settings.database_url.clone();
        let acquire_timeout = settings.acquire_timeout;
        let settings = settings.clone();
        let lost = std::sync::Arc::new(LostConnections::default());
        let manager_lost = lost.clone();
        let pool = offload
            .run(move || build_pool(&settings, manager_lost))
            .await
            .map_err(|e| OpenError::connect(describe(&settings_url), 0, e))??;
        Ok(Self { pool, offload, acquire_timeout, lost })
    }

    async fn close(&self) {
        // r2d2 closes its connections when the last handle on the pool is dropped, which
        // happens when the server lets go of its store.
    }

    async fn ping(&self) -> Result<(), Error> {
        self.call(queries::ping).await
    }

    async fn book(&self, id: i64) -> Result<Option<BookDetail>, Error> {
        self.call(move |conn| queries::book(conn, id)).await
    }

    async fn books(&self, limit: i64) -> Result<Vec<BookSummary>, Error> {
        self.call(move |conn| queries::books(conn, limit)).await
    }

    async fn search_books(&self, pattern: &str, limit: i64) -> Result<Vec<BookSummary>, Error> {
        let pattern = pattern.to_owned();
        self.call(move |conn| queries::search_books(conn, &pattern, limit)).await
    }

    async fn large_items(&self, limit: i64) -> Result<Vec<LargeItem>, Error> {
        self.call(move |conn| queries::large_items(conn, limit)).await
    }

    async fn author_inventory(&self, limit: i64) -> Result<Vec<AuthorInventory>, Error> {
        self.call(move |conn| queries::author_inventory(conn, limit)).await
    }

    async fn checkout(&self, order: NewCheckout) -> Result<CheckoutResponse, Error> {
        self.call(move |conn| queries::checkout(conn, order)).await
    }
}

/// Opens one connection to report a clear reason if the database cannot be reached, then
/// builds the pool, which returns once all `max_connections` are open.
fn build_pool(
    settings: &PoolSettings,
    lost: std::sync::Arc<LostConnections>,
) -> Result<PgPool, OpenError> {
    let connections = settings.max_connections;
    let target = describe(&settings.database_url);
    let connect_error = |reason: String| OpenError::connect(target.as_str(), connections, reason);
    PgConnection::establish(&settings.database_url).map_err(|e| connect_error(e.to_string()))?;
    Pool::builder()
        .max_size(connections)
        .min_idle(Some(connections))
        // `Manager::is_valid`: a ping only after a lost connection, else a clock read.
        .test_on_check_out(true)
        .connection_timeout(settings.acquire_timeout.max(Duration::from_millis(1)))
        .idle_timeout(None)
        .max_lifetime(None)
        .error_handler(Box::new(DebugLog))
        .build(Manager { inner: ConnectionManager::new(settings.database_url.as_str()), lost })
        .map_err(|e| connect_error(e.to_string()))
}

/// r2d2 reports failed connection attempts (it retries in the background to keep the pool
/// full); during an outage that is one per attempt, so below the default level.
#[derive(Debug)]
struct DebugLog;

impl diesel::r2d2::HandleError<diesel::r2d2::Error> for DebugLog {
    fn handle_error(&self, error: diesel::r2d2::Error) {
        tracing::debug!(%error, "r2d2 could not open a connection");
    }
}
