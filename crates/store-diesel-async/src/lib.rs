//! `bookstore-store-diesel-async`: the contract's queries with diesel-async — the same diesel
//! schema and statements as the blocking diesel store (`bookstore_diesel_sql`), run on
//! `AsyncPgConnection` (tokio-postgres underneath) from a bb8 pool, async all the way: no
//! thread is handed a call, the worker that accepted the request awaits its statements.
//!
//! So against `bookstore-store-diesel` it changes only the access style (blocking on
//! threads → async), and against `bookstore-store-sqlx` only the library (both async).
//!
//! Pool parity (SPEC §1), as the other two stores: bb8 with `min_idle = max_size`, built
//! only once every connection is open; no idle timeout or maximum lifetime; an acquire that
//! waits longer than the acquire timeout answers 503 `db_unavailable`; no ping per checkout
//! except of a connection idle since a query last found its connection gone
//! ([`LostConnections`], as in the other stores), so that after a restart the dead idle
//! connections are closed before a request draws them. A connection whose socket closed is
//! discarded as it goes back (diesel-async's `is_broken`: its tokio-postgres client is
//! closed); its replacement is opened by a task the next request that finds a connection
//! missing starts, retrying every `RECONNECT_INTERVAL` within the acquire timeout, so that
//! the pool serves again as soon as the database does. diesel-async caches every prepared
//! statement per connection, keyed as diesel's
//! are (the aggregate's and the ping's fixed texts through `CachedSql`). Connections speak
//! plain TCP (`NoTls`): the benchmark talks to loopback, as the other stores do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bookstore_diesel_sql::{query_error, statements};
use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::rows::{BookDetailRow, BookSummaryRow, LargeItemRow};
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
};
use bookstore_domain::store::{LostConnections, OpenError, PoolSettings, Store};
use diesel::OptionalExtension;
use diesel_async::pooled_connection::PoolError;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

/// A pooled connection, and when it last went back to the pool.
struct Tracked {
    conn: AsyncPgConnection,
    idle_since: Instant,
}

/// How often a connection that could not be opened is tried again, within the acquire
/// timeout: while the database is down, attempts fail at once (connection refused), and a
/// request waiting for a connection gets one within this of the database's return.
const RECONNECT_INTERVAL: Duration = Duration::from_millis(50);

/// bb8's manager of diesel-async connections, its checkout check a ping only of connections
/// idle since a loss.
struct Manager {
    database_url: String,
    lost: Arc<LostConnections>,
    /// How long a connection is tried for: the acquire timeout.
    retry_for: Duration,
}

impl bb8::ManageConnection for Manager {
    type Connection = Tracked;
    type Error = PoolError;

    async fn connect(&self) -> Result<Tracked, PoolError> {
        let deadline = Instant::now() + self.retry_for;
        loop {
            match AsyncPgConnection::establish(&self.database_url).await {
                Ok(conn) => return Ok(Tracked { conn, idle_since: Instant::now() }),
                Err(error) if Instant::now() + RECONNECT_INTERVAL < deadline => {
                    tracing::debug!(%error, "diesel-async could not open a connection; trying again");
                    tokio::time::sleep(RECONNECT_INTERVAL).await;
                }
                Err(error) => return Err(PoolError::ConnectionError(error)),
            }
        }
    }

    async fn is_valid(&self, tracked: &mut Tracked) -> Result<(), PoolError> {
        if self.lost.suspect(tracked.idle_since.elapsed()) {
            statements::ping().execute(&mut tracked.conn).await.map_err(PoolError::QueryError)?;
        }
        Ok(())
    }

    fn has_broken(&self, tracked: &mut Tracked) -> bool {
        // Called as the connection goes back to the pool.
        tracked.idle_since = Instant::now();
        diesel_async::pooled_connection::PoolableConnection::is_broken(&mut tracked.conn)
    }
}

/// The diesel-async store: a cheaply cloneable handle on the bb8 pool.
#[derive(Clone)]
pub struct DieselAsyncStore {
    pool: bb8::Pool<Manager>,
    lost: Arc<LostConnections>,
}

impl std::fmt::Debug for DieselAsyncStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.pool.state();
        f.debug_struct("DieselAsyncStore")
            .field("connections", &state.connections)
            .field("idle", &state.idle_connections)
            .finish()
    }
}

impl DieselAsyncStore {
    /// Checks out a connection (waiting up to the acquire timeout) and runs `work` on it.
    async fn call<T>(
        &self,
        work: impl AsyncFnOnce(&mut AsyncPgConnection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut tracked = self.pool.get().await.map_err(|e| match e {
            bb8::RunError::TimedOut => {
                Error::DbUnavailable("timed out waiting for a connection".into())
            }
            bb8::RunError::User(e) => Error::DbUnavailable(e.to_string()),
        })?;
        let result = work(&mut tracked.conn).await;
        if let Err(Error::DbUnavailable(_)) = &result {
            self.lost.note();
        }
        result
    }
}

impl Store for DieselAsyncStore {
    const ACCESS: &'static str = "diesel-async";

    async fn open(settings: &PoolSettings) -> Result<Self, OpenError> {
        settings.check()?;
        let connections = settings.max_connections;
        let target = bookstore_diesel_sql::describe(&settings.database_url);
        let connect_error =
            |reason: String| OpenError::connect(target.as_str(), connections, reason);
        // One plain connection first: bb8 retries until its timeout and then only says
        // "timed out", hiding "connection refused" or "database does not exist".
        AsyncPgConnection::establish(&settings.database_url)
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        let lost = Arc::new(LostConnections::default());
        let manager = Manager {
            database_url: settings.database_url.clone(),
            lost: lost.clone(),
            retry_for: settings.acquire_timeout,
        };
        let pool = bb8::Pool::builder()
            .max_size(connections)
            .min_idle(Some(connections))
            // `Manager::is_valid`: a ping only after a lost connection, else a clock read.
            .test_on_check_out(true)
            .connection_timeout(settings.acquire_timeout.max(Duration::from_millis(1)))
            // A replacement retries at RECONNECT_INTERVAL (`Manager::connect`), not with
            // bb8's own back-off to half the acquire timeout, with which the pool came back
            // a second and more after the database (loadgen's faults test).
            .retry_connection(false)
            .idle_timeout(None)
            .max_lifetime(None)
            .error_sink(Box::new(DebugLog))
            .build(manager)
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        Ok(Self { pool, lost })
    }

    async fn close(&self) {
        // bb8 closes its connections when the last handle on the pool is dropped, which
        // happens when the server lets go of its store.
    }

    async fn ping(&self) -> Result<(), Error> {
        self.call(async |conn| {
            statements::ping().execute(conn).await.map_err(query_error)?;
            Ok(())
        })
        .await
    }

    async fn book(&self, id: i64) -> Result<Option<BookDetail>, Error> {
        self.call(async |conn| {
            let row: Option<BookDetailRow> =
                statements::book(id).get_result(conn).await.optional().map_err(query_error)?;
            Ok(row.map(BookDetail::from))
        })
        .await
    }

    async fn books(&self, limit: i64) -> Result<Vec<BookSummary>, Error> {
        self.call(async |conn| {
            let rows: Vec<BookSummaryRow> =
                statements::books(limit).load(conn).await.map_err(query_error)?;
            Ok(rows.into_iter().map(BookSummary::from).collect())
        })
        .await
    }

    async fn search_books(&self, pattern: &str, limit: i64) -> Result<Vec<BookSummary>, Error> {
        self.call(async |conn| {
            let rows: Vec<BookSummaryRow> =
                statements::search_books(pattern, limit).load(conn).await.map_err(query_error)?;
            Ok(rows.into_iter().map(BookSummary::from).collect())
        })
        .await
    }

    async fn large_items(&self, limit: i64) -> Result<Vec<LargeItem>, Error> {
        self.call(async |conn| {
            let rows: Vec<LargeItemRow> =
                statements::large_items(limit).load(conn).await.map_err(query_error)?;
            Ok(rows.into_iter().map(LargeItem::from).collect())
        })
        .await
    }

    async fn author_inventory(&self, limit: i64) -> Result<Vec<AuthorInventory>, Error> {
        self.call(async |conn| {
            let limit = [limit];
            let rows: Vec<statements::InventoryRow> =
                statements::author_inventory(&limit).load(conn).await.map_err(query_error)?;
            Ok(rows.into_iter().map(AuthorInventory::from).collect())
        })
        .await
    }

    async fn checkout(&self, order: NewCheckout) -> Result<CheckoutResponse, Error> {
        self.call(async |conn| {
            let outcome = conn
                .transaction::<_, statements::Abort, _>(async |conn| {
                    let stock: Option<i32> =
                        statements::lock_stock(order.book_id).get_result(conn).await.optional()?;
                    if let Some(refusal) = order.refusal(stock) {
                        return Err(statements::Abort::Refused(refusal));
                    }
                    statements::take_stock(&order).execute(conn).await?;
                    let row: (uuid::Uuid, time::OffsetDateTime) =
                        statements::record(&order).get_result(conn).await?;
                    Ok(row)
                })
                .await;
            let (id, checked_out_at) = outcome.map_err(statements::Abort::into_error)?;
            Ok(order.recorded(id, checked_out_at))
        })
        .await
    }
}

/// bb8 reports failed connection attempts (it retries in the background to keep the pool
/// full); during an outage that is one per attempt, so below the default level.
#[derive(Debug, Clone, Copy)]
struct DebugLog;

impl bb8::ErrorSink<PoolError> for DebugLog {
    fn sink(&self, error: PoolError) {
        tracing::debug!(%error, "bb8 could not open a connection");
    }

    fn boxed_clone(&self) -> Box<dyn bb8::ErrorSink<PoolError>> {
        Box::new(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(diesel::QueryableByName)]
    struct Prepared {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement: String,
    }

    async fn store(url: &str) -> DieselAsyncStore {
        let settings = PoolSettings {
            database_url: url.to_owned(),
            max_connections: 1,
            acquire_timeout: Duration::from_secs(5),
        };
        DieselAsyncStore::open(&settings).await.unwrap()
    }

    #[tokio::test]
    async fn every_statement_is_prepared_once_and_kept_like_the_other_stores() {
        let db = bookstore_fixture::testing::seeded_database().await;
        // One pooled connection: every call below runs on it, so its prepared statements
        // are the ones these calls left.
        let store = store(db.url()).await;
        for _ in 0..3 {
            store.ping().await.unwrap();
            assert_eq!(store.book(7).await.unwrap().unwrap().id, 7);
            assert_eq!(store.author_inventory(5).await.unwrap().len(), 5);
        }
        let kept: Vec<String> = store
            .call(async |conn| {
                diesel::sql_query("SELECT statement FROM pg_prepared_statements")
                    .load::<Prepared>(conn)
                    .await
                    .map_err(query_error)
            })
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.statement)
            .collect();
        for (what, marker) in
            [("the aggregate", "GROUP BY"), ("the ping", "SELECT 1"), ("a DSL query", "\"books\"")]
        {
            let count = kept.iter().filter(|s| s.contains(marker)).count();
            assert_eq!(count, 1, "{what} prepared {count} times, kept: {kept:#?}");
        }
    }

    #[tokio::test]
    async fn a_checkout_takes_the_stock_and_a_refusal_leaves_it() {
        let db = bookstore_fixture::testing::seeded_database().await;
        let store = store(db.url()).await;
        let order = |book_id, quantity| NewCheckout {
            book_id,
            customer_name: "Benchmark User".into(),
            customer_email: "bench@example.com".into(),
            quantity,
        };
        let done = store.checkout(order(3, 2)).await.unwrap();
        assert_eq!((done.book_id, done.quantity), (3, 2));
        // Book 2 holds 10 (the seed's sold-out book).
        match store.checkout(order(2, 11)).await {
            Err(Error::OutOfStock { available: 10, .. }) => {}
            other => panic!("expected out of stock with 10 left, got {other:?}"),
        }
        assert!(matches!(store.checkout(order(999_999, 1)).await, Err(Error::BookNotFound(_))));
        assert_eq!(store.checkout(order(2, 10)).await.unwrap().quantity, 10);
    }
}
