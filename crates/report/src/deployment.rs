//! Section 6a, for a run whose parties differ in the database's distance or their pool
//! (`loadgen study deployment`): which access style wins at each added round trip and
//! pool size, where the pool bounds the rate, and what each style pays in threads and
//! memory for it.
//!
//! A party's place in the grid is derived from what the results say of it — its stack's
//! way of calling the database (the registry), its `db_latency_us`, and its `--pool-max`
//! and `--blocking-threads` (its own flags, else the run's) — never declared again here.

use std::collections::BTreeMap;

use bookstore_registry::stacks::Axis;
use bookstore_registry::{DbCalls, Tuning};
use bookstore_stats::{Comparison, Summary, Verdict};
use serde::Serialize;

use super::dataset::{Dataset, Metric, Target, latency_text};
use super::verdicts::Family;
use crate::text::ComparisonText;
use bookstore_record::results::{RunResults, StackResults};

/// One party of the grid.
#[derive(Debug, Clone)]
struct Party {
    name: String,
    /// The registry's stack it runs.
    stack: &'static str,
    calls: DbCalls,
    db_latency_us: Option<u64>,
    pool: u32,
    /// Blocking threads (blocking stacks only).
    threads: Option<usize>,
}

impl Party {
    fn of(run: &RunResults, stack: &StackResults) -> Option<Self> {
        let registry = stack.variant_of.as_deref().unwrap_or(&stack.name);
        let info = bookstore_registry::stacks::find(registry).ok()?;
        let (stack_name, calls) = (info.identity.service, info.db_calls);
        let settings = &run.settings;
        let tuning = Tuning {
            pool_max: settings.pool_max,
            workers: settings.server_workers,
            blocking_threads: settings.blocking_threads,
        }
        .overridden_by(&stack.args);
        let (pool, threads) =
            (tuning.pool_max, (calls == DbCalls::Blocking).then_some(tuning.blocking_threads));
        Some(Self {
            name: stack.name.clone(),
            stack: stack_name,
            calls,
            db_latency_us: stack.db_latency_us,
            pool,
            threads,
        })
    }

    fn style(&self) -> String {
        match self.threads {
            Some(threads) => format!("blocking, {threads} threads"),
            None => "async".into(),
        }
    }
}

/// The grid's parties, each once, in the order first met.
fn parties(dataset: &Dataset<'_>) -> Vec<Party> {
    let mut found: Vec<Party> = Vec::new();
    for run in dataset.runs {
        for stack in &run.stacks {
            if found.iter().any(|p| p.name == stack.name) {
                continue;
            }
            found.extend(Party::of(run, stack));
        }
    }
    found
}

#[derive(Debug, Serialize)]
pub(crate) struct Deployment {
    /// The relay's calibration, for a reader of the bound.
    calibration: Vec<String>,
    /// [`POOL_BOUND_SHARE`] for a reader.
    pool_bound_percent: String,
    tables: Vec<DeploymentTable>,
}

#[derive(Debug, Serialize)]
struct DeploymentTable {
    scenario: String,
    concurrency: u32,
    rows: Vec<DeploymentRow>,
    /// Per added round trip: how the blocking parties did against the async one of the
    /// same pool, counted.
    verdicts: Vec<String>,
    /// The database ceilings measured behind the relay, per added round trip.
    ceilings: Vec<String>,
}

#[derive(Debug, Serialize)]
struct DeploymentRow {
    /// "+1ms" or "0".
    latency: String,
    pool: u32,
    party: String,
    style: String,
    rate: String,
    statements: String,
    /// pool ÷ (round trips per request × the relay's measured round trip), requests/s.
    bound: String,
    /// The rate as a share of it.
    of_bound: String,
    /// At least [`POOL_BOUND_SHARE`] of the bound.
    pool_bound: bool,
    /// A blocking party's rate ÷ the async party's of the same latency and pool.
    against_async: Option<ComparisonText>,
    threads: String,
    rss_mib: String,
    disqualified: Option<String>,
}

/// A rate at this share of pool ÷ (round trips × round trip) or more is called bound by
/// the pool: every connection was busy waiting on the network nearly all the time.
pub(crate) const POOL_BOUND_SHARE: f64 = 0.8;

/// The section, when the parties differ in their database's distance or their pool.
pub(crate) fn section(dataset: &Dataset<'_>) -> Option<Deployment> {
    let parties = parties(dataset);
    let distinct = |key: fn(&Party) -> u64| {
        let mut values: Vec<u64> = parties.iter().map(key).collect();
        values.sort_unstable();
        values.dedup();
        values.len()
    };
    let latencies = distinct(|p| p.db_latency_us.unwrap_or(0));
    let pools = distinct(|p| u64::from(p.pool));
    if latencies < 2 && pools < 2 {
        return None;
    }
    let calibration = dataset
        .runs
        .iter()
        .flat_map(|r| &r.db_relay_calibration)
        .map(|c| {
            format!(
                "{} µs asked: {:.0} µs added at the median, {:.0} µs at p99 ({} round trips)",
                c.round_trip_us, c.added_p50_us, c.added_p99_us, c.samples
            )
        })
        .collect();
    let mut tables = Vec::new();
    for scenario in &dataset.scenarios {
        if !bookstore_client::scenario::Scenario::parse(scenario).is_ok_and(|s| s.uses_database()) {
            continue;
        }
        for &concurrency in &dataset.concurrency {
            tables.push(table(dataset, &parties, scenario, concurrency));
        }
    }
    Some(Deployment {
        calibration,
        pool_bound_percent: crate::text::percent(POOL_BOUND_SHARE),
        tables,
    })
}

/// The relay's measured median round trip at `us` asked, else what was asked: seconds.
fn round_trip_seconds(dataset: &Dataset<'_>, us: u64) -> f64 {
    let measured = dataset
        .runs
        .iter()
        .flat_map(|r| &r.db_relay_calibration)
        .find(|c| c.round_trip_us == us)
        .map(|c| c.added_p50_us);
    measured.unwrap_or(us as f64) / 1e6
}

fn table(
    dataset: &Dataset<'_>,
    parties: &[Party],
    scenario: &str,
    concurrency: u32,
) -> DeploymentTable {
    let metric = Metric::for_scenario(scenario);
    let family = Family::rates(dataset, scenario, concurrency);
    let mut order: Vec<&Party> = parties.iter().collect();
    order.sort_by_key(|p| (p.db_latency_us.unwrap_or(0), p.pool, p.threads.unwrap_or(0)));
    // Each blocking party against the async party of its latency and pool whose stack
    // differs from its own in the access style alone (the registry's database-access axis
    // pair): these comparisons one family.
    let counterpart = |blocking: &str| {
        bookstore_registry::stacks::AXIS_PAIRS
            .iter()
            .find(|pair| pair.axes == [Axis::Access] && pair.changed == blocking)
            .map(|pair| pair.baseline)
    };
    let reference = |p: &Party| {
        let stack = counterpart(p.stack)?;
        order
            .iter()
            .find(|a| (a.stack, a.db_latency_us, a.pool) == (stack, p.db_latency_us, p.pool))
            .map(|a| a.name.as_str())
    };
    let pairs: Vec<(&str, &str)> = order
        .iter()
        .filter(|p| p.calls == DbCalls::Blocking)
        .filter_map(|p| Some((reference(p)?, p.name.as_str())))
        .collect();
    let comparisons: BTreeMap<&str, Option<Comparison>> =
        pairs.iter().map(|(_, b)| *b).zip(family.pairs_family(&pairs)).collect();
    let mut counts: BTreeMap<u64, [usize; 3]> = BTreeMap::new();
    let rows = order
        .iter()
        .map(|party| {
            let windows = dataset.cell(&Target::Stack(party.name.clone()), scenario, concurrency);
            let rate = Summary::median_of(windows.by_round(|c| Some(metric.of(c))).into_values());
            let statements = Summary::median_of(
                windows.cells().filter_map(|c| Some(c.sql.as_ref()?.statements_per_request)),
            );
            let bound = match (party.db_latency_us, statements) {
                (Some(us), Some(statements)) if statements > 0.0 => {
                    Some(f64::from(party.pool) / (statements * round_trip_seconds(dataset, us)))
                }
                _ => None,
            };
            let of_bound = rate.zip(bound).map(|(rate, bound)| rate / bound);
            let against_async = comparisons.get(party.name.as_str()).copied().flatten();
            if let Some(c) = against_async {
                let slot = match c.verdict {
                    Verdict::Higher => 0,
                    Verdict::Lower => 1,
                    Verdict::NotDistinguishable => 2,
                };
                counts.entry(party.db_latency_us.unwrap_or(0)).or_default()[slot] += 1;
            }
            let threads = Summary::median_of(
                windows.cells().filter_map(|c| c.server_threads.map(|t| t as f64)),
            );
            let rss = Summary::median_of(
                windows.cells().filter_map(|c| c.server_peak_rss_bytes.map(|b| b as f64)),
            );
            DeploymentRow {
                latency: latency_text(party.db_latency_us),
                pool: party.pool,
                party: party.name.clone(),
                style: party.style(),
                rate: rate.map_or("–".into(), |r| format!("{r:.0}")),
                statements: statements.map_or("–".into(), |s| format!("{s:.1}")),
                bound: bound.map_or("–".into(), |b| format!("{b:.0}")),
                of_bound: of_bound
                    .map_or("–".into(), |share| format!("{}%", crate::text::percent(share))),
                pool_bound: of_bound.is_some_and(|share| share >= POOL_BOUND_SHARE),
                against_async: against_async.map(ComparisonText::from),
                threads: threads.map_or("–".into(), |t| format!("{t:.0}")),
                rss_mib: rss.map_or("–".into(), |b| format!("{:.1}", b / 1_048_576.0)),
                disqualified: windows.disqualified(),
            }
        })
        .collect();
    let verdicts = counts
        .iter()
        .map(|(&us, [higher, lower, same])| {
            format!(
                "{}: blocking higher in {higher}, async higher in {lower}, not distinguishable in {same} of {} pool × thread settings",
                latency_text(Some(us).filter(|&us| us > 0)),
                higher + lower + same
            )
        })
        .collect();
    let ceilings = parties
        .iter()
        .filter_map(|p| p.db_latency_us)
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .flat_map(|us| dataset.ceilings_at(scenario, concurrency, Some(us)))
        .map(|(target, median)| format!("{}: {median:.0}/s", target.name()))
        .collect();
    DeploymentTable { scenario: scenario.to_owned(), concurrency, rows, verdicts, ceilings }
}
