//! `bookstore-store-tokio-postgres`: the contract's queries on tokio-postgres directly — the
//! driver diesel-async runs on, without a query builder — as the fastest Rust entries of
//! the benchmarks' database tests write them: each connection prepares every statement once
//! when it opens, and a request runs the prepared statement with its parameters.
//!
//! So against `bookstore-store-diesel-async` it changes only the query builder (the same
//! driver underneath), and against `bookstore-store-sqlx` only the driver (neither builds
//! its queries): the fourth level of the access axis, and the limit of the others.
//!
//! The statements are the texts of [`bookstore_domain::sql`], one per route and the five of
//! a checkout, as every store runs them (the counted statements per request match). One
//! request's statements are never sent together with another request's (SPEC §1, "Realism"):
//! a request checks out its own connection. Within a checkout, the stock's update and the
//! checkout's insert are independent of each other and pipelined on the request's
//! connection — one round trip fewer than sent one by one; every other route runs one
//! statement, and the checkout's lock decides what follows it, so nothing else can be.
//!
//! Pool parity (SPEC §1), as diesel-async's: bb8 with `min_idle = max_size`, built only once
//! every connection is open; no idle timeout or maximum lifetime; an acquire that waits
//! longer than the acquire timeout answers 503 `db_unavailable`; no ping per checkout except
//! of a connection idle since a query last found its connection gone ([`LostConnections`]);
//! a connection whose client closed is discarded as it goes back, and replaced by a task
//! that retries every `RECONNECT_INTERVAL` within the acquire timeout. Plain TCP (`NoTls`),
//! as the other stores talk to loopback.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::rows::{
    AuthorInventoryRow, BookDetailRow, BookSummaryRow, LargeItemRow,
};
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
};
use bookstore_domain::sql;
use bookstore_domain::store::{LostConnections, OpenError, PoolSettings, Store};
use tokio_postgres::{Client, NoTls, Row, Statement};

/// `application_name` of the pool's connections, to tell them apart in `pg_stat_activity`.
pub const APPLICATION_NAME: &str = "bookstore-tokio-postgres";

/// How often a connection that could not be opened is tried again, within the acquire
/// timeout (as diesel-async's manager).
const RECONNECT_INTERVAL: Duration = Duration::from_millis(50);

/// Every statement, prepared on the connection it belongs to.
struct Statements {
    ping: Statement,
    book: Statement,
    books: Statement,
    search: Statement,
    large_items: Statement,
    inventory: Statement,
    lock: Statement,
    update: Statement,
    insert: Statement,
}

/// A pooled connection: its client, its statements, and when it last went back.
struct Conn {
    client: Client,
    statements: Statements,
    idle_since: Instant,
}

/// Opens a connection and prepares every statement on it (the preparations pipelined: a
/// `Parse` is not an execution, and pg_stat_statements counts none of them).
async fn connect(config: &tokio_postgres::Config) -> Result<Conn, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "a tokio-postgres connection ended");
        }
    });
    let (ping, book, books, search, large_items, inventory, lock, update, insert) = tokio::try_join!(
        client.prepare(sql::PING),
        client.prepare(sql::BOOK_BY_ID),
        client.prepare(sql::BOOK_LIST),
        client.prepare(sql::BOOK_SEARCH),
        client.prepare(sql::LARGE_ITEMS),
        client.prepare(sql::AUTHOR_INVENTORY),
        client.prepare(sql::CHECKOUT_LOCK),
        client.prepare(sql::CHECKOUT_UPDATE),
        client.prepare(sql::CHECKOUT_INSERT),
    )?;
    let statements =
        Statements { ping, book, books, search, large_items, inventory, lock, update, insert };
    Ok(Conn { client, statements, idle_since: Instant::now() })
}

/// bb8's manager of tokio-postgres connections, its checkout check a ping only of
/// connections idle since a loss.
struct Manager {
    config: tokio_postgres::Config,
    lost: Arc<LostConnections>,
    /// How long a connection is tried for: the acquire timeout.
    retry_for: Duration,
}

impl bb8::ManageConnection for Manager {
    type Connection = Conn;
    type Error = tokio_postgres::Error;

    async fn connect(&self) -> Result<Conn, tokio_postgres::Error> {
        let deadline = Instant::now() + self.retry_for;
        loop {
            match connect(&self.config).await {
                Ok(conn) => return Ok(conn),
                Err(error) if Instant::now() + RECONNECT_INTERVAL < deadline => {
                    tracing::debug!(%error, "tokio-postgres could not open a connection; trying again");
                    tokio::time::sleep(RECONNECT_INTERVAL).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    async fn is_valid(&self, conn: &mut Conn) -> Result<(), tokio_postgres::Error> {
        if self.lost.suspect(conn.idle_since.elapsed()) {
            conn.client.execute(&conn.statements.ping, &[]).await?;
        }
        Ok(())
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        // Called as the connection goes back to the pool.
        conn.idle_since = Instant::now();
        conn.client.is_closed()
    }
}

/// The tokio-postgres store: a cheaply cloneable handle on the bb8 pool.
#[derive(Clone)]
pub struct TokioPostgresStore {
    pool: bb8::Pool<Manager>,
    lost: Arc<LostConnections>,
}

impl std::fmt::Debug for TokioPostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.pool.state();
        f.debug_struct("TokioPostgresStore")
            .field("connections", &state.connections)
            .field("idle", &state.idle_connections)
            .finish()
    }
}

/// Whether `error` says the query's connection is gone: the client closed, an I/O error, or
/// SQLSTATE class 08 or 57P01..57P03 (the server is shutting down or starting up).
fn connection_lost(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        let code = code.code();
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

impl TokioPostgresStore {
    /// Checks out a connection (waiting up to the acquire timeout) and runs `work` on it; a
    /// lost connection is noted, and answers 503 as a pool that timed out does.
    async fn call<T>(
        &self,
        work: impl AsyncFnOnce(&mut Conn) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, Error> {
        let mut conn = self.pool.get().await.map_err(|e| match e {
            bb8::RunError::TimedOut => {
                Error::DbUnavailable("timed out waiting for a connection".into())
            }
            bb8::RunError::User(e) => Error::DbUnavailable(e.to_string()),
        })?;
        work(&mut conn).await.map_err(|error| {
            if connection_lost(&error) {
                self.lost.note();
                Error::DbUnavailable(error.to_string())
            } else {
                Error::Internal(error.to_string())
            }
        })
    }
}

/// A row's columns as one of the domain's row tuples.
macro_rules! row {
    ($row:expr, $($index:literal),+) => {
        ($($row.try_get($index)?),+)
    };
}

/// `GET /api/books/{id}`'s row (of [`sql::BOOK_BY_ID`]) as the domain's tuple; public for
/// the layout study's peer (`studies/peer-tfb`), which maps its rows the same way.
pub fn book_detail(row: &Row) -> Result<BookDetailRow, tokio_postgres::Error> {
    Ok(row!(row, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
}

fn book_summary(row: &Row) -> Result<BookSummaryRow, tokio_postgres::Error> {
    Ok(row!(row, 0, 1, 2, 3, 4, 5))
}

fn large_item(row: &Row) -> Result<LargeItemRow, tokio_postgres::Error> {
    Ok(row!(row, 0, 1, 2, 3, 4, 5, 6))
}

fn inventory(row: &Row) -> Result<AuthorInventoryRow, tokio_postgres::Error> {
    Ok(row!(row, 0, 1, 2, 3, 4))
}

/// Each of `rows` as `T`.
fn each<T, R>(
    rows: Vec<Row>,
    read: fn(&Row) -> Result<R, tokio_postgres::Error>,
) -> Result<Vec<T>, tokio_postgres::Error>
where
    T: From<R>,
{
    rows.iter().map(|row| read(row).map(T::from)).collect()
}

/// The outcome of a checkout's transaction: recorded, or refused (and rolled back).
enum Checkout {
    Recorded(uuid::Uuid, time::OffsetDateTime),
    Refused(Error),
}

impl Store for TokioPostgresStore {
    const ACCESS: &'static str = "tokio-postgres";

    async fn open(settings: &PoolSettings) -> Result<Self, OpenError> {
        settings.check()?;
        let connections = settings.max_connections;
        let mut config = tokio_postgres::Config::from_str(&settings.database_url)
            .map_err(|e| OpenError::connect("the database URL", connections, e.to_string()))?;
        config.application_name(APPLICATION_NAME);
        let target = describe(&config);
        let connect_error =
            |reason: String| OpenError::connect(target.as_str(), connections, reason);
        // One plain connection first: bb8 retries until its timeout and then only says
        // "timed out", hiding "connection refused" or "database does not exist".
        connect(&config).await.map_err(|e| connect_error(e.to_string()))?;
        let lost = Arc::new(LostConnections::default());
        let manager = Manager { config, lost: lost.clone(), retry_for: settings.acquire_timeout };
        let pool = bb8::Pool::builder()
            .max_size(connections)
            .min_idle(Some(connections))
            // `Manager::is_valid`: a ping only after a lost connection, else a clock read.
            .test_on_check_out(true)
            .connection_timeout(settings.acquire_timeout.max(Duration::from_millis(1)))
            // A replacement retries at RECONNECT_INTERVAL (`Manager::connect`).
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
        self.call(async |c| c.client.execute(&c.statements.ping, &[]).await.map(drop)).await
    }

    async fn book(&self, id: i64) -> Result<Option<BookDetail>, Error> {
        self.call(async |c| {
            let row = c.client.query_opt(&c.statements.book, &[&id]).await?;
            row.as_ref().map(book_detail).transpose().map(|r| r.map(BookDetail::from))
        })
        .await
    }

    async fn books(&self, limit: i64) -> Result<Vec<BookSummary>, Error> {
        self.call(async |c| {
            each(c.client.query(&c.statements.books, &[&limit]).await?, book_summary)
        })
        .await
    }

    async fn search_books(&self, pattern: &str, limit: i64) -> Result<Vec<BookSummary>, Error> {
        self.call(async |c| {
            each(c.client.query(&c.statements.search, &[&pattern, &limit]).await?, book_summary)
        })
        .await
    }

    async fn large_items(&self, limit: i64) -> Result<Vec<LargeItem>, Error> {
        self.call(async |c| {
            each(c.client.query(&c.statements.large_items, &[&limit]).await?, large_item)
        })
        .await
    }

    async fn author_inventory(&self, limit: i64) -> Result<Vec<AuthorInventory>, Error> {
        self.call(async |c| {
            each(c.client.query(&c.statements.inventory, &[&limit]).await?, inventory)
        })
        .await
    }

    async fn checkout(&self, order: NewCheckout) -> Result<CheckoutResponse, Error> {
        let outcome = self
            .call(async |c| {
                let Conn { client, statements, .. } = c;
                // A transaction that is dropped before its end (the request cancelled) sends
                // its ROLLBACK as it goes: no open transaction goes back to the pool.
                let tx = client.transaction().await?;
                let stock: Option<i32> =
                    match tx.query_opt(&statements.lock, &[&order.book_id]).await? {
                        Some(row) => Some(row.try_get(0)?),
                        None => None,
                    };
                if let Some(refusal) = order.refusal(stock) {
                    tx.rollback().await?;
                    return Ok(Checkout::Refused(refusal));
                }
                // The stock's update and the checkout's row do not depend on each other: sent
                // together on this request's connection (pipelined), one round trip fewer.
                let update: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
                    [&order.book_id, &order.quantity];
                let insert: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                    [&order.book_id, &order.customer_name, &order.customer_email, &order.quantity];
                let (_, row) = tokio::try_join!(
                    tx.execute(&statements.update, &update),
                    tx.query_one(&statements.insert, &insert),
                )?;
                let recorded = Checkout::Recorded(row.try_get(0)?, row.try_get(1)?);
                tx.commit().await?;
                Ok(recorded)
            })
            .await?;
        match outcome {
            Checkout::Recorded(id, checked_out_at) => Ok(order.recorded(id, checked_out_at)),
            Checkout::Refused(refusal) => Err(refusal),
        }
    }
}

/// `host:port/database` of a connection's configuration, without credentials: what an open
/// error names.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

/// bb8 reports failed connection attempts (it retries in the background to keep the pool
/// full); during an outage that is one per attempt, so below the default level.
#[derive(Debug, Clone, Copy)]
struct DebugLog;

impl bb8::ErrorSink<tokio_postgres::Error> for DebugLog {
    fn sink(&self, error: tokio_postgres::Error) {
        tracing::debug!(%error, "bb8 could not open a connection");
    }

    fn boxed_clone(&self) -> Box<dyn bb8::ErrorSink<tokio_postgres::Error>> {
        Box::new(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store(url: &str) -> TokioPostgresStore {
        let settings = PoolSettings {
            database_url: url.to_owned(),
            max_connections: 1,
            acquire_timeout: Duration::from_secs(5),
        };
        TokioPostgresStore::open(&settings).await.unwrap()
    }

    #[tokio::test]
    async fn every_statement_is_prepared_once_per_connection_when_it_opens() {
        let db = bookstore_fixture::testing::seeded_database().await;
        // One pooled connection: every call below runs on it.
        let store = store(db.url()).await;
        for _ in 0..3 {
            store.ping().await.unwrap();
            assert_eq!(store.book(7).await.unwrap().unwrap().id, 7);
            assert_eq!(store.author_inventory(5).await.unwrap().len(), 5);
        }
        let kept: Vec<String> = store
            .call(async |c| {
                let rows =
                    c.client.query("SELECT statement FROM pg_prepared_statements", &[]).await?;
                rows.iter().map(|r| r.try_get(0)).collect()
            })
            .await
            .unwrap();
        // The nine of `Statements`, each once (the query above is not prepared: a one-off).
        for text in [sql::PING, sql::BOOK_BY_ID, sql::AUTHOR_INVENTORY, sql::CHECKOUT_INSERT] {
            let count = kept.iter().filter(|s| s.as_str() == text).count();
            assert_eq!(count, 1, "{text:?} prepared {count} times, kept: {kept:#?}");
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
        assert_eq!(store.book(3).await.unwrap().unwrap().stock, 5 + 2 - 2);
    }
}
