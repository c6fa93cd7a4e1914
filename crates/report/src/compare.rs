//! `loadgen compare BASE NEW`: two sets of runs side by side, judged by the summary's own
//! method (`bookstore-stats`).
//!
//! - **Changes**: each target's rate in NEW against BASE, cell by cell. The two sides were
//!   measured apart, so nothing pairs their rounds: the interval is Welch's, on the logs of
//!   each side's rounds, widened by the spread between two processes of one binary (each
//!   run started its own; `bookstore_stats::PROCESS_SD`); the family is one scenario ×
//!   concurrency (every target measured on both sides), corrected like the summary's.
//! - **Verdicts of each side**: every pair of stacks as each side's own summary judges it,
//!   and the pairs the two sides call different in opposite directions — the check that a
//!   run reproduces.
//!
//! `--fail-on-regression PCT` makes the exit status say whether a target got slower by
//! more than PCT percent *and* distinguishably so.

use std::collections::BTreeMap;

use bookstore_stats::{
    Comparison, FALSE_DISCOVERY_RATE, Samples, Summary, Verdict, flipped, judge,
};
use minijinja::Environment;
use serde::Serialize;

use super::dataset::{Dataset, Metric, Target};
use super::verdicts::Family;
use crate::text::{ComparisonText, rate_text};
use bookstore_record::results::RunResults;

const TEMPLATE: &str = include_str!("../templates/compare.html");

/// Exit status of `loadgen compare --fail-on-regression` when a regression was found.
pub const EXIT_REGRESSION: u8 = 3;

/// One cell measured on both sides.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// Stack or ceiling.
    pub target: String,
    /// The scenario's name in SPEC §4.
    pub scenario: String,
    /// Connections of the stacks' cells.
    pub concurrency: u32,
    /// The round trip the database latency relay added, µs (`--db-latency`); `None`:
    /// the database reached directly.
    pub db_latency_us: Option<u64>,
    /// The rate the scenario is ranked by, over BASE's rounds.
    pub base: Summary,
    /// The same over NEW's rounds.
    pub new: Summary,
    /// NEW against BASE; `None` when a side has a single round or is disqualified.
    pub comparison: Option<Comparison>,
    /// p99 latency at saturation, base and new, µs (merged over the rounds).
    pub p99_us: (Option<u64>, Option<u64>),
    /// Why a side is disqualified, if one is.
    pub disqualified: Option<String>,
}

impl Change {
    /// Whether NEW is distinguishably slower than BASE by more than `percent`.
    pub fn regressed_by_more_than(&self, percent: f64) -> bool {
        self.comparison
            .is_some_and(|c| c.verdict == Verdict::Lower && c.ratio < 1.0 - percent / 100.0)
    }
}

/// Every target measured on both sides: the stacks, then the ceilings.
fn targets(before: &Dataset<'_>, after: &Dataset<'_>) -> Vec<Target> {
    let mut targets: Vec<Target> = before
        .stacks
        .iter()
        .filter(|s| after.stacks.contains(s))
        .map(|s| Target::Stack(s.clone()))
        .collect();
    let ceilings = after.ceiling_targets();
    targets.extend(before.ceiling_targets().into_iter().filter(|t| ceilings.contains(t)));
    targets
}

/// Two runs are not paired by round: each target's rates before and after are compared as
/// two independent sets, of two processes.
fn unpaired(tests: &[Option<(Vec<f64>, Vec<f64>)>]) -> Vec<Option<Samples<'_>>> {
    tests.iter().map(|t| t.as_ref().map(|(a, b)| Samples::Runs { a, b })).collect()
}

/// The changes of every cell measured on both sides.
pub fn compare(base: &[RunResults], new: &[RunResults]) -> Vec<Change> {
    let (before, after) = (Dataset::new(base), Dataset::new(new));
    let mut changes = Vec::new();
    for scenario in before.scenarios.iter().filter(|s| after.scenarios.contains(s)) {
        let metric = Metric::for_scenario(scenario);
        for &concurrency in before.concurrency.iter().filter(|c| after.concurrency.contains(c)) {
            let mut cells = Vec::new();
            let mut tests = Vec::new();
            for target in targets(&before, &after) {
                let (b, a) = (
                    before.cell(&target, scenario, concurrency),
                    after.cell(&target, scenario, concurrency),
                );
                let rates = |w: &super::dataset::CellWindows<'_>| -> Vec<f64> {
                    w.by_round(|c| Some(metric.of(c))).into_values().collect()
                };
                let (base_rates, new_rates) = (rates(b), rates(a));
                let (Some(base_summary), Some(new_summary)) =
                    (Summary::of(&base_rates), Summary::of(&new_rates))
                else {
                    continue;
                };
                let disqualified = b.disqualified().or_else(|| a.disqualified());
                tests.push(disqualified.is_none().then_some((base_rates, new_rates)));
                let p99 = |d: &Dataset<'_>| {
                    d.latency(&target, scenario, concurrency).map(|h| h.value_at_quantile(0.99))
                };
                cells.push(Change {
                    target: target.name(),
                    scenario: scenario.clone(),
                    concurrency,
                    db_latency_us: after.target_db_latency_us(&target),
                    base: base_summary,
                    new: new_summary,
                    comparison: None,
                    p99_us: (p99(&before), p99(&after)),
                    disqualified,
                });
            }
            for (mut change, comparison) in cells.into_iter().zip(judge(&unpaired(&tests))) {
                change.comparison = comparison;
                changes.push(change);
            }
        }
    }
    changes
}

/// A pair of stacks as each side's summary judges it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairVerdicts {
    /// The scenario's name in SPEC §4.
    pub scenario: String,
    /// Connections of the cell.
    pub concurrency: u32,
    /// The pair's first stack, the one that sorts first by name (the same on both sides).
    pub a: String,
    /// The second: each comparison is of `b` against `a`.
    pub b: String,
    /// BASE's verdict; `None` when BASE did not compare the pair.
    pub base: Option<Comparison>,
    /// NEW's, likewise.
    pub new: Option<Comparison>,
}

impl PairVerdicts {
    /// The two sides call the pair different in opposite directions.
    pub fn contradicts(&self) -> bool {
        matches!(
            (self.base.map(|c| c.verdict), self.new.map(|c| c.verdict)),
            (Some(Verdict::Higher), Some(Verdict::Lower))
                | (Some(Verdict::Lower), Some(Verdict::Higher))
        )
    }
}

/// Every pair of stacks of every cell, as BASE's and NEW's own summaries judge them.
pub fn pair_verdicts(base: &[RunResults], new: &[RunResults]) -> Vec<PairVerdicts> {
    let (before, after) = (Dataset::new(base), Dataset::new(new));
    let mut pairs: BTreeMap<(usize, u32, String, String), PairVerdicts> = BTreeMap::new();
    for (side, dataset) in [(0, &before), (1, &after)] {
        for (order, scenario) in dataset.scenarios.iter().enumerate() {
            for &concurrency in &dataset.concurrency {
                let family = Family::rates(dataset, scenario, concurrency);
                for (a, b, comparison) in family.pairs() {
                    // One order of the pair for both sides (their lists of stacks may differ).
                    let (a, b, comparison) =
                        if a <= b { (a, b, *comparison) } else { (b, a, flipped(*comparison)) };
                    let place =
                        before.scenarios.iter().position(|s| s == scenario).unwrap_or(order);
                    let entry = pairs
                        .entry((place, concurrency, a.to_owned(), b.to_owned()))
                        .or_insert_with(|| PairVerdicts {
                            scenario: scenario.clone(),
                            concurrency,
                            a: a.to_owned(),
                            b: b.to_owned(),
                            base: None,
                            new: None,
                        });
                    if side == 0 {
                        entry.base = Some(comparison);
                    } else {
                        entry.new = Some(comparison);
                    }
                }
            }
        }
    }
    pairs.into_values().collect()
}

fn comparison_text(c: &Option<Comparison>) -> String {
    c.map_or("no comparison".into(), |c| c.text())
}

fn p99_text(value: Option<u64>) -> String {
    value.map_or("–".into(), |v| bookstore_record::latency_label(v as f64))
}

/// The changes as a plain-text table for a terminal.
pub fn table(changes: &[Change]) -> String {
    let mut out = format!(
        "{:<20} {:<20} {:>5} {:>7} {:>10} {:>10}  {:>19}  {}\n",
        "target", "scenario", "c", "db +", "base/s", "new/s", "p99 base → new", "new ÷ base"
    );
    for c in changes {
        let verdict = match &c.disqualified {
            Some(why) => format!("disqualified: {why}"),
            None => comparison_text(&c.comparison),
        };
        out.push_str(&format!(
            "{:<20} {:<20} {:>5} {:>7} {:>10.0} {:>10.0}  {:>19}  {verdict}\n",
            c.target,
            c.scenario,
            c.concurrency,
            super::dataset::latency_text(c.db_latency_us),
            c.base.median,
            c.new.median,
            format!("{} → {}", p99_text(c.p99_us.0), p99_text(c.p99_us.1)),
        ));
    }
    out
}

/// Each side's verdict on every pair of stacks, and how many each side called different.
pub fn pairs_table(pairs: &[PairVerdicts]) -> String {
    let mut out = format!(
        "{:<20} {:>5}  {:<20} {:<20}  {:<42} {}\n",
        "scenario", "c", "a", "b", "b ÷ a in base", "b ÷ a in new"
    );
    for p in pairs {
        out.push_str(&format!(
            "{:<20} {:>5}  {:<20} {:<20}  {:<42} {}{}\n",
            p.scenario,
            p.concurrency,
            p.a,
            p.b,
            comparison_text(&p.base),
            comparison_text(&p.new),
            if p.contradicts() { "  ← CONTRADICTS" } else { "" }
        ));
    }
    let called = |side: fn(&PairVerdicts) -> Option<Comparison>| {
        pairs.iter().filter(|p| side(p).is_some_and(|c| c.differs())).count()
    };
    let compared = |side: fn(&PairVerdicts) -> Option<Comparison>| {
        pairs.iter().filter(|p| side(p).is_some()).count()
    };
    out.push_str(&format!(
        "pairs called different: base {} of {}, new {} of {}; contradictions: {}\n",
        called(|p| p.base),
        compared(|p| p.base),
        called(|p| p.new),
        compared(|p| p.new),
        pairs.iter().filter(|p| p.contradicts()).count()
    ));
    out
}

#[derive(Serialize)]
struct Row {
    target: String,
    scenario: String,
    concurrency: u32,
    db_latency: String,
    base: String,
    new: String,
    comparison: Option<ComparisonText>,
    disqualified: Option<String>,
    p99: String,
}

#[derive(Serialize)]
struct PairRow {
    scenario: String,
    concurrency: u32,
    a: String,
    b: String,
    base: Option<ComparisonText>,
    new: Option<ComparisonText>,
    contradicts: bool,
}

#[derive(Serialize)]
struct Page {
    base: Vec<String>,
    new: Vec<String>,
    rows: Vec<Row>,
    pairs: Vec<PairRow>,
    contradictions: usize,
    any_test: bool,
    fdr_percent: String,
}

/// The comparison as a self-contained HTML page.
pub fn render(
    base: &[RunResults],
    new: &[RunResults],
    changes: &[Change],
    pairs: &[PairVerdicts],
) -> anyhow::Result<String> {
    let page = Page {
        base: base.iter().map(|r| r.run.id.clone()).collect(),
        new: new.iter().map(|r| r.run.id.clone()).collect(),
        rows: changes
            .iter()
            .map(|c| Row {
                target: c.target.clone(),
                scenario: c.scenario.clone(),
                concurrency: c.concurrency,
                db_latency: super::dataset::latency_text(c.db_latency_us),
                base: rate_text(&c.base),
                new: rate_text(&c.new),
                comparison: c.comparison.map(ComparisonText::from),
                disqualified: c.disqualified.clone(),
                p99: format!("{} → {}", p99_text(c.p99_us.0), p99_text(c.p99_us.1)),
            })
            .collect(),
        pairs: pairs
            .iter()
            .map(|p| PairRow {
                scenario: p.scenario.clone(),
                concurrency: p.concurrency,
                a: p.a.clone(),
                b: p.b.clone(),
                base: p.base.map(ComparisonText::from),
                new: p.new.map(ComparisonText::from),
                contradicts: p.contradicts(),
            })
            .collect(),
        contradictions: pairs.iter().filter(|p| p.contradicts()).count(),
        any_test: changes.iter().any(|c| c.comparison.is_some()),
        fdr_percent: crate::text::percent(FALSE_DISCOVERY_RATE),
    };
    let mut environment = Environment::new();
    environment.add_template("compare.html", TEMPLATE)?;
    Ok(environment.get_template("compare.html")?.render(minijinja::value::Serde(&page))?)
}
