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

/// When a store last found one of its pooled connections gone (the server went away or is
/// going: an I/O error, SQLSTATE class 08, 57P01..57P03), so that the connections idle since
/// then can be checked before they are handed out: after a restart every one of them is
/// dead, and without a check each would fail the request that next draws it. Until a
/// connection is lost, [`LostConnections::suspect`] is one atomic load and no round trip.
#[derive(Debug)]
pub struct LostConnections {
    origin: std::time::Instant,
    /// Nanoseconds after `origin` of the last loss, plus one; 0: none yet.
    at_nanos: std::sync::atomic::AtomicU64,
}

impl Default for LostConnections {
    fn default() -> Self {
        Self { origin: std::time::Instant::now(), at_nanos: std::sync::atomic::AtomicU64::new(0) }
    }
}

impl LostConnections {
    /// A connection was found gone, now.
    pub fn note(&self) {
        let nanos = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.at_nanos.store(nanos.saturating_add(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a connection idle for `idle_for` was already idle at the last loss: it may be
    /// dead too, and is worth a ping before use.
    pub fn suspect(&self, idle_for: Duration) -> bool {
        match self.at_nanos.load(std::sync::atomic::Ordering::Relaxed) {
            0 => false,
            at => idle_for >= self.origin.elapsed().saturating_sub(Duration::from_nanos(at - 1)),
        }
    }
}

/// Pool settings shared by every store, recorded in results so parity can be checked.
///
/// Parity rules of SPEC §1: min = max = `max_connections`, every connection opened before
/// the store is returned and kept, a lost one replaced, no liveness check on checkout,
/// prepared-statement caching on.
#[derive(Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// `postgres://user:password@host:port/database`.
    pub database_url: String,
    /// Connections opened at start and kept open (min = max).
    pub max_connections: u32,
    /// How long a request waits for a free connection before answering 503.
    pub acquire_timeout: Duration,
}

/// Debug output may end up in a log: the password is not shown.
impl std::fmt::Debug for PoolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolSettings")
            .field("database_url", &redact_credentials(&self.database_url))
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .finish()
    }
}

/// `text` with the password of every URL in it (`scheme://user:password@host…`) replaced
/// by `***`, for anything that is logged, recorded in results or shown in a report.
pub fn redact_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    let mut redacted = String::new();
    let mut rest = text;
    let mut copied = 0; // bytes of `text` already in `redacted`
    while let Some(scheme_end) = rest.find("://") {
        let authority_start = scheme_end + 3;
        let authority = &rest[authority_start..];
        let authority_len = authority
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(authority.len());
        let authority = &authority[..authority_len];
        let offset = text.len() - rest.len();
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
        {
            let password_start = offset + authority_start + colon + 1;
            let password_end = offset + authority_start + at;
            redacted.push_str(&text[copied..password_start]);
            redacted.push_str("***");
            copied = password_end;
        }
        rest = &rest[authority_start + authority_len..];
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    redacted.push_str(&text[copied..]);
    std::borrow::Cow::Owned(redacted)
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
    #[test]
    fn passwords_in_urls_are_redacted_and_nothing_else_changes() {
        use super::redact_credentials as redact;
        assert_eq!(
            redact("--database-url=postgres://bench:s3cret@db:5432/books"),
            "--database-url=postgres://bench:***@db:5432/books"
        );
        assert_eq!(
            redact("a postgres://u:p@h/x and postgresql://v:q:r@h2?sslmode=require"),
            "a postgres://u:***@h/x and postgresql://v:***@h2?sslmode=require"
        );
        // A password containing '@' ends at the last '@' of the authority.
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        for unchanged in ["postgres://bench@db/books", "postgres://db:5432/x", "plain", ""] {
            assert!(matches!(redact(unchanged), std::borrow::Cow::Borrowed(_)), "{unchanged}");
        }
        let settings = super::PoolSettings {
            database_url: "postgres://bench:s3cret@db/books".into(),
            max_connections: 4,
            acquire_timeout: std::time::Duration::from_secs(2),
        };
        assert!(!format!("{settings:?}").contains("s3cret"));
    }

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
