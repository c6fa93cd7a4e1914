//! SQLite, the embedded analog of the JVM study's H2: a file in a temporary directory, in
//! WAL mode with `synchronous = OFF` (the analog of the PostgreSQL clusters' `fsync=off`).
//! In-process — no network, no server process, no protocol — so its figures do not
//! transfer to a networked database. One writer at a time: a transaction that will write
//! begins `IMMEDIATE` and waits for the lock (`busy_timeout`) instead of failing when it
//! would upgrade a read. sqlx runs each connection on a thread of its own and talks to it
//! over a channel; diesel calls SQLite directly.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};

use crate::dimensions::Database;
use crate::measure;
use crate::results::DatabaseInfo;

type SqlxDb = sqlx::Sqlite;
type SqlxConnection = sqlx::SqliteConnection;
type DieselConnection = diesel::SqliteConnection;

const DATABASE: Database = Database::Sqlite;
/// Prefix of the temporary directories the files are in; used to find leftovers.
const DIR_PREFIX: &str = "bookstore-sqlite-";
/// The tables of `sql/dbbench.sql` that the bulk strategies and the batch job use.
const SCHEMA: &str = "
    CREATE TABLE items (
        id          INTEGER PRIMARY KEY,
        sku         TEXT    NOT NULL,
        name        TEXT    NOT NULL,
        price_cents INTEGER NOT NULL,
        quantity    INTEGER NOT NULL
    );
    CREATE TABLE batch_source (
        id           INTEGER PRIMARY KEY,
        payload      TEXT    NOT NULL,
        amount_cents INTEGER NOT NULL
    );
    CREATE TABLE batch_results (
        source_id             INTEGER PRIMARY KEY,
        label                 TEXT    NOT NULL,
        amount_with_tax_cents INTEGER NOT NULL
    );";
const INSERT_JSON_ROWS: &str = "INSERT INTO items (id, sku, name, price_cents, quantity)
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)";
const CLEAR_ITEMS: &str = "DELETE FROM items";
const CLEAR_BATCH: &[&str] = &["DELETE FROM batch_source", "DELETE FROM batch_results"];
const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";
/// How long a writer waits for the lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Set on every connection of either library (`journal_mode` sticks to the file).
const CONNECTION_PRAGMAS: &str = "PRAGMA busy_timeout = 30000; PRAGMA synchronous = OFF;";

fn diesel_write_transaction<T>(
    conn: &mut DieselConnection,
    work: impl FnOnce(&mut DieselConnection) -> diesel::QueryResult<T>,
) -> diesel::QueryResult<T> {
    conn.immediate_transaction(work)
}

super::shared::sql_target!(Sqlite);
super::shared::json_rows_target!();

/// The pragmas of [`CONNECTION_PRAGMAS`] on every connection diesel's pool opens.
#[derive(Debug)]
struct Pragmas;

impl CustomizeConnection<DieselConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut DieselConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(CONNECTION_PRAGMAS).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// The run's SQLite database: a file with the tables, deleted with its directory.
pub struct Sqlite {
    runtime: Arc<tokio::runtime::Runtime>,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sqlite {
    /// Creates the file and its tables in a new temporary directory (and removes those a
    /// killed run left behind).
    pub fn create(runtime: Arc<tokio::runtime::Runtime>) -> anyhow::Result<Self> {
        let temp = std::env::temp_dir();
        bookstore_fixture::process::sweep_leftover_dirs(&temp, DIR_PREFIX, None);
        let dir = tempfile::Builder::new().prefix(DIR_PREFIX).tempdir()?;
        std::fs::write(dir.path().join("owner.pid"), std::process::id().to_string())?;
        let sqlite = Self { runtime, path: dir.path().join("dbbench.sqlite"), _dir: dir };
        sqlite.runtime.block_on(async {
            use sqlx::ConnectOptions as _;
            let mut conn = sqlite.sqlx_options().create_if_missing(true).connect().await?;
            sqlx::raw_sql(SCHEMA).execute(&mut conn).await?;
            conn.close().await?;
            anyhow::Ok(())
        })?;
        Ok(sqlite)
    }

    fn sqlx_options(&self) -> SqliteConnectOptions {
        SqliteConnectOptions::new()
            .filename(&self.path)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Off)
            .busy_timeout(BUSY_TIMEOUT)
    }

    /// A new sqlx connection to the file.
    pub async fn sqlx_connect(&self) -> Result<SqlxConnection, sqlx::Error> {
        use sqlx::ConnectOptions as _;
        self.sqlx_options().connect().await
    }

    fn url(&self) -> String {
        self.path.display().to_string()
    }

    /// A new diesel connection to the file, with the pragmas.
    pub fn diesel_connect(&self) -> anyhow::Result<DieselConnection> {
        let mut conn = <DieselConnection as diesel::Connection>::establish(&self.url())?;
        conn.batch_execute(CONNECTION_PRAGMAS)?;
        Ok(conn)
    }

    fn open_pools(&self, size: u32) -> anyhow::Result<Pools> {
        let sqlx =
            self.runtime.block_on(measure::sqlx_pool_with::<SqlxDb>(self.sqlx_options(), size))?;
        let manager = ConnectionManager::new(self.url());
        let diesel = measure::diesel_pool_with(manager, size, Some(Box::new(Pragmas)))
            .map_err(anyhow::Error::msg)?;
        Ok(Pools { runtime: Arc::clone(&self.runtime), sqlx, diesel })
    }

    fn info(&self) -> anyhow::Result<DatabaseInfo> {
        self.runtime.block_on(async {
            let mut conn = self.sqlx_connect().await?;
            let version: String =
                sqlx::query_scalar("SELECT sqlite_version()").fetch_one(&mut conn).await?;
            let mut settings = BTreeMap::new();
            for name in ["journal_mode", "synchronous", "busy_timeout", "page_size", "cache_size"] {
                let pragma = sqlx::AssertSqlSafe(format!("PRAGMA {name}"));
                let value: sqlx::sqlite::SqliteRow =
                    sqlx::query(pragma).fetch_one(&mut conn).await?;
                let value: String = match sqlx::Row::try_get::<i64, _>(&value, 0) {
                    Ok(number) => number.to_string(),
                    Err(_) => sqlx::Row::try_get(&value, 0)?,
                };
                settings.insert(name.to_owned(), value);
            }
            settings.insert("location".into(), "a file in a temporary directory".into());
            conn.close().await?;
            anyhow::Ok(DatabaseInfo {
                database: DATABASE,
                version: format!("SQLite {version} (bundled with libsqlite3-sys)"),
                settings,
            })
        })
    }
}
