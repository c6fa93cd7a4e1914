//! A whole `dbbench` run: a throwaway PostgreSQL, the four sections in turn, the results
//! file rewritten after every cell (a crash keeps what was measured).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bookstore_fixture::{ClusterOptions, DbServer, Provider};
use serde::{Deserialize, Serialize};
use sqlx::{Connection, Executor};

use crate::crud::{self, Op, Pools, Population, Timing};
use crate::dimensions::{Database, Library, Strategy};
use crate::measure::Access;
use crate::results::{BatchCell, BulkCell, CrudCell, DbBenchResults, TasksCell};
use crate::settings::Settings;
use crate::targets::{self, Target};
use crate::tasks::{self, Variant};
use crate::{batch, data, schema};
use bookstore_record::RunInfo;
use bookstore_runner::console::progress::Progress;

/// The four parts of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// CRUD operations over pool sizes × workers.
    Crud,
    /// Bulk insert strategies.
    Bulk,
    /// The end-to-end batch job.
    Batch,
    /// Threads against tasks.
    Tasks,
}

/// Everything a run is told.
#[derive(Debug, Clone)]
pub struct Options {
    /// The sweep, as the flags gave it.
    pub settings: Settings,
    /// Sections to run.
    pub sections: Vec<Section>,
    /// An existing server (its user needs CREATEDB) instead of a throwaway one.
    pub database_url: Option<String>,
    /// Where a throwaway server comes from.
    pub provider: Provider,
    /// Where the results document goes, rewritten after every cell; its stem is the run's id.
    pub output: PathBuf,
    /// The workspace, for the environment record.
    pub workspace: PathBuf,
    /// The command line, for the record.
    pub command_line: Vec<String>,
    /// Set to stop after the current cell (Ctrl-C): what was measured is kept, the run is
    /// `interrupted`, its database dropped and its servers stopped as on any other end.
    pub stop: Arc<AtomicBool>,
}

/// The order of `items` for group `round` of compared cells: rotated by one more every
/// group, and by one extra after each full turn, so that the order does not line up with a
/// swept dimension whose size is a multiple of `items.len()` (three parallelisms for three
/// access styles would otherwise always put the same style first at the same parallelism).
fn rotated<T: Copy>(items: &[T], round: usize) -> Vec<T> {
    bookstore_stats::rotated_by(items, round + round / items.len().max(1))
}

/// A run in progress.
struct Run<'a> {
    options: &'a Options,
    results: DbBenchResults,
    runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    /// The databases of the bulk strategies and the batch job.
    targets: Vec<Box<dyn Target>>,
    started: Instant,
    progress: Progress,
}

/// The variants of the tasks section, in their first round's order.
const TASK_VARIANTS: [Variant; 7] = [
    Variant::OsThreadPool,
    Variant::TokioTasks,
    Variant::SpawnBlocking,
    Variant::BlockingSleepInAsync,
    Variant::AsyncSleep,
    Variant::BlockingQueryInAsync,
    Variant::BlockingQueryOffloaded,
];

/// Cells `section` measures under `settings` (bulk and batch: on one database): the
/// progress bar's total.
pub fn planned_cells(section: Section, settings: &Settings, database: Database) -> u64 {
    let s = settings;
    let n = |v: usize| v as u64;
    let rounds = u64::from(s.rounds);
    match section {
        Section::Tasks => rounds * n(TASK_VARIANTS.len()),
        // Every operation, and the join once more without its index.
        Section::Crud => {
            n(s.pool_sizes.len() * (Op::ALL.len() + 1) * s.crud_workers.len() * Access::ALL.len())
                * rounds
        }
        Section::Bulk => {
            n(s.bulk_rows.len() * database.strategies().len() * Library::ALL.len()) * rounds
        }
        Section::Batch => {
            let grid = s.pool_sizes.len() * s.batch_rows.len() * s.batch_parallelism.len();
            n(grid * Access::ALL.len()) * rounds
        }
    }
}

/// Runs the sections asked for; the results (also written to `options.output`).
pub fn run(options: &Options) -> anyhow::Result<DbBenchResults> {
    let started = Instant::now();
    if let Some(parent) = options.output.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let runtime = Arc::new(crate::measure::runtime());
    let max_pool = options.settings.pool_sizes.iter().copied().max().unwrap_or(10);
    // Both libraries' pools are open at once (same size), plus the run's own connections.
    let cluster =
        ClusterOptions { max_connections: max_pool * 2 + 40, ..ClusterOptions::for_tests() };
    let server = runtime.block_on(async {
        match &options.database_url {
            Some(url) => DbServer::existing(url),
            None => DbServer::provide(options.provider, &cluster).await,
        }
    })?;
    let kind = server.kind();
    let name = format!("dbbench_{}", std::process::id());
    let url = runtime.block_on(async {
        server.drop_database(&name).await?;
        server.create_database(&name, None).await
    })?;
    let _database = RunDatabase { server: &server, runtime: &runtime, name };
    let postgres = runtime.block_on(async {
        let mut conn = sqlx::PgConnection::connect(&url).await?;
        schema::install(&mut conn).await?;
        let described = bookstore_fixture::describe_postgres(&mut conn).await;
        conn.close().await?;
        anyhow::Ok(described)
    })?;
    let mut settings = options.settings.clone();
    settings.database = kind.to_owned();
    let id = options.output.file_stem().and_then(|s| s.to_str()).unwrap_or("dbbench").to_owned();
    let results = DbBenchResults {
        schema: crate::results::SCHEMA.to_owned(),
        schema_version: crate::results::SCHEMA_VERSION,
        run: RunInfo::running(
            id,
            options
                .command_line
                .iter()
                .map(|arg| bookstore_domain::store::redact_credentials(arg).into_owned())
                .collect(),
        ),
        environment: bookstore_record::environment::capture(
            bookstore_record::build_identity!(),
            &options.workspace,
            postgres,
        ),
        databases: Vec::new(),
        settings,
        crud: Vec::new(),
        bulk: Vec::new(),
        batch: Vec::new(),
        tasks: Vec::new(),
        skipped: Vec::new(),
    };
    let targets = Vec::new();
    let sections = [Section::Tasks, Section::Bulk, Section::Batch, Section::Crud];
    let planned = sections
        .iter()
        .filter(|s| options.sections.contains(s))
        .map(|&section| match section {
            Section::Bulk | Section::Batch => options
                .settings
                .databases
                .iter()
                .map(|&database| planned_cells(section, &options.settings, database))
                .sum(),
            _ => planned_cells(section, &options.settings, Database::Postgres),
        })
        .sum();
    let progress = Progress::new(planned);
    let runtime_handle = Arc::clone(&runtime);
    let mut run =
        Run { options, results, runtime: runtime_handle, url, targets, started, progress };
    // The bulk and batch databases exist only while those two run: a MariaDB server left
    // idling (or flushing) would share the two cores with the other sections.
    let last_on_targets = sections
        .iter()
        .rev()
        .find(|s| matches!(s, Section::Bulk | Section::Batch) && options.sections.contains(s))
        .copied();
    let mut targets_open = false;
    for section in sections {
        if !options.sections.contains(&section) {
            run.results.skipped.push(format!("{section:?}: not asked for (--sections)"));
            continue;
        }
        if run.stopped() {
            run.results.skipped.push(format!("{section:?}: not run, the run was interrupted"));
            continue;
        }
        let outcome = match section {
            Section::Crud => run.crud(),
            Section::Bulk | Section::Batch => {
                let opened = if targets_open { Ok(()) } else { run.open_targets() };
                targets_open = true;
                opened
                    .and_then(|()| if section == Section::Bulk { run.bulk() } else { run.batch() })
            }
            Section::Tasks => run.tasks(),
        };

        if Some(section) == last_on_targets {
            run.targets.clear(); // stops MariaDB, deletes SQLite's file
        }
        if let Err(error) = outcome {
            run.progress.finish();
            run.results.run.status = bookstore_record::RunStatus::Failed;
            run.results.run.failure = Some(format!("{section:?}: {error:#}"));
            run.finish()?;
            anyhow::bail!("{section:?}: {error:#}");
        }
    }
    run.progress.finish();
    run.results.run.status = bookstore_record::RunStatus::ended(run.stopped());
    run.finish()?;
    Ok(run.results)
}

/// The run's database, dropped however the run ends (an error, a panic): on an existing
/// server it would stay otherwise. A throwaway server goes with its files anyway.
struct RunDatabase<'a> {
    server: &'a DbServer,
    runtime: &'a tokio::runtime::Runtime,
    name: String,
}

impl Drop for RunDatabase<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.runtime.block_on(self.server.drop_database(&self.name)) {
            eprintln!("dbbench: could not drop database {}: {error}", self.name);
        }
    }
}

impl Run<'_> {
    /// Opens the databases asked for (`settings.databases`) that the bulk and batch sections
    /// run on: PostgreSQL's run database, and each optional one that is built in and
    /// starts; those that do not are said in `skipped` (and on stderr).
    fn open_targets(&mut self) -> anyhow::Result<()> {
        for database in self.results.settings.databases.clone() {
            match targets::open::open(database, &self.runtime, &self.url) {
                Ok(target) => {
                    self.results.databases.push(target.describe()?);
                    self.targets.push(target);
                }
                Err(why) => {
                    self.progress.note(&format!(
                        "dbbench: bulk and batch without {}: {why}",
                        database.label()
                    ));
                    let settings = &self.results.settings;
                    let cells: u64 = [Section::Bulk, Section::Batch]
                        .into_iter()
                        .filter(|s| self.options.sections.contains(s))
                        .map(|section| planned_cells(section, settings, database))
                        .sum();
                    self.progress.skipped(cells);
                    self.results.skipped.push(why);
                }
            }
        }
        self.save()
    }

    fn stopped(&self) -> bool {
        self.options.stop.load(Ordering::Relaxed)
    }

    fn save(&self) -> anyhow::Result<()> {
        self.results
            .write(&self.options.output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.options.output.display()))
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.results.run.finished_at = Some(bookstore_record::environment::now_rfc3339());
        self.results.run.wall_seconds = Some(self.started.elapsed().as_secs_f64());
        self.save()
    }

    fn pools(&self, size: u32) -> anyhow::Result<Pools> {
        Pools::open(Arc::clone(&self.runtime), &self.url, size)
    }

    fn sql(&self, statement: &'static str) -> anyhow::Result<()> {
        self.runtime.block_on(async {
            let mut conn = sqlx::PgConnection::connect(&self.url).await?;
            conn.execute(statement).await?;
            conn.close().await?;
            anyhow::Ok(())
        })
    }

    fn crud(&mut self) -> anyhow::Result<()> {
        let s = self.results.settings.clone();
        let population =
            Population { users: s.crud_users, orders: s.crud_users * s.crud_orders_per_user };
        let timing = Timing {
            warmup: Duration::from_secs_f64(s.crud_warmup_seconds),
            window: Duration::from_secs_f64(s.crud_window_seconds),
        };
        // The join twice: with its index, and without (the JVM study's third tuning step).
        let mut variants: Vec<(Op, bool)> = Vec::new();
        for op in Op::ALL {
            variants.push((op, true));
            if op == Op::Join {
                variants.push((op, false));
            }
        }
        let mut round = 0;
        for &pool in &s.pool_sizes {
            let pools = self.pools(pool)?;
            for &(op, join_index) in &variants {
                // Fresh data for every operation: inserts and updates do not pile up.
                self.runtime.block_on(async {
                    let mut conn = sqlx::PgConnection::connect(&self.url).await?;
                    schema::fill_users_and_orders(&mut conn, s.crud_users, s.crud_orders_per_user)
                        .await?;
                    conn.execute(if join_index {
                        schema::JOIN_INDEX_SQL
                    } else {
                        schema::DROP_JOIN_INDEX_SQL
                    })
                    .await?;
                    conn.execute("ANALYZE orders").await?;
                    anyhow::Ok(())
                })?;
                for &workers in &s.crud_workers {
                    for r in 0..s.rounds {
                        for access in rotated(&Access::ALL, round) {
                            if self.stopped() {
                                return Ok(());
                            }
                            let measured =
                                crud::run(access, &pools, op, workers, population, timing);
                            let cell =
                                CrudCell::new(r, op, access, pool, workers, join_index, &measured);
                            self.progress.finished(&format!(
                                "dbbench: crud {}{} {} pool={pool} workers={workers} round {}: {:.0} ops/s, p99 {} µs{}",
                                op.name(),
                                if join_index { "" } else { " (no index)" },
                                access.name(),
                                r + 1,
                                cell.ops_per_second,
                                cell.latency_us.map_or(0, |l| l.p99_us),
                                cell.first_error
                                    .as_ref()
                                    .map_or(String::new(), |e| format!(", errors: {e}")),
                            ));
                            self.results.crud.push(cell);
                            self.save()?;
                        }
                        round += 1;
                    }
                }
            }
        }
        self.sql(schema::JOIN_INDEX_SQL)
    }

    fn bulk(&mut self) -> anyhow::Result<()> {
        let mut round = 0;
        let rounds = self.results.settings.rounds;
        for target in &self.targets {
            let database = target.database();
            for rows in self.results.settings.bulk_rows.clone() {
                let items = data::items(rows);
                for strategy in database.strategies() {
                    for r in 0..rounds {
                        for library in rotated(&Library::ALL, round) {
                            if self.stopped() {
                                return Ok(());
                            }
                            let mut cell = bulk_cell(target.as_ref(), library, strategy, &items)?;
                            cell.round = r;
                            self.progress.finished(&format!(
                                "dbbench: bulk {} {} {} {rows} rows round {}: {:.0} rows/s{}",
                                database.name(),
                                library.name(),
                                strategy.name(),
                                r + 1,
                                cell.rows_per_second,
                                cell.failure.as_ref().map_or(String::new(), |f| format!(" — {f}"))
                            ));
                            self.results.bulk.push(cell);
                            self.save()?;
                        }
                        round += 1;
                    }
                }
            }
        }
        Ok(())
    }

    fn batch(&mut self) -> anyhow::Result<()> {
        let s = self.results.settings.clone();
        let mut round = 0;
        for target in &self.targets {
            let database = target.database();
            for &pool in &s.pool_sizes {
                let pools = target.batch_pools(pool)?;
                for &rows in &s.batch_rows {
                    for &parallelism in &s.batch_parallelism {
                        for r in 0..s.rounds {
                            for access in rotated(&Access::ALL, round) {
                                if self.stopped() {
                                    return Ok(());
                                }
                                let (times, verdict) =
                                    batch::run(pools.as_ref(), access, rows, parallelism)?;
                                let cell = BatchCell::new(
                                    r,
                                    database,
                                    access,
                                    rows,
                                    parallelism,
                                    pool,
                                    times,
                                    verdict,
                                );
                                self.progress.finished(&format!(
                                    "dbbench: batch {} {} {rows} rows parallelism={parallelism} pool={pool}: {:.2} s ({:.0} rows/s){}",
                                    database.name(),
                                    access.name(),
                                    cell.total_seconds,
                                    cell.rows_per_second,
                                    cell.failure
                                        .as_ref()
                                        .map_or(String::new(), |f| format!(" — WRONG OUTPUT: {f}"))
                                ));
                                self.results.batch.push(cell);
                                self.save()?;
                            }
                            round += 1;
                        }
                    }
                }
            }
            target.batch_pools(1)?.reset()?;
        }
        Ok(())
    }

    fn tasks(&mut self) -> anyhow::Result<()> {
        let s = self.results.settings.clone();
        let wait = Duration::from_millis(s.task_wait_ms);
        let pool = crate::measure::diesel_pool(&self.url, s.task_query_pool)
            .map_err(anyhow::Error::msg)?;
        let rounds = (0..s.rounds)
            .flat_map(|r| rotated(&TASK_VARIANTS, r as usize).into_iter().map(move |v| (r, v)));
        for (round, variant) in rounds {
            if self.stopped() {
                return Ok(());
            }
            let many = matches!(
                variant,
                Variant::OsThreadPool | Variant::TokioTasks | Variant::SpawnBlocking
            );
            let count = if many { s.tasks } else { s.blocking_tasks };
            let outcome = tasks::run(variant, count, wait, s.small_runtime_workers, Some(&pool))?;
            let cell = TasksCell::new(round, variant, count, s.task_wait_ms, outcome);
            self.progress.finished(&format!(
                "dbbench: tasks {} × {count} round {}: {:.0} ms, at most {} waiting at once",
                variant.name(),
                round + 1,
                cell.wall_ms,
                cell.max_concurrency
            ));
            self.results.tasks.push(cell);
            self.save()?;
        }
        Ok(())
    }
}

/// Inserts `items` into `target`'s emptied table with `library` by `strategy`, then reads
/// them back and compares.
pub fn bulk_cell(
    target: &dyn Target,
    library: Library,
    strategy: Strategy,
    items: &[data::Item],
) -> anyhow::Result<BulkCell> {
    target.clear_items()?;
    let (elapsed, outcome) = target.insert_items(library, strategy, items)?;
    let failure = match outcome {
        Ok(()) => compare_items(&target.read_items()?, items).err(),
        Err(error) => Some(error),
    };
    let seconds = elapsed.as_secs_f64();
    Ok(BulkCell {
        round: 0,
        database: target.database(),
        library,
        strategy,
        rows: items.len(),
        statements: strategy.statements(items.len(), target.database()),
        seconds,
        rows_per_second: items.len() as f64 / seconds,
        verified: failure.is_none(),
        failure,
    })
}

/// `Ok` when `found` is exactly `expected`; else the first difference.
pub fn compare_items(found: &[data::Item], expected: &[data::Item]) -> Result<(), String> {
    if found.len() != expected.len() {
        return Err(format!("{} rows read back, {} sent", found.len(), expected.len()));
    }
    match found.iter().zip(expected).find(|(f, e)| f != e) {
        Some((f, e)) => Err(format!("row {} read back as {f:?}, sent as {e:?}", e.id)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_goes_first_does_not_follow_a_swept_dimension() {
        // Three styles over groups of three parallelisms, four sizes: every style goes
        // first at every parallelism somewhere.
        let styles = [0, 1, 2];
        let mut first = std::collections::BTreeSet::new();
        for round in 0..12 {
            first.insert((round % 3, rotated(&styles, round)[0]));
        }
        assert_eq!(first.len(), 9, "{first:?}");
        // Two libraries over groups of six strategies (an even number).
        let mut first = std::collections::BTreeSet::new();
        for round in 0..18 {
            first.insert((round % 6, rotated(&[0, 1], round)[0]));
        }
        assert_eq!(first.len(), 12, "{first:?}");
    }
}
