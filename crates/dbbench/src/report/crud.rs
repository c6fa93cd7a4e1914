//! The CRUD section: each style at its best configuration, and who leads at each one.

use std::collections::BTreeMap;

use bookstore_report::charts::{self, BarValue};
use bookstore_stats::{FALSE_DISCOVERY_RATE, Group, LogRatio, Summary, family};

use super::{Cell, Rounds, Table, median, rate, rate_range};
use super::{access_colour, access_label, op_label};
use crate::crud::Op;
use crate::measure::Access;
use crate::results::{CrudCell, DbBenchResults};

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

pub(super) fn crud_section(
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
