//! The threads-against-tasks section: each variant's wall time, and two comparisons of
//! variants measured side by side ([`Keyed`]); [`Tasks`] is what `templates/tasks.html`
//! writes.

use bookstore_stats::Summary;
use serde::Serialize;

use super::format::{Keyed, Rounds, comparison, count, rate, rate_range};
use crate::results::{DbBenchResults, TasksCell};
use crate::tasks::Variant;

/// The tasks section's context.
#[derive(Debug, Serialize)]
pub(super) struct Tasks {
    /// Each variant, in the order first measured.
    rows: Vec<TasksRow>,
    threads_vs_tasks: Option<ThreadsVsTasks>,
    blocking_query: Option<BlockingQuery>,
}

#[derive(Debug, Serialize)]
struct TasksRow {
    variant: String,
    tasks: String,
    wait_ms: u64,
    threads: usize,
    wall_ms: String,
    expected_ms: String,
    most_waiting: String,
}

/// The OS thread pool against tokio tasks.
#[derive(Debug, Serialize)]
struct ThreadsVsTasks {
    tasks: String,
    wait_ms: u64,
    threads: usize,
    threads_ms: String,
    tasks_ms: String,
    /// Tasks against threads, as a rate.
    tasks_vs_threads: Option<String>,
}

/// A blocking query inside async tasks against the same query handed to `spawn_blocking`.
#[derive(Debug, Serialize)]
struct BlockingQuery {
    workers: usize,
    queries: usize,
    blocked_ms: String,
    blocked_at_once: usize,
    offloaded_ms: String,
    offloaded_at_once: usize,
    /// Offloaded against blocked, as a rate.
    offloaded_vs_blocked: Option<String>,
}

/// The section's context.
pub(super) fn context(results: &DbBenchResults) -> Tasks {
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
    let median_wall =
        |variant: Variant| rate(Summary::median_of(wall(variant).values().copied()).unwrap_or(0.0));
    let most_waiting =
        |cells: &[&TasksCell]| cells.iter().map(|t| t.max_concurrency).max().unwrap_or(0);
    // How many times faster the second did the same work, round by round (as rates).
    let faster = |slow: Variant, fast: Variant| {
        let as_rate = |v: Variant| -> Rounds {
            wall(v).into_iter().map(|(r, ms)| (r, 1000.0 / ms.max(1e-9))).collect()
        };
        let both = [slow, fast].map(|v| (v, v.name().to_owned(), as_rate(v)));
        comparison(Keyed::paired(both.into()).compare(slow, fast))
    };
    let present = |v: Variant| variants.contains(&v);
    let rows = variants
        .iter()
        .map(|&variant| {
            let cells = of(variant);
            let first = cells[0];
            TasksRow {
                variant: variant.name().replace('_', " "),
                tasks: count(first.tasks),
                wait_ms: first.wait_ms,
                threads: first.threads,
                wall_ms: rate_range(&wall(variant)),
                expected_ms: rate(first.expected_ms),
                most_waiting: count(most_waiting(&cells)),
            }
        })
        .collect();
    let threads_vs_tasks =
        (present(Variant::OsThreadPool) && present(Variant::TokioTasks)).then(|| {
            let pool = of(Variant::OsThreadPool)[0];
            ThreadsVsTasks {
                tasks: rate(pool.tasks as f64),
                wait_ms: pool.wait_ms,
                threads: pool.threads,
                threads_ms: median_wall(Variant::OsThreadPool),
                tasks_ms: median_wall(Variant::TokioTasks),
                tasks_vs_threads: faster(Variant::OsThreadPool, Variant::TokioTasks),
            }
        });
    let blocking_query = (present(Variant::BlockingQueryInAsync)
        && present(Variant::BlockingQueryOffloaded))
    .then(|| {
        let blocked = of(Variant::BlockingQueryInAsync);
        BlockingQuery {
            workers: blocked[0].threads,
            queries: blocked[0].tasks,
            blocked_ms: median_wall(Variant::BlockingQueryInAsync),
            blocked_at_once: most_waiting(&blocked),
            offloaded_ms: median_wall(Variant::BlockingQueryOffloaded),
            offloaded_at_once: most_waiting(&of(Variant::BlockingQueryOffloaded)),
            offloaded_vs_blocked: faster(
                Variant::BlockingQueryInAsync,
                Variant::BlockingQueryOffloaded,
            ),
        }
    });
    Tasks { rows, threads_vs_tasks, blocking_query }
}
