//! MariaDB, the JVM batch study's other database (it ran MySQL): a throwaway server
//! ([`MariaDbServer`]: temp dir, free port, not durable like the PostgreSQL clusters), InnoDB
//! tables in four-byte UTF-8. No arrays and no COPY a library can stream: one statement for
//! all rows is a bound JSON document expanded by `JSON_TABLE`.

use std::collections::BTreeMap;
use std::sync::Arc;

use bookstore_fixture::mariadb::MariaDbServer;
use diesel::r2d2::ConnectionManager;
use sqlx::Connection;

use crate::dimensions::Database;
use crate::measure;
use crate::results::DatabaseInfo;

type SqlxDb = sqlx::MySql;
type SqlxConnection = sqlx::MySqlConnection;
type DieselConnection = diesel::MysqlConnection;

const DATABASE: Database = Database::Mariadb;
/// The run's database.
const NAME: &str = "dbbench";
/// The tables of `sql/dbbench.sql` that the bulk strategies and the batch job use.
const SCHEMA: [&str; 3] = [
    "CREATE TABLE items (
        id          BIGINT PRIMARY KEY,
        sku         TEXT   NOT NULL,
        name        TEXT   NOT NULL,
        price_cents INT    NOT NULL,
        quantity    INT    NOT NULL
    ) ENGINE = InnoDB",
    "CREATE TABLE batch_source (
        id           BIGINT PRIMARY KEY,
        payload      TEXT   NOT NULL,
        amount_cents BIGINT NOT NULL
    ) ENGINE = InnoDB",
    "CREATE TABLE batch_results (
        source_id             BIGINT PRIMARY KEY,
        label                 TEXT   NOT NULL,
        amount_with_tax_cents BIGINT NOT NULL
    ) ENGINE = InnoDB",
];
const INSERT_JSON_ROWS: &str = "INSERT INTO items (id, sku, name, price_cents, quantity)
     SELECT id, sku, name, price_cents, quantity FROM JSON_TABLE(?, '$[*]' COLUMNS (
         id          BIGINT                    PATH '$[0]',
         sku         TEXT CHARACTER SET utf8mb4 PATH '$[1]',
         name        TEXT CHARACTER SET utf8mb4 PATH '$[2]',
         price_cents INT                       PATH '$[3]',
         quantity    INT                       PATH '$[4]')) AS sent";
const CLEAR_ITEMS: &str = "TRUNCATE items";
const CLEAR_BATCH: &[&str] = &["TRUNCATE batch_source", "TRUNCATE batch_results"];
const BEGIN_WRITE: &str = "BEGIN";

fn diesel_write_transaction<T>(
    conn: &mut DieselConnection,
    work: impl FnOnce(&mut DieselConnection) -> diesel::QueryResult<T>,
) -> diesel::QueryResult<T> {
    diesel::Connection::transaction(conn, work)
}

super::shared::sql_target!(Mariadb);
super::shared::json_rows_target!();

/// The run's MariaDB database, on a throwaway server stopped (and deleted) with it.
pub struct Mariadb {
    runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    server: MariaDbServer,
}

impl Mariadb {
    /// Starts a server and creates the database and its tables.
    pub fn start(runtime: Arc<tokio::runtime::Runtime>) -> anyhow::Result<Self> {
        Self::start_with(runtime, &[])
    }

    /// [`Mariadb::start`], the server with further settings ([`MariaDbServer::start_with`]).
    pub fn start_with(
        runtime: Arc<tokio::runtime::Runtime>,
        settings: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let server = runtime.block_on(MariaDbServer::start_with(settings))?;
        let url = server.url(NAME);
        runtime.block_on(async {
            let mut conn = SqlxConnection::connect(&server.url("")).await?;
            let create = "CREATE DATABASE dbbench CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
            sqlx::Executor::execute(&mut conn, create).await?;
            conn.close().await?;
            let mut conn = SqlxConnection::connect(&url).await?;
            for statement in SCHEMA {
                sqlx::Executor::execute(&mut conn, statement).await?;
            }
            conn.close().await?;
            anyhow::Ok(())
        })?;
        Ok(Self { runtime, url, server })
    }

    #[allow(missing_docs)] // named for what it returns
    pub fn server(&self) -> &MariaDbServer {
        &self.server
    }

    /// A new sqlx connection to the run's database.
    pub async fn sqlx_connect(&self) -> Result<SqlxConnection, sqlx::Error> {
        SqlxConnection::connect(&self.url).await
    }

    /// A new diesel connection to the run's database.
    pub fn diesel_connect(&self) -> diesel::ConnectionResult<DieselConnection> {
        <DieselConnection as diesel::Connection>::establish(&self.url)
    }

    fn open_pools(&self, size: u32) -> anyhow::Result<Pools> {
        let options = self.url.parse()?;
        let sqlx = self.runtime.block_on(measure::sqlx_pool_with::<SqlxDb>(options, size))?;
        let diesel = measure::diesel_pool_with(ConnectionManager::new(&self.url), size, None)
            .map_err(anyhow::Error::msg)?;
        Ok(Pools { runtime: Arc::clone(&self.runtime), sqlx, diesel })
    }

    fn info(&self) -> anyhow::Result<DatabaseInfo> {
        // As the server reports them: the options it was given, and what it chose itself.
        let (version, mut settings) = self.runtime.block_on(async {
            let mut conn = self.sqlx_connect().await?;
            let version: String =
                sqlx::query_scalar("SELECT VERSION()").fetch_one(&mut conn).await?;
            let settings: Vec<(String, String)> = sqlx::query_as(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit',
                 'innodb_doublewrite', 'innodb_buffer_pool_size', 'innodb_log_file_size',
                 'character_set_server', 'collation_server', 'max_connections',
                 'max_allowed_packet', 'bind_address', 'skip_grant_tables')",
            )
            .fetch_all(&mut conn)
            .await?;
            conn.close().await?;
            anyhow::Ok((version, settings.into_iter().collect::<BTreeMap<_, _>>()))
        })?;
        settings.insert("location".into(), "a throwaway server (temp dir, loopback)".into());
        Ok(DatabaseInfo { database: DATABASE, version: format!("MariaDB {version}"), settings })
    }
}
