//! The database interface every stack's store implements (sqlx async, diesel blocking).
//!
//! One method per route, one pooled connection per call (checked out once, not once per
//! statement), every statement exactly as SPEC §3 describes. The request handlers are
//! written once against this trait, so the only thing that differs between a sqlx stack and
//! a diesel stack is the implementation behind it.

use std::future::Future;
use std::time::Duration;

use crate::checkout::NewCheckout;
use crate::error::Error;
use crate::model::{AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem};

/// Pool settings shared by every store, recorded in results so parity can be checked.
///
/// Parity rules of SPEC §1: min = max = `max_connections`, every connection opened before
/// the store is returned, no liveness check on checkout, prepared-statement caching on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// `postgres://user:password@host:port/database`.
    pub database_url: String,
    /// Connections opened at start and kept open (min = max).
    pub max_connections: u32,
    /// How long a request waits for a free connection before answering 503.
    pub acquire_timeout: Duration,
}

/// The queries of SPEC §3 over a connection pool.
///
/// Implementations map their driver's errors into [`Error`]: failing to get or keep a
/// connection is [`Error::DbUnavailable`], anything else [`Error::Internal`].
pub trait Store: Clone + std::fmt::Debug + Send + Sync + Sized + 'static {
    /// The database access tag of small-json (`"sqlx"`, `"diesel"`).
    const ACCESS: &'static str;

    /// Opens the pool with every connection established.
    fn open(settings: &PoolSettings) -> impl Future<Output = Result<Self, OpenError>> + Send;

    /// Closes every connection; called once when the server stops.
    fn close(&self) -> impl Future<Output = ()> + Send;

    /// `SELECT 1`.
    fn ping(&self) -> impl Future<Output = Result<(), Error>> + Send;

    /// One book with its author, `None` if the id does not exist.
    fn book(&self, id: i64) -> impl Future<Output = Result<Option<BookDetail>, Error>> + Send;

    /// The first `limit` books by id.
    fn books(&self, limit: i64) -> impl Future<Output = Result<Vec<BookSummary>, Error>> + Send;

    /// Books whose title or author name matches `pattern` (`ILIKE … ESCAPE '\'`), by id.
    fn search_books(
        &self,
        pattern: &str,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<BookSummary>, Error>> + Send;

    /// The first `limit` books by id with description, for large-json.
    fn large_items(&self, limit: i64)
    -> impl Future<Output = Result<Vec<LargeItem>, Error>> + Send;

    /// Authors joined to books, grouped, ordered by book count desc then author id, in one
    /// statement.
    fn author_inventory(
        &self,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<AuthorInventory>, Error>> + Send;

    /// The checkout transaction: `SELECT stock … FOR UPDATE` → `UPDATE` → `INSERT … RETURNING`
    /// → `COMMIT`. Unknown book is [`Error::BookNotFound`], too little stock
    /// [`Error::OutOfStock`]; both roll back.
    fn checkout(
        &self,
        order: NewCheckout,
    ) -> impl Future<Output = Result<CheckoutResponse, Error>> + Send;
}

impl OpenError {
    /// A connection failure, its reason folded onto one line (libpq writes several).
    pub fn connect(
        target: impl Into<String>,
        connections: u32,
        reason: impl std::fmt::Display,
    ) -> Self {
        let reason = reason.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        OpenError::Connect { target: target.into(), connections, reason }
    }
}

impl PoolSettings {
    /// Checks what can be checked without connecting: a `postgres://` or `postgresql://`
    /// URL (drivers accept other schemes silently and then fail far from the cause).
    pub fn check(&self) -> Result<(), OpenError> {
        let url = self.database_url.trim();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(OpenError::InvalidUrl(
                "must start with postgres:// or postgresql://".into(),
            ));
        }
        Ok(())
    }
}

/// Why a store could not be opened; the message names the setting to fix.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The database URL does not parse.
    #[error("invalid --database-url/DATABASE_URL: {0}")]
    InvalidUrl(String),
    /// The database could not be reached or refused the connection.
    #[error(
        "cannot open {connections} connection(s) to the database at {target} (--database-url/DATABASE_URL): {reason}"
    )]
    Connect {
        /// `host:port/database`, without credentials.
        target: String,
        /// Connections the pool was asked to open.
        connections: u32,
        /// The driver's reason.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> PoolSettings {
        PoolSettings {
            database_url: url.into(),
            max_connections: 1,
            acquire_timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn connect_errors_are_one_line() {
        let error = OpenError::connect("h:1/db", 2, "refused\n\tIs the server running?");
        assert_eq!(
            error.to_string(),
            "cannot open 2 connection(s) to the database at h:1/db (--database-url/DATABASE_URL): refused Is the server running?"
        );
    }

    #[test]
    fn only_postgres_urls_pass_the_check() {
        assert!(settings("postgres://u@h/db").check().is_ok());
        assert!(settings("postgresql://u@h:5/db").check().is_ok());
        for bad in ["mysql://u@h/db", "", "h:5432/db"] {
            let message = settings(bad).check().unwrap_err().to_string();
            assert!(message.starts_with("invalid --database-url/DATABASE_URL"), "{message}");
        }
    }
}
