//! The results document of a `dbbench` run, from which its page is rendered. Units are in
//! the field names; `DBBENCH.md` beside this crate documents every field (a test checks).

use serde::{Deserialize, Serialize};

use crate::batch::BatchTimes;
use crate::crud::{Measured, Op};
use crate::dimensions::{Database, Library, Strategy};
use crate::measure::Access;
use crate::settings::Settings;
use crate::tasks::{Outcome, Variant};
use bookstore_record::{Environment, LatencySummary, RunInfo};

/// Identifies the document.
pub const SCHEMA: &str = "bookstore-bench/dbbench";
/// Its layout's version: 2 added the database of bulk and batch cells (MariaDB, SQLite); 3
/// measures every cell in rounds (`round`, `settings.rounds`).
pub const SCHEMA_VERSION: u32 = 3;

/// A whole run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DbBenchResults {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When and how.
    pub run: RunInfo,
    /// The machine, build and PostgreSQL server.
    pub environment: Environment,
    /// Each database the bulk strategies and the batch job ran on.
    pub databases: Vec<DatabaseInfo>,
    /// What was swept (the flags of `dbbench run`).
    pub settings: Settings,
    /// The CRUD microbenchmark's cells.
    pub crud: Vec<CrudCell>,
    /// The bulk insert strategies' cells.
    pub bulk: Vec<BulkCell>,
    /// The batch job's cells.
    pub batch: Vec<BatchCell>,
    /// Threads against tasks.
    pub tasks: Vec<TasksCell>,
    /// Parts not run, and why (a database not installed, a section not asked for).
    pub skipped: Vec<String>,
}

/// A database of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseInfo {
    /// Which of the databases this describes.
    pub database: Database,
    /// The product and the version the server reports (`PostgreSQL 17.2`); SQLite's is the
    /// bundled library's.
    pub version: String,
    /// The settings that matter for writes (durability above all), by name.
    pub settings: std::collections::BTreeMap<String, String>,
}

/// One CRUD cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CrudCell {
    /// The round (from 0).
    pub round: u32,
    /// What each operation does (one of [`Op::ALL`]).
    pub op: Op,
    /// How the database was reached.
    pub access: Access,
    /// Connections in the pool.
    pub pool: u32,
    /// Workers, each in a closed loop: the next operation starts when its last one ends.
    pub workers: usize,
    /// Whether `orders(user_id)` was indexed.
    pub join_index: bool,
    /// Operations completed in the window, per second.
    pub ops_per_second: f64,
    /// Rows written or read per second (100 per batch insert).
    pub rows_per_second: f64,
    /// Operations completed in the window.
    pub ops: u64,
    /// Operations that failed in the window.
    pub errors: u64,
    /// The first failure's message; `None` when `errors` is 0.
    pub first_error: Option<String>,
    /// The measured window's length (after the unmeasured warm-up), over which `ops` and
    /// the rates are counted.
    pub window_seconds: f64,
    /// Latency of the window's operations.
    pub latency_us: Option<LatencySummary>,
}

impl CrudCell {
    /// The cell of a measurement.
    pub fn new(
        round: u32,
        op: Op,
        access: Access,
        pool: u32,
        workers: usize,
        join_index: bool,
        m: &Measured,
    ) -> Self {
        let seconds = m.window.as_secs_f64();
        Self {
            round,
            op,
            access,
            pool,
            workers,
            join_index,
            ops_per_second: m.ops as f64 / seconds,
            rows_per_second: (m.ops * op.rows()) as f64 / seconds,
            ops: m.ops,
            errors: m.errors,
            first_error: m.first_error.clone(),
            window_seconds: seconds,
            latency_us: LatencySummary::of(&m.latency_us),
        }
    }
}

/// One bulk insert.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BulkCell {
    /// The round (from 0).
    pub round: u32,
    /// Where the rows went.
    pub database: Database,
    /// Which library sent them.
    pub library: Library,
    /// How they were sent (statements, batching, COPY).
    pub strategy: Strategy,
    /// Rows inserted into the empty table.
    pub rows: usize,
    /// Statements that carried data.
    pub statements: usize,
    /// Time to insert them (the table empty before), commit included.
    pub seconds: f64,
    /// `rows` ÷ `seconds`.
    pub rows_per_second: f64,
    /// Every row read back equal to what was sent.
    pub verified: bool,
    /// What went wrong, if anything.
    pub failure: Option<String>,
}

/// One run of the batch job.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BatchCell {
    /// The round (from 0).
    pub round: u32,
    /// Where the job's tables are.
    pub database: Database,
    /// How the database was reached.
    pub access: Access,
    /// Rows of `batch_source`, each turned into one row of `batch_results`.
    pub rows: usize,
    /// Partitions processed at once.
    pub parallelism: usize,
    /// Connections in the pool.
    pub pool: u32,
    /// Inserting the source rows (in `parallelism` parts).
    pub seed_seconds: f64,
    /// Reading, transforming, writing.
    pub job_seconds: f64,
    /// `seed_seconds` + `job_seconds`.
    pub total_seconds: f64,
    /// Source rows per second of the whole (seed and job).
    pub rows_per_second: f64,
    /// The output was complete and exactly the transformation of the input.
    pub verified: bool,
    /// What was wrong, if anything.
    pub failure: Option<String>,
}

impl BatchCell {
    /// The cell of a run.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        round: u32,
        database: Database,
        access: Access,
        rows: usize,
        parallelism: usize,
        pool: u32,
        times: BatchTimes,
        verdict: Result<(), String>,
    ) -> Self {
        let total = (times.seed + times.job).as_secs_f64();
        Self {
            round,
            database,
            access,
            rows,
            parallelism,
            pool,
            seed_seconds: times.seed.as_secs_f64(),
            job_seconds: times.job.as_secs_f64(),
            total_seconds: total,
            rows_per_second: rows as f64 / total,
            verified: verdict.is_ok(),
            failure: verdict.err(),
        }
    }
}

/// One threads-against-tasks run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TasksCell {
    /// The round (from 0).
    pub round: u32,
    /// The way they ran.
    pub variant: Variant,
    /// Tasks started together, each waiting `wait_ms` once.
    pub tasks: usize,
    /// Each task's wait.
    pub wait_ms: u64,
    /// Threads that could do the waiting: the OS pool ([`OS_THREADS`]), the runtime's
    /// workers, or tokio's blocking pool cap ([`BLOCKING_THREADS`]).
    ///
    /// [`OS_THREADS`]: crate::tasks::OS_THREADS
    /// [`BLOCKING_THREADS`]: crate::tasks::BLOCKING_THREADS
    pub threads: usize,
    /// From the first task's start to the last one's end.
    pub wall_ms: f64,
    /// The most tasks waiting at once.
    pub max_concurrency: usize,
    /// The wall time if `max_concurrency` tasks had always been waiting:
    /// ⌈tasks ÷ max_concurrency⌉ × wait.
    pub expected_ms: f64,
}

impl TasksCell {
    /// The cell of a run.
    pub fn new(round: u32, variant: Variant, tasks: usize, wait_ms: u64, outcome: Outcome) -> Self {
        let waves = tasks.div_ceil(outcome.max_concurrency.max(1));
        Self {
            round,
            variant,
            tasks,
            wait_ms,
            threads: outcome.threads,
            wall_ms: outcome.wall.as_secs_f64() * 1000.0,
            max_concurrency: outcome.max_concurrency,
            expected_ms: (waves as u64 * wait_ms) as f64,
        }
    }
}

impl DbBenchResults {
    /// Writes the document atomically.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        bookstore_record::write_document(self, path)
    }

    /// Reads a document, refusing other schemas and versions.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        bookstore_record::read_document(
            path,
            SCHEMA,
            SCHEMA_VERSION..=SCHEMA_VERSION,
            "a dbbench results file",
        )
    }
}

#[cfg(test)]
mod kept {
    use super::*;

    #[test]
    fn a_kept_results_file_writes_back_as_it_was_read() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../summary/results/dbbench-2026-12-01T16-20-01Z.json");
        let kept = std::fs::read_to_string(&path).unwrap();
        let written = serde_json::to_string_pretty(&DbBenchResults::read(&path).unwrap()).unwrap();
        // Line by line: the same fields in the same order with the same values; a float may
        // differ in its last digit, as serde_json's default parsing can read one back a unit
        // in the last place off.
        assert_eq!(written.lines().count(), kept.lines().count());
        for (number, (w, k)) in written.lines().zip(kept.lines()).enumerate() {
            let float = |line: &str| {
                let (key, value) = line.rsplit_once(": ")?;
                Some((key.to_owned(), value.trim_end_matches(',').parse::<f64>().ok()?))
            };
            match (float(w), float(k)) {
                _ if w == k => {}
                (Some((wk, wv)), Some((kk, kv)))
                    if wk == kk && (wv - kv).abs() <= 1e-14 * kv.abs() => {}
                _ => panic!("line {}: {w:?} written, {k:?} kept", number + 1),
            }
        }
    }
}

#[cfg(test)]
mod documentation {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_field_a_results_file_can_hold_is_documented() {
        let mut latency = crate::measure::histogram();
        latency.record(10).unwrap();
        let measured = Measured {
            ops: 1,
            errors: 1,
            first_error: Some("x".into()),
            window: Duration::from_secs(1),
            latency_us: latency,
        };
        let outcome = Outcome { wall: Duration::from_millis(1), max_concurrency: 1, threads: 1 };
        let times = BatchTimes { seed: Duration::from_millis(1), job: Duration::from_millis(1) };
        let mut environment = Environment::default();
        environment.postgres_settings.insert("fsync".into(), "off".into());
        let results = DbBenchResults {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo {
                id: String::new(),
                started_at: String::new(),
                finished_at: None,
                status: bookstore_record::RunStatus::Running,
                failure: Some(String::new()),
                command_line: vec![],
                wall_seconds: Some(0.0),
                resumed_at: vec![String::new()],
            },
            environment,
            databases: vec![DatabaseInfo {
                database: Database::Sqlite,
                version: String::new(),
                settings: [("synchronous".to_owned(), "OFF".to_owned())].into(),
            }],
            settings: Settings::from_flags(&["--quick"]).unwrap(),
            crud: vec![CrudCell::new(0, Op::Join, Access::SqlxTasks, 1, 1, true, &measured)],
            bulk: vec![BulkCell {
                round: 0,
                database: Database::Mariadb,
                library: Library::Sqlx,
                strategy: Strategy::CopyText,
                rows: 1,
                statements: 1,
                seconds: 1.0,
                rows_per_second: 1.0,
                verified: true,
                failure: None,
            }],
            batch: vec![BatchCell::new(
                0,
                Database::Postgres,
                Access::DieselThreads,
                1,
                1,
                1,
                times,
                Err("x".into()),
            )],
            tasks: vec![TasksCell::new(0, Variant::TokioTasks, 1, 1, outcome)],
            skipped: vec![],
        };
        let documentation = include_str!("../DBBENCH.md");
        let undocumented: Vec<String> =
            bookstore_record::undocumented_fields(&results, documentation)
                .into_iter()
                // Server settings' names, listed by the suite's doc and the databases' modules.
                .filter(|key| key != "fsync" && key != "synchronous")
                .collect();
        assert!(undocumented.is_empty(), "fields missing from DBBENCH.md: {undocumented:?}");
        // The enums' values too.
        for value in [
            "join",
            "sqlx_tasks",
            "copy_text",
            "json_rows",
            "diesel_threads",
            "tokio_tasks",
            "postgres",
            "mariadb",
            "sqlite",
        ] {
            assert!(documentation.contains(&format!("`{value}`")), "{value}");
        }
    }
}
