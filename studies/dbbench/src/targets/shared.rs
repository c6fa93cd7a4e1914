//! What every database of the benchmark shares: the [`Target`] trait, and the code written
//! once in `sql_target!` and expanded in each database's module.

use std::time::Duration;

use crate::batch::BatchPools;
use crate::data::Item;
use crate::dimensions::{Database, Library, Strategy};
use crate::results::DatabaseInfo;

/// A database with the benchmark's tables, ready for the bulk strategies and the batch job.
pub trait Target {
    #[allow(missing_docs)] // named for what it returns
    fn database(&self) -> Database;
    /// Its version and settings, for the results.
    fn describe(&self) -> anyhow::Result<DatabaseInfo>;
    /// Empties `items` (not timed).
    fn clear_items(&self) -> anyhow::Result<()>;
    /// Inserts `rows` into `items` with `library` by `strategy`, over a new connection: the
    /// time the insert took (not the connect), and its outcome.
    fn insert_items(
        &self,
        library: Library,
        strategy: Strategy,
        rows: &[Item],
    ) -> anyhow::Result<(Duration, Result<(), String>)>;
    /// Every row of `items`, by key.
    fn read_items(&self) -> anyhow::Result<Vec<Item>>;
    /// Pools of `size` connections for each library, for the batch job.
    fn batch_pools(&self, size: u32) -> anyhow::Result<Box<dyn BatchPools>>;
}

/// An error of diesel's for something a function was not meant to be asked.
pub(crate) fn diesel_unsupported(what: String) -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError(what.into())
}

/// What the three databases share, written once and expanded in each one's module, where
/// these must be in scope:
///
/// - types `SqlxDb`, `SqlxConnection` and `DieselConnection`; `Pools`, with fields
///   `runtime: Arc<Runtime>`, `sqlx: sqlx::Pool<SqlxDb>` and
///   `diesel: r2d2::Pool<ConnectionManager<DieselConnection>>`;
/// - `DATABASE`, and the SQL: `INSERT_ONE` (one row of `items`, five parameters),
///   `READ_PARTITION` (`id, payload, amount_cents` of `batch_source` where `id % p1 = p2`,
///   by id), `CLEAR_BATCH` (statements emptying both batch tables), `BEGIN_WRITE` (starts
///   a transaction that will write);
/// - `diesel_read_partition(conn, parts, part)` and `diesel_write_transaction(conn, f)`;
/// - `insert_sqlx(conn, strategy, rows)` and `insert_diesel(…)` (each strategy the database
///   has), and `CLEAR_ITEMS`;
/// - on `$target`: `sqlx_connect()`, `diesel_connect()`, `open_pools(size)`, `info()`, and a
///   field `runtime: Arc<Runtime>`.
///
/// It defines `values_statement`, `insert_common_sqlx`, `insert_common_diesel` (the
/// strategies every database has), the batch job's two workers, `BatchPools for Pools` and
/// `Target for $target`.
macro_rules! sql_target {
    ($target:ty) => {
        /// One multi-row `INSERT … VALUES` of `chunk`, every value bound. Past the
        /// database's parameter limit it fails.
        pub fn values_statement(chunk: &[$crate::data::Item]) -> sqlx::QueryBuilder<SqlxDb> {
            let mut builder =
                sqlx::QueryBuilder::new("INSERT INTO items (id, sku, name, price_cents, quantity) ");
            builder.push_values(chunk, |mut row, item| {
                row.push_bind(item.id)
                    .push_bind(item.sku.clone())
                    .push_bind(item.name.clone())
                    .push_bind(item.price_cents)
                    .push_bind(item.quantity);
            });
            builder
        }

        /// Inserts `rows` with sqlx by a strategy every database has: row by row
        /// (autocommit, or in one transaction), or multi-row `VALUES` in chunks under the
        /// parameter limit.
        pub async fn insert_common_sqlx<'a>(
            conn: &mut SqlxConnection,
            strategy: $crate::dimensions::Strategy,
            rows: &'a [$crate::data::Item],
        ) -> Result<(), sqlx::Error> {
            use $crate::dimensions::Strategy;
            use sqlx::Connection as _;
            let one = |item: &'a $crate::data::Item| {
                sqlx::query(INSERT_ONE)
                    .bind(item.id)
                    .bind(item.sku.as_str())
                    .bind(item.name.as_str())
                    .bind(item.price_cents)
                    .bind(item.quantity)
            };
            match strategy {
                Strategy::RowAutocommit => {
                    for item in rows {
                        one(item).execute(&mut *conn).await?;
                    }
                }
                Strategy::RowTransaction => {
                    let mut tx = conn.begin().await?;
                    for item in rows {
                        one(item).execute(&mut *tx).await?;
                    }
                    tx.commit().await?;
                }
                Strategy::MultiValues => {
                    let mut tx = conn.begin().await?;
                    for chunk in rows.chunks(DATABASE.rows_per_statement()) {
                        values_statement(chunk).build().execute(&mut *tx).await?;
                    }
                    tx.commit().await?;
                }
                other => {
                    return Err(sqlx::Error::Protocol(format!(
                        "{} is not a strategy every database has",
                        other.name()
                    )));
                }
            }
            Ok(())
        }

        /// [`insert_common_sqlx`], with diesel.
        pub fn insert_common_diesel(
            conn: &mut DieselConnection,
            strategy: $crate::dimensions::Strategy,
            rows: &[$crate::data::Item],
        ) -> diesel::QueryResult<()> {
            use $crate::dimensions::Strategy;
            use $crate::schema::items;
            use diesel::Connection as _;
            use diesel::RunQueryDsl as _;
            match strategy {
                Strategy::RowAutocommit => {
                    for item in rows {
                        diesel::insert_into(items::table).values(item).execute(conn)?;
                    }
                }
                Strategy::RowTransaction => conn.transaction(|conn| {
                    for item in rows {
                        diesel::insert_into(items::table).values(item).execute(conn)?;
                    }
                    diesel::QueryResult::Ok(())
                })?,
                Strategy::MultiValues => conn.transaction(|conn| {
                    for chunk in rows.chunks(DATABASE.rows_per_statement()) {
                        diesel::insert_into(items::table).values(chunk).execute(conn)?;
                    }
                    diesel::QueryResult::Ok(())
                })?,
                other => {
                    return Err($crate::targets::diesel_unsupported(format!(
                        "{} is not a strategy every database has",
                        other.name()
                    )));
                }
            }
            Ok(())
        }

        /// One batch worker's share, with sqlx, in one transaction.
        async fn sqlx_work(
            pool: &sqlx::Pool<SqlxDb>,
            work: $crate::batch::Work,
        ) -> Result<(), sqlx::Error> {
            use $crate::batch::{BatchResult, SourceRow, WRITE_CHUNK, Work, source_row, transform};
            use sqlx::Connection as _;
            let mut conn = pool.acquire().await?;
            let mut tx = conn.begin_with(BEGIN_WRITE).await?;
            match work {
                Work::Seed(ids) => {
                    let rows: Vec<SourceRow> = ids.map(source_row).collect();
                    for chunk in rows.chunks(WRITE_CHUNK) {
                        let mut insert = sqlx::QueryBuilder::<SqlxDb>::new(
                            "INSERT INTO batch_source (id, payload, amount_cents) ",
                        );
                        insert.push_values(chunk, |mut row, (id, payload, amount)| {
                            row.push_bind(*id).push_bind(payload.clone()).push_bind(*amount);
                        });
                        insert.build().execute(&mut *tx).await?;
                    }
                }
                Work::Partition { part, parts } => {
                    let rows: Vec<SourceRow> = sqlx::query_as(READ_PARTITION)
                        .bind(parts as i64)
                        .bind(part as i64)
                        .fetch_all(&mut *tx)
                        .await?;
                    let results: Vec<BatchResult> = rows.iter().map(transform).collect();
                    for chunk in results.chunks(WRITE_CHUNK) {
                        let mut insert = sqlx::QueryBuilder::<SqlxDb>::new(
                            "INSERT INTO batch_results (source_id, label, amount_with_tax_cents) ",
                        );
                        insert.push_values(chunk, |mut row, result| {
                            row.push_bind(result.source_id)
                                .push_bind(result.label.clone())
                                .push_bind(result.amount_with_tax_cents);
                        });
                        insert.build().execute(&mut *tx).await?;
                    }
                }
            }
            tx.commit().await
        }

        /// One batch worker's share, with diesel, in one transaction.
        fn diesel_work(
            pool: &diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DieselConnection>>,
            work: $crate::batch::Work,
        ) -> Result<(), String> {
            use $crate::batch::{BatchResult, NewSource, Work, WRITE_CHUNK, source_row, transform};
            use $crate::schema::{batch_results, batch_source};
            use diesel::RunQueryDsl as _;
            let mut conn = pool.get().map_err(|e| e.to_string())?;
            diesel_write_transaction(&mut conn, |conn| {
                match work {
                    Work::Seed(ids) => {
                        let rows: Vec<NewSource> = ids.map(source_row).map(NewSource::from).collect();
                        for chunk in rows.chunks(WRITE_CHUNK) {
                            diesel::insert_into(batch_source::table).values(chunk).execute(conn)?;
                        }
                    }
                    Work::Partition { part, parts } => {
                        let rows = diesel_read_partition(conn, parts as i64, part as i64)?;
                        let results: Vec<BatchResult> =
                            rows.into_iter().map(|r| transform(&r.into())).collect();
                        for chunk in results.chunks(WRITE_CHUNK) {
                            diesel::insert_into(batch_results::table).values(chunk).execute(conn)?;
                        }
                    }
                }
                diesel::QueryResult::Ok(())
            })
            .map_err(|e| e.to_string())
        }

        impl $crate::batch::BatchPools for Pools {
            fn reset(&self) -> anyhow::Result<()> {
                self.runtime.block_on(async {
                    let mut conn = self.sqlx.acquire().await?;
                    for statement in CLEAR_BATCH {
                        sqlx::Executor::execute(&mut *conn, *statement).await?;
                    }
                    anyhow::Ok(())
                })
            }

            fn run_parts(
                &self,
                access: $crate::measure::Access,
                works: Vec<$crate::batch::Work>,
            ) -> anyhow::Result<()> {
                let sqlx = self.sqlx.clone();
                let diesel = self.diesel.clone();
                $crate::batch::spawn_all(
                    access,
                    &self.runtime,
                    works,
                    move |work| {
                        let pool = sqlx.clone();
                        async move { sqlx_work(&pool, work).await.map_err(|e| e.to_string()) }
                    },
                    move |work| diesel_work(&diesel, work),
                )
            }

            fn results(&self) -> anyhow::Result<Vec<$crate::batch::BatchResult>> {
                let rows: Vec<(i64, String, i64)> = self.runtime.block_on(
                    sqlx::query_as(
                        "SELECT source_id, label, amount_with_tax_cents FROM batch_results ORDER BY source_id",
                    )
                    .fetch_all(&self.sqlx),
                )?;
                Ok(rows
                    .into_iter()
                    .map(|(source_id, label, amount_with_tax_cents)| $crate::batch::BatchResult {
                        source_id,
                        label,
                        amount_with_tax_cents,
                    })
                    .collect())
            }
        }

        impl $crate::targets::Target for $target {
            fn database(&self) -> $crate::dimensions::Database {
                DATABASE
            }

            fn describe(&self) -> anyhow::Result<$crate::results::DatabaseInfo> {
                self.info()
            }

            fn clear_items(&self) -> anyhow::Result<()> {
                self.runtime.block_on(async {
                    use sqlx::Connection as _;
                    let mut conn = self.sqlx_connect().await?;
                    sqlx::Executor::execute(&mut conn, CLEAR_ITEMS).await?;
                    conn.close().await?;
                    anyhow::Ok(())
                })
            }

            fn insert_items(
                &self,
                library: $crate::dimensions::Library,
                strategy: $crate::dimensions::Strategy,
                rows: &[$crate::data::Item],
            ) -> anyhow::Result<(std::time::Duration, Result<(), String>)> {
                use std::time::Instant;
                match library {
                    $crate::dimensions::Library::Sqlx => self.runtime.block_on(async {
                        use sqlx::Connection as _;
                        let mut conn = self.sqlx_connect().await?;
                        let started = Instant::now();
                        let outcome =
                            insert_sqlx(&mut conn, strategy, rows).await.map_err(|e| e.to_string());
                        let elapsed = started.elapsed();
                        conn.close().await?;
                        anyhow::Ok((elapsed, outcome))
                    }),
                    $crate::dimensions::Library::Diesel => {
                        let mut conn = self.diesel_connect()?;
                        let started = Instant::now();
                        let outcome =
                            insert_diesel(&mut conn, strategy, rows).map_err(|e| e.to_string());
                        Ok((started.elapsed(), outcome))
                    }
                }
            }

            fn read_items(&self) -> anyhow::Result<Vec<$crate::data::Item>> {
                self.runtime.block_on(async {
                    use sqlx::Connection as _;
                    let mut conn = self.sqlx_connect().await?;
                    let rows =
                        sqlx::query_as($crate::targets::READ_ITEMS).fetch_all(&mut conn).await?;
                    conn.close().await?;
                    anyhow::Ok($crate::targets::items_from_rows(rows))
                })
            }

            fn batch_pools(
                &self,
                size: u32,
            ) -> anyhow::Result<Box<dyn $crate::batch::BatchPools>> {
                Ok(Box::new(self.open_pools(size)?))
            }
        }
    };
}
pub(crate) use sql_target;

/// What MariaDB and SQLite share beyond [`sql_target!`]: `?` placeholders and no array
/// parameters. It defines `INSERT_ONE` and `READ_PARTITION`, `insert_sqlx` and
/// `insert_diesel` (the json_rows strategy, with `INSERT_JSON_ROWS` in scope, and the
/// common ones), `diesel_read_partition`, and `Pools`.
#[cfg(any(feature = "mariadb", feature = "sqlite"))]
macro_rules! json_rows_target {
    () => {
        const INSERT_ONE: &str =
            "INSERT INTO items (id, sku, name, price_cents, quantity) VALUES (?, ?, ?, ?, ?)";
        const READ_PARTITION: &str =
            "SELECT id, payload, amount_cents FROM batch_source WHERE id % ? = ? ORDER BY id";

        /// Inserts `rows` with sqlx by `strategy`.
        pub async fn insert_sqlx(
            conn: &mut SqlxConnection,
            strategy: $crate::dimensions::Strategy,
            rows: &[$crate::data::Item],
        ) -> Result<(), sqlx::Error> {
            match strategy {
                $crate::dimensions::Strategy::JsonRows => {
                    let json = $crate::targets::json_rows(rows);
                    sqlx::query(INSERT_JSON_ROWS).bind(json).execute(&mut *conn).await?;
                    Ok(())
                }
                _ => insert_common_sqlx(conn, strategy, rows).await,
            }
        }

        /// Inserts `rows` with diesel by `strategy`.
        pub fn insert_diesel(
            conn: &mut DieselConnection,
            strategy: $crate::dimensions::Strategy,
            rows: &[$crate::data::Item],
        ) -> diesel::QueryResult<()> {
            use diesel::RunQueryDsl as _;
            match strategy {
                $crate::dimensions::Strategy::JsonRows => {
                    diesel::sql_query(INSERT_JSON_ROWS)
                        .bind::<diesel::sql_types::Text, _>($crate::targets::json_rows(rows))
                        .execute(conn)?;
                    Ok(())
                }
                _ => insert_common_diesel(conn, strategy, rows),
            }
        }

        fn diesel_read_partition(
            conn: &mut DieselConnection,
            parts: i64,
            part: i64,
        ) -> diesel::QueryResult<Vec<$crate::batch::SourceByName>> {
            use diesel::RunQueryDsl as _;
            use diesel::sql_types::BigInt;
            diesel::sql_query(READ_PARTITION)
                .bind::<BigInt, _>(parts)
                .bind::<BigInt, _>(part)
                .load(conn)
        }

        /// Both libraries' pools of one size.
        pub struct Pools {
            runtime: std::sync::Arc<tokio::runtime::Runtime>,
            sqlx: sqlx::Pool<SqlxDb>,
            diesel: diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DieselConnection>>,
        }
    };
}
#[cfg(any(feature = "mariadb", feature = "sqlite"))]
pub(crate) use json_rows_target;

/// Every row of `items`, by key, from `rows` as sqlx reads them.
pub fn items_from_rows(rows: Vec<(i64, String, String, i32, i32)>) -> Vec<Item> {
    rows.into_iter()
        .map(|(id, sku, name, price_cents, quantity)| Item { id, sku, name, price_cents, quantity })
        .collect()
}

/// The SQL that reads `items` back, for every database.
pub const READ_ITEMS: &str = "SELECT id, sku, name, price_cents, quantity FROM items ORDER BY id";

/// `rows` as one JSON document, an array of `[id, sku, name, price_cents, quantity]`: what
/// the json_rows strategy binds as its only parameter (serde_json escapes; the SQL text is
/// constant).
pub fn json_rows(rows: &[Item]) -> String {
    let tuples: Vec<(i64, &str, &str, i32, i32)> = rows
        .iter()
        .map(|i| (i.id, i.sku.as_str(), i.name.as_str(), i.price_cents, i.quantity))
        .collect();
    serde_json::to_string(&tuples).expect("plain values serialize")
}
