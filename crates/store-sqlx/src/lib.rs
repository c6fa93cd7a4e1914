//! `bookstore-store-sqlx`: the contract's queries over sqlx's async `PgPool`.
//!
//! Every route borrows one pooled connection for its one statement (checkout: one
//! connection for the whole transaction). Statements are the texts of
//! [`bookstore_domain::sql`], prepared once per connection and cached by sqlx.
//!
//! Pool parity (SPEC §1): max connections, all opened by [`Store::open`] before it
//! returns; no liveness ping on acquire (`test_before_acquire(false)`), a broken connection
//! surfaces as a failed query and is replaced; no idle timeout or maximum lifetime, so the
//! pool does not churn during a measurement; an acquire that waits longer than the
//! configured timeout answers 503 `db_unavailable`.
//!
//! The pool is opened full by hand rather than with sqlx's `min_connections`, which would
//! keep it full by itself: sqlx refills a lost connection from a task that retries for up to
//! 300 s with a backoff doubling to 60 s, holding the slot and its permit all the while. After
//! a 3 s outage every slot is held by such a task asleep for seconds, and no request can
//! connect until one wakes, seconds after PostgreSQL is back. Without `min_connections` a
//! lost connection is replaced by the next request that needs one, whose retries stop at its
//! acquire timeout (backoff at most a fifth of it), so the pool is full again within moments
//! of PostgreSQL's return: the faults tier's outage test checks it, and `loadgen faults`
//! measures it (`recovery_ms` of the `postgres-restart` fault, in
//! `2713e02:summary/results/faults-2026-12-02T02-55-22Z.json`). While PostgreSQL is up, both keep
//! the same connections open.
//!
//! **A lost connection makes the idle ones suspect.** Without a ping on acquire, every
//! connection a restart killed fails the request that next draws it: one failure per pooled
//! connection, however slowly they come (31 of 32 at one request every 0.1 s took 3.8 s).
//! So when a query finds its connection gone (an I/O error, SQLSTATE class 08, or the
//! server's shutdown 57P01..57P03) the store notes the time, and a `before_acquire` hook
//! pings a connection only if it has been idle since then: the dead ones fail their ping
//! and are closed before any request sees them, a live one is pinged once and handed out,
//! and after a restart at most the requests already holding a connection fail. (HikariCP
//! evicts a pool's connections on such fatal SQLSTATEs in the same way.) Until a
//! connection is lost, the hook is an atomic load and the boxed future sqlx's hook
//! signature asks for, once per acquire; no round trip.

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
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};
use time::OffsetDateTime;
use uuid::Uuid;

/// Prepared statements cached per connection (sqlx's default, written down for the record).
pub const STATEMENT_CACHE_CAPACITY: usize = 100;
/// `application_name` of the pool's connections, to tell them apart in `pg_stat_activity`.
pub const APPLICATION_NAME: &str = "bookstore-sqlx";

/// The sqlx store: a cheaply cloneable handle on the pool.
#[derive(Debug, Clone)]
pub struct SqlxStore {
    pool: PgPool,
    lost: std::sync::Arc<LostConnections>,
}

/// Opens every one of the pool's `connections` and leaves them idle in it: all are checked
/// out at once, so each is a new connection, and handed back.
async fn fill(
    pool: &PgPool,
    connections: u32,
    timeout: std::time::Duration,
) -> Result<(), sqlx::Error> {
    let mut opened = Vec::with_capacity(connections as usize);
    for _ in 0..connections {
        opened.push(pool.acquire().await?);
    }
    drop(opened);
    // A connection goes back to the pool on a task of its own (after a ping): wait for all,
    // so that the server reports ready with a full pool. One that fails its ping is closed
    // and never comes back: then the database went away meanwhile.
    let deadline = tokio::time::Instant::now() + timeout;
    while pool.num_idle() < connections as usize {
        if tokio::time::Instant::now() > deadline {
            return Err(sqlx::Error::PoolTimedOut);
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    Ok(())
}

impl Store for SqlxStore {
    const ACCESS: &'static str = "sqlx";

    async fn open(settings: &PoolSettings) -> Result<Self, OpenError> {
        settings.check()?;
        let options: PgConnectOptions = settings
            .database_url
            .parse::<PgConnectOptions>()
            .map_err(|e| OpenError::InvalidUrl(e.to_string()))?
            .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
            .application_name(APPLICATION_NAME)
            .disable_statement_logging();
        let target = format!(
            "{}:{}/{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default()
        );
        let connections = settings.max_connections;
        let connect_error = |e: sqlx::Error| OpenError::connect(target.as_str(), connections, e);
        // One plain connection first: the pool retries until its deadline and then only
        // says "timed out", hiding "connection refused" or "database does not exist".
        let probe = options.connect().await.map_err(connect_error)?;
        probe.close().await.map_err(connect_error)?;
        let lost = std::sync::Arc::new(LostConnections::default());
        let hook = lost.clone();
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            .test_before_acquire(false)
            .before_acquire(move |conn, meta| {
                let suspect = hook.suspect(meta.idle_for);
                Box::pin(async move {
                    if suspect {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .acquire_timeout(settings.acquire_timeout)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(connect_error)?;
        fill(&pool, connections, settings.acquire_timeout).await.map_err(connect_error)?;
        Ok(Self { pool, lost })
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn ping(&self) -> Result<(), Error> {
        sqlx::query(sql::PING).execute(&self.pool).await.map_err(|e| self.failed(e))?;
        Ok(())
    }

    async fn book(&self, id: i64) -> Result<Option<BookDetail>, Error> {
        let row: Option<BookDetailRow> = sqlx::query_as(sql::BOOK_BY_ID)
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(row.map(BookDetail::from))
    }

    async fn books(&self, limit: i64) -> Result<Vec<BookSummary>, Error> {
        let rows: Vec<BookSummaryRow> = sqlx::query_as(sql::BOOK_LIST)
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(BookSummary::from).collect())
    }

    async fn search_books(&self, pattern: &str, limit: i64) -> Result<Vec<BookSummary>, Error> {
        let rows: Vec<BookSummaryRow> = sqlx::query_as(sql::BOOK_SEARCH)
            .bind(pattern)
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(BookSummary::from).collect())
    }

    async fn large_items(&self, limit: i64) -> Result<Vec<LargeItem>, Error> {
        let rows: Vec<LargeItemRow> = sqlx::query_as(sql::LARGE_ITEMS)
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(LargeItem::from).collect())
    }

    async fn author_inventory(&self, limit: i64) -> Result<Vec<AuthorInventory>, Error> {
        let rows: Vec<AuthorInventoryRow> = sqlx::query_as(sql::AUTHOR_INVENTORY)
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rows.into_iter().map(AuthorInventory::from).collect())
    }

    async fn checkout(&self, order: NewCheckout) -> Result<CheckoutResponse, Error> {
        let mut tx = self.pool.begin().await.map_err(|e| self.failed(e))?;
        let stock: Option<i32> = sqlx::query_scalar(sql::CHECKOUT_LOCK)
            .bind(order.book_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        if let Some(refusal) = order.refusal(stock) {
            tx.rollback().await.map_err(|e| self.failed(e))?;
            return Err(refusal);
        }
        sqlx::query(sql::CHECKOUT_UPDATE)
            .bind(order.book_id)
            .bind(order.quantity)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        let (id, checked_out_at): (Uuid, OffsetDateTime) = sqlx::query_as(sql::CHECKOUT_INSERT)
            .bind(order.book_id)
            .bind(&order.customer_name)
            .bind(&order.customer_email)
            .bind(order.quantity)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.failed(e))?;
        tx.commit().await.map_err(|e| self.failed(e))?;
        Ok(order.recorded(id, checked_out_at))
    }
}

impl SqlxStore {
    /// `error` as the contract's, a lost connection noted first.
    fn failed(&self, error: sqlx::Error) -> Error {
        if connection_lost(&error) {
            self.lost.note();
        }
        db_error(error)
    }
}

/// Whether `error` says the query's connection is gone: the server went away or is going.
fn connection_lost(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::WorkerCrashed => true,
        // Class 08: connection exception; 57P01..57P03: the server is shutting down or
        // starting up.
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03")
        }),
        _ => false,
    }
}

/// Failing to get or keep a connection is `db_unavailable`; anything else is `internal`.
fn db_error(error: sqlx::Error) -> Error {
    let unavailable = matches!(error, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed)
        || connection_lost(&error);
    if unavailable {
        Error::DbUnavailable(error.to_string())
    } else {
        Error::Internal(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losing_the_database_is_503_and_anything_else_is_500() {
        assert_eq!(db_error(sqlx::Error::PoolTimedOut).status(), 503);
        assert_eq!(db_error(sqlx::Error::PoolClosed).status(), 503);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(db_error(sqlx::Error::Io(reset)).status(), 503);
        assert_eq!(db_error(sqlx::Error::RowNotFound).status(), 500);
        assert_eq!(db_error(sqlx::Error::Protocol("unexpected message".into())).status(), 500);
    }

    #[test]
    fn a_lost_connection_is_one_the_server_went_away_from() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(connection_lost(&sqlx::Error::Io(reset)));
        assert!(!connection_lost(&sqlx::Error::PoolTimedOut), "a full pool loses nothing");
    }
}
