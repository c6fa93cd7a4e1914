//! What a request costs in CPU, component by component: the server's, PostgreSQL's (its
//! backends over the same window) and the client's CPU time per request, µs. A rate is
//! this machine's; CPU per request is what a reader with other hardware can carry (docs/
//! method.md, "CPU per request"): on the 2-core machine here the three share the cores,
//! so a stack's rate at saturation is mostly one over their sum.
//!
//! Each window gives one value per component (its CPU seconds over the window ÷ the
//! requests answered in it); a stack's cost is their geometric mean over the rounds with
//! Student's 95% interval on their logs, at saturation (the closed loop) and at equal load
//! (the fixed-load phase, where the three are not competing for a saturated machine).
//! Stacks are compared on them as on rates — paired by round, widened by the spread
//! between processes, corrected in their family — lower is better; the twin calibrates it.

use bookstore_client::procfs::TICKS_PER_SECOND;
use bookstore_record::results::{Cell, RunResults};
use bookstore_stats::{Better, Estimate};
use serde::Serialize;

use super::dataset::{CellWindows, Dataset, Target};
use super::verdicts::{Family, Member, Spread, TwinCalls, twin_calls_in};
use crate::text::{ComparisonText, colour};

/// A process whose CPU a request costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Component {
    Server,
    Postgres,
    Client,
}

impl Component {
    pub(crate) const ALL: [Component; 3] =
        [Component::Server, Component::Postgres, Component::Client];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Component::Server => "server",
            Component::Postgres => "PostgreSQL",
            Component::Client => "client",
        }
    }

    /// `cell`'s CPU of this component per request answered in its window, µs (`None`
    /// where it was not seen, or nothing was answered).
    pub(crate) fn per_request_us(self, cell: &Cell) -> Option<f64> {
        let requests = cell.counts.total();
        (requests > 0).then(|| self.seconds(cell).map(|s| s * 1e6 / requests as f64))?
    }

    /// `cell`'s CPU seconds of this component over its window.
    fn seconds(self, cell: &Cell) -> Option<f64> {
        match self {
            Component::Server => cell.cpu_seconds.server,
            Component::Postgres => cell.cpu_seconds.postgres,
            Component::Client => Some(cell.cpu_seconds.client),
        }
    }
}

/// One component's cost over a cell's rounds: the geometric mean and its interval, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cost {
    pub(crate) us: f64,
    pub(crate) low_us: f64,
    pub(crate) high_us: f64,
}

impl Cost {
    /// Over `windows`' rounds; `None` below two (or where a value was zero: a CPU count of
    /// zero ticks in a window of a process that did nothing here, `health`'s PostgreSQL).
    /// The interval is never narrower than one clock tick of the least busy window: `/proc`
    /// counts CPU in ticks, so windows of a fixed rate can agree to the tick and give Student
    /// a spread of zero where a tick's worth is unknown (21 of 622 costs on the default
    /// run 2026-12-06T08-36-39Z's page before this floor).
    pub(crate) fn of(windows: &CellWindows<'_>, component: Component) -> Option<Self> {
        let logs: Option<Vec<f64>> = windows
            .by_round(|c| component.per_request_us(c))
            .values()
            .map(|&us| (us > 0.0).then(|| us.ln()))
            .collect();
        let estimate = Estimate::of(&logs?, 0.05)?;
        let least_busy =
            windows.by_round(|c| component.seconds(c)).into_values().fold(f64::INFINITY, f64::min);
        let tick = (1.0 + 1.0 / (TICKS_PER_SECOND * least_busy)).ln();
        let half = ((estimate.high - estimate.low) / 2.0).max(tick);
        Some(Self {
            us: estimate.mean.exp(),
            low_us: (estimate.mean - half).exp(),
            high_us: (estimate.mean + half).exp(),
        })
    }

    /// "12.3 [11.8–12.9]".
    pub(crate) fn text(&self) -> String {
        let d = |v: f64| bookstore_stats::digits(v);
        format!("{} [{}–{}]", d(self.us), d(self.low_us), d(self.high_us))
    }
}

/// Where a stack's windows are, for its CPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Load {
    /// The closed loop at this concurrency.
    Saturation(u32),
    /// The fixed-load phase at this rate (a `Rate::label`).
    Equal(String),
}

impl Load {
    fn windows<'a, 'd>(
        &self,
        dataset: &'a Dataset<'d>,
        stack: &str,
        scenario: &str,
    ) -> &'a CellWindows<'d> {
        match self {
            Load::Saturation(c) => dataset.cell(&Target::Stack(stack.to_owned()), scenario, *c),
            Load::Equal(rate) => dataset.equal_load_cell(stack, scenario, rate),
        }
    }

    pub(crate) fn label(&self) -> String {
        match self {
            Load::Saturation(c) => format!("c = {c}"),
            Load::Equal(rate) => format!("at {rate}"),
        }
    }
}

/// Every load a run measured its stacks at: each concurrency, then each equal-load rate.
pub(crate) fn loads(dataset: &Dataset<'_>) -> Vec<Load> {
    let saturation = dataset.concurrency.iter().map(|&c| Load::Saturation(c));
    saturation.chain(dataset.equal_load_rates.iter().cloned().map(Load::Equal)).collect()
}

/// The family of `component`'s CPU per request of `scenario` at `load`: lower is better,
/// each pair widened by the spread between processes (the twin checks it).
pub(crate) fn family(
    dataset: &Dataset<'_>,
    scenario: &str,
    load: &Load,
    component: Component,
) -> Family {
    let members: Vec<Member> = dataset
        .stacks
        .iter()
        .filter_map(|stack| {
            let windows = load.windows(dataset, stack, scenario);
            if windows.is_empty() {
                return None;
            }
            let samples = windows.by_round(|c| component.per_request_us(c).filter(|&us| us > 0.0));
            let mut member = Member::new(dataset, stack, samples, None);
            member.disqualified = windows.disqualified();
            Some(member)
        })
        .collect();
    let q = |_: &[&[(f64, f64)]]| bookstore_stats::FALSE_DISCOVERY_RATE;
    Family::of_members(members, Better::Lower, q, Spread::Processes)
}

/// Every twin's calls against its stack over the CPU families (each component, scenario
/// and load).
pub(crate) fn twin_calls(dataset: &Dataset<'_>) -> Vec<TwinCalls> {
    let mut families = Vec::new();
    for scenario in &dataset.scenarios {
        for load in loads(dataset) {
            for component in Component::ALL {
                let label = format!("{} CPU {scenario} {}", component.name(), load.label());
                families.push((label, family(dataset, scenario, &load, component)));
            }
        }
    }
    twin_calls_in(dataset, &families)
}

/// One scenario's CPU per request, every stack at every load.
#[derive(Debug, Serialize)]
pub(crate) struct CpuTable {
    scenario: String,
    rows: Vec<CpuRow>,
}

#[derive(Debug, Serialize)]
struct CpuRow {
    stack: String,
    colour: String,
    load: String,
    first_of_group: bool,
    /// Server, PostgreSQL and client, µs with intervals ("–" where not seen).
    costs: [String; 3],
    /// The server's CPU per request against the lowest of its load (or its twin's stack).
    server_against: Option<ComparisonText>,
    disqualified: Option<String>,
}

pub(crate) fn table(dataset: &Dataset<'_>, scenario: &str) -> CpuTable {
    let mut rows = Vec::new();
    for load in loads(dataset) {
        let server = family(dataset, scenario, &load, Component::Server);
        let ranking = server.ranking();
        let first = ranking.order.first().map(|&i| server.members[i].name.clone());
        for (index, stack) in dataset.stacks.iter().enumerate() {
            let windows = load.windows(dataset, stack, scenario);
            if windows.is_empty() {
                continue;
            }
            let reference = dataset.twin_of(stack).or(first.clone());
            let costs = Component::ALL
                .map(|component| Cost::of(windows, component).map_or("–".into(), |c| c.text()));
            rows.push(CpuRow {
                stack: stack.clone(),
                colour: colour(dataset, stack),
                load: load.label(),
                first_of_group: index == 0,
                costs,
                server_against: reference
                    .filter(|r| r != stack)
                    .and_then(|r| server.compare(&r, stack))
                    .map(ComparisonText::from),
                disqualified: windows.disqualified(),
            });
        }
    }
    CpuTable { scenario: scenario.to_owned(), rows }
}

/// The terminal's lines: each scenario's CPU per request at the lowest concurrency, stack
/// by stack, server / PostgreSQL / client.
pub(crate) fn lines(dataset: &Dataset<'_>) -> Vec<String> {
    let Some(&concurrency) = dataset.concurrency.first() else { return Vec::new() };
    let load = Load::Saturation(concurrency);
    let mut lines = vec![format!(
        "CPU per request, µs (server / PostgreSQL / client, c = {concurrency}, 95% over the rounds):"
    )];
    for scenario in &dataset.scenarios {
        let each: Vec<String> = dataset
            .stacks
            .iter()
            .filter_map(|stack| {
                let windows = load.windows(dataset, stack, scenario);
                let cost = |c| Cost::of(windows, c).map_or("–".into(), |c| c.text());
                (!windows.is_empty()).then(|| {
                    let [s, p, c] = Component::ALL.map(cost);
                    format!("{stack} {s} / {p} / {c}")
                })
            })
            .collect();
        lines.push(format!("  {scenario}: {}", each.join("; ")));
    }
    lines
}

/// The CPUs of each tier of `run` (`--cpus`): groups of tiers pinned to the same CPUs,
/// each with how many CPUs it has; without a placement, the three share every CPU.
fn groups(run: &RunResults) -> Vec<(Vec<&'static str>, usize)> {
    let tiers = [("server", "server"), ("db", "PostgreSQL"), ("client", "client")];
    if run.settings.cpu_placement.is_empty() {
        return vec![(tiers.map(|(_, name)| name).to_vec(), run.environment.cpu_count)];
    }
    let mut groups: Vec<(Vec<&'static str>, Vec<usize>)> = Vec::new();
    for (tier, name) in tiers {
        let Some(placed) = run.settings.cpu_placement.iter().find(|t| t.tier == tier) else {
            continue;
        };
        match groups.iter_mut().find(|(_, cpus)| *cpus == placed.cpus) {
            Some((names, _)) => names.push(name),
            None => groups.push((vec![name], placed.cpus.clone())),
        }
    }
    groups.into_iter().map(|(names, cpus)| (names, cpus.len())).collect()
}

/// `--format projection`: for each stack and scenario of the `placed` runs, the rate the
/// model projects from `base`'s CPU per request at saturation — each group of processes
/// sharing CPUs can serve at most its CPUs ÷ the sum of their µs per request; the rate is
/// the lowest group's — beside the rate the placed run measured, and the model's error. A
/// run without `--cpus` is one group, every process on every CPU.
pub(crate) fn projection(base: &RunResults, placed: &[RunResults]) -> anyhow::Result<String> {
    use std::fmt::Write;
    let runs = std::slice::from_ref(base);
    let costs = Dataset::new(runs);
    let mut out = format!(
        "**Projected from CPU per request** (`{}`, its saturation windows) **against measured** (median goodput)\n\n| placement | stack | scenario | c | projected req/s | bound by | measured req/s | measured ÷ projected |\n|---|---|---|---|---|---|---|---|\n",
        base.run.id
    );
    let mut unprojected: Vec<String> = Vec::new();
    for run in placed {
        let groups = groups(run);
        anyhow::ensure!(
            groups.iter().all(|(_, cpus)| *cpus > 0),
            "{}: no CPUs recorded for its processes",
            run.run.id
        );
        let placement: Vec<String> = groups
            .iter()
            .map(|(names, cpus)| {
                format!("{} on {cpus} CPU{}", names.join(" + "), if *cpus == 1 { "" } else { "s" })
            })
            .collect();
        let measured = Dataset::new(std::slice::from_ref(run));
        for scenario in &measured.scenarios {
            let metric = super::dataset::Metric::for_scenario(scenario);
            for &concurrency in &measured.concurrency {
                for stack in &measured.stacks {
                    let load = Load::Saturation(concurrency);
                    let windows = load.windows(&measured, stack, scenario);
                    let Some(rate) = bookstore_stats::Summary::median_of(
                        windows.by_round(|c| Some(metric.of(c))).into_values(),
                    ) else {
                        continue;
                    };
                    let base_windows = load.windows(&costs, stack, scenario);
                    let us = |name: &str| {
                        let component = Component::ALL.into_iter().find(|c| c.name() == name)?;
                        Cost::of(base_windows, component).map(|c| c.us)
                    };
                    let bounds: Option<Vec<(f64, String)>> = groups
                        .iter()
                        .map(|(names, cpus)| {
                            let sum: f64 = names.iter().map(|n| us(n)).sum::<Option<f64>>()?;
                            Some((*cpus as f64 * 1e6 / sum, names.join(" + ")))
                        })
                        .collect();
                    let Some((projected, by)) =
                        bounds.and_then(|b| b.into_iter().min_by(|x, y| x.0.total_cmp(&y.0)))
                    else {
                        let name = format!("{stack} {scenario} c={concurrency}");
                        if !unprojected.contains(&name) {
                            unprojected.push(name);
                        }
                        continue;
                    };
                    let _ = writeln!(
                        out,
                        "| {} | {stack} | {scenario} | {concurrency} | {projected:.0} | {by} | {rate:.0} | {} |",
                        placement.join(", "),
                        bookstore_stats::digits(rate / projected)
                    );
                }
            }
        }
    }
    if !unprojected.is_empty() {
        // smallJson, say: PostgreSQL does no work there, so it has no cost to sum.
        let _ = write!(
            out,
            "\nNot projected, a process's CPU per request not measured in `{}`: {}.\n",
            base.run.id,
            unprojected.join(", ")
        );
    }
    Ok(out)
}
