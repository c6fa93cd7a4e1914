//! The batch job section, and threads against tasks.

use std::collections::BTreeMap;

use bookstore_stats::Group;

use super::{Cell, Rounds, Table, count, leaders, median, rate, rate_range};
use super::{access_label, databases_of};
use crate::measure::Access;
use crate::results::{BatchCell, DbBenchResults, TasksCell};
use crate::targets::Database;
use crate::tasks::Variant;

pub(super) fn batch_section(results: &DbBenchResults, findings: &mut Vec<String>) -> Vec<Table> {
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

pub(super) fn tasks_section(results: &DbBenchResults, findings: &mut Vec<String>) -> Option<Table> {
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
