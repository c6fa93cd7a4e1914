//! `summary/db-microbench.html`: the page of a `dbbench` results file, in the summary's
//! style (tables and inline SVG charts, nothing fetched). Every number on it comes from the
//! results file; the sentences that compare are computed from it too.

use std::collections::BTreeMap;

use bookstore_report::charts::{self, BarValue, Legend, PALETTE};
use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, LogRatio, Summary, family};
use serde::Serialize;

use crate::bulk::{Library, Strategy};
use crate::crud::Op;
use crate::measure::Access;
use crate::results::{BatchCell, BulkCell, CrudCell, DbBenchResults, TasksCell};
use crate::targets::Database;
use crate::tasks::Variant;

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

/// The group of the styles without errors.
fn style_group(by_access: &BTreeMap<Access, (Rounds, u64)>) -> Group {
    let members: Vec<(String, Rounds)> = by_access
        .iter()
        .filter(|(_, (_, errors))| *errors == 0)
        .map(|(access, (rounds, _))| (access_label(*access).to_owned(), rounds.clone()))
        .collect();
    Group::paired(&members)
}

/// Each configuration of one operation: (pool, workers) → the styles' rounds.
type Configurations = BTreeMap<(u32, usize), BTreeMap<Access, (Rounds, u64)>>;

fn configurations(results: &DbBenchResults, op: Op, index: bool) -> Configurations {
    let mut found: Configurations = BTreeMap::new();
    for cell in results.crud.iter().filter(|c| c.op == op && c.join_index == index) {
        let entry = found.entry((cell.pool, cell.workers)).or_default();
        let style = entry.entry(cell.access).or_default();
        style.0.insert(cell.round, cell.ops_per_second);
        style.1 += cell.errors;
    }
    found
}

/// A style's best configuration by median ops/s (errors excluded): `(pool, workers)` and
/// its rounds.
fn best_configuration(configs: &Configurations, access: Access) -> Option<((u32, usize), Rounds)> {
    configs
        .iter()
        .filter_map(|(key, styles)| {
            let (rounds, errors) = styles.get(&access)?;
            (*errors == 0).then(|| (*key, rounds.clone()))
        })
        .max_by(|a, b| median(&a.1).unwrap_or(0.0).total_cmp(&median(&b.1).unwrap_or(0.0)))
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
    // Each style at its best configuration; sqlx against the better diesel there. The best
    // configurations were measured at different times, so this comparison is unpaired
    // (Welch on the logs), all operations one family.
    let mut header = vec!["operation".to_owned()];
    header
        .extend(Access::ALL.iter().map(|a| format!("{} ops/s (pool, workers)", access_label(*a))));
    header.push("sqlx ÷ best diesel".to_owned());
    let mut bests = Vec::new();
    let mut tests = Vec::new();
    for &(op, index) in &variants {
        let configs = configurations(results, op, index);
        let of: Vec<Option<((u32, usize), Rounds)>> =
            Access::ALL.iter().map(|a| best_configuration(&configs, *a)).collect();
        let diesel = of[1..]
            .iter()
            .flatten()
            .max_by(|a, b| median(&a.1).unwrap_or(0.0).total_cmp(&median(&b.1).unwrap_or(0.0)));
        tests.push(match (&of[0], diesel) {
            (Some(sqlx), Some(diesel)) => LogRatio::unpaired(
                &diesel.1.values().copied().collect::<Vec<_>>(),
                &sqlx.1.values().copied().collect::<Vec<_>>(),
            ),
            _ => None,
        });
        bests.push(of);
    }
    let judged = family(&tests, FALSE_DISCOVERY_RATE);
    let mut rows = Vec::new();
    for ((&(op, index), of), comparison) in variants.iter().zip(&bests).zip(&judged) {
        let top = of.iter().flatten().filter_map(|(_, r)| median(r)).fold(0.0, f64::max);
        let mut row = vec![Cell::text(op_label(op, index))];
        for best in of {
            row.push(match best {
                Some(((pool, workers), rounds)) => {
                    Cell::number(format!("{} ({pool}, {workers})", rate_range(rounds)))
                        .with_class(if median(rounds) == Some(top) { "best" } else { "" })
                }
                None => Cell::number("–"),
            });
        }
        row.push(Cell::text(comparison.map_or("–".into(), |c| c.text())));
        rows.push(row);
    }
    let mut tables = vec![Table {
        title: "Best of each access style".into(),
        note: "Operations per second in the window (median and range over the rounds), at the pool size and worker count where each style did best; the highest median in bold. The last column compares those two best configurations, which were measured at different times: Welch's interval on the logs of their rounds, the operations one family (Benjamini–Hochberg).".into(),
        header,
        rows,
    }];
    // The join index, each at its best configuration.
    let best_of = |index: bool| {
        let configs = configurations(results, Op::Join, index);
        Access::ALL
            .iter()
            .filter_map(|a| best_configuration(&configs, *a))
            .max_by(|a, b| median(&a.1).unwrap_or(0.0).total_cmp(&median(&b.1).unwrap_or(0.0)))
    };
    if let (Some(with), Some(without)) = (best_of(true), best_of(false)) {
        let comparison = family(
            &[LogRatio::unpaired(
                &without.1.values().copied().collect::<Vec<_>>(),
                &with.1.values().copied().collect::<Vec<_>>(),
            )],
            FALSE_DISCOVERY_RATE,
        )[0];
        findings.push(format!(
            "The join's index on orders.user_id: {} ops/s with it, {} without (medians, each at its best configuration): with ÷ without {}.",
            rate(median(&with.1).unwrap_or(0.0)),
            rate(median(&without.1).unwrap_or(0.0)),
            comparison.map_or("–".into(), |c| c.text())
        ));
    }
    // Who leads at each configuration, compared round by round there.
    let mut wins: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut undecided, mut configurations_seen) = (0, 0);
    for &(op, index) in &variants {
        for styles in configurations(results, op, index).values() {
            let group = style_group(styles);
            configurations_seen += 1;
            let ranking = group.ranking();
            match (ranking.best, ranking.order.first()) {
                (true, Some(&first)) => {
                    let name = Access::ALL
                        .iter()
                        .map(|a| access_label(*a))
                        .find(|l| *l == group.names()[first])
                        .unwrap_or("?");
                    *wins.entry(name).or_default() += 1;
                }
                _ => undecided += 1,
            }
        }
    }
    findings.push(format!(
        "CRUD, compared round by round at each of {configurations_seen} configurations (operation × pool × workers): {}; no single fastest (the leaders not distinguishable) at {undecided}.",
        Access::ALL
            .iter()
            .map(|a| format!(
                "{} fastest at {}",
                access_label(*a),
                wins.get(access_label(*a)).copied().unwrap_or(0)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // Every cell.
    let pools = results.settings.pool_sizes.clone();
    let workers = results.settings.crud_workers.clone();
    for &(op, index) in &variants {
        let configs = configurations(results, op, index);
        let mut header = vec!["access".to_owned(), "pool".to_owned()];
        header.extend(workers.iter().map(|w| format!("{w} worker(s): ops/s · p99")));
        let mut rows = Vec::new();
        for &pool in &pools {
            for access in Access::ALL {
                let mut row =
                    vec![Cell::text(access_label(access)), Cell::number(pool.to_string())];
                for &w in &workers {
                    let cells: Vec<&CrudCell> = results
                        .crud
                        .iter()
                        .filter(|c| {
                            c.op == op
                                && c.join_index == index
                                && c.access == access
                                && c.pool == pool
                                && c.workers == w
                        })
                        .collect();
                    let errors: u64 = cells.iter().map(|c| c.errors).sum();
                    let p99 = Summary::of(
                        &cells
                            .iter()
                            .filter_map(|c| c.latency_us.map(|l| l.p99_us as f64))
                            .collect::<Vec<_>>(),
                    );
                    let best = configs.get(&(pool, w)).is_some_and(|styles| {
                        let group = style_group(styles);
                        let ranking = group.ranking();
                        ranking.best
                            && ranking.order.first().map(|&i| group.names()[i].as_str())
                                == Some(access_label(access))
                    });
                    row.push(if cells.is_empty() {
                        Cell::number("–")
                    } else if errors > 0 {
                        Cell::number(format!("{errors} errors")).with_class("bad")
                    } else {
                        let rounds: Rounds =
                            cells.iter().map(|c| (c.round, c.ops_per_second)).collect();
                        Cell::number(format!(
                            "{} · {}",
                            rate(median(&rounds).unwrap_or(0.0)),
                            charts::latency_label(p99.map_or(0.0, |s| s.median))
                        ))
                        .with_class(if best { "best" } else { "" })
                    });
                }
                rows.push(row);
            }
        }
        tables.push(Table {
            title: op_label(op, index),
            note: "Medians over the rounds; in bold the style that is faster than both others at that configuration, compared round by round (none where the data cannot tell).".into(),
            header,
            rows,
        });
    }
    // A chart per operation at the largest pool: workers as groups, styles as bars.
    let pool = pools.iter().copied().max().unwrap_or(0);
    let groups: Vec<String> = workers.iter().map(|w| format!("{w} workers")).collect();
    let chart_list = variants
        .iter()
        .map(|&(op, index)| {
            let configs = configurations(results, op, index);
            let values: Vec<BarValue> = configs
                .iter()
                .filter(|((p, _), _)| *p == pool)
                .flat_map(|((_, w), styles)| {
                    let (workers, w) = (&workers, *w);
                    styles.iter().filter_map(move |(access, (rounds, errors))| {
                        let summary = Summary::of(&rounds.values().copied().collect::<Vec<_>>())?;
                        (*errors == 0).then_some(())?;
                        Some(BarValue {
                            group: workers.iter().position(|x| *x == w)?,
                            slot: Access::ALL.iter().position(|a| a == access)?,
                            value: summary.median,
                            range: (summary.n > 1).then_some((summary.min, summary.max)),
                            colour: access_colour(*access),
                            title: format!(
                                "{}: {} ops/s",
                                access_label(*access),
                                rate_range(rounds)
                            ),
                        })
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

/// The bulk cells of one database, strategy, library and size: rows/s by round, and the
/// first failure of any round (such a cell is shown, not compared).
fn bulk_rounds<'a>(cells: impl Iterator<Item = &'a BulkCell>) -> (Rounds, Rounds, Option<String>) {
    let (mut rates, mut seconds, mut failure) = (Rounds::new(), Rounds::new(), None);
    for cell in cells {
        rates.insert(cell.round, cell.rows_per_second);
        seconds.insert(cell.round, cell.seconds);
        if !cell.verified && failure.is_none() {
            failure = cell.failure.clone().or(Some("not verified".into()));
        }
    }
    (rates, seconds, failure)
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
        let of = |strategy: Strategy, library: Library, rows: usize| {
            bulk_rounds(
                cells
                    .iter()
                    .copied()
                    .filter(|c| c.strategy == strategy && c.library == library && c.rows == rows),
            )
        };
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
                    let (rates, seconds, failure) = of(strategy, library, n);
                    // The faster library at this strategy and size, round by round.
                    let group = Group::paired(
                        &Library::ALL
                            .iter()
                            .filter_map(|l| {
                                let (r, _, f) = of(strategy, *l, n);
                                (f.is_none() && !r.is_empty()).then(|| (l.name().to_owned(), r))
                            })
                            .collect::<Vec<_>>(),
                    );
                    let ranking = group.ranking();
                    let best = ranking.best
                        && ranking.order.first().map(|&i| group.names()[i].as_str())
                            == Some(library.name());
                    row.push(match failure {
                        Some(failure) => Cell::number(failure).with_class("bad"),
                        None if rates.is_empty() => Cell::number("–"),
                        None => Cell::number(format!(
                            "{} ({:.2})",
                            rate(median(&rates).unwrap_or(0.0)),
                            median(&seconds).unwrap_or(0.0)
                        ))
                        .with_class(if best { "best" } else { "" }),
                    });
                }
                row.push(Cell::number(count(strategy.statements(largest, database))));
                rows.push(row);
            }
        }
        // The slowest way and the fastest, at the largest size, each with its better library.
        let at_largest = |strategy: Strategy| {
            Library::ALL
                .iter()
                .filter_map(|l| {
                    let (rates, seconds, failure) = of(strategy, *l, largest);
                    (failure.is_none() && !rates.is_empty())
                        .then_some((strategy, *l, rates, seconds))
                })
                .max_by(|a, b| median(&a.2).unwrap_or(0.0).total_cmp(&median(&b.2).unwrap_or(0.0)))
        };
        if let (Some(slowest), Some(fastest)) = (
            at_largest(Strategy::RowAutocommit),
            strategies
                .iter()
                .filter_map(|s| at_largest(*s))
                .max_by(|a, b| median(&a.2).unwrap_or(0.0).total_cmp(&median(&b.2).unwrap_or(0.0))),
        ) {
            let comparison = family(
                &[LogRatio::unpaired(
                    &slowest.2.values().copied().collect::<Vec<_>>(),
                    &fastest.2.values().copied().collect::<Vec<_>>(),
                )],
                FALSE_DISCOVERY_RATE,
            )[0];
            findings.push(format!(
                "{}: bulk insert of {} rows row by row in autocommit took {:.2} s at best ({}); {} with {} took {:.2} s — rows/s {} (medians over the rounds). Every table read back equal to what was sent{}.",
                database.label(),
                rate(largest as f64),
                median(&slowest.3).unwrap_or(0.0),
                slowest.1.name(),
                fastest.0.name().replace('_', " "),
                fastest.1.name(),
                median(&fastest.3).unwrap_or(0.0),
                comparison.map_or("–".into(), |c| c.text()),
                if cells.iter().all(|c| c.verified) { "" } else { " — except the cells marked in red" }
            ));
            fastest_per_database.push((database, fastest.0, fastest.1, fastest.2.clone()));
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
                "Into an empty table with a primary key, on one connection; the time includes the commit. Strategies after the first two run in one transaction. Medians over the rounds; in bold the library faster than the other at that strategy and size, compared round by round (none where the data cannot tell).{}",
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
        let values: Vec<BarValue> = strategies
            .iter()
            .enumerate()
            .flat_map(|(group, &strategy)| {
                Library::ALL.iter().enumerate().filter_map(move |(slot, &library)| {
                    let (rates, _, failure) = of(strategy, library, largest);
                    let summary = Summary::of(&rates.values().copied().collect::<Vec<_>>())?;
                    failure.is_none().then_some(())?;
                    Some(BarValue {
                        group,
                        slot,
                        value: summary.median,
                        range: (summary.n > 1).then_some((summary.min, summary.max)),
                        colour: library_colour(library),
                        title: format!(
                            "{} {}: {} rows/s",
                            library.name(),
                            strategy.name(),
                            rate_range(&rates)
                        ),
                    })
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
            "Every strategy binds its values — arrays, a JSON document or the COPY stream, never SQL text (PostgreSQL's statement log and MariaDB's general log prove it: the tests no_row_value_ever_appears_in_the_sql_text, no_row_value_appears_in_a_statement_text_mariadb_receives; SQLite runs the same code as MariaDB). Highest median at {} rows: {}.",
            rate(largest as f64),
            fastest_per_database
                .iter()
                .map(|(database, strategy, library, rates)| format!(
                    "{} {} with {} ({} rows/s)",
                    database.label(),
                    strategy.name().replace('_', " "),
                    library.name(),
                    rate(median(rates).unwrap_or(0.0))
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
    // Each is compared as a rate (rows per second of it), round by round.
    let mut tallies: [BTreeMap<String, usize>; 2] = Default::default();
    let mut combinations = 0;
    for &n in &s.batch_rows {
        for &p in &s.batch_parallelism {
            for &pool in &s.pool_sizes {
                let config: Vec<&BatchCell> = cells_here
                    .iter()
                    .copied()
                    .filter(|c| c.rows == n && c.parallelism == p && c.pool == pool)
                    .collect();
                if config.is_empty() {
                    continue;
                }
                combinations += 1;
                let group = |seconds: fn(&BatchCell) -> f64| {
                    Group::paired(
                        &Access::ALL
                            .iter()
                            .filter_map(|a| {
                                let mine: Vec<&&BatchCell> =
                                    config.iter().filter(|c| c.access == *a).collect();
                                (!mine.is_empty() && mine.iter().all(|c| c.verified)).then(|| {
                                    let rounds: Rounds = mine
                                        .iter()
                                        .map(|c| (c.round, n as f64 / seconds(c).max(1e-9)))
                                        .collect();
                                    (access_label(*a).to_owned(), rounds)
                                })
                            })
                            .collect::<Vec<_>>(),
                    )
                };
                let (job, seed) = (group(|c| c.job_seconds), group(|c| c.seed_seconds));
                let job_best = job.ranking();
                let job_first = job_best
                    .best
                    .then(|| job_best.order.first().map(|&i| job.names()[i].clone()))
                    .flatten();
                let mut row = vec![
                    Cell::number(count(n)),
                    Cell::number(p.to_string()),
                    Cell::number(pool.to_string()),
                ];
                for access in Access::ALL {
                    let mine: Vec<&&BatchCell> =
                        config.iter().filter(|c| c.access == access).collect();
                    let times = |seconds: fn(&BatchCell) -> f64| {
                        let rounds: Rounds = mine.iter().map(|c| (c.round, seconds(c))).collect();
                        median(&rounds).unwrap_or(0.0)
                    };
                    row.push(match mine.iter().find(|c| !c.verified) {
                        _ if mine.is_empty() => Cell::number("–"),
                        Some(c) => Cell::number(format!(
                            "wrong output: {}",
                            c.failure.clone().unwrap_or_default()
                        ))
                        .with_class("bad"),
                        None => Cell::number(format!(
                            "{:.3} ({:.3})",
                            times(|c| c.job_seconds),
                            times(|c| c.seed_seconds)
                        ))
                        .with_class(
                            if job_first.as_deref() == Some(access_label(access)) {
                                "best"
                            } else {
                                ""
                            },
                        ),
                    });
                }
                let [job_tally, seed_tally] = &mut tallies;
                for (group, tally) in [(&job, job_tally), (&seed, seed_tally)] {
                    let text = leaders(group);
                    let key = match text.strip_prefix("best: ") {
                        Some(name) => name.to_owned(),
                        None => "no single fastest".to_owned(),
                    };
                    *tally.entry(key).or_default() += 1;
                    row.push(Cell::text(text));
                }
                rows.push(row);
            }
        }
    }
    let tally = |wins: &BTreeMap<String, usize>| {
        Access::ALL
            .iter()
            .map(|a| access_label(*a).to_owned())
            .chain(["no single fastest".to_owned()])
            .map(|name| format!("{name} {}", wins.get(&name).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    findings.push(format!(
        "{}: batch job in {combinations} combinations of size × parallelism × pool, the three styles compared round by round in each — fastest job (read, transform, write): {}; fastest seed insert: {}. Every output was checked row by row{}.",
        database.label(),
        tally(&tallies[0]),
        tally(&tallies[1]),
        if cells_here.iter().all(|c| c.verified) { " and was exact" } else { " — some were wrong (in red)" }
    ));
    Table {
        title: format!("{}: seed, then read in partitions, transform, write", database.label()),
        note: format!(
            "Seconds of the job, and of the seed insert before it (medians over the rounds); each partition in one transaction on its own worker. In bold, and named in the last columns, a style faster than both others, compared round by round; otherwise the styles the data cannot tell apart.{}",
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
    let mut variants: Vec<Variant> = Vec::new();
    for cell in &results.tasks {
        if !variants.contains(&cell.variant) {
            variants.push(cell.variant);
        }
    }
    let of = |variant: Variant| -> Vec<&TasksCell> {
        results.tasks.iter().filter(|t| t.variant == variant).collect()
    };
    let wall =
        |variant: Variant| -> Rounds { of(variant).iter().map(|t| (t.round, t.wall_ms)).collect() };
    let rows = variants
        .iter()
        .map(|&variant| {
            let cells = of(variant);
            let first = cells[0];
            let most = cells.iter().map(|t| t.max_concurrency).max().unwrap_or(0);
            vec![
                Cell::text(variant.name().replace('_', " ")),
                Cell::number(count(first.tasks)),
                Cell::number(format!("{} ms", first.wait_ms)),
                Cell::number(first.threads.to_string()),
                Cell::number(rate_range(&wall(variant))),
                Cell::number(rate(first.expected_ms)),
                Cell::number(count(most)),
            ]
        })
        .collect();
    // How many times faster the second did the same work, round by round (as rates).
    let faster = |slow: Variant, fast: Variant| {
        let as_rate = |v: Variant| -> Rounds {
            wall(v).into_iter().map(|(r, ms)| (r, 1000.0 / ms.max(1e-9))).collect()
        };
        Group::paired(&[
            (slow.name().to_owned(), as_rate(slow)),
            (fast.name().to_owned(), as_rate(fast)),
        ])
        .compare(slow.name(), fast.name())
        .map_or("–".into(), |c| c.text())
    };
    let present = |v: Variant| variants.contains(&v);
    if present(Variant::OsThreadPool) && present(Variant::TokioTasks) {
        let pool = of(Variant::OsThreadPool)[0];
        findings.push(format!(
            "{} tasks waiting {} ms each: {} ms on {} OS threads, {} ms as tokio tasks (medians over the rounds; tasks ÷ threads as a rate: {}) — the JVM: 5,124 ms on 200 threads, 108 ms on virtual threads.",
            rate(pool.tasks as f64),
            pool.wait_ms,
            rate(median(&wall(Variant::OsThreadPool)).unwrap_or(0.0)),
            pool.threads,
            rate(median(&wall(Variant::TokioTasks)).unwrap_or(0.0)),
            faster(Variant::OsThreadPool, Variant::TokioTasks)
        ));
    }
    if present(Variant::BlockingQueryInAsync) && present(Variant::BlockingQueryOffloaded) {
        let blocked = of(Variant::BlockingQueryInAsync);
        let right = of(Variant::BlockingQueryOffloaded);
        findings.push(format!(
            "A blocking diesel query inside async tasks on a {}-worker runtime: {} ms for {} queries, at most {} at once; handed to spawn_blocking: {} ms, {} at once (offloaded ÷ blocked as a rate: {}).",
            blocked[0].threads,
            rate(median(&wall(Variant::BlockingQueryInAsync)).unwrap_or(0.0)),
            blocked[0].tasks,
            blocked.iter().map(|t| t.max_concurrency).max().unwrap_or(0),
            rate(median(&wall(Variant::BlockingQueryOffloaded)).unwrap_or(0.0)),
            right.iter().map(|t| t.max_concurrency).max().unwrap_or(0),
            faster(Variant::BlockingQueryInAsync, Variant::BlockingQueryOffloaded)
        ));
    }
    Some(Table {
        title: String::new(),
        note: "Wall time: median (range) over the rounds. Expected: ⌈tasks ÷ most waiting at once⌉ × wait — what the wall time would be if that many had waited all the time.".into(),
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
