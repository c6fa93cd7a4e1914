//! The windows of one or more runs, grouped into cells: a target (stack or ceiling), a
//! scenario and the stacks' concurrency, each with one sample per round.

pub(crate) use bookstore_record::metric::Metric;
use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use bookstore_record::outcome::block_concurrency;
use bookstore_record::results::{Cell, Rate, RunResults, decode_histogram};
use bookstore_record::warnings::disqualification;

/// What a row is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Target {
    Stack(String),
    HttpCeiling,
    /// The statements through one driver's store, with this many clients; behind the
    /// database latency relay with a `db_latency_us`.
    DbCeiling {
        driver: String,
        clients: u32,
        db_latency_us: Option<u64>,
    },
}

impl Target {
    /// The name a reader sees.
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Stack(name) => name.clone(),
            Target::HttpCeiling => "HTTP ceiling".into(),
            Target::DbCeiling { driver, clients, db_latency_us } => {
                format!("DB ceiling ({driver}, c = {clients}{})", relayed_text(*db_latency_us))
            }
        }
    }

    /// The name in a cell's `data-cell` id.
    pub(crate) fn id(&self) -> String {
        match self {
            Target::Stack(name) => name.clone(),
            Target::HttpCeiling => "http-ceiling".into(),
            Target::DbCeiling { driver, clients, db_latency_us: None } => {
                format!("db-ceiling-{driver}-{clients}")
            }
            Target::DbCeiling { driver, clients, db_latency_us: Some(us) } => {
                format!("db-ceiling-{driver}-{clients}-db{us}us")
            }
        }
    }
}

/// Which round of which run a window was measured in: windows with the same key were
/// measured side by side, and are paired.
pub(crate) type RoundKey = (usize, u32);

/// The windows of one target, scenario and concurrency.
#[derive(Debug, Default)]
pub(crate) struct CellWindows<'a> {
    pub(crate) windows: Vec<(RoundKey, &'a Cell)>,
}

impl<'a> CellWindows<'a> {
    /// Why the cell is disqualified (the first failing window's first gate), or `None`.
    pub(crate) fn disqualified(&self) -> Option<String> {
        self.windows.iter().find_map(|(_, cell)| disqualification(cell).map(|w| w.message.clone()))
    }

    /// The windows that count as samples: complete ones (Ctrl-C cuts a window short).
    pub(crate) fn samples(&self) -> impl Iterator<Item = &(RoundKey, &'a Cell)> {
        self.windows.iter().filter(|(_, cell)| !cell.stopped_early)
    }

    /// `metric` of each complete window, by round.
    pub(crate) fn by_round(
        &self,
        metric: impl Fn(&Cell) -> Option<f64>,
    ) -> BTreeMap<RoundKey, f64> {
        self.samples().filter_map(|(key, cell)| Some((*key, metric(cell)?))).collect()
    }

    /// The cells, in the order measured.
    pub(crate) fn cells(&self) -> impl Iterator<Item = &'a Cell> + '_ {
        self.windows.iter().map(|(_, cell)| *cell)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

/// The cells of one or more runs.
pub(crate) struct Dataset<'a> {
    pub(crate) runs: &'a [RunResults],
    pub(crate) stacks: Vec<String>,
    pub(crate) scenarios: Vec<String>,
    pub(crate) concurrency: Vec<u32>,
    /// The fixed-load phase's rates, as [`Rate::label`] names them, in the order first met.
    pub(crate) equal_load_rates: Vec<String>,
    cells: BTreeMap<(Target, String, u32), CellWindows<'a>>,
    /// The fixed-load phase's windows by stack, scenario and rate.
    equal_load: BTreeMap<(String, String, String), CellWindows<'a>>,
    empty: CellWindows<'a>,
}

impl<'a> Dataset<'a> {
    /// The looks the closed-loop families were judged at, as the first run planned them
    /// (runs read together are judged as one run's rounds).
    pub(crate) fn looks(&self) -> bookstore_stats::Looks {
        self.runs
            .first()
            .map_or(bookstore_stats::Looks::fixed(0), |run| run.settings.measurement.looks())
    }

    /// The level the fixed-load p99 families are judged at, as the first run planned it.
    pub(crate) fn equal_load_q(&self) -> f64 {
        self.runs.first().map_or(bookstore_stats::FALSE_DISCOVERY_RATE, |run| {
            run.settings.measurement.equal_load_q()
        })
    }

    pub(crate) fn new(runs: &'a [RunResults]) -> Self {
        let mut stacks: Vec<String> = Vec::new();
        let mut scenarios: Vec<String> = Vec::new();
        let mut concurrency: Vec<u32> = Vec::new();
        let mut cells: BTreeMap<(Target, String, u32), CellWindows<'a>> = BTreeMap::new();
        let mut equal_load: BTreeMap<(String, String, String), CellWindows<'a>> = BTreeMap::new();
        let mut equal_load_rates: Vec<String> = Vec::new();
        for (run_index, run) in runs.iter().enumerate() {
            for scenario in &run.settings.scenarios {
                if !scenarios.contains(scenario) {
                    scenarios.push(scenario.clone());
                }
            }
            concurrency.extend(&run.settings.measurement.concurrency);
            let mut add = |target: Target, cell: &'a Cell| {
                let key = (target, cell.scenario.clone(), block_concurrency(cell));
                cells.entry(key).or_default().windows.push(((run_index, cell.round), cell));
            };
            for cell in &run.ceilings.http {
                add(Target::HttpCeiling, cell);
            }
            for cell in &run.ceilings.db {
                // Files from before the diesel ceiling measured through sqlx only.
                let driver = cell.driver.clone().unwrap_or_else(|| "sqlx".into());
                let (clients, db_latency_us) = (cell.concurrency, cell.db_latency_us);
                add(Target::DbCeiling { driver, clients, db_latency_us }, cell);
            }
            for stack in &run.stacks {
                if !stacks.contains(&stack.name) {
                    stacks.push(stack.name.clone());
                }
                for cell in &stack.cells {
                    add(Target::Stack(stack.name.clone()), cell);
                }
                for cell in &stack.equal_load {
                    let rate = cell.equal_load_rate().map_or(String::new(), Rate::label);
                    if !equal_load_rates.contains(&rate) {
                        equal_load_rates.push(rate.clone());
                    }
                    let key = (stack.name.clone(), cell.scenario.clone(), rate);
                    equal_load
                        .entry(key)
                        .or_default()
                        .windows
                        .push(((run_index, cell.round), cell));
                }
            }
        }
        concurrency.sort_unstable();
        concurrency.dedup();
        Self {
            runs,
            stacks,
            scenarios,
            concurrency,
            equal_load_rates,
            cells,
            equal_load,
            empty: CellWindows::default(),
        }
    }

    /// The labelled variants of the runs: (label, the stack it runs, its flags), each once.
    pub(crate) fn variants(&self) -> Vec<(String, String, String)> {
        let mut found: Vec<(String, String, String)> = Vec::new();
        for stack in self.runs.iter().flat_map(|r| &r.stacks) {
            if let Some(of) = &stack.variant_of
                && !found.iter().any(|(label, _, _)| *label == stack.name)
            {
                found.push((stack.name.clone(), of.clone(), variant_change(stack)));
            }
        }
        found
    }

    /// The twins of the runs, (twin, its stack): variants that change nothing of their
    /// stack (no flags, no relay), whose verdicts against it have no difference to find.
    pub(crate) fn twins(&self) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = Vec::new();
        for stack in self.runs.iter().flat_map(|r| &r.stacks) {
            if let Some(of) = stack.variant_of.as_ref().filter(|_| stack.is_twin())
                && !found.iter().any(|(twin, _)| *twin == stack.name)
            {
                found.push((stack.name.clone(), of.clone()));
            }
        }
        found
    }

    /// The stack `name` is the twin of, if it is one.
    pub(crate) fn twin_of(&self, name: &str) -> Option<String> {
        self.twins().into_iter().find(|(twin, _)| twin == name).map(|(_, of)| of)
    }

    /// The stacks and variants that are ranked and compared with each other: all but the
    /// twins.
    pub(crate) fn ranked_parties(&self) -> usize {
        self.stacks.len() - self.twins().len()
    }

    /// How `stack` (a stack's or a variant's name) calls its database: a variant's is its
    /// stack's. `None` for a name outside the registry (`--targets`).
    pub(crate) fn db_calls(&self, stack: &str) -> Option<bookstore_registry::DbCalls> {
        let entry = self.runs.iter().flat_map(|r| &r.stacks).find(|s| s.name == stack)?;
        let name = entry.variant_of.as_deref().unwrap_or(&entry.name);
        bookstore_registry::stacks::find(name).ok().map(|info| info.db_calls)
    }

    /// The round trip the relay added between `stack` (a stack's or a variant's name) and
    /// its database, µs; `None` when it reached it directly.
    pub(crate) fn db_latency_us(&self, stack: &str) -> Option<u64> {
        self.runs.iter().flat_map(|r| &r.stacks).find(|s| s.name == stack)?.db_latency_us
    }

    /// The round trip the relay added for `target`: a stack's, or a ceiling's own.
    pub(crate) fn target_db_latency_us(&self, target: &Target) -> Option<u64> {
        match target {
            Target::Stack(name) => self.db_latency_us(name),
            Target::HttpCeiling => None,
            Target::DbCeiling { db_latency_us, .. } => *db_latency_us,
        }
    }

    /// The fixed-load windows of `stack` in `scenario` at `rate` (a [`Rate::label`]).
    pub(crate) fn equal_load_cell(
        &self,
        stack: &str,
        scenario: &str,
        rate: &str,
    ) -> &CellWindows<'a> {
        let key = (stack.to_owned(), scenario.to_owned(), rate.to_owned());
        self.equal_load.get(&key).unwrap_or(&self.empty)
    }

    pub(crate) fn cell(
        &self,
        target: &Target,
        scenario: &str,
        concurrency: u32,
    ) -> &CellWindows<'a> {
        self.cells.get(&(target.clone(), scenario.to_owned(), concurrency)).unwrap_or(&self.empty)
    }

    /// The ceilings measured beside `scenario` at `concurrency`, the highest median first
    /// (by the scenario's metric): the responder for scenarios without database access, the
    /// same statements straight through each driver's store otherwise.
    pub(crate) fn ceilings(&self, scenario: &str, concurrency: u32) -> Vec<(Target, f64)> {
        self.ceilings_at(scenario, concurrency, None)
    }

    /// The same, for a party behind the database latency relay at `db_latency_us`: the HTTP
    /// ceiling, and the database ceilings measured behind a relay of the same round trip
    /// (`None`: those reaching the database directly).
    pub(crate) fn ceilings_at(
        &self,
        scenario: &str,
        concurrency: u32,
        db_latency_us: Option<u64>,
    ) -> Vec<(Target, f64)> {
        let metric = Metric::for_scenario(scenario);
        let at_latency = |target: &Target| match target {
            Target::Stack(_) => false,
            // No database behind it: it bounds a party at any latency.
            Target::HttpCeiling => true,
            Target::DbCeiling { db_latency_us: own, .. } => *own == db_latency_us,
        };
        let mut found: Vec<(Target, f64)> = self
            .cells
            .iter()
            .filter(|((target, s, c), _)| at_latency(target) && s == scenario && *c == concurrency)
            .filter_map(|((target, _, _), windows)| {
                let values: Vec<f64> =
                    windows.by_round(|cell| Some(metric.of(cell))).into_values().collect();
                Some((target.clone(), bookstore_stats::Summary::of(&values)?.median))
            })
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1));
        found
    }

    /// The ceiling that bounds `scenario` at `concurrency`: of those measured, the one with
    /// the highest median (for the database scenarios, the faster driver).
    pub(crate) fn ceiling(&self, scenario: &str, concurrency: u32) -> Option<Target> {
        self.ceilings(scenario, concurrency).into_iter().next().map(|(target, _)| target)
    }

    /// Every ceiling target measured, the responder first.
    pub(crate) fn ceiling_targets(&self) -> Vec<Target> {
        let mut targets: Vec<Target> = Vec::new();
        for (target, _, _) in self.cells.keys() {
            if !matches!(target, Target::Stack(_)) && !targets.contains(target) {
                targets.push(target.clone());
            }
        }
        targets
    }

    /// Latency over every complete window of a cell: of the successes, and for a scenario
    /// ranked by expected answers (`checkoutSoldOut`) of the refusals too.
    pub(crate) fn latency(
        &self,
        target: &Target,
        scenario: &str,
        concurrency: u32,
    ) -> Option<Histogram<u64>> {
        self.cell(target, scenario, concurrency).latency(scenario)
    }

    /// Total rounds per cell of the runs together.
    pub(crate) fn rounds(&self) -> u32 {
        self.runs.iter().map(|r| r.settings.measurement.total_rounds()).sum()
    }
}

impl CellWindows<'_> {
    /// Latency over every complete window: of the successes, and for a scenario ranked by
    /// expected answers (`checkoutSoldOut`) of the refusals too.
    pub(crate) fn latency(&self, scenario: &str) -> Option<Histogram<u64>> {
        let with_refusals = Metric::for_scenario(scenario) == Metric::Answered;
        let mut merged: Option<Histogram<u64>> = None;
        let encoded = self.samples().flat_map(|(_, cell)| {
            let refusals = with_refusals.then_some(cell.histogram_rejected.as_str());
            std::iter::once(cell.histogram_ok.as_str()).chain(refusals)
        });
        for text in encoded {
            let Ok(histogram) = decode_histogram(text) else { continue };
            if histogram.is_empty() {
                continue;
            }
            match merged.as_mut() {
                Some(total) => {
                    let _ = total.add(&histogram);
                }
                None => merged = Some(histogram),
            }
        }
        merged
    }
}

/// The round trip the relay added, as the pages show it: "+1ms", or "0" for the
/// database reached directly.
pub(crate) fn latency_text(db_latency_us: Option<u64>) -> String {
    db_latency_us.map_or("0".into(), |us| {
        format!("+{}", humantime::format_duration(std::time::Duration::from_micros(us)))
    })
}

/// ", +1ms" after a ceiling's name; empty for one reaching its database directly.
fn relayed_text(db_latency_us: Option<u64>) -> String {
    db_latency_us.map_or(String::new(), |us| format!(", {}", latency_text(Some(us))))
}

/// What a variant changes of its stack, as a phrase: "run with --workers 1", "with a relay
/// adding 1000 µs to each database round trip", or both.
fn variant_change(stack: &bookstore_record::results::StackResults) -> String {
    let mut changes = Vec::new();
    if !stack.args.is_empty() {
        changes.push(format!("run with {}", stack.args.join(" ")));
    }
    if let Some(us) = stack.db_latency_us {
        changes.push(format!("with a relay adding {us} µs to each database round trip"));
    }
    if changes.is_empty() {
        return "run again as a second process with the same binary and flags (a twin)".into();
    }
    changes.join(" and ")
}
