//! The end-to-end batch job, after a JVM study of JDBC + virtual threads against R2DBC +
//! coroutines: seed `rows` source rows, then read them back in `parallelism` partitions,
//! transform each row, and write one result per row — each partition by its own worker,
//! in its own transaction, over a pool of `pool` connections. Then check that the output
//! is complete and exactly what the transformation gives (not timed).

use std::time::{Duration, Instant};

use diesel::RunQueryDsl;
use serde::{Deserialize, Serialize};
use sqlx::{Connection, Executor};

use bookstore_store_diesel::CachedSql;

use crate::crud::Pools;
use crate::measure::Access;
use crate::schema::{batch_results, batch_source};

/// Rows per `INSERT` when seeding and writing results (3 bound parameters each).
pub const WRITE_CHUNK: usize = 1_000;

/// One source row: `(id, payload, amount_cents)`.
pub type SourceRow = (i64, String, i64);

/// The source row `id`.
pub fn source_row(id: i64) -> SourceRow {
    (id, format!("{} order {id} Ünïcödé 'quoted'", crate::data::SENTINEL), 100 + id * 37 % 99_900)
}

/// The result of one source row: its label and its amount with 8% tax, rounded down.
pub fn transform(row: &SourceRow) -> BatchResult {
    let (id, payload, amount_cents) = row;
    BatchResult {
        source_id: *id,
        label: format!("{}#{}", payload.to_uppercase(), payload.len()),
        amount_with_tax_cents: amount_cents * 108 / 100,
    }
}

/// One row of `batch_results`.
#[derive(Debug, Clone, PartialEq, Eq, diesel::Insertable, diesel::Queryable)]
#[diesel(table_name = batch_results)]
pub struct BatchResult {
    /// The source row.
    pub source_id: i64,
    /// Its transformed payload.
    pub label: String,
    /// Its transformed amount.
    pub amount_with_tax_cents: i64,
}

#[derive(diesel::Insertable)]
#[diesel(table_name = batch_source)]
struct NewSource {
    id: i64,
    payload: String,
    amount_cents: i64,
}

#[derive(diesel::QueryableByName)]
struct SourceByName {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    payload: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    amount_cents: i64,
}

const READ_PARTITION: &str =
    "SELECT id, payload, amount_cents FROM batch_source WHERE id % $1 = $2 ORDER BY id";

/// What a run of the job took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchTimes {
    /// Inserting the source rows.
    pub seed: Duration,
    /// Reading, transforming and writing.
    pub job: Duration,
}

/// The ids of part `part` of `parts` when seeding: contiguous ranges.
fn seed_range(rows: usize, part: usize, parts: usize) -> std::ops::Range<i64> {
    let (rows, part, parts) = (rows as i64, part as i64, parts as i64);
    (1 + rows * part / parts)..(1 + rows * (part + 1) / parts)
}

/// Empties both tables (not timed).
pub fn reset(pools: &Pools) -> anyhow::Result<()> {
    pools.runtime.block_on(async {
        let mut conn = pools.sqlx.acquire().await?;
        conn.execute("TRUNCATE batch_source, batch_results").await?;
        anyhow::Ok(())
    })
}

/// Seeds `rows` source rows and runs the job with `parallelism` workers in the `access`
/// style; then verifies the results. The times, or why the output is wrong.
pub fn run(
    access: Access,
    pools: &Pools,
    rows: usize,
    parallelism: usize,
) -> anyhow::Result<(BatchTimes, Result<(), String>)> {
    reset(pools)?;
    let parallelism = parallelism.max(1);
    let started = Instant::now();
    in_parallel(access, pools, parallelism, |part| {
        Work::Seed(seed_range(rows, part, parallelism))
    })?;
    let seed = started.elapsed();
    let started = Instant::now();
    in_parallel(access, pools, parallelism, |part| Work::Partition { part, parts: parallelism })?;
    let job = started.elapsed();
    let verdict = verify(pools, rows)?;
    Ok((BatchTimes { seed, job }, verdict))
}

/// One worker's share.
#[derive(Debug, Clone)]
enum Work {
    /// Insert these source rows.
    Seed(std::ops::Range<i64>),
    /// Process the partition `id % parts = part`.
    Partition { part: usize, parts: usize },
}

/// Runs `work(part)` for every part at once, each on its own worker of the `access` style.
fn in_parallel(
    access: Access,
    pools: &Pools,
    parts: usize,
    work: impl Fn(usize) -> Work,
) -> anyhow::Result<()> {
    let works: Vec<Work> = (0..parts).map(work).collect();
    let outcomes: Vec<Result<(), String>> = match access {
        Access::SqlxTasks => pools.runtime.block_on(async {
            let handles: Vec<_> = works
                .into_iter()
                .map(|work| {
                    let pool = pools.sqlx.clone();
                    tokio::spawn(
                        async move { sqlx_work(&pool, work).await.map_err(|e| e.to_string()) },
                    )
                })
                .collect();
            let mut outcomes = Vec::new();
            for handle in handles {
                outcomes.push(handle.await.unwrap_or_else(|e| Err(e.to_string())));
            }
            outcomes
        }),
        Access::DieselSpawnBlocking => pools.runtime.block_on(async {
            let handles: Vec<_> = works
                .into_iter()
                .map(|work| {
                    let pool = pools.diesel.clone();
                    tokio::task::spawn_blocking(move || diesel_work(&pool, work))
                })
                .collect();
            let mut outcomes = Vec::new();
            for handle in handles {
                outcomes.push(handle.await.unwrap_or_else(|e| Err(e.to_string())));
            }
            outcomes
        }),
        Access::DieselThreads => std::thread::scope(|scope| {
            let handles: Vec<_> = works
                .into_iter()
                .map(|work| scope.spawn(|| diesel_work(&pools.diesel, work)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("a worker panicked".to_owned())))
                .collect()
        }),
    };
    match outcomes.into_iter().find_map(Result::err) {
        Some(error) => anyhow::bail!("batch job ({}): {error}", access.name()),
        None => Ok(()),
    }
}

async fn sqlx_work(pool: &sqlx::PgPool, work: Work) -> Result<(), sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    match work {
        Work::Seed(ids) => {
            let rows: Vec<SourceRow> = ids.map(source_row).collect();
            for chunk in rows.chunks(WRITE_CHUNK) {
                let mut insert = sqlx::QueryBuilder::new(
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
                let mut insert = sqlx::QueryBuilder::new(
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

fn diesel_work(pool: &crate::measure::DieselPool, work: Work) -> Result<(), String> {
    use diesel::Connection as _;
    let mut conn = pool.get().map_err(|e| e.to_string())?;
    conn.transaction(|conn| {
        match work {
            Work::Seed(ids) => {
                let rows: Vec<NewSource> = ids
                    .map(source_row)
                    .map(|(id, payload, amount_cents)| NewSource { id, payload, amount_cents })
                    .collect();
                for chunk in rows.chunks(WRITE_CHUNK) {
                    diesel::insert_into(batch_source::table).values(chunk).execute(conn)?;
                }
            }
            Work::Partition { part, parts } => {
                let rows: Vec<SourceByName> =
                    CachedSql::new(READ_PARTITION, &[parts as i64, part as i64]).load(conn)?;
                let results: Vec<BatchResult> = rows
                    .into_iter()
                    .map(|r| transform(&(r.id, r.payload, r.amount_cents)))
                    .collect();
                for chunk in results.chunks(WRITE_CHUNK) {
                    diesel::insert_into(batch_results::table).values(chunk).execute(conn)?;
                }
            }
        }
        diesel::QueryResult::Ok(())
    })
    .map_err(|e| e.to_string())
}

/// Every source row has exactly its transformed result, and nothing else is there.
pub fn verify(pools: &Pools, rows: usize) -> anyhow::Result<Result<(), String>> {
    let found: Vec<(i64, String, i64)> = pools.runtime.block_on(
        sqlx::query_as(
            "SELECT source_id, label, amount_with_tax_cents FROM batch_results ORDER BY source_id",
        )
        .fetch_all(&pools.sqlx),
    )?;
    if found.len() != rows {
        return Ok(Err(format!("{} results for {rows} source rows", found.len())));
    }
    for (index, (source_id, label, amount)) in found.into_iter().enumerate() {
        let expected = transform(&source_row(index as i64 + 1));
        let got = BatchResult { source_id, label, amount_with_tax_cents: amount };
        if got != expected {
            return Ok(Err(format!("result {}: {got:?}, expected {expected:?}", index + 1)));
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_cover_every_id_once() {
        for (rows, parts) in [(1_000, 1), (1_000, 4), (10_001, 8), (3, 8)] {
            let ids: Vec<i64> = (0..parts).flat_map(|p| seed_range(rows, p, parts)).collect();
            assert_eq!(ids, (1..=rows as i64).collect::<Vec<_>>(), "{rows} over {parts}");
        }
    }

    #[test]
    fn the_transformation_is_exact() {
        let result = transform(&(7, "ab é".to_owned(), 1_000));
        assert_eq!(result.label, "AB É#5");
        assert_eq!(result.amount_with_tax_cents, 1_080);
        assert_eq!(transform(&(1, String::new(), 99)).amount_with_tax_cents, 106);
    }
}
