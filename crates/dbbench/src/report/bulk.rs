//! The bulk insert section: every strategy of both libraries on every database.

use bookstore_report::charts::{self, BarValue};
use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, LogRatio, Summary, family};

use super::{Cell, Rounds, Table, count, median, rate, rate_range};
use super::{databases_of, library_colour};
use crate::bulk::{Library, Strategy};
use crate::results::{BulkCell, DbBenchResults};

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

pub(super) fn bulk_section(
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
