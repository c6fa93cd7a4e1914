//! The fixed-load phase: per scenario and rate, every stack's latency when each was offered
//! the same requests per second — p50, p99, p99.9 and max, timed from when each request was
//! due — with the p99s compared by the suite's method (lower is better).

use bookstore_stats::Summary;
use hdrhistogram::Histogram;
use serde::Serialize;

use super::dataset::{CellWindows, Dataset};
use super::verdicts::Family;
use crate::charts::{self, LineChart};
use crate::text::{ComparisonText, colour, percent};
use bookstore_record::warnings::client_limited;

#[derive(Debug, Serialize)]
pub(crate) struct EqualLoadSection {
    scenario: String,
    tables: Vec<RateTable>,
    charts: Vec<LineChart>,
}

#[derive(Debug, Serialize)]
struct RateTable {
    /// As asked: "70% of the slowest" or "5000 req/s".
    rate: String,
    /// The requests per second offered (the median over the rounds).
    offered: String,
    /// Their range over the rounds, when they differed (several runs).
    offered_range: Option<String>,
    /// The most rounds a stack was measured in (a row with fewer says so).
    rounds: usize,
    /// The stack every comparison is against: the lowest p99 of the ranked ones.
    first: Option<String>,
    rows: Vec<Row>,
    /// The blocking stacks' p99 against the median async stack's.
    blocking: Option<BlockingTails>,
}

/// Whether blocking database access costs tail latency at the same load: each blocking
/// stack's p99 against the async stack with the median p99 (of three, the middle; of two,
/// the lower), these comparisons a family of their own.
#[derive(Debug, Serialize)]
struct BlockingTails {
    /// The median async stack.
    against: String,
    /// The blocking stacks, each with its p99 ÷ the median async stack's.
    stacks: Vec<BlockingTail>,
}

#[derive(Debug, Serialize)]
struct BlockingTail {
    stack: String,
    comparison: ComparisonText,
    /// The whole interval lies below 2× (the p99 is within twice the async stack's).
    within_twice: bool,
}

/// The [`BlockingTails`] of a family, when it has both kinds of ranked stacks.
fn blocking_tails(dataset: &Dataset<'_>, family: &Family) -> Option<BlockingTails> {
    use bookstore_registry::DbCalls;
    let ranked = |calls: DbCalls| {
        family
            .members
            .iter()
            .filter(move |m| m.qualified() && dataset.db_calls(&m.name) == Some(calls))
            .filter_map(|m| Some((m.name.as_str(), m.summary?.median)))
    };
    let mut asynchronous: Vec<(&str, f64)> = ranked(DbCalls::Async).collect();
    asynchronous.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (against, _) = *asynchronous.get(asynchronous.len().checked_sub(1)? / 2)?;
    let blocking: Vec<&str> = ranked(DbCalls::Blocking).map(|(stack, _)| stack).collect();
    let stacks: Vec<BlockingTail> = blocking
        .iter()
        .zip(family.against(against, &blocking))
        .filter_map(|(stack, comparison)| {
            let comparison = comparison?;
            Some(BlockingTail {
                stack: (*stack).to_owned(),
                within_twice: comparison.high < 2.0,
                comparison: ComparisonText::tail(comparison),
            })
        })
        .collect();
    (!stacks.is_empty()).then(|| BlockingTails { against: against.to_owned(), stacks })
}

#[derive(Debug, Serialize)]
struct Row {
    stack: String,
    colour: String,
    cell: Option<RowCell>,
}

#[derive(Debug, Serialize)]
struct RowCell {
    id: String,
    p50: String,
    p99: String,
    p999: String,
    max: String,
    /// The lowest share of the requests due in a window that was answered by its end (and
    /// the grace), over the rounds.
    achieved: String,
    /// The client's worst 99th-percentile send lag over the rounds.
    send_lag_p99: String,
    /// Peak connections of the cap, and whether requests waited at the cap.
    connections: String,
    cap_hit: bool,
    rounds: usize,
    /// The lowest p99, distinguishable from every other ranked stack's.
    best: bool,
    /// Its p99 against the first's.
    against_first: Option<ComparisonText>,
    not_ranked: Option<String>,
    /// Rounds left out of the comparisons because the client fell behind in them.
    left_out: Option<String>,
    disqualified: Option<String>,
}

fn quantile(histogram: Option<&Histogram<u64>>, q: f64) -> String {
    histogram.map_or("–".to_owned(), |h| {
        let value = if q >= 1.0 { h.max() } else { h.value_at_quantile(q) };
        bookstore_record::latency_label(value as f64)
    })
}

fn row_cell(windows: &CellWindows<'_>, scenario: &str, id: String) -> Option<RowCell> {
    let opens: Vec<_> = windows.cells().filter_map(|c| c.open_loop.as_ref()).collect();
    if opens.is_empty() {
        return None;
    }
    let latency = windows.latency(scenario);
    let achieved = opens.iter().map(|o| o.achieved_fraction).fold(f64::INFINITY, f64::min);
    let lag = opens.iter().filter_map(|o| o.send_lag_us.map(|l| l.p99_us)).max();
    let peak = opens.iter().map(|o| o.connections_peak).max().unwrap_or(0);
    let cap = opens.iter().map(|o| o.connections_cap).max().unwrap_or(0);
    Some(RowCell {
        id,
        p50: quantile(latency.as_ref(), 0.5),
        p99: quantile(latency.as_ref(), 0.99),
        p999: quantile(latency.as_ref(), 0.999),
        max: quantile(latency.as_ref(), 1.0),
        achieved: format!("{}%", percent(achieved)),
        send_lag_p99: lag.map_or("–".into(), |us| bookstore_record::latency_label(us as f64)),
        connections: format!("{peak} of {cap}"),
        cap_hit: opens.iter().any(|o| o.cap_hit),
        rounds: windows.samples().count(),
        best: false,
        against_first: None,
        not_ranked: None,
        left_out: match windows.cells().filter(|c| client_limited(c).is_some()).count() {
            0 => None,
            n => Some(format!("{n} round(s) client-limited, left out")),
        },
        disqualified: windows.disqualified(),
    })
}

/// The sections of the scenarios that had a fixed-load phase.
pub(crate) fn sections(dataset: &Dataset<'_>) -> Vec<EqualLoadSection> {
    dataset
        .scenarios
        .iter()
        .filter_map(|scenario| {
            let tables: Vec<RateTable> = dataset
                .equal_load_rates
                .iter()
                .filter_map(|rate| table(dataset, scenario, rate))
                .collect();
            if tables.is_empty() {
                return None;
            }
            let charts = dataset
                .equal_load_rates
                .iter()
                .filter_map(|rate| chart(dataset, scenario, rate))
                .collect();
            Some(EqualLoadSection { scenario: scenario.clone(), tables, charts })
        })
        .collect()
}

fn table(dataset: &Dataset<'_>, scenario: &str, rate: &str) -> Option<RateTable> {
    let family = Family::equal_load_p99(dataset, scenario, rate);
    if family.members.is_empty() {
        return None;
    }
    let ranking = family.ranking();
    let first = ranking.order.first().map(|&i| family.members[i].name.clone());
    let offered: Vec<f64> = dataset
        .stacks
        .iter()
        .flat_map(|stack| dataset.equal_load_cell(stack, scenario, rate).cells())
        .filter_map(|cell| cell.open_loop.as_ref().map(|o| o.offered_rps))
        .collect();
    let rows: Vec<Row> = dataset
        .stacks
        .iter()
        .map(|stack| {
            let windows = dataset.equal_load_cell(stack, scenario, rate);
            let id = format!("{stack}:{scenario}:{rate}");
            let mut cell = row_cell(windows, scenario, id);
            if let Some(cell) = cell.as_mut() {
                let member = family.index(stack).map(|i| &family.members[i]);
                cell.not_ranked = member.and_then(|m| m.not_ranked.clone());
                if let Some(first) = &first {
                    cell.best = ranking.best && stack == first;
                    cell.against_first = (stack != first)
                        .then(|| family.compare(first, stack))
                        .flatten()
                        .map(ComparisonText::tail);
                }
            }
            Row { stack: stack.clone(), colour: colour(dataset, stack), cell }
        })
        .collect();
    let offered = Summary::of(&offered);
    let uses_database =
        bookstore_client::scenario::Scenario::parse(scenario).is_ok_and(|s| s.uses_database());
    let blocking = uses_database.then(|| blocking_tails(dataset, &family)).flatten();
    let rounds = rows.iter().filter_map(|r: &Row| r.cell.as_ref().map(|c| c.rounds)).max();
    Some(RateTable {
        rounds: rounds.unwrap_or(0),
        rate: rate.to_owned(),
        offered: offered.map_or("–".into(), |s| format!("{:.0}", s.median)),
        offered_range: offered
            .filter(|s| s.min < s.max)
            .map(|s| format!("{:.0}–{:.0}", s.min, s.max)),
        first,
        rows,
        blocking,
    })
}

/// The latency curves of the stacks whose windows are neither disqualified nor unranked.
fn chart(dataset: &Dataset<'_>, scenario: &str, rate: &str) -> Option<LineChart> {
    let family = Family::equal_load_p99(dataset, scenario, rate);
    let curves: Vec<(String, String, Vec<u64>)> = family
        .members
        .iter()
        .filter(|m| m.qualified())
        .filter_map(|m| {
            let histogram = dataset.equal_load_cell(&m.name, scenario, rate).latency(scenario)?;
            Some((colour(dataset, &m.name), m.name.clone(), charts::percentile_curve(&histogram)))
        })
        .collect();
    (!curves.is_empty())
        .then(|| charts::latency_chart(&format!("latency at equal load, {rate}"), &curves))
}

/// How the rates were set and offered, from the runs' settings.
pub(crate) fn note(dataset: &Dataset<'_>) -> String {
    let Some(settings) = dataset.runs.iter().map(|r| &r.settings).find(|s| !s.rates.is_empty())
    else {
        return String::new();
    };
    let rates: Vec<String> = settings.rates.iter().map(|r| r.label()).collect();
    let lowest = settings.measurement.concurrency.iter().min().copied().unwrap_or(0);
    let cap = settings.measurement.concurrency.iter().max().copied().unwrap_or(0);
    let arrivals = settings.arrivals.unwrap_or_default().name();
    format!(
        "{} (\"the slowest\": the lowest median goodput of the stacks not disqualified at c = {lowest}, measured moments before), {arrivals} arrivals, over at most {cap} connections opened as needed",
        rates.join(", ")
    )
}
