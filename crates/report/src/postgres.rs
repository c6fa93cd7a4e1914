//! Section 7's "PostgreSQL's side": per database scenario (the writes first) at the highest
//! concurrency, what the database did per request and what its backends — the stack's
//! pooled connections — were doing during the window. A checkout scenario's rate is decided
//! by row locks the client cannot see; here they show.

use bookstore_stats::Summary;
use serde::Serialize;

use super::dataset::{Dataset, Target};
use crate::text::percent;
use bookstore_client::scenario::Scenario;
use bookstore_record::results::Cell;

#[derive(Debug, Serialize)]
pub(crate) struct PostgresRow {
    scenario: String,
    stack: String,
    commits_per_request: String,
    rollbacks: String,
    blocks_read_per_request: String,
    backends: String,
    running: String,
    lock: String,
    idle_in_transaction: String,
    idle: String,
    /// The largest other wait event and its share.
    other: String,
}

/// The rows, or none when no window recorded PostgreSQL's side (files before version 5, or
/// a server without pg_stat_statements).
pub(crate) fn rows(dataset: &Dataset<'_>) -> Vec<PostgresRow> {
    let Some(&concurrency) = dataset.concurrency.iter().max() else { return Vec::new() };
    let mut scenarios: Vec<&String> = dataset
        .scenarios
        .iter()
        .filter(|s| Scenario::parse(s).is_ok_and(Scenario::uses_database))
        .collect();
    // The writes first: their rate is where row locks decide.
    scenarios.sort_by_key(|s| !Scenario::parse(s).is_ok_and(Scenario::writes));
    let mut rows = Vec::new();
    for scenario in scenarios {
        for stack in &dataset.stacks {
            let windows = dataset.cell(&Target::Stack(stack.clone()), scenario, concurrency);
            let cells: Vec<&Cell> = windows.cells().filter(|c| !c.stopped_early).collect();
            let median = |value: &dyn Fn(&Cell) -> Option<f64>| {
                Summary::of(&cells.iter().filter_map(|c| value(c)).collect::<Vec<_>>())
                    .map(|s| s.median)
            };
            let per_request = |count: fn(&bookstore_record::results::SqlStats) -> u64| {
                move |c: &Cell| {
                    let sql = c.sql.as_ref()?;
                    (sql.requests > 0 && sql.commits + sql.rollbacks + sql.shared_blocks_hit > 0)
                        .then(|| count(sql) as f64 / sql.requests as f64)
                }
            };
            let commits = median(&per_request(|s| s.commits));
            let waits = |share: fn(&bookstore_record::results::BackendWaits) -> f64| {
                median(&|c: &Cell| c.backend_waits.as_ref().map(share))
            };
            let backends = median(&|c: &Cell| c.backend_waits.as_ref().map(|w| w.mean_backends));
            if commits.is_none() && backends.is_none() {
                continue;
            }
            let share_text =
                |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{}%", percent(v)));
            let other = cells
                .iter()
                .filter_map(|c| c.backend_waits.as_ref())
                .flat_map(|w| w.shares.iter())
                .filter(|(what, _)| {
                    !matches!(what.as_str(), "running" | "idle" | "idle in transaction")
                        && !what.starts_with("Lock:")
                })
                .fold(std::collections::BTreeMap::<&str, f64>::new(), |mut sum, (what, v)| {
                    *sum.entry(what.as_str()).or_default() += v / cells.len().max(1) as f64;
                    sum
                })
                .into_iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .filter(|(_, v)| *v >= 0.005)
                .map_or("–".to_owned(), |(what, v)| format!("{what} {}%", percent(v)));
            rows.push(PostgresRow {
                scenario: scenario.clone(),
                stack: stack.clone(),
                commits_per_request: commits.map_or("–".to_owned(), |v| format!("{v:.2}")),
                rollbacks: median(&|c: &Cell| c.sql.as_ref().map(|s| s.rollbacks as f64))
                    .map_or("–".to_owned(), |v| format!("{v:.0}")),
                blocks_read_per_request: median(&per_request(|s| s.shared_blocks_read))
                    .map_or("–".to_owned(), |v| format!("{v:.2}")),
                backends: backends.map_or("–".to_owned(), |v| format!("{v:.0}")),
                running: share_text(waits(|w| w.share("running"))),
                lock: share_text(waits(bookstore_record::results::BackendWaits::lock_share)),
                idle_in_transaction: share_text(waits(|w| w.share("idle in transaction"))),
                idle: share_text(waits(|w| w.share("idle"))),
                other,
            });
        }
    }
    rows
}
