//! The bulk insert section: every strategy of both libraries on every database. The two
//! libraries are compared round by round ([`Keyed`]), the slowest strategy against the
//! fastest through `judge_one`; [`Bulk`] is what `templates/bulk.html` writes.

use bookstore_report::charts::{self, BarChart, BarValue};
use bookstore_stats::{Samples, Summary, judge_one};
use serde::Serialize;

use super::format::{Keyed, Rounds, comparison, count, databases_of, library_colour};
use super::format::{rate, rate_range, values};
use crate::dimensions::{Database, Library, Strategy};
use crate::results::{BulkCell, DbBenchResults};

/// The bulk section's context.
#[derive(Debug, Serialize)]
pub(super) struct Bulk {
    /// The largest row count, which the charts and the findings are of.
    largest: String,
    databases: Vec<BulkDatabase>,
    /// Each database's fastest way at the largest size (those with a finding).
    fastest: Vec<Fastest>,
}

#[derive(Debug, Serialize)]
struct BulkDatabase {
    database: &'static str,
    chart: BarChart,
    /// The row counts, as the table's columns.
    sizes: Vec<String>,
    rows: Vec<StrategyRow>,
    /// Strategies it does not have, grouped by why.
    unsupported: Vec<Unsupported>,
    finding: Option<SlowestFastest>,
}

#[derive(Debug, Serialize)]
struct StrategyRow {
    strategy: String,
    library: &'static str,
    how: &'static str,
    /// By size, as [`BulkDatabase::sizes`]; absent where not measured.
    cells: Vec<Option<SizeCell>>,
    statements_at_largest: String,
}

#[derive(Debug, Serialize)]
struct SizeCell {
    /// A round that failed or was not verified (then the cell shows it alone).
    failure: Option<Failure>,
    /// Median rows/s and seconds; in bold the faster library, round by round.
    text: String,
    best: bool,
}

#[derive(Debug, Clone, Serialize)]
struct Failure {
    /// What went wrong, when the results say.
    what: Option<String>,
}

#[derive(Debug, Serialize)]
struct Unsupported {
    strategies: String,
    why: &'static str,
}

/// Row by row in autocommit against the fastest way, at the largest size.
#[derive(Debug, Serialize)]
struct SlowestFastest {
    slowest_seconds: String,
    slowest_library: &'static str,
    fastest_strategy: String,
    fastest_library: &'static str,
    fastest_seconds: String,
    fastest_vs_slowest: Option<String>,
    all_verified: bool,
}

#[derive(Debug, Serialize)]
struct Fastest {
    database: &'static str,
    strategy: String,
    library: &'static str,
    rows_per_second: String,
}

/// One strategy, library and size on one database: rows/s and seconds by round, and the
/// first failure of any round (such a cell is shown, not compared).
#[derive(Debug, Default)]
struct Measured {
    rates: Rounds,
    seconds: Rounds,
    failure: Option<Failure>,
}

impl Measured {
    fn of<'a>(cells: impl Iterator<Item = &'a BulkCell>) -> Self {
        let mut measured = Self::default();
        for cell in cells {
            measured.rates.insert(cell.round, cell.rows_per_second);
            measured.seconds.insert(cell.round, cell.seconds);
            if !cell.verified && measured.failure.is_none() {
                measured.failure = Some(Failure { what: cell.failure.clone() });
            }
        }
        measured
    }

    /// Measured and correct: what may be compared.
    fn comparable(&self) -> bool {
        self.failure.is_none() && !self.rates.is_empty()
    }
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

fn spaced(strategy: Strategy) -> String {
    strategy.name().replace('_', " ")
}

/// The section's context.
pub(super) fn context(results: &DbBenchResults) -> Bulk {
    let largest = results.settings.bulk_rows.iter().copied().max().unwrap_or(0);
    let mut fastest = Vec::new();
    let databases = databases_of(results.bulk.iter().map(|c| &c.database))
        .into_iter()
        .map(|database| {
            let (section, best) = database_context(results, database, largest);
            fastest.extend(best);
            section
        })
        .collect();
    Bulk { largest: rate(largest as f64), databases, fastest }
}

fn database_context(
    results: &DbBenchResults,
    database: Database,
    largest: usize,
) -> (BulkDatabase, Option<Fastest>) {
    let cells: Vec<&BulkCell> = results.bulk.iter().filter(|c| c.database == database).collect();
    let of = |strategy: Strategy, library: Library, rows: usize| {
        Measured::of(
            cells
                .iter()
                .copied()
                .filter(|c| c.strategy == strategy && c.library == library && c.rows == rows),
        )
    };
    let sizes = &results.settings.bulk_rows;
    let strategies = database.strategies();
    let mut rows = Vec::new();
    for &strategy in &strategies {
        for library in Library::ALL {
            let cells = sizes
                .iter()
                .map(|&n| {
                    let measured = of(strategy, library, n);
                    if measured.failure.is_none() && measured.rates.is_empty() {
                        return None;
                    }
                    // The faster library at this strategy and size, round by round.
                    let libraries = Keyed::paired(
                        Library::ALL
                            .iter()
                            .map(|&l| (l, of(strategy, l, n)))
                            .filter(|(_, m)| m.comparable())
                            .map(|(l, m)| (l, l.name().to_owned(), m.rates))
                            .collect(),
                    );
                    Some(SizeCell {
                        text: format!(
                            "{} ({:.2})",
                            rate(
                                Summary::median_of(measured.rates.values().copied()).unwrap_or(0.0)
                            ),
                            Summary::median_of(measured.seconds.values().copied()).unwrap_or(0.0)
                        ),
                        best: libraries.best() == Some(library),
                        failure: measured.failure,
                    })
                })
                .collect();
            rows.push(StrategyRow {
                strategy: spaced(strategy),
                library: library.name(),
                how: strategy.how(library, database),
                cells,
                statements_at_largest: count(strategy.statements(largest, database)),
            });
        }
    }
    // The slowest way and the fastest, at the largest size, each with its better library.
    let at_largest = |strategy: Strategy| {
        Library::ALL
            .iter()
            .map(|&l| (strategy, l, of(strategy, l, largest)))
            .filter(|(_, _, m)| m.comparable())
            .max_by(|a, b| rate_order(&a.2, &b.2))
    };
    let slowest_fastest = at_largest(Strategy::RowAutocommit).zip(
        strategies.iter().filter_map(|s| at_largest(*s)).max_by(|a, b| rate_order(&a.2, &b.2)),
    );
    let (finding, fastest) = match slowest_fastest {
        Some(((_, slow_library, slowest), (strategy, library, fastest))) => {
            let judged = judge_one(Samples::Unpaired {
                a: &values(&slowest.rates),
                b: &values(&fastest.rates),
            });
            let finding = SlowestFastest {
                slowest_seconds: format!(
                    "{:.2}",
                    Summary::median_of(slowest.seconds.values().copied()).unwrap_or(0.0)
                ),
                slowest_library: slow_library.name(),
                fastest_strategy: spaced(strategy),
                fastest_library: library.name(),
                fastest_seconds: format!(
                    "{:.2}",
                    Summary::median_of(fastest.seconds.values().copied()).unwrap_or(0.0)
                ),
                fastest_vs_slowest: comparison(judged),
                all_verified: cells.iter().all(|c| c.verified),
            };
            let best = Fastest {
                database: database.label(),
                strategy: spaced(strategy),
                library: library.name(),
                rows_per_second: rate(
                    Summary::median_of(fastest.rates.values().copied()).unwrap_or(0.0),
                ),
            };
            (Some(finding), Some(best))
        }
        None => (None, None),
    };
    let section = BulkDatabase {
        database: database.label(),
        chart: chart(database, &strategies, largest, of),
        sizes: sizes.iter().map(|n| rate(*n as f64)).collect(),
        rows,
        unsupported: unsupported(database),
        finding,
    };
    (section, fastest)
}

/// Which of two measurements has the higher median rows/s.
fn rate_order(a: &Measured, b: &Measured) -> std::cmp::Ordering {
    Summary::median_of(a.rates.values().copied())
        .unwrap_or(0.0)
        .total_cmp(&Summary::median_of(b.rates.values().copied()).unwrap_or(0.0))
}

/// The strategies `database` does not have, grouped by why.
fn unsupported(database: Database) -> Vec<Unsupported> {
    let mut found: Vec<Unsupported> = Vec::new();
    for strategy in Strategy::ALL {
        if let Err(why) = database.supports(strategy) {
            match found.iter_mut().find(|u| u.why == why) {
                Some(u) => u.strategies = format!("{}, {}", u.strategies, strategy.name()),
                None => found.push(Unsupported { strategies: strategy.name().to_owned(), why }),
            }
        }
    }
    found
}

/// Rows/s of every strategy at the largest size: strategies as groups, libraries as bars.
fn chart(
    database: Database,
    strategies: &[Strategy],
    largest: usize,
    of: impl Fn(Strategy, Library, usize) -> Measured,
) -> BarChart {
    let groups: Vec<String> = strategies.iter().map(|s| strategy_short(*s).to_owned()).collect();
    let mut bars = Vec::new();
    for (group, &strategy) in strategies.iter().enumerate() {
        for (slot, &library) in Library::ALL.iter().enumerate() {
            let measured = of(strategy, library, largest);
            let Some(summary) = Summary::of(&values(&measured.rates)) else { continue };
            if measured.failure.is_some() {
                continue;
            }
            bars.push(BarValue {
                group,
                slot,
                value: summary.median,
                range: (summary.n > 1).then_some((summary.min, summary.max)),
                colour: library_colour(library),
                title: format!(
                    "{} {}: {} rows/s",
                    library.name(),
                    strategy.name(),
                    rate_range(&measured.rates)
                ),
            });
        }
    }
    let title = format!("{} rows/s, {} rows", database.label(), rate(largest as f64));
    charts::bar_chart(&groups, Library::ALL.len(), &bars, &[], &title)
}
