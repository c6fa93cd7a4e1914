//! `bookstore-diesel-sql`: the contract's statements (SPEC §3) in diesel's DSL, built once
//! and run by both diesel stores — `bookstore-store-diesel` on a blocking connection from an
//! r2d2 pool, `bookstore-store-diesel-async` on diesel-async's connection from a bb8 pool —
//! so that the two differ in the access style and in nothing the database sees.
//!
//! The builders build the same SQL as `bookstore_domain::sql` (joins, order, limits as
//! bound parameters; the aggregate, which the DSL cannot group this way, as that very text
//! through [`CachedSql`] — not `sql_query`, which diesel never caches). The stores'
//! `get_result` rather than `first`: no `LIMIT 1` the sqlx store does not send.

pub mod cached;
pub mod schema;
pub mod statements;

pub use cached::CachedSql;

use bookstore_domain::Error;

/// Losing the connection is `db_unavailable`; anything else is `internal`. Both diesel
/// connections report a lost one so: libpq's closed connection and diesel-async's
/// tokio-postgres error without a SQLSTATE (`UnableToSendCommand`), and the server's
/// shutdown (57P01…57P03) by its message.
pub fn query_error(error: diesel::result::Error) -> Error {
    use diesel::result::{DatabaseErrorKind, Error as Diesel};
    match &error {
        Diesel::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => Error::DbUnavailable(error.to_string()),
        // The server is shutting down (57P01…57P03): the connection is about to go.
        Diesel::DatabaseError(_, info)
            if info.message().starts_with("terminating connection")
                || info.message().contains("the database system is") =>
        {
            Error::DbUnavailable(error.to_string())
        }
        _ => Error::Internal(error.to_string()),
    }
}

/// `host:port/database` of a database URL, without credentials: what an open error names.
pub fn describe(database_url: &str) -> String {
    match url::Url::parse(database_url) {
        Ok(url) => format!(
            "{}:{}{}",
            url.host_str().unwrap_or("localhost"),
            url.port().unwrap_or(5432),
            url.path()
        ),
        Err(_) => "an unparsable URL".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_described_without_credentials() {
        assert_eq!(
            describe("postgres://bench:secret@db.example:6543/books"),
            "db.example:6543/books"
        );
        assert_eq!(describe("postgres://localhost/books"), "localhost:5432/books");
    }

    #[test]
    fn a_lost_connection_is_503_and_other_failures_500() {
        use diesel::result::{DatabaseErrorKind, Error as Diesel};
        for lost in [DatabaseErrorKind::ClosedConnection, DatabaseErrorKind::UnableToSendCommand] {
            let error = Diesel::DatabaseError(lost, Box::new("server closed".to_owned()));
            assert_eq!(query_error(error).status(), 503);
        }
        let shutdown = Diesel::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("terminating connection due to administrator command".to_owned()),
        );
        assert_eq!(query_error(shutdown).status(), 503);
        assert_eq!(query_error(Diesel::NotFound).status(), 500);
        let unique =
            Diesel::DatabaseError(DatabaseErrorKind::UniqueViolation, Box::new("dup".to_owned()));
        assert_eq!(query_error(unique).status(), 500);
    }
}
