//! The CRUD section: each access style at its best configuration, who leads at each
//! configuration, and every cell. The statistics come from `bookstore_stats` (`judge` for
//! the unpaired comparisons of best configurations, [`Keyed`] for the styles measured side
//! by side); [`Crud`] is what `templates/crud.html` writes.

use std::collections::BTreeMap;

use bookstore_report::charts::{self, BarChart, BarValue};
use bookstore_stats::{Samples, Summary, judge, judge_one};
use serde::Serialize;

use super::format::{Keyed, Rounds, access_colour, access_label, access_series, comparison};
use super::format::{op_label, rate, rate_range, values};
use crate::crud::Op;
use crate::measure::Access;
use crate::results::DbBenchResults;

/// The CRUD section's context.
#[derive(Debug, Serialize)]
pub(super) struct Crud {
    /// The styles' names, in the order of the tables' columns ([`Access::ALL`]).
    styles: Vec<&'static str>,
    /// One per operation, at the largest pool.
    charts: Vec<BarChart>,
    /// Each operation, each style at its best configuration.
    best: Vec<BestRow>,
    join_index: Option<JoinIndex>,
    /// Absent when nothing was measured.
    leads: Option<Leads>,
    /// Every cell, a table per operation.
    operations: Vec<OperationTable>,
}

#[derive(Debug, Serialize)]
struct BestRow {
    operation: String,
    /// By style, as [`Crud::styles`]; absent where a style had errors everywhere.
    styles: Vec<Option<Measure>>,
    /// sqlx against the better diesel style, each at its best.
    sqlx_vs_diesel: Option<String>,
}

/// A measured cell: its text, and whether it is the one to show in bold.
#[derive(Debug, Serialize)]
struct Measure {
    text: String,
    best: bool,
}

/// The join with its index against without, each at its best configuration.
#[derive(Debug, Serialize)]
struct JoinIndex {
    with_index: String,
    without_index: String,
    with_vs_without: Option<String>,
}

/// At how many configurations each style led, compared round by round there.
#[derive(Debug, Serialize)]
struct Leads {
    configurations: usize,
    /// By style, as [`Crud::styles`].
    wins: Vec<(&'static str, usize)>,
    /// Configurations where the leaders were not distinguishable.
    undecided: usize,
}

#[derive(Debug, Serialize)]
struct OperationTable {
    operation: String,
    workers: Vec<usize>,
    rows: Vec<OperationRow>,
}

#[derive(Debug, Serialize)]
struct OperationRow {
    style: &'static str,
    pool: u32,
    /// By worker count, as [`OperationTable::workers`]; absent where not measured.
    cells: Vec<Option<OperationCell>>,
}

#[derive(Debug, Serialize)]
struct OperationCell {
    /// Failed operations over the rounds; the cell is shown by them alone.
    errors: u64,
    /// Median ops/s and p99 latency.
    measure: Measure,
}

/// One style at one configuration: ops/s by round, and the errors of all rounds.
#[derive(Debug, Clone, Default)]
struct Style {
    rounds: Rounds,
    errors: u64,
}

/// Each configuration of one operation: (pool, workers) → the styles measured there.
type Configurations = BTreeMap<(u32, usize), BTreeMap<Access, Style>>;

fn configurations(results: &DbBenchResults, op: Op, index: bool) -> Configurations {
    let mut found: Configurations = BTreeMap::new();
    for cell in results.crud.iter().filter(|c| c.op == op && c.join_index == index) {
        let style = found.entry((cell.pool, cell.workers)).or_default();
        let style = style.entry(cell.access).or_default();
        style.rounds.insert(cell.round, cell.ops_per_second);
        style.errors += cell.errors;
    }
    found
}

/// The styles without errors at one configuration, compared round by round.
fn style_group(styles: &BTreeMap<Access, Style>) -> Keyed<Access> {
    Keyed::paired(
        styles
            .iter()
            .filter(|(_, style)| style.errors == 0)
            .map(|(access, style)| {
                (*access, access_label(*access).to_owned(), style.rounds.clone())
            })
            .collect(),
    )
}

/// The configuration with the highest and its rounds.
type Best = ((u32, usize), Rounds);

fn highest<'a>(candidates: impl Iterator<Item = &'a Best>) -> Option<&'a Best> {
    candidates.max_by(|a, b| {
        Summary::median_of(a.1.values().copied())
            .unwrap_or(0.0)
            .total_cmp(&Summary::median_of(b.1.values().copied()).unwrap_or(0.0))
    })
}

/// A style's best configuration by median ops/s (configurations with errors excluded).
fn best_configuration(configs: &Configurations, access: Access) -> Option<Best> {
    let candidates: Vec<Best> = configs
        .iter()
        .filter_map(|(key, styles)| {
            let style = styles.get(&access)?;
            (style.errors == 0).then(|| (*key, style.rounds.clone()))
        })
        .collect();
    highest(candidates.iter()).cloned()
}

/// The operations measured, the join without its index apart, in the order measured.
fn op_variants(results: &DbBenchResults) -> Vec<(Op, bool)> {
    let mut variants = Vec::new();
    for cell in &results.crud {
        if !variants.contains(&(cell.op, cell.join_index)) {
            variants.push((cell.op, cell.join_index));
        }
    }
    variants
}

/// The section's context.
pub(super) fn context(results: &DbBenchResults) -> Crud {
    let variants = op_variants(results);
    let measured = !results.crud.is_empty();
    Crud {
        styles: Access::ALL.map(access_label).to_vec(),
        charts: if measured { charts_of(results, &variants) } else { Vec::new() },
        best: if measured { best_rows(results, &variants) } else { Vec::new() },
        join_index: join_index(results),
        leads: measured.then(|| leads(results, &variants)),
        operations: variants
            .iter()
            .map(|&(op, index)| operation_table(results, op, index))
            .collect(),
    }
}

/// Each style at its best configuration; sqlx against the better diesel style there. The
/// best configurations were measured at different times, so the comparison is unpaired,
/// every operation's one family.
fn best_rows(results: &DbBenchResults, variants: &[(Op, bool)]) -> Vec<BestRow> {
    let bests: Vec<BTreeMap<Access, Best>> = variants
        .iter()
        .map(|&(op, index)| {
            let configs = configurations(results, op, index);
            Access::ALL
                .iter()
                .filter_map(|&a| Some((a, best_configuration(&configs, a)?)))
                .collect()
        })
        .collect();
    let sides: Vec<Option<(Vec<f64>, Vec<f64>)>> = bests
        .iter()
        .map(|of| {
            let sqlx = of.get(&Access::SqlxTasks)?;
            let diesel = highest(
                [Access::DieselSpawnBlocking, Access::DieselThreads]
                    .iter()
                    .filter_map(|a| of.get(a)),
            )?;
            Some((values(&diesel.1), values(&sqlx.1)))
        })
        .collect();
    let samples: Vec<Option<Samples<'_>>> = sides
        .iter()
        .map(|s| s.as_ref().map(|(diesel, sqlx)| Samples::Unpaired { a: diesel, b: sqlx }))
        .collect();
    let judged = judge(&samples);
    variants
        .iter()
        .zip(&bests)
        .zip(judged)
        .map(|((&(op, index), of), judged)| {
            let top = of
                .values()
                .filter_map(|(_, r)| Summary::median_of(r.values().copied()))
                .fold(0.0, f64::max);
            BestRow {
                operation: op_label(op, index),
                styles: Access::ALL
                    .iter()
                    .map(|a| {
                        let ((pool, workers), rounds) = of.get(a)?;
                        Some(Measure {
                            text: format!("{} ({pool}, {workers})", rate_range(rounds)),
                            best: Summary::median_of(rounds.values().copied()) == Some(top),
                        })
                    })
                    .collect(),
                sqlx_vs_diesel: comparison(judged),
            }
        })
        .collect()
}

/// The join with its index against without, each at the best configuration of any style.
fn join_index(results: &DbBenchResults) -> Option<JoinIndex> {
    let best_of = |index: bool| {
        let configs = configurations(results, Op::Join, index);
        let bests: Vec<Best> =
            Access::ALL.iter().filter_map(|a| best_configuration(&configs, *a)).collect();
        highest(bests.iter()).cloned()
    };
    let (with, without) = (best_of(true)?, best_of(false)?);
    let judged = judge_one(Samples::Unpaired { a: &values(&without.1), b: &values(&with.1) });
    Some(JoinIndex {
        with_index: rate(Summary::median_of(with.1.values().copied()).unwrap_or(0.0)),
        without_index: rate(Summary::median_of(without.1.values().copied()).unwrap_or(0.0)),
        with_vs_without: comparison(judged),
    })
}

/// Who leads at each configuration, compared round by round there.
fn leads(results: &DbBenchResults, variants: &[(Op, bool)]) -> Leads {
    let mut wins: BTreeMap<Access, usize> = BTreeMap::new();
    let (mut configurations_seen, mut undecided) = (0, 0);
    for &(op, index) in variants {
        for styles in configurations(results, op, index).values() {
            configurations_seen += 1;
            match style_group(styles).best() {
                Some(access) => *wins.entry(access).or_default() += 1,
                None => undecided += 1,
            }
        }
    }
    Leads {
        configurations: configurations_seen,
        wins: Access::ALL
            .iter()
            .map(|a| (access_label(*a), wins.get(a).copied().unwrap_or(0)))
            .collect(),
        undecided,
    }
}

/// Every cell of one operation: median ops/s and p99, in bold the style faster than both
/// others at that configuration.
fn operation_table(results: &DbBenchResults, op: Op, index: bool) -> OperationTable {
    let configs = configurations(results, op, index);
    let workers = results.settings.crud_workers.clone();
    let mut rows = Vec::new();
    for &pool in &results.settings.pool_sizes {
        for access in Access::ALL {
            let cells = workers
                .iter()
                .map(|&w| {
                    let cells: Vec<_> = results
                        .crud
                        .iter()
                        .filter(|c| c.op == op && c.join_index == index)
                        .filter(|c| c.access == access && c.pool == pool && c.workers == w)
                        .collect();
                    if cells.is_empty() {
                        return None;
                    }
                    let p99s: Vec<f64> = cells
                        .iter()
                        .filter_map(|c| c.latency_us.map(|l| l.p99_us as f64))
                        .collect();
                    let rounds: Rounds =
                        cells.iter().map(|c| (c.round, c.ops_per_second)).collect();
                    let best = configs
                        .get(&(pool, w))
                        .is_some_and(|styles| style_group(styles).best() == Some(access));
                    Some(OperationCell {
                        errors: cells.iter().map(|c| c.errors).sum(),
                        measure: Measure {
                            text: format!(
                                "{} · {}",
                                rate(Summary::median_of(rounds.values().copied()).unwrap_or(0.0)),
                                bookstore_record::latency_label(
                                    Summary::of(&p99s).map_or(0.0, |s| s.median)
                                )
                            ),
                            best,
                        },
                    })
                })
                .collect();
            rows.push(OperationRow { style: access_label(access), pool, cells });
        }
    }
    OperationTable { operation: op_label(op, index), workers, rows }
}

/// A chart per operation at the largest pool: workers as groups, styles as bars.
fn charts_of(results: &DbBenchResults, variants: &[(Op, bool)]) -> Vec<BarChart> {
    let workers = &results.settings.crud_workers;
    let pool = results.settings.pool_sizes.iter().copied().max().unwrap_or(0);
    let groups: Vec<String> = workers.iter().map(|w| format!("{w} workers")).collect();
    variants
        .iter()
        .map(|&(op, index)| {
            let configs = configurations(results, op, index);
            let bars: Vec<BarValue> = configs
                .iter()
                .filter(|((p, _), _)| *p == pool)
                .flat_map(|((_, w), styles)| {
                    styles.iter().filter_map(move |(access, style)| {
                        let summary = Summary::of(&values(&style.rounds))?;
                        (style.errors == 0).then_some(())?;
                        Some(BarValue {
                            group: workers.iter().position(|x| x == w)?,
                            slot: access_series(*access),
                            value: summary.median,
                            range: (summary.n > 1).then_some((summary.min, summary.max)),
                            colour: access_colour(*access),
                            title: format!(
                                "{}: {} ops/s",
                                access_label(*access),
                                rate_range(&style.rounds)
                            ),
                        })
                    })
                })
                .collect();
            let title = format!("{} ops/s, pool {pool}", op_label(op, index));
            charts::bar_chart(&groups, Access::ALL.len(), &bars, &[], &title)
        })
        .collect()
}
