//! Section 4: CPU and memory per request, and each stack's rate as a share of its
//! scenario's ceiling measured in the same rounds.

use bookstore_stats::{Summary, Verdict};
use serde::Serialize;

use super::dataset::{Dataset, Target};
use super::verdicts::CeilingShares;
use super::{ComparisonText, colour};
use crate::results::Cell;

#[derive(Debug, Serialize)]
pub(crate) struct EfficiencyTable {
    scenario: String,
    ceiling_name: String,
    rows: Vec<EfficiencyRow>,
}

#[derive(Debug, Serialize)]
struct EfficiencyRow {
    stack: String,
    colour: String,
    concurrency: u32,
    first_of_group: bool,
    cell: Option<EfficiencyCell>,
}

#[derive(Debug, Serialize)]
struct EfficiencyCell {
    requests_per_server_cpu_second: String,
    cpu_ms_per_request: String,
    peak_rss_mib: String,
    /// Stack ÷ ceiling, with its interval; `above` when the whole interval is above 1.
    share_of_ceiling: Option<ComparisonText>,
    above: bool,
    disqualified: Option<String>,
}

pub(crate) fn table(dataset: &Dataset<'_>, scenario: &str) -> EfficiencyTable {
    let ceiling = Dataset::ceiling_of(scenario);
    let mut rows = Vec::new();
    for &concurrency in &dataset.concurrency {
        let shares = CeilingShares::of(dataset, scenario, concurrency);
        for (index, stack) in dataset.stacks.iter().enumerate() {
            rows.push(EfficiencyRow {
                stack: stack.clone(),
                colour: colour(dataset, stack),
                concurrency,
                first_of_group: index == 0,
                cell: cell(dataset, stack, scenario, concurrency, &shares),
            });
        }
    }
    EfficiencyTable { scenario: scenario.to_owned(), ceiling_name: ceiling.name(), rows }
}

fn cell(
    dataset: &Dataset<'_>,
    stack: &str,
    scenario: &str,
    concurrency: u32,
    shares: &CeilingShares,
) -> Option<EfficiencyCell> {
    let windows = dataset.cell(&Target::Stack(stack.to_owned()), scenario, concurrency);
    if windows.is_empty() {
        return None;
    }
    let median = |values: Vec<f64>| Summary::of(&values).map(|s| s.median);
    let served = |c: &Cell| (c.counts.ok + c.counts.rejected) as f64;
    let per_cpu = median(
        windows
            .cells()
            .filter_map(|c| c.cpu_seconds.server.map(|cpu| served(c) / cpu.max(1e-9)))
            .collect(),
    );
    let cpu_ms = median(
        windows
            .cells()
            .filter_map(|c| {
                let cpu = c.cpu_seconds.server? + c.cpu_seconds.postgres.unwrap_or(0.0);
                (served(c) > 0.0).then(|| cpu / served(c) * 1000.0)
            })
            .collect(),
    );
    let rss = windows.cells().filter_map(|c| c.server_peak_rss_bytes).max();
    let share = shares.shares.get(stack).copied();
    Some(EfficiencyCell {
        requests_per_server_cpu_second: per_cpu.map_or("–".into(), |v| format!("{v:.0}")),
        cpu_ms_per_request: cpu_ms.map_or("–".into(), |v| format!("{v:.3}")),
        peak_rss_mib: rss.map_or("–".into(), |b| format!("{:.1}", b as f64 / 1_048_576.0)),
        above: share.is_some_and(|s| s.verdict == Verdict::Higher),
        share_of_ceiling: share.map(ComparisonText::from),
        disqualified: windows.disqualified(),
    })
}
