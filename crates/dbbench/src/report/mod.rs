//! `summary/db-microbench.html`: the page of a `dbbench` results file, in the summary's
//! style (tables and inline SVG charts, nothing fetched). Every number on it comes from the
//! results file; the sentences that compare are computed from it too, by the suite's method
//! (`bookstore-stats`). One module per section.

mod batch;
mod bulk;
mod crud;

use std::collections::BTreeMap;

use bookstore_report::charts::{self, Legend};
use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, Summary};
use serde::Serialize;

use crate::bulk::Library;
use crate::crud::Op;
use crate::measure::Access;
use crate::results::DbBenchResults;
use crate::targets::Database;

const TEMPLATE: &str = include_str!("../../templates/db-microbench.html");

/// A table: a header row and rows of cells.
#[derive(Debug, Serialize)]
struct Table {
    title: String,
    note: String,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

/// One table cell.
#[derive(Debug, Serialize)]
struct Cell {
    text: String,
    /// `best`, `bad` or empty.
    class: String,
    left: bool,
}

impl Cell {
    fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), class: String::new(), left: true }
    }
    fn number(text: impl Into<String>) -> Self {
        Self { text: text.into(), class: String::new(), left: false }
    }
    fn with_class(mut self, class: &str) -> Self {
        self.class = class.to_owned();
        self
    }
}

#[derive(Debug, Serialize)]
struct Page {
    title: String,
    run: bookstore_report::RunInfo,
    quick: bool,
    legend: Vec<Legend>,
    findings: Vec<String>,
    crud_tables: Vec<Table>,
    crud_charts: Vec<charts::BarChart>,
    bulk_tables: Vec<Table>,
    bulk_charts: Vec<charts::BarChart>,
    batch_tables: Vec<Table>,
    tasks_table: Option<Table>,
    method: Vec<(String, String)>,
    environment: Vec<(String, String)>,
    caveats: Vec<String>,
    skipped: Vec<String>,
}

fn access_label(access: Access) -> &'static str {
    match access {
        Access::SqlxTasks => "sqlx · tokio tasks",
        Access::DieselSpawnBlocking => "diesel · spawn_blocking",
        Access::DieselThreads => "diesel · OS threads",
    }
}

fn access_colour(access: Access) -> String {
    let index = Access::ALL.iter().position(|a| *a == access).unwrap_or(0);
    charts::series_colour(index)
}

fn library_colour(library: Library) -> String {
    charts::series_colour(if library == Library::Sqlx { 0 } else { 2 })
}

fn op_label(op: Op, join_index: bool) -> String {
    match (op, join_index) {
        (Op::Join, false) => "join (no index on orders.user_id)".to_owned(),
        (op, _) => op.name().replace('_', " "),
    }
}

fn rate(value: f64) -> String {
    if value >= 100.0 {
        let whole = value.round() as u64;
        let text = whole.to_string();
        let mut out = String::new();
        for (i, c) in text.chars().enumerate() {
            if i > 0 && (text.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        format!("{value:.1}")
    }
}

/// A count, with thousands separators.
fn count(value: usize) -> String {
    rate(value as f64).trim_end_matches(".0").to_owned()
}

/// Values of one cell, by round.
type Rounds = BTreeMap<u32, f64>;

/// The median of `rounds`.
fn median(rounds: &Rounds) -> Option<f64> {
    Summary::of(&rounds.values().copied().collect::<Vec<_>>()).map(|s| s.median)
}

/// "12,345" or "12,345 (11,900–12,800)" over the rounds.
fn rate_range(rounds: &Rounds) -> String {
    match Summary::of(&rounds.values().copied().collect::<Vec<_>>()) {
        Some(s) if s.n > 1 => format!("{} ({}–{})", rate(s.median), rate(s.min), rate(s.max)),
        Some(s) => rate(s.median),
        None => "–".into(),
    }
}

/// The leaders of `group` as text: "best: X" or "not distinguishable: X, Y".
fn leaders(group: &Group) -> String {
    let ranking = group.ranking();
    let names: Vec<&str> = ranking.leaders.iter().map(|&i| group.names()[i].as_str()).collect();
    match (ranking.best, names.as_slice()) {
        (_, []) => "–".into(),
        (true, [one]) => format!("best: {one}"),
        (_, [one]) => format!("{one} (no comparison)"),
        (_, many) => format!("not distinguishable: {}", many.join(", ")),
    }
}

/// The databases that have cells, in their order.
fn databases_of<'a>(cells: impl Iterator<Item = &'a Database>) -> Vec<Database> {
    let mut found: Vec<Database> = cells.copied().collect();
    found.sort();
    found.dedup();
    found
}

/// The page of `results`.
pub fn render(results: &DbBenchResults) -> anyhow::Result<String> {
    let mut findings = Vec::new();
    let (crud_tables, crud_charts) = crud::crud_section(results, &mut findings);
    let (bulk_tables, bulk_charts) = bulk::bulk_section(results, &mut findings);
    let batch_tables = batch::batch_section(results, &mut findings);
    let tasks_table = batch::tasks_section(results, &mut findings);
    let s = &results.settings;
    let e = &results.environment;
    let page = Page {
        title: "Database access without HTTP: sqlx on tasks, diesel on threads".into(),
        run: results.run.clone(),
        quick: s.quick,
        legend: Access::ALL
            .iter()
            .map(|a| Legend { colour: access_colour(*a), label: access_label(*a).to_owned() })
            .collect(),
        findings,
        crud_tables,
        crud_charts,
        bulk_tables,
        bulk_charts,
        batch_tables,
        tasks_table,
        method: vec![
            ("sweep".into(), if s.quick { "quick (--quick)".into() } else { "full".into() }),
            ("rounds".into(), format!("{} per cell, the compared styles side by side in each, their order rotating", s.rounds)),
            ("pool sizes".into(), format!("{:?}", s.pool_sizes)),
            ("CRUD workers".into(), format!("{:?}", s.crud_workers)),
            ("CRUD warm-up / window".into(), format!("{} s / {} s", s.crud_warmup_seconds, s.crud_window_seconds)),
            ("CRUD data".into(), format!("{} users × {} orders", s.crud_users, s.crud_orders_per_user)),
            ("bulk rows".into(), format!("{:?}", s.bulk_rows)),
            ("batch rows × parallelism".into(), format!("{:?} × {:?}", s.batch_rows, s.batch_parallelism)),
            (
                "tasks".into(),
                format!(
                    "{} × {} ms; blocking variants {} tasks on {} workers, queries through a pool of {}",
                    s.tasks, s.task_wait_ms, s.blocking_tasks, s.small_runtime_workers, s.task_query_pool
                ),
            ),
            ("database".into(), s.database.clone()),
            ("command".into(), results.run.command_line.join(" ")),
            ("wall time".into(), results.run.wall_seconds.map_or("–".into(), |s| format!("{s:.0} s"))),
        ],
        environment: vec![
            ("CPU".into(), format!("{} × {}", e.cpu_count, e.cpu_model.clone().unwrap_or_default())),
            ("kernel".into(), e.kernel.clone().unwrap_or_default()),
            ("PostgreSQL".into(), e.postgres_version.clone().unwrap_or_default()),
            (
                "PostgreSQL settings".into(),
                e.postgres_settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "),
            ),
            ("rustc".into(), e.rustc.clone().unwrap_or_default()),
            ("release profile".into(), e.release_profile.clone()),
            ("commit".into(), e.git_commit.clone().unwrap_or_default()),
        ]
        .into_iter()
        .chain(results.databases.iter().filter(|d| d.database != Database::Postgres).map(|d| {
            let settings: Vec<String> =
                d.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            (d.database.label().to_owned(), format!("{}; {}", d.version, settings.join(", ")))
        }))
        .collect(),
        caveats: vec![
            if s.database == "existing" {
                "PostgreSQL was an existing server (--database-url), with the settings above: where it runs, and what its disk costs, is part of every number.".to_owned()
            } else {
                format!(
                    "PostgreSQL ({}) runs on the same machine as the benchmark, with fsync, synchronous commit and full-page writes off: writes measure the libraries and the server's CPU work, not a disk.",
                    if s.database == "container" { "a container" } else { "a throwaway cluster" }
                )
            },
            format!("Every cell was measured in {} round(s); the styles (or libraries) compared were measured side by side in each, their order rotating, and are compared round by round: a ratio with its t-interval on the logs, the comparisons of one table corrected together (Benjamini–Hochberg at {}%). \"Not distinguishable\" and \"no single fastest\" mean the data cannot tell; this machine's speed drifts by tens of percent within minutes.", s.rounds, FALSE_DISCOVERY_RATE * 100.0),
            "The pools open every connection before measuring and do no checks on checkout, like the stacks'. Pool sizes above the CPU count mostly queue work inside PostgreSQL.".into(),
            "sqlx's COPY is a raw channel: its text and binary rows are encoded here (bulk.rs); diesel encodes binary COPY itself and text COPY rows here.".into(),
        ]
        .into_iter()
        .chain(results.databases.iter().filter_map(|d| match d.database {
            Database::Postgres => None,
            Database::Mariadb => Some("MariaDB is a throwaway server on the same machine, not durable either (the log flushed about once a second, no doublewrite), with its default buffer pool; its figures compare with PostgreSQL's as two untuned servers, not as tuned ones.".to_owned()),
            Database::Sqlite => Some("SQLite runs in-process (WAL, synchronous=OFF): no network, no protocol, no server process — as H2 in the JVM study, its figures do not transfer to a networked database. sqlx runs each SQLite connection on its own thread; diesel calls SQLite on the caller's.".to_owned()),
        }))
        .collect(),
        skipped: results.skipped.clone(),
    };
    let environment = bookstore_report::page_environment("db-microbench.html", TEMPLATE)?;
    Ok(environment.get_template("db-microbench.html")?.render(minijinja::value::Serde(&page))?)
}
