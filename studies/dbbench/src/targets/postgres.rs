//! PostgreSQL: what the other databases have, plus `UNNEST` of arrays and `COPY FROM STDIN`
//! in text and binary format.

use std::sync::Arc;

use diesel::RunQueryDsl;
use diesel::prelude::ExecuteCopyFromDsl;
use sqlx::Connection;

use bookstore_diesel_sql::CachedSql;

use crate::batch::SourceByName;
use crate::bulk::{copy_pieces, copy_text_row};
pub use crate::crud::Pools;
use crate::data::Item;
use crate::dimensions::{Database, Strategy};
use crate::results::DatabaseInfo;
use crate::schema::items;

type SqlxDb = sqlx::Postgres;
type SqlxConnection = sqlx::PgConnection;
type DieselConnection = diesel::PgConnection;

const DATABASE: Database = Database::Postgres;
const INSERT_ONE: &str =
    "INSERT INTO items (id, sku, name, price_cents, quantity) VALUES ($1, $2, $3, $4, $5)";
const READ_PARTITION: &str =
    "SELECT id, payload, amount_cents FROM batch_source WHERE id % $1 = $2 ORDER BY id";
const CLEAR_BATCH: &[&str] = &["TRUNCATE batch_source, batch_results"];
const BEGIN_WRITE: &str = "BEGIN";
const CLEAR_ITEMS: &str = "TRUNCATE items";
const INSERT_UNNEST: &str = "INSERT INTO items (id, sku, name, price_cents, quantity)
     SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[])";
const COPY_TEXT: &str = "COPY items (id, sku, name, price_cents, quantity) FROM STDIN";
const COPY_BINARY: &str =
    "COPY items (id, sku, name, price_cents, quantity) FROM STDIN (FORMAT binary)";

fn diesel_read_partition(
    conn: &mut DieselConnection,
    parts: i64,
    part: i64,
) -> diesel::QueryResult<Vec<SourceByName>> {
    CachedSql::new(READ_PARTITION, &[parts, part]).load(conn)
}

fn diesel_write_transaction<T>(
    conn: &mut DieselConnection,
    work: impl FnOnce(&mut DieselConnection) -> diesel::QueryResult<T>,
) -> diesel::QueryResult<T> {
    diesel::Connection::transaction(conn, work)
}

super::shared::sql_target!(Postgres);

/// Inserts `rows` with sqlx by `strategy`.
pub async fn insert_sqlx(
    conn: &mut sqlx::PgConnection,
    strategy: Strategy,
    rows: &[Item],
) -> Result<(), sqlx::Error> {
    match strategy {
        Strategy::Unnest => {
            sqlx::query(INSERT_UNNEST)
                .bind(rows.iter().map(|i| i.id).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.sku.clone()).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.name.clone()).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.price_cents).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.quantity).collect::<Vec<_>>())
                .execute(&mut *conn)
                .await?;
        }
        Strategy::CopyText | Strategy::CopyBinary => {
            let binary = strategy == Strategy::CopyBinary;
            let mut copy = conn.copy_in_raw(if binary { COPY_BINARY } else { COPY_TEXT }).await?;
            for piece in copy_pieces(rows, binary) {
                if let Err(error) = copy.send(piece).await {
                    let _ = copy.abort("sending failed").await;
                    return Err(error);
                }
            }
            copy.finish().await?;
        }
        _ => insert_common_sqlx(conn, strategy, rows).await?,
    }
    Ok(())
}

/// Inserts `rows` with diesel by `strategy`.
pub fn insert_diesel(
    conn: &mut diesel::PgConnection,
    strategy: Strategy,
    rows: &[Item],
) -> diesel::QueryResult<()> {
    use diesel::sql_types::{Array, BigInt, Integer, Text};
    match strategy {
        Strategy::Unnest => {
            diesel::sql_query(INSERT_UNNEST)
                .bind::<Array<BigInt>, _>(rows.iter().map(|i| i.id).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(rows.iter().map(|i| i.sku.as_str()).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(rows.iter().map(|i| i.name.as_str()).collect::<Vec<_>>())
                .bind::<Array<Integer>, _>(rows.iter().map(|i| i.price_cents).collect::<Vec<_>>())
                .bind::<Array<Integer>, _>(rows.iter().map(|i| i.quantity).collect::<Vec<_>>())
                .execute(conn)?;
        }
        Strategy::CopyText => {
            diesel::copy_from(items::table)
                .from_raw_data(items::table, |out| {
                    let mut line = Vec::with_capacity(256);
                    for item in rows {
                        line.clear();
                        copy_text_row(item, &mut line);
                        out.write_all(&line)
                            .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
                    }
                    diesel::QueryResult::Ok(())
                })
                .with_format(diesel::pg::CopyFormat::Text)
                .execute(conn)?;
        }
        Strategy::CopyBinary => {
            diesel::copy_from(items::table).from_insertable(rows).execute(conn)?;
        }
        _ => insert_common_diesel(conn, strategy, rows)?,
    }
    Ok(())
}

/// The run's PostgreSQL database (created, with the tables, by the run).
pub struct Postgres {
    runtime: Arc<tokio::runtime::Runtime>,
    url: String,
}

impl Postgres {
    /// The database at `url`, which has the benchmark's tables.
    pub fn new(runtime: Arc<tokio::runtime::Runtime>, url: String) -> Self {
        Self { runtime, url }
    }

    async fn sqlx_connect(&self) -> Result<SqlxConnection, sqlx::Error> {
        SqlxConnection::connect(&self.url).await
    }

    fn diesel_connect(&self) -> diesel::ConnectionResult<DieselConnection> {
        <DieselConnection as diesel::Connection>::establish(&self.url)
    }

    fn open_pools(&self, size: u32) -> anyhow::Result<Pools> {
        Pools::open(Arc::clone(&self.runtime), &self.url, size)
    }

    fn info(&self) -> anyhow::Result<DatabaseInfo> {
        self.runtime.block_on(async {
            let mut conn = self.sqlx_connect().await?;
            let version: String =
                sqlx::query_scalar("SHOW server_version").fetch_one(&mut conn).await?;
            let mut settings = std::collections::BTreeMap::new();
            for name in ["fsync", "synchronous_commit", "full_page_writes", "shared_buffers"] {
                let show = sqlx::AssertSqlSafe(format!("SHOW {name}"));
                let value: String = sqlx::query_scalar(show).fetch_one(&mut conn).await?;
                settings.insert(name.to_owned(), value);
            }
            conn.close().await?;
            anyhow::Ok(DatabaseInfo {
                database: DATABASE,
                version: format!("PostgreSQL {version}"),
                settings,
            })
        })
    }
}
