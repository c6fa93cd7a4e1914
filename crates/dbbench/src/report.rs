//! `summary/db-microbench.html`: the page of a `dbbench` results file, in the summary's
//! style (tables and inline SVG charts, nothing fetched). Every number on it comes from the
//! results file; the sentences that compare are computed from it too.

use loadgen::report::charts::{self, BarValue, Legend, PALETTE};
use serde::Serialize;

use crate::bulk::{Library, Strategy};
use crate::crud::Op;
use crate::measure::Access;
use crate::results::{BatchCell, BulkCell, CrudCell, DbBenchResults};
use crate::targets::Database;

const TEMPLATE: &str = include_str!("../templates/db-microbench.html");

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
    run: crate::results::RunInfo,
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
    PALETTE[index].to_owned()
}

fn library_colour(library: Library) -> String {
    PALETTE[if library == Library::Sqlx { 0 } else { 2 }].to_owned()
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

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 { format!("{:.2}×", a / b) } else { "–".to_owned() }
}

/// The best cell of `cells` by ops/s.
fn best<'a>(cells: impl Iterator<Item = &'a CrudCell>) -> Option<&'a CrudCell> {
    cells.filter(|c| c.errors == 0).max_by(|a, b| a.ops_per_second.total_cmp(&b.ops_per_second))
}

fn op_variants(results: &DbBenchResults) -> Vec<(Op, bool)> {
    let mut variants = Vec::new();
    for cell in &results.crud {
        if !variants.contains(&(cell.op, cell.join_index)) {
            variants.push((cell.op, cell.join_index));
        }
    }
    variants
}

fn crud_section(
    results: &DbBenchResults,
    findings: &mut Vec<String>,
) -> (Vec<Table>, Vec<charts::BarChart>) {
    if results.crud.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let variants = op_variants(results);
    // Best configuration per operation and access style.
    let mut header = vec!["operation".to_owned()];
    header
        .extend(Access::ALL.iter().map(|a| format!("{} ops/s (pool, workers)", access_label(*a))));
    header.push("sqlx ÷ best diesel".to_owned());
    let mut rows = Vec::new();
    for &(op, index) in &variants {
        let of = |access: Access| {
            best(
                results
                    .crud
                    .iter()
                    .filter(|c| c.op == op && c.join_index == index && c.access == access),
            )
        };
        let bests: Vec<Option<&CrudCell>> = Access::ALL.iter().map(|a| of(*a)).collect();
        let top = bests.iter().flatten().map(|c| c.ops_per_second).fold(0.0, f64::max);
        let mut row = vec![Cell::text(op_label(op, index))];
        for cell in &bests {
            row.push(match cell {
                Some(c) => {
                    Cell::number(format!("{} ({}, {})", rate(c.ops_per_second), c.pool, c.workers))
                        .with_class(if c.ops_per_second == top { "best" } else { "" })
                }
                None => Cell::number("–"),
            });
        }
        let sqlx = bests[0].map_or(0.0, |c| c.ops_per_second);
        let diesel = bests[1..].iter().flatten().map(|c| c.ops_per_second).fold(0.0, f64::max);
        row.push(Cell::number(ratio(sqlx, diesel)));
        rows.push(row);
    }
    let mut tables = vec![Table {
        title: "Best of each access style".into(),
        note: "Operations per second in the window, at the pool size and worker count where each style did best; the winner in bold.".into(),
        header,
        rows,
    }];
    // The join index.
    let with = best(results.crud.iter().filter(|c| c.op == Op::Join && c.join_index));
    let without = best(results.crud.iter().filter(|c| c.op == Op::Join && !c.join_index));
    if let (Some(with), Some(without)) = (with, without) {
        findings.push(format!(
            "The join's index on orders.user_id: {} ops/s with it, {} without ({} — each the best configuration).",
            rate(with.ops_per_second),
            rate(without.ops_per_second),
            ratio(with.ops_per_second, without.ops_per_second)
        ));
    }
    // Who won per operation.
    let mut wins = [0usize; 3];
    for &(op, index) in &variants {
        if let Some(winner) =
            best(results.crud.iter().filter(|c| c.op == op && c.join_index == index))
        {
            wins[Access::ALL.iter().position(|a| *a == winner.access).unwrap_or(0)] += 1;
        }
    }
    findings.push(format!(
        "CRUD, best configuration per operation ({} operations): {}.",
        variants.len(),
        Access::ALL
            .iter()
            .zip(wins)
            .map(|(a, n)| format!("{} won {n}", access_label(*a)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // Every cell.
    let pools = results.settings.pool_sizes.clone();
    let workers = results.settings.crud_workers.clone();
    for &(op, index) in &variants {
        let mut header = vec!["access".to_owned(), "pool".to_owned()];
        header.extend(workers.iter().map(|w| format!("{w} worker(s): ops/s · p99")));
        let mut rows = Vec::new();
        for &pool in &pools {
            for access in Access::ALL {
                let mut row =
                    vec![Cell::text(access_label(access)), Cell::number(pool.to_string())];
                for &w in &workers {
                    let cell = results.crud.iter().find(|c| {
                        c.op == op
                            && c.join_index == index
                            && c.access == access
                            && c.pool == pool
                            && c.workers == w
                    });
                    row.push(match cell {
                        Some(c) if c.errors > 0 => {
                            Cell::number(format!("{} errors", c.errors)).with_class("bad")
                        }
                        Some(c) => Cell::number(format!(
                            "{} · {}",
                            rate(c.ops_per_second),
                            charts::latency_label(c.latency_us.map_or(0, |l| l.p99_us) as f64)
                        )),
                        None => Cell::number("–"),
                    });
                }
                rows.push(row);
            }
        }
        tables.push(Table { title: op_label(op, index), note: String::new(), header, rows });
    }
    // A chart per operation at the largest pool: workers as groups, styles as bars.
    let pool = pools.iter().copied().max().unwrap_or(0);
    let groups: Vec<String> = workers.iter().map(|w| format!("{w} workers")).collect();
    let chart_list = variants
        .iter()
        .map(|&(op, index)| {
            let values: Vec<BarValue> = results
                .crud
                .iter()
                .filter(|c| c.op == op && c.join_index == index && c.pool == pool)
                .filter_map(|c| {
                    Some(BarValue {
                        group: workers.iter().position(|w| *w == c.workers)?,
                        slot: Access::ALL.iter().position(|a| *a == c.access)?,
                        value: c.ops_per_second,
                        range: None,
                        colour: access_colour(c.access),
                        title: format!(
                            "{}: {} ops/s",
                            access_label(c.access),
                            rate(c.ops_per_second)
                        ),
                    })
                })
                .collect();
            charts::bar_chart(
                &groups,
                3,
                &values,
                &[],
                &format!("{} ops/s, pool {pool}", op_label(op, index)),
            )
        })
        .collect();
    (tables, chart_list)
}

/// A short label of `strategy`, for charts.
fn strategy_short(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::RowAutocommit => "row, auto",
        Strategy::RowTransaction => "row, tx",
        Strategy::MultiValues => "VALUES",
        Strategy::Unnest => "UNNEST",
        Strategy::JsonRows => "JSON rows",
        Strategy::CopyText => "COPY text",
        Strategy::CopyBinary => "COPY bin",
    }
}

/// The databases that have cells, in their order.
fn databases_of<'a>(cells: impl Iterator<Item = &'a Database>) -> Vec<Database> {
    let mut found: Vec<Database> = cells.copied().collect();
    found.sort();
    found.dedup();
    found
}

fn bulk_section(
    results: &DbBenchResults,
    findings: &mut Vec<String>,
) -> (Vec<Table>, Vec<charts::BarChart>) {
    let (mut tables, mut chart_list) = (Vec::new(), Vec::new());
    let sizes = results.settings.bulk_rows.clone();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let mut fastest_per_database = Vec::new();
    for database in databases_of(results.bulk.iter().map(|c| &c.database)) {
        let cells: Vec<&BulkCell> =
            results.bulk.iter().filter(|c| c.database == database).collect();
        let strategies = database.strategies();
        let mut header = vec!["strategy".to_owned(), "library".to_owned(), "how".to_owned()];
        header.extend(sizes.iter().map(|n| format!("{} rows: rows/s (s)", rate(*n as f64))));
        header.push("statements at the largest".into());
        let mut rows = Vec::new();
        for &strategy in &strategies {
            for library in Library::ALL {
                let mut row = vec![
                    Cell::text(strategy.name().replace('_', " ")),
                    Cell::text(library.name()),
                    Cell::text(strategy.how(library, database)),
                ];
                for &n in &sizes {
                    let cell = cells
                        .iter()
                        .find(|c| c.strategy == strategy && c.library == library && c.rows == n);
                    row.push(match cell {
                        Some(c) if !c.verified => {
                            Cell::number(c.failure.clone().unwrap_or_default()).with_class("bad")
                        }
                        Some(c) => {
                            Cell::number(format!("{} ({:.2})", rate(c.rows_per_second), c.seconds))
                        }
                        None => Cell::number("–"),
                    });
                }
                row.push(Cell::number(count(strategy.statements(largest, database))));
                rows.push(row);
            }
        }
        let at_largest = |strategy: Strategy| {
            cells
                .iter()
                .filter(|c| c.rows == largest && c.strategy == strategy && c.verified)
                .max_by(|a, b| a.rows_per_second.total_cmp(&b.rows_per_second))
        };
        if let (Some(slowest), Some(fastest)) = (
            at_largest(Strategy::RowAutocommit),
            strategies
                .iter()
                .filter_map(|s| at_largest(*s))
                .max_by(|a, b| a.rows_per_second.total_cmp(&b.rows_per_second)),
        ) {
            findings.push(format!(
                "{}: bulk insert of {} rows row by row in autocommit took {:.2} s at best ({}); {} with {} took {:.2} s — {} faster. Every table read back equal to what was sent{}.",
                database.label(),
                rate(largest as f64),
                slowest.seconds,
                slowest.library.name(),
                fastest.strategy.name().replace('_', " "),
                fastest.library.name(),
                fastest.seconds,
                ratio(fastest.rows_per_second, slowest.rows_per_second),
                if cells.iter().all(|c| c.verified) { "" } else { " — except the cells marked in red" }
            ));
            fastest_per_database.push(*fastest);
        }
        // Strategies not here, grouped by reason.
        let mut unsupported: Vec<(String, &str)> = Vec::new();
        for strategy in Strategy::ALL {
            if let Err(why) = database.supports(strategy) {
                match unsupported.iter_mut().find(|(_, reason)| *reason == why) {
                    Some((names, _)) => *names = format!("{names}, {}", strategy.name()),
                    None => unsupported.push((strategy.name().to_owned(), why)),
                }
            }
        }
        let unsupported: Vec<String> =
            unsupported.into_iter().map(|(names, why)| format!("{names}: {why}")).collect();
        tables.push(Table {
            title: format!("{}: rows per second by strategy", database.label()),
            note: format!(
                "Into an empty table with a primary key, on one connection; the time includes the commit. Strategies after the first two run in one transaction.{}",
                if unsupported.is_empty() {
                    String::new()
                } else {
                    format!(" Not here — {}.", unsupported.join("; "))
                }
            ),
            header,
            rows,
        });
        let groups: Vec<String> =
            strategies.iter().map(|s| strategy_short(*s).to_owned()).collect();
        let values: Vec<BarValue> = cells
            .iter()
            .filter(|c| c.rows == largest && c.verified)
            .filter_map(|c| {
                Some(BarValue {
                    group: strategies.iter().position(|s| *s == c.strategy)?,
                    slot: Library::ALL.iter().position(|l| *l == c.library)?,
                    value: c.rows_per_second,
                    range: None,
                    colour: library_colour(c.library),
                    title: format!(
                        "{} {}: {} rows/s",
                        c.library.name(),
                        c.strategy.name(),
                        rate(c.rows_per_second)
                    ),
                })
            })
            .collect();
        chart_list.push(charts::bar_chart(
            &groups,
            2,
            &values,
            &[],
            &format!("{} rows/s, {} rows", database.label(), rate(largest as f64)),
        ));
    }
    if !fastest_per_database.is_empty() {
        findings.push(format!(
            "Every strategy binds its values — arrays, a JSON document or the COPY stream, never SQL text (PostgreSQL's statement log and MariaDB's general log prove it: the tests no_row_value_ever_appears_in_the_sql_text, no_row_value_appears_in_a_statement_text_mariadb_receives; SQLite runs the same code as MariaDB). Fastest at {} rows: {}.",
            rate(largest as f64),
            fastest_per_database
                .iter()
                .map(|c| format!(
                    "{} {} with {} ({} rows/s)",
                    c.database.label(),
                    c.strategy.name().replace('_', " "),
                    c.library.name(),
                    rate(c.rows_per_second)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    (tables, chart_list)
}

fn batch_section(results: &DbBenchResults, findings: &mut Vec<String>) -> Vec<Table> {
    databases_of(results.batch.iter().map(|c| &c.database))
        .into_iter()
        .map(|database| batch_table(results, database, findings))
        .collect()
}

fn batch_table(results: &DbBenchResults, database: Database, findings: &mut Vec<String>) -> Table {
    let s = &results.settings;
    let cells_here: Vec<&BatchCell> =
        results.batch.iter().filter(|c| c.database == database).collect();
    let mut header = vec!["rows".to_owned(), "parallelism".to_owned(), "pool".to_owned()];
    header.extend(Access::ALL.iter().map(|a| format!("{}: job s (seed s)", access_label(*a))));
    header.push("fastest job".into());
    header.push("fastest seed".into());
    let mut rows = Vec::new();
    // The job (read, transform, write) and the seed insert are ranked apart, as the JVM
    // study ranked the job: the seed is a bulk insert, measured as such in its own section.
    let (mut job_wins, mut seed_wins) = ([0usize; 3], [0usize; 3]);
    let index = |access: Access| Access::ALL.iter().position(|a| *a == access).unwrap_or(0);
    for &n in &s.batch_rows {
        for &p in &s.batch_parallelism {
            for &pool in &s.pool_sizes {
                let cells: Vec<Option<&BatchCell>> = Access::ALL
                    .iter()
                    .map(|a| {
                        cells_here.iter().copied().find(|c| {
                            c.access == *a && c.rows == n && c.parallelism == p && c.pool == pool
                        })
                    })
                    .collect();
                if cells.iter().all(Option::is_none) {
                    continue;
                }
                let fastest = |seconds: fn(&BatchCell) -> f64| {
                    cells
                        .iter()
                        .flatten()
                        .filter(|c| c.verified)
                        .min_by(|a, b| seconds(a).total_cmp(&seconds(b)))
                        .map(|c| c.access)
                };
                let (job, seed) = (fastest(|c| c.job_seconds), fastest(|c| c.seed_seconds));
                let mut row = vec![
                    Cell::number(count(n)),
                    Cell::number(p.to_string()),
                    Cell::number(pool.to_string()),
                ];
                for cell in &cells {
                    row.push(match cell {
                        Some(c) if !c.verified => Cell::number(format!(
                            "wrong output: {}",
                            c.failure.clone().unwrap_or_default()
                        ))
                        .with_class("bad"),
                        Some(c) => {
                            Cell::number(format!("{:.3} ({:.3})", c.job_seconds, c.seed_seconds))
                                .with_class(if job == Some(c.access) { "best" } else { "" })
                        }
                        None => Cell::number("–"),
                    });
                }
                for (winner, wins) in [(job, &mut job_wins), (seed, &mut seed_wins)] {
                    if let Some(winner) = winner {
                        wins[index(winner)] += 1;
                    }
                    row.push(Cell::text(winner.map_or("–", access_label)));
                }
                rows.push(row);
            }
        }
    }
    let tally = |wins: [usize; 3]| {
        Access::ALL
            .iter()
            .zip(wins)
            .map(|(a, n)| format!("{} {n}", access_label(*a)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let combinations: usize = job_wins.iter().sum();
    findings.push(format!(
        "{}: batch job, fastest of the three in {combinations} combinations of size × parallelism × pool — the job (read, transform, write): {}; the seed insert: {}. Every output was checked row by row{}.",
        database.label(),
        tally(job_wins),
        tally(seed_wins),
        if cells_here.iter().all(|c| c.verified) { " and was exact" } else { " — some were wrong (in red)" }
    ));
    Table {
        title: format!("{}: seed, then read in partitions, transform, write", database.label()),
        note: format!(
            "Seconds of the job, and of the seed insert before it (the fastest job in bold); each partition in one transaction on its own worker.{}",
            if database == Database::Sqlite {
                " SQLite has one writer: the partitions' transactions begin IMMEDIATE and take turns; a waiting writer sleeps in SQLite's busy handler (steps of 1 to 100 ms), and those sleeps are in the times of all three styles."
            } else {
                ""
            }
        ),
        header,
        rows,
    }
}

fn tasks_section(results: &DbBenchResults, findings: &mut Vec<String>) -> Option<Table> {
    if results.tasks.is_empty() {
        return None;
    }
    let header =
        ["variant", "tasks", "wait", "threads", "wall ms", "expected ms", "most waiting at once"]
            .map(str::to_owned)
            .to_vec();
    let rows = results
        .tasks
        .iter()
        .map(|t| {
            vec![
                Cell::text(t.variant.name().replace('_', " ")),
                Cell::number(count(t.tasks)),
                Cell::number(format!("{} ms", t.wait_ms)),
                Cell::number(t.threads.to_string()),
                Cell::number(rate(t.wall_ms)),
                Cell::number(rate(t.expected_ms)),
                Cell::number(count(t.max_concurrency)),
            ]
        })
        .collect();
    let find = |name: &str| results.tasks.iter().find(|t| t.variant.name() == name);
    if let (Some(pool), Some(tasks)) = (find("os_thread_pool"), find("tokio_tasks")) {
        findings.push(format!(
            "{} tasks waiting {} ms each: {} ms on {} OS threads, {} ms as tokio tasks (the JVM: 5,124 ms on 200 threads, 108 ms on virtual threads).",
            rate(pool.tasks as f64),
            pool.wait_ms,
            rate(pool.wall_ms),
            pool.threads,
            rate(tasks.wall_ms)
        ));
    }
    if let (Some(blocked), Some(right)) =
        (find("blocking_query_in_async"), find("blocking_query_offloaded"))
    {
        findings.push(format!(
            "A blocking diesel query inside async tasks on a {}-worker runtime: {} ms for {} queries, at most {} at once; handed to spawn_blocking: {} ms, {} at once.",
            blocked.threads,
            rate(blocked.wall_ms),
            blocked.tasks,
            blocked.max_concurrency,
            rate(right.wall_ms),
            right.max_concurrency
        ));
    }
    Some(Table {
        title: String::new(),
        note: "Expected: ⌈tasks ÷ most waiting at once⌉ × wait — what the wall time would be if that many had waited all the time.".into(),
        header,
        rows,
    })
}

/// The page of `results`.
pub fn render(results: &DbBenchResults) -> anyhow::Result<String> {
    let mut findings = Vec::new();
    let (crud_tables, crud_charts) = crud_section(results, &mut findings);
    let (bulk_tables, bulk_charts) = bulk_section(results, &mut findings);
    let batch_tables = batch_section(results, &mut findings);
    let tasks_table = tasks_section(results, &mut findings);
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
            ("wall time".into(), format!("{:.0} s", results.run.wall_seconds)),
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
            "One sample per cell, in one run: compare the access styles within a row (measured back to back, their order rotating), not across runs; this machine's speed drifts by tens of percent over minutes.".into(),
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
    let environment = loadgen::report::page_environment("db-microbench.html", TEMPLATE)?;
    Ok(environment.get_template("db-microbench.html")?.render(minijinja::value::Serde(&page))?)
}
