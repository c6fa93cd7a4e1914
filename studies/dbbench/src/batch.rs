//! The end-to-end batch job, after a JVM study of JDBC + virtual threads against R2DBC +
//! coroutines: seed `rows` source rows, then read them back in `parallelism` partitions,
//! transform each row, and write one result per row — each partition by its own worker,
//! in its own transaction, over a pool of `pool` connections. Then check that the output
//! is complete and exactly what the transformation gives (not timed).

use std::future::Future;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

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
// Plain values, not "value or DEFAULT": SQLite has no DEFAULT in VALUES, and diesel turns a
// multi-row insert of defaultable values into one INSERT per row there.
#[diesel(treat_none_as_default_value = false)]
pub struct BatchResult {
    /// The `batch_source` row it was made from, one result per source row.
    pub source_id: i64,
    /// The payload upper-cased, then `#` and the payload's length in bytes.
    pub label: String,
    /// The amount with 8% tax, rounded down.
    pub amount_with_tax_cents: i64,
}

/// A source row, as diesel inserts it.
#[derive(diesel::Insertable)]
#[diesel(table_name = batch_source)]
// As for `BatchResult`: one multi-row INSERT per chunk on SQLite too.
#[diesel(treat_none_as_default_value = false)]
pub struct NewSource {
    id: i64,
    payload: String,
    amount_cents: i64,
}

impl From<SourceRow> for NewSource {
    fn from((id, payload, amount_cents): SourceRow) -> Self {
        Self { id, payload, amount_cents }
    }
}

/// A source row, as diesel reads it back with its partition's SQL.
#[derive(diesel::QueryableByName)]
pub struct SourceByName {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    payload: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    amount_cents: i64,
}

impl From<SourceByName> for SourceRow {
    fn from(row: SourceByName) -> Self {
        (row.id, row.payload, row.amount_cents)
    }
}

/// A database's pools of one size, for the batch job (see [`crate::targets`]).
pub trait BatchPools {
    /// Empties the source and result tables (not timed).
    fn reset(&self) -> anyhow::Result<()>;
    /// Runs every work at once, each on its own worker of the `access` style, each in its
    /// own transaction; the first failure.
    fn run_parts(&self, access: Access, works: Vec<Work>) -> anyhow::Result<()>;
    /// Every result row, by source id.
    fn results(&self) -> anyhow::Result<Vec<BatchResult>>;
}

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

/// Seeds `rows` source rows and runs the job with `parallelism` workers in the `access`
/// style; then verifies the results. The times, or why the output is wrong.
pub fn run(
    pools: &dyn BatchPools,
    access: Access,
    rows: usize,
    parallelism: usize,
) -> anyhow::Result<(BatchTimes, Result<(), String>)> {
    pools.reset()?;
    let parallelism = parallelism.max(1);
    let started = Instant::now();
    let seeds = (0..parallelism).map(|part| Work::Seed(seed_range(rows, part, parallelism)));
    pools.run_parts(access, seeds.collect())?;
    let seed = started.elapsed();
    let started = Instant::now();
    let partitions = (0..parallelism).map(|part| Work::Partition { part, parts: parallelism });
    pools.run_parts(access, partitions.collect())?;
    let job = started.elapsed();
    let verdict = verify(pools, rows)?;
    Ok((BatchTimes { seed, job }, verdict))
}

/// One worker's share.
#[derive(Debug, Clone)]
pub enum Work {
    /// Insert these source rows.
    Seed(std::ops::Range<i64>),
    /// Process the partition `id % parts = part`.
    Partition {
        /// Which partition, in `0..parts`.
        part: usize,
        /// Partitions in all (the job's parallelism).
        parts: usize,
    },
}

/// Runs every work at once, each on its own worker of the `access` style: a tokio task
/// running `sqlx_work`, or `diesel_work` handed to `spawn_blocking` or on its own OS
/// thread. The first failure.
pub fn spawn_all<F>(
    access: Access,
    runtime: &tokio::runtime::Runtime,
    works: Vec<Work>,
    sqlx_work: impl Fn(Work) -> F,
    diesel_work: impl Fn(Work) -> Result<(), String> + Clone + Send + Sync + 'static,
) -> anyhow::Result<()>
where
    F: Future<Output = Result<(), String>> + Send + 'static,
{
    let outcomes: Vec<Result<(), String>> = match access {
        Access::SqlxTasks => runtime.block_on(async {
            let handles: Vec<_> = works.into_iter().map(|w| tokio::spawn(sqlx_work(w))).collect();
            let mut outcomes = Vec::new();
            for handle in handles {
                outcomes.push(handle.await.unwrap_or_else(|e| Err(e.to_string())));
            }
            outcomes
        }),
        Access::DieselSpawnBlocking => runtime.block_on(async {
            let handles: Vec<_> = works
                .into_iter()
                .map(|work| {
                    let diesel_work = diesel_work.clone();
                    tokio::task::spawn_blocking(move || diesel_work(work))
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
                .map(|work| {
                    let diesel_work = &diesel_work;
                    scope.spawn(move || diesel_work(work))
                })
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

/// Every source row has exactly its transformed result, and nothing else is there.
pub fn verify(pools: &dyn BatchPools, rows: usize) -> anyhow::Result<Result<(), String>> {
    let found = pools.results()?;
    if found.len() != rows {
        return Ok(Err(format!("{} results for {rows} source rows", found.len())));
    }
    for (index, got) in found.into_iter().enumerate() {
        let expected = transform(&source_row(index as i64 + 1));
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
