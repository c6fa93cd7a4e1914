//! Section 5: memory, the machine's busy share, and each stack's rate as a share of its
//! scenario's ceiling measured in the same rounds (CPU per request: [`crate::cpu`]).

use bookstore_stats::{Summary, Verdict};
use serde::Serialize;

use super::dataset::{Dataset, Target};
use super::verdicts::CeilingShares;
use crate::text::{ComparisonText, colour};
use bookstore_record::results::Cell;
use bookstore_record::warnings::{CPU_BOUND_SHARE, cpu_shares};

/// Client, server and PostgreSQL together as a share of the machine, when the server's CPU
/// was seen (it runs here).
fn machine_share(cell: &Cell, cpus: usize) -> Option<f64> {
    let (client, server, postgres) = cpu_shares(cell, cpus);
    Some(client + server? + postgres.unwrap_or(0.0))
}

/// How many of the stacks' closed-loop windows found the machine CPU-bound (at least
/// [`CPU_BOUND_SHARE`] busy), of those whose server ran here.
#[derive(Debug, Serialize)]
pub(crate) struct CpuBound {
    windows: usize,
    of: usize,
    percent: String,
}

pub(crate) fn cpu_bound(dataset: &Dataset<'_>) -> Option<CpuBound> {
    let cpus = dataset.runs.first().map_or(1, |r| r.environment.cpu_count);
    let shares: Vec<f64> = dataset
        .runs
        .iter()
        .flat_map(|run| run.stacks.iter().flat_map(|s| &s.cells))
        .filter_map(|cell| machine_share(cell, cpus))
        .collect();
    let windows = shares.iter().filter(|&&s| s >= CPU_BOUND_SHARE).count();
    (!shares.is_empty()).then(|| CpuBound {
        windows,
        of: shares.len(),
        percent: crate::text::percent(CPU_BOUND_SHARE),
    })
}

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
    peak_rss_mib: String,
    /// The client's CPU as a share of the machine's, and everyone's (client, server,
    /// PostgreSQL): medians over the rounds, in percent.
    client_percent: String,
    busy_percent: String,
    /// Stack ÷ ceiling, with its interval; `above` when the whole interval is above 1.
    share_of_ceiling: Option<ComparisonText>,
    above: bool,
    disqualified: Option<String>,
}

pub(crate) fn table(dataset: &Dataset<'_>, scenario: &str) -> EfficiencyTable {
    // The ceiling of each concurrency (for the database scenarios the faster driver's, which
    // may differ between them), named once each.
    let mut names: Vec<String> = Vec::new();
    for &concurrency in &dataset.concurrency {
        if let Some(name) = dataset.ceiling(scenario, concurrency).map(|t| t.name())
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    let ceiling_name = if names.is_empty() { "its ceiling".to_owned() } else { names.join(" / ") };
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
    EfficiencyTable { scenario: scenario.to_owned(), ceiling_name, rows }
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
    let rss = windows.cells().filter_map(|c| c.server_peak_rss_bytes).max();
    let cpus = dataset.runs.first().map_or(1, |r| r.environment.cpu_count);
    let client = median(windows.cells().map(|c| cpu_shares(c, cpus).0).collect());
    let busy = median(windows.cells().filter_map(|c| machine_share(c, cpus)).collect());
    let percent = |share: Option<f64>| share.map_or("–".into(), |s| format!("{:.0}", s * 100.0));
    let share = shares.shares.get(stack).copied();
    Some(EfficiencyCell {
        peak_rss_mib: rss.map_or("–".into(), |b| format!("{:.1}", b as f64 / 1_048_576.0)),
        client_percent: percent(client),
        busy_percent: percent(busy),
        above: share.is_some_and(|s| s.verdict == Verdict::Higher),
        share_of_ceiling: share.map(ComparisonText::from),
        disqualified: windows.disqualified(),
    })
}
