//! Opening the database a run asks for. Not in `targets/shared.rs`: the database modules
//! build on that one (the `Target` trait, the shared code), so it must not use them.

use std::sync::Arc;

use super::postgres::Postgres;
use super::shared::Target;
use crate::dimensions::Database;

/// `database` opened for a run whose PostgreSQL database is at `postgres_url`, or why it is
/// skipped (its feature not built, its server not installed, it failed to start).
pub fn open(
    database: Database,
    runtime: &Arc<tokio::runtime::Runtime>,
    postgres_url: &str,
) -> Result<Box<dyn Target>, String> {
    match database {
        Database::Postgres => {
            Ok(Box::new(Postgres::new(Arc::clone(runtime), postgres_url.to_owned())))
        }
        #[cfg(feature = "mariadb")]
        Database::Mariadb => super::mariadb::Mariadb::start(Arc::clone(runtime))
            .map(|target| Box::new(target) as Box<dyn Target>)
            .map_err(|e| format!("MariaDB: {e:#}")),
        #[cfg(not(feature = "mariadb"))]
        Database::Mariadb => Err(
            "MariaDB: not built in (cargo feature `bookstore-dbbench/mariadb`, which needs libmariadb-dev; scripts/dbbench.sh turns it on when MariaDB is installed)".into(),
        ),
        #[cfg(feature = "sqlite")]
        Database::Sqlite => super::sqlite::Sqlite::create(Arc::clone(runtime))
            .map(|target| Box::new(target) as Box<dyn Target>)
            .map_err(|e| format!("SQLite: {e:#}")),
        #[cfg(not(feature = "sqlite"))]
        Database::Sqlite => Err(
            "SQLite: not built in (cargo feature `bookstore-dbbench/sqlite`; scripts/dbbench.sh turns it on)".into(),
        ),
    }
}
