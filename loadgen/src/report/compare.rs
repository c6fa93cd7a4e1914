//! `loadgen compare BASE NEW`: per-cell changes between two sets of runs (before/after a
//! change), marked significant only when both sides have repeats and Welch's t-test at 95%
//! says the difference is more than their noise.

use minijinja::Environment;
use serde::Serialize;

use super::stats::{self, Summary};
use super::{Dataset, Metric, Target, charts};
use crate::results::RunResults;

const TEMPLATE: &str = include_str!("../../templates/compare.html");

/// One cell present on both sides.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// Stack or ceiling.
    pub target: String,
    /// Scenario.
    pub scenario: String,
    /// Connections.
    pub concurrency: u32,
    /// The rate the scenario is ranked by (goodput, or expected answers for checkoutSoldOut).
    pub base: Summary,
    /// The same on the new side.
    pub new: Summary,
    /// `new / base − 1`, percent.
    pub rate_change_percent: f64,
    /// p99 latency, base and new, µs (merged over samples).
    pub p99_us: (Option<u64>, Option<u64>),
    /// `Some(true)`: a real difference; `Some(false)`: within noise; `None`: a side has a
    /// single sample, so no test was possible.
    pub significant: Option<bool>,
}

/// The changes of every cell measured on both sides.
pub fn compare(base: &[RunResults], new: &[RunResults]) -> Vec<Change> {
    let (before, after) = (Dataset::new(base), Dataset::new(new));
    let mut targets: Vec<(String, Target)> = before
        .stacks
        .iter()
        .filter(|s| after.stacks.contains(s))
        .map(|s| (s.clone(), Target::Stack(s.clone())))
        .collect();
    targets.push(("HTTP ceiling".into(), Target::HttpCeiling));
    targets.push(("DB ceiling".into(), Target::DbCeiling));
    let mut changes = Vec::new();
    for scenario in before.scenarios.iter().filter(|s| after.scenarios.contains(s)) {
        let metric = Metric::for_scenario(scenario);
        for &concurrency in before.concurrency.iter().filter(|c| after.concurrency.contains(c)) {
            for (name, target) in &targets {
                let (Some(base), Some(new)) = (
                    before.summary(target, scenario, concurrency, metric),
                    after.summary(target, scenario, concurrency, metric),
                ) else {
                    continue;
                };
                let p99 = |d: &Dataset<'_>| {
                    d.latency(target, scenario, concurrency).map(|h| h.value_at_quantile(0.99))
                };
                changes.push(Change {
                    target: name.clone(),
                    scenario: scenario.clone(),
                    concurrency,
                    rate_change_percent: if base.median > 0.0 {
                        (new.median / base.median - 1.0) * 100.0
                    } else {
                        0.0
                    },
                    p99_us: (p99(&before), p99(&after)),
                    significant: stats::differs(&base, &new),
                    base,
                    new,
                });
            }
        }
    }
    changes
}

fn verdict(change: &Change) -> &'static str {
    match change.significant {
        Some(true) => "significant",
        Some(false) => "noise",
        None => "single run: no test",
    }
}

fn p99_text(value: Option<u64>) -> String {
    value.map_or("–".into(), |v| charts::latency_label(v as f64))
}

/// The changes as a plain-text table for a terminal.
pub fn table(changes: &[Change]) -> String {
    let mut out = format!(
        "{:<22} {:<20} {:>5} {:>10} {:>10} {:>8}  {:>19}  {}\n",
        "target", "scenario", "c", "base/s", "new/s", "change", "p99 base → new", "verdict"
    );
    for c in changes {
        out.push_str(&format!(
            "{:<22} {:<20} {:>5} {:>10.0} {:>10.0} {:>+7.1}%  {:>19}  {}\n",
            c.target,
            c.scenario,
            c.concurrency,
            c.base.median,
            c.new.median,
            c.rate_change_percent,
            format!("{} → {}", p99_text(c.p99_us.0), p99_text(c.p99_us.1)),
            verdict(c)
        ));
    }
    out
}

#[derive(Serialize)]
struct Row {
    target: String,
    scenario: String,
    concurrency: u32,
    base: String,
    new: String,
    change: String,
    faster: bool,
    p99: String,
    verdict: &'static str,
    significant: bool,
}

#[derive(Serialize)]
struct Page {
    base: Vec<String>,
    new: Vec<String>,
    rows: Vec<Row>,
    any_test: bool,
}

/// The changes as a self-contained HTML page.
pub fn render(
    base: &[RunResults],
    new: &[RunResults],
    changes: &[Change],
) -> anyhow::Result<String> {
    let rate = |s: &Summary| {
        if s.n > 1 {
            format!("{:.0} ({:.0}–{:.0})", s.median, s.min, s.max)
        } else {
            format!("{:.0}", s.median)
        }
    };
    let page = Page {
        base: base.iter().map(|r| r.run.id.clone()).collect(),
        new: new.iter().map(|r| r.run.id.clone()).collect(),
        rows: changes
            .iter()
            .map(|c| Row {
                target: c.target.clone(),
                scenario: c.scenario.clone(),
                concurrency: c.concurrency,
                base: rate(&c.base),
                new: rate(&c.new),
                change: format!("{:+.1}%", c.rate_change_percent),
                faster: c.rate_change_percent >= 0.0,
                p99: format!("{} → {}", p99_text(c.p99_us.0), p99_text(c.p99_us.1)),
                verdict: verdict(c),
                significant: c.significant == Some(true),
            })
            .collect(),
        any_test: changes.iter().any(|c| c.significant.is_some()),
    };
    let mut environment = Environment::new();
    environment.add_template("compare.html", TEMPLATE)?;
    Ok(environment.get_template("compare.html")?.render(minijinja::value::Serde(&page))?)
}
