//! `loadgen report`: the HTML summary, a view of one or more results files.
//!
//! Every number on the page is read from the results documents (or computed from them:
//! medians over repeats, percentiles of merged HDR histograms, ratios). The page is one
//! self-contained file — inline CSS and inline SVG, no script, nothing fetched — rendered by
//! minijinja from `templates/summary.html` (+ `charts.html`) and the typed context built here.
//!
//! Several files are read as repeats of the same suite (cells with the same stack,
//! scenario and concurrency become samples of one cell), as are `--repeat` cells within a
//! file. With two or more samples a cell shows its median with the min–max range and a
//! t-based 95% confidence interval; "tie" and "significant" use them. With one sample the
//! page says that no such test was possible.

pub mod charts;
pub mod compare;
pub mod stats;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use minijinja::Environment;
use serde::Serialize;

use crate::results::{Cell, RunResults, decode_histogram};
use crate::scenario::Scenario;
use charts::{BarChart, BarValue, CEILING_COLOUR, LineChart, PALETTE, Sparkline};
use stats::Summary;

const SUMMARY_TEMPLATE: &str = include_str!("../../templates/summary.html");
/// The SVG chart macros (`{% import "charts.html" as charts %}`), for pages in this style.
pub const CHARTS_TEMPLATE: &str = include_str!("../../templates/charts.html");
/// The pages' style sheet (`{% include "style.html" %}` inside `<head>`).
pub const STYLE_TEMPLATE: &str = include_str!("../../templates/style.html");
/// The pages' shell: head, style, `<h1>{{ title }}</h1>`, then the page's `body` block.
const PAGE_TEMPLATE: &str = include_str!("../../templates/page.html");

/// A template environment for a page in this style: `{% extends "page.html" %}`, with
/// `charts.html` to import; the page's own template is added as `name`.
pub fn page_environment(
    name: &'static str,
    template: &'static str,
) -> Result<Environment<'static>, minijinja::Error> {
    let mut environment = Environment::new();
    environment.add_template("charts.html", CHARTS_TEMPLATE)?;
    environment.add_template("style.html", STYLE_TEMPLATE)?;
    environment.add_template("page.html", PAGE_TEMPLATE)?;
    environment.add_template(name, template)?;
    Ok(environment)
}

/// What a row is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Target {
    Stack(String),
    HttpCeiling,
    DbCeiling,
}

/// The cells of one or more runs, grouped by target, scenario and concurrency.
pub(crate) struct Dataset<'a> {
    pub(crate) runs: &'a [RunResults],
    pub(crate) stacks: Vec<String>,
    pub(crate) scenarios: Vec<String>,
    pub(crate) concurrency: Vec<u32>,
    cells: BTreeMap<(Target, String, u32), Vec<&'a Cell>>,
}

impl<'a> Dataset<'a> {
    pub(crate) fn new(runs: &'a [RunResults]) -> Self {
        let mut stacks: Vec<String> = Vec::new();
        let mut scenarios: Vec<String> = Vec::new();
        let mut concurrency: Vec<u32> = Vec::new();
        let mut cells: BTreeMap<(Target, String, u32), Vec<&Cell>> = BTreeMap::new();
        for run in runs {
            for scenario in &run.settings.scenarios {
                if !scenarios.contains(scenario) {
                    scenarios.push(scenario.clone());
                }
            }
            concurrency.extend(&run.settings.concurrency);
            let mut add_at = |target: Target, cell: &'a Cell, concurrency: u32| {
                cells.entry((target, cell.scenario.clone(), concurrency)).or_default().push(cell);
            };
            for cell in &run.ceilings.http {
                add_at(Target::HttpCeiling, cell, cell.concurrency);
            }
            // The suite measures the database ceiling once per scenario, with one client per
            // pooled connection; it bounds the stacks at every concurrency. (Runs before that
            // measured it per concurrency, and are read as they were measured.)
            let once_per_scenario =
                run.ceilings.db.iter().all(|cell| cell.concurrency == run.settings.pool_max);
            for cell in &run.ceilings.db {
                if once_per_scenario {
                    for &concurrency in &run.settings.concurrency {
                        add_at(Target::DbCeiling, cell, concurrency);
                    }
                } else {
                    add_at(Target::DbCeiling, cell, cell.concurrency);
                }
            }
            let mut add = |target: Target, cell: &'a Cell| add_at(target, cell, cell.concurrency);
            for stack in &run.stacks {
                if !stacks.contains(&stack.name) {
                    stacks.push(stack.name.clone());
                }
                for cell in &stack.cells {
                    add(Target::Stack(stack.name.clone()), cell);
                }
            }
        }
        concurrency.sort_unstable();
        concurrency.dedup();
        Self { runs, stacks, scenarios, concurrency, cells }
    }

    pub(crate) fn cells(&self, target: &Target, scenario: &str, concurrency: u32) -> &[&'a Cell] {
        self.cells
            .get(&(target.clone(), scenario.to_owned(), concurrency))
            .map_or(&[], Vec::as_slice)
    }

    /// The ceiling that bounds `scenario`: the responder for scenarios without database
    /// access (measured as `health`), the same statements straight on the store otherwise.
    pub(crate) fn ceiling(&self, scenario: &str, concurrency: u32) -> (Target, &[&'a Cell]) {
        if uses_database(scenario) {
            (Target::DbCeiling, self.cells(&Target::DbCeiling, scenario, concurrency))
        } else {
            (Target::HttpCeiling, self.cells(&Target::HttpCeiling, "health", concurrency))
        }
    }

    pub(crate) fn summary(
        &self,
        target: &Target,
        scenario: &str,
        concurrency: u32,
        metric: Metric,
    ) -> Option<Summary> {
        let samples: Vec<f64> =
            self.cells(target, scenario, concurrency).iter().map(|c| metric.of(c)).collect();
        Summary::of(&samples)
    }

    /// Latency over all samples of a cell: of the successes, and for a scenario ranked by
    /// expected answers (`checkoutSoldOut`) of the refusals too.
    pub(crate) fn latency(
        &self,
        target: &Target,
        scenario: &str,
        concurrency: u32,
    ) -> Option<Histogram<u64>> {
        let with_refusals = Metric::for_scenario(scenario) == Metric::Answered;
        let mut merged: Option<Histogram<u64>> = None;
        let encoded = self.cells(target, scenario, concurrency).iter().flat_map(|cell| {
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

fn uses_database(scenario: &str) -> bool {
    Scenario::parse(scenario).map_or(true, Scenario::uses_database)
}

/// Which rate ranks the stacks of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// Successes per second.
    Goodput,
    /// Successes and expected refusals per second: for `checkoutSoldOut`, where after ten
    /// sales every correct answer is a refusal.
    Answered,
    /// Every response per second.
    Throughput,
}

impl Metric {
    pub(crate) fn for_scenario(scenario: &str) -> Self {
        if scenario == Scenario::CheckoutSoldOut.name() {
            Metric::Answered
        } else {
            Metric::Goodput
        }
    }

    pub(crate) fn of(self, cell: &Cell) -> f64 {
        match self {
            Metric::Goodput => cell.goodput_rps,
            Metric::Answered => {
                (cell.counts.ok + cell.counts.rejected) as f64 / cell.window_seconds
            }
            Metric::Throughput => cell.throughput_rps,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput (ok/s)",
            Metric::Answered => "expected answers/s (201 or 409)",
            Metric::Throughput => "responses/s",
        }
    }
}

/// A rate as text: median, and the range when repeated.
fn rate_text(summary: &Summary) -> String {
    if summary.n > 1 {
        format!("{:.0} ({:.0}–{:.0})", summary.median, summary.min, summary.max)
    } else {
        format!("{:.0}", summary.median)
    }
}

fn percent(value: f64) -> String {
    format!("{value:.0}%")
}

fn change(value: f64) -> String {
    if value >= 0.0 { format!("+{value:.1}%") } else { format!("{value:.1}%") }
}

/// The colour of `stack` (by its place in the list of stacks).
fn colour(dataset: &Dataset<'_>, stack: &str) -> String {
    let index = dataset.stacks.iter().position(|s| s == stack).unwrap_or(0);
    PALETTE[index % (PALETTE.len() - 1)].to_owned()
}

// ---- the page ---------------------------------------------------------------------------

#[derive(Debug, Serialize)]
struct Page {
    title: String,
    runs: Vec<RunLine>,
    samples_note: String,
    legend: Vec<charts::Legend>,
    headline: Vec<HeadlineRow>,
    scenarios: Vec<ScenarioSection>,
    efficiency: Vec<EfficiencyTable>,
    axes: Vec<AxisTable>,
    integrity: Integrity,
    method: Method,
}

#[derive(Debug, Serialize)]
struct RunLine {
    id: String,
    status: String,
    started_at: String,
}

#[derive(Debug, Serialize)]
struct HeadlineRow {
    scenario: String,
    concurrency: u32,
    metric: String,
    best: String,
    best_colour: String,
    best_value: String,
    others: Vec<HeadlineEntry>,
}

#[derive(Debug, Serialize)]
struct HeadlineEntry {
    stack: String,
    colour: String,
    percent_of_best: String,
    /// `Some(true)` when its interval overlaps the best's, `None` with one sample.
    tie: Option<bool>,
}

#[derive(Debug, Serialize)]
struct ScenarioSection {
    name: String,
    description: String,
    metric: String,
    groups: Vec<TableGroup>,
    bars: BarChart,
    latency: Vec<LineChart>,
    scaling: Vec<ScalingEntry>,
}

#[derive(Debug, Serialize)]
struct TableGroup {
    concurrency: u32,
    rows: Vec<TableRow>,
}

#[derive(Debug, Serialize)]
struct TableRow {
    target: String,
    colour: String,
    is_ceiling: bool,
    cell: Option<TableCell>,
}

#[derive(Debug, Serialize)]
struct TableCell {
    id: String,
    goodput: String,
    throughput: String,
    p50: String,
    p99: String,
    p999: String,
    ok: u64,
    rejected: u64,
    errors: u64,
    samples: usize,
    best: bool,
    sparkline: Option<Sparkline>,
}

#[derive(Debug, Serialize)]
struct ScalingEntry {
    stack: String,
    colour: String,
    factor: String,
}

#[derive(Debug, Serialize)]
struct EfficiencyTable {
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
    percent_of_ceiling: String,
}

#[derive(Debug, Serialize)]
struct AxisTable {
    axis: String,
    baseline: String,
    changed: String,
    note: String,
    concurrency: Vec<u32>,
    rows: Vec<AxisRow>,
}

#[derive(Debug, Serialize)]
struct AxisRow {
    scenario: String,
    cells: Vec<Option<AxisCell>>,
}

#[derive(Debug, Serialize)]
struct AxisCell {
    goodput_change: String,
    p99_change: String,
    better: bool,
    /// `Some(true)` when Welch's test says the goodput difference is more than noise.
    significant: Option<bool>,
}

#[derive(Debug, Serialize)]
struct Integrity {
    audits: Vec<AuditLine>,
    sql: Vec<SqlRow>,
    sql_targets: Vec<String>,
    validation: Vec<ValidationLine>,
    failures: Vec<FailureLine>,
    warnings: Vec<WarningLine>,
}

#[derive(Debug, Serialize)]
struct AuditLine {
    target: String,
    scenario: String,
    concurrency: u32,
    passed: bool,
    checkout_rows: u64,
    acknowledged: u64,
    failures: String,
}

#[derive(Debug, Serialize)]
struct SqlRow {
    scenario: String,
    values: Vec<Option<SqlValue>>,
}

#[derive(Debug, Serialize)]
struct SqlValue {
    text: String,
    differs: bool,
}

#[derive(Debug, Serialize)]
struct ValidationLine {
    stack: String,
    passed: usize,
    checked: usize,
    problems: Vec<String>,
}

#[derive(Debug, Serialize)]
struct FailureLine {
    stack: String,
    status: String,
    why: String,
}

#[derive(Debug, Serialize)]
struct WarningLine {
    target: String,
    message: String,
}

#[derive(Debug, Serialize)]
struct Method {
    settings: Vec<(String, String)>,
    parity: Vec<String>,
    environment: Vec<(String, String)>,
    caveats: Vec<String>,
}

/// Renders `runs` (repeats of one suite) as the summary page.
pub fn render(runs: &[RunResults]) -> anyhow::Result<String> {
    anyhow::ensure!(!runs.is_empty(), "no results to render");
    let dataset = Dataset::new(runs);
    let page = Page {
        title: "Five-stack summary".into(),
        runs: runs
            .iter()
            .map(|r| RunLine {
                id: r.run.id.clone(),
                status: r.run.status.clone(),
                started_at: r.run.started_at.clone(),
            })
            .collect(),
        samples_note: samples_note(&dataset),
        legend: dataset
            .stacks
            .iter()
            .map(|s| charts::Legend { colour: colour(&dataset, s), label: s.clone() })
            .chain(std::iter::once(charts::Legend {
                colour: CEILING_COLOUR.into(),
                label: "ceiling".into(),
            }))
            .collect(),
        headline: headline(&dataset),
        scenarios: dataset.scenarios.iter().map(|s| scenario_section(&dataset, s)).collect(),
        efficiency: dataset.scenarios.iter().map(|s| efficiency(&dataset, s)).collect(),
        axes: axes(&dataset),
        integrity: integrity(&dataset),
        method: method(&dataset),
    };
    let environment = page_environment("summary.html", SUMMARY_TEMPLATE)?;
    Ok(environment.get_template("summary.html")?.render(minijinja::value::Serde(&page))?)
}

fn samples_note(dataset: &Dataset<'_>) -> String {
    let per_cell = dataset.runs.iter().map(|r| r.settings.repeat as usize).sum::<usize>();
    if per_cell > 1 {
        format!(
            "{per_cell} samples per cell ({} run(s)): values are medians with the min–max range; \"tie\" means the 95% confidence intervals overlap, \"significant\" that Welch's t-test finds a difference at 95%.",
            dataset.runs.len()
        )
    } else {
        "One sample per cell: no tie or significance test was possible — differences of a few percent may be noise. Run with --repeat 3 (or render several runs together) to get intervals.".into()
    }
}

fn headline(dataset: &Dataset<'_>) -> Vec<HeadlineRow> {
    let mut rows = Vec::new();
    for scenario in &dataset.scenarios {
        let metric = Metric::for_scenario(scenario);
        for &concurrency in &dataset.concurrency {
            let mut ranked: Vec<(String, Summary)> = dataset
                .stacks
                .iter()
                .filter_map(|s| {
                    dataset
                        .summary(&Target::Stack(s.clone()), scenario, concurrency, metric)
                        .map(|m| (s.clone(), m))
                })
                .collect();
            if ranked.is_empty() {
                continue;
            }
            ranked.sort_by(|a, b| b.1.median.total_cmp(&a.1.median));
            let (best, top) = ranked[0].clone();
            rows.push(HeadlineRow {
                scenario: scenario.clone(),
                concurrency,
                metric: metric.label().into(),
                best_colour: colour(dataset, &best),
                best: best.clone(),
                best_value: rate_text(&top),
                others: ranked[1..]
                    .iter()
                    .map(|(stack, summary)| HeadlineEntry {
                        stack: stack.clone(),
                        colour: colour(dataset, stack),
                        percent_of_best: if top.median > 0.0 {
                            percent(summary.median / top.median * 100.0)
                        } else {
                            "–".into()
                        },
                        tie: summary.overlaps(&top),
                    })
                    .collect(),
            });
        }
    }
    rows
}

fn table_cell(
    dataset: &Dataset<'_>,
    target: &Target,
    scenario: &str,
    concurrency: u32,
) -> Option<TableCell> {
    let cells = dataset.cells(target, scenario, concurrency);
    let metric = Metric::for_scenario(scenario);
    let goodput = dataset.summary(target, scenario, concurrency, metric)?;
    let throughput = dataset.summary(target, scenario, concurrency, Metric::Throughput)?;
    let latency = dataset.latency(target, scenario, concurrency);
    let quantile = |q: f64| {
        latency
            .as_ref()
            .map_or("–".to_owned(), |h| charts::latency_label(h.value_at_quantile(q) as f64))
    };
    let first = cells[0];
    let per_second: Vec<f64> =
        first.timeline.iter().map(|s| metric_per_second(metric, s)).collect();
    let name = match target {
        Target::Stack(name) => name.clone(),
        Target::HttpCeiling => "http-ceiling".into(),
        Target::DbCeiling => "db-ceiling".into(),
    };
    Some(TableCell {
        id: format!("{name}:{scenario}:{concurrency}"),
        goodput: rate_text(&goodput),
        throughput: rate_text(&throughput),
        p50: quantile(0.5),
        p99: quantile(0.99),
        p999: quantile(0.999),
        ok: cells.iter().map(|c| c.counts.ok).sum(),
        rejected: cells.iter().map(|c| c.counts.rejected).sum(),
        errors: cells.iter().map(|c| c.counts.errors).sum(),
        samples: cells.len(),
        best: false,
        sparkline: charts::sparkline(&per_second, "req/s"),
    })
}

fn metric_per_second(metric: Metric, second: &crate::results::TimelineSecond) -> f64 {
    match metric {
        Metric::Goodput => second.ok as f64,
        Metric::Answered => (second.ok + second.rejected) as f64,
        Metric::Throughput => (second.ok + second.rejected + second.errors) as f64,
    }
}

fn scenario_section(dataset: &Dataset<'_>, scenario: &str) -> ScenarioSection {
    let metric = Metric::for_scenario(scenario);
    let (ceiling_target, _) = dataset.ceiling(scenario, dataset.concurrency[0]);
    let ceiling_scenario = if ceiling_target == Target::HttpCeiling { "health" } else { scenario };
    let ceiling_name = match ceiling_target {
        Target::HttpCeiling => "HTTP ceiling (minimal responder)",
        _ => "DB ceiling (same SQL, no HTTP)",
    };
    let table_groups = dataset
        .concurrency
        .iter()
        .map(|&concurrency| {
            let mut rows: Vec<TableRow> = dataset
                .stacks
                .iter()
                .map(|stack| TableRow {
                    target: stack.clone(),
                    colour: colour(dataset, stack),
                    is_ceiling: false,
                    cell: table_cell(dataset, &Target::Stack(stack.clone()), scenario, concurrency),
                })
                .collect();
            let best = dataset
                .stacks
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    dataset
                        .summary(&Target::Stack(s.clone()), scenario, concurrency, metric)
                        .map(|m| (i, m.median))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((index, _)) = best
                && let Some(cell) = rows[index].cell.as_mut()
            {
                cell.best = true;
            }
            if let Some(cell) = table_cell(dataset, &ceiling_target, ceiling_scenario, concurrency)
            {
                rows.push(TableRow {
                    target: ceiling_name.into(),
                    colour: CEILING_COLOUR.into(),
                    is_ceiling: true,
                    cell: Some(cell),
                });
            }
            TableGroup { concurrency, rows }
        })
        .collect();

    let groups: Vec<String> = dataset.concurrency.iter().map(|c| format!("c = {c}")).collect();
    let mut values = Vec::new();
    let mut ceilings = Vec::new();
    for (group, &concurrency) in dataset.concurrency.iter().enumerate() {
        for (slot, stack) in dataset.stacks.iter().enumerate() {
            if let Some(summary) =
                dataset.summary(&Target::Stack(stack.clone()), scenario, concurrency, metric)
            {
                values.push(BarValue {
                    group,
                    slot,
                    value: summary.median,
                    range: (summary.n > 1).then_some((summary.min, summary.max)),
                    colour: colour(dataset, stack),
                    title: format!(
                        "{stack}, c = {concurrency}: {} {}",
                        rate_text(&summary),
                        metric.label()
                    ),
                });
            }
        }
        let (target, _) = dataset.ceiling(scenario, concurrency);
        let target_scenario = if target == Target::HttpCeiling { "health" } else { scenario };
        if let Some(summary) = dataset.summary(&target, target_scenario, concurrency, metric) {
            ceilings.push((
                group,
                summary.median,
                format!("{ceiling_name}, c = {concurrency}: {:.0}/s", summary.median),
            ));
        }
    }
    let bars = charts::bar_chart(&groups, dataset.stacks.len(), &values, &ceilings, metric.label());

    let latency = dataset
        .concurrency
        .iter()
        .filter_map(|&concurrency| {
            let curves: Vec<(String, String, Vec<u64>)> = dataset
                .stacks
                .iter()
                .filter_map(|stack| {
                    let histogram =
                        dataset.latency(&Target::Stack(stack.clone()), scenario, concurrency)?;
                    let values = charts::CURVE_PERCENTILES
                        .iter()
                        .map(|p| {
                            if *p >= 100.0 {
                                histogram.max()
                            } else {
                                histogram.value_at_quantile(p / 100.0)
                            }
                        })
                        .collect();
                    Some((colour(dataset, stack), stack.clone(), values))
                })
                .collect();
            let of = if metric == Metric::Answered { "expected answers" } else { "successes" };
            (!curves.is_empty()).then(|| {
                charts::latency_chart(&format!("latency of {of}, c = {concurrency}"), &curves)
            })
        })
        .collect();

    let scaling = if dataset.concurrency.len() >= 2 {
        let (low, high) =
            (dataset.concurrency[0], dataset.concurrency[dataset.concurrency.len() - 1]);
        dataset
            .stacks
            .iter()
            .filter_map(|stack| {
                let target = Target::Stack(stack.clone());
                let from = dataset.summary(&target, scenario, low, metric)?;
                let to = dataset.summary(&target, scenario, high, metric)?;
                (from.median > 0.0).then(|| ScalingEntry {
                    stack: stack.clone(),
                    colour: colour(dataset, stack),
                    factor: format!("×{:.2} from c = {low} to {high}", to.median / from.median),
                })
            })
            .collect()
    } else {
        Vec::new()
    };

    ScenarioSection {
        name: scenario.to_owned(),
        description: describe(scenario),
        metric: metric.label().into(),
        groups: table_groups,
        bars,
        latency,
        scaling,
    }
}

fn describe(scenario: &str) -> String {
    match Scenario::parse(scenario) {
        Ok(Scenario::Health) => "GET /health — no database: framework and HTTP only".into(),
        Ok(Scenario::SmallJson) => "GET /api/books/bench/small-json — a small body built per request, no database".into(),
        Ok(Scenario::LargeJson) => "GET /api/books/bench/large-json?limit=200 — 200 books read and written as ~35 KB of JSON".into(),
        Ok(Scenario::BookById) => "GET /api/books/{id}, random ids — one indexed lookup with a join".into(),
        Ok(Scenario::BookList) => "GET /api/books?limit=50 — 50 rows, ~6 KB of JSON".into(),
        Ok(Scenario::BookList500) => "GET /api/books?limit=500 — 500 rows, ~61 KB of JSON".into(),
        Ok(Scenario::BookSearch) => "GET /api/books/search?q=Book&limit=20 — ILIKE over titles and author names".into(),
        Ok(Scenario::AggregateReport) => "GET /api/books/bench/aggregate-report?limit=50 — a GROUP BY over all books".into(),
        Ok(Scenario::CheckoutCreate) => "POST /api/checkouts, book ids cycling — a 5-statement transaction per request".into(),
        Ok(Scenario::CheckoutHotspot) => "POST /api/checkouts, always book 1 — every transaction waits for the same row lock".into(),
        Ok(Scenario::CheckoutDistributed) => "POST /api/checkouts, random books — write throughput with little contention".into(),
        Ok(Scenario::CheckoutSoldOut) => "POST /api/checkouts, book 2 (stock 10) — 10 sales, then every answer is a 409 refusal".into(),
        Err(_) => String::new(),
    }
}

fn efficiency(dataset: &Dataset<'_>, scenario: &str) -> EfficiencyTable {
    let metric = Metric::for_scenario(scenario);
    let (ceiling_target, _) = dataset.ceiling(scenario, dataset.concurrency[0]);
    let mut rows = Vec::new();
    for &concurrency in &dataset.concurrency {
        for (index, stack) in dataset.stacks.iter().enumerate() {
            rows.push(EfficiencyRow {
                stack: stack.clone(),
                colour: colour(dataset, stack),
                concurrency,
                first_of_group: index == 0,
                cell: efficiency_cell(
                    dataset,
                    &Target::Stack(stack.clone()),
                    scenario,
                    concurrency,
                    metric,
                ),
            });
        }
    }
    EfficiencyTable {
        scenario: scenario.to_owned(),
        ceiling_name: if ceiling_target == Target::HttpCeiling {
            "HTTP ceiling".into()
        } else {
            "DB ceiling".into()
        },
        rows,
    }
}

fn efficiency_cell(
    dataset: &Dataset<'_>,
    target: &Target,
    scenario: &str,
    concurrency: u32,
    metric: Metric,
) -> Option<EfficiencyCell> {
    let cells = dataset.cells(target, scenario, concurrency);
    if cells.is_empty() {
        return None;
    }
    let median = |values: Vec<f64>| Summary::of(&values).map(|s| s.median);
    let served = |c: &Cell| (c.counts.ok + c.counts.rejected) as f64;
    let per_cpu = median(
        cells
            .iter()
            .filter_map(|c| c.cpu_seconds.server.map(|cpu| served(c) / cpu.max(1e-9)))
            .collect(),
    );
    let cpu_ms = median(
        cells
            .iter()
            .filter_map(|c| {
                let cpu = c.cpu_seconds.server? + c.cpu_seconds.postgres.unwrap_or(0.0);
                (served(c) > 0.0).then(|| cpu / served(c) * 1000.0)
            })
            .collect(),
    );
    let rss = cells.iter().filter_map(|c| c.server_peak_rss_bytes).max();
    let own = dataset.summary(target, scenario, concurrency, metric)?;
    let (_, ceiling_cells) = dataset.ceiling(scenario, concurrency);
    let ceiling = Summary::of(&ceiling_cells.iter().map(|c| metric.of(c)).collect::<Vec<_>>());
    Some(EfficiencyCell {
        requests_per_server_cpu_second: per_cpu.map_or("–".into(), |v| format!("{v:.0}")),
        cpu_ms_per_request: cpu_ms.map_or("–".into(), |v| format!("{v:.3}")),
        peak_rss_mib: rss.map_or("–".into(), |b| format!("{:.1}", b as f64 / 1_048_576.0)),
        percent_of_ceiling: ceiling
            .filter(|c| c.median > 0.0)
            .map_or("–".into(), |c| percent(own.median / c.median * 100.0)),
    })
}

/// The pairs of SPEC §1 that change one axis.
const AXES: [(&str, &str, &str, &str); 4] = [
    (
        "database access",
        "axum-serde-sqlx",
        "axum-serde-diesel",
        "sqlx (async) → diesel + r2d2 on spawn_blocking; axum and serde_json in both",
    ),
    (
        "framework, blocking path",
        "axum-serde-diesel",
        "actix-serde-diesel",
        "axum + spawn_blocking → actix-web + web::block; serde_json and diesel in both",
    ),
    (
        "framework + serializer",
        "axum-serde-sqlx",
        "actix-simd-sqlx",
        "axum + serde_json → actix-web + simd-json; sqlx in both",
    ),
    (
        "framework + serializer",
        "axum-serde-sqlx",
        "hyper-sonic-sqlx",
        "axum + serde_json → bare hyper + sonic-rs; sqlx in both",
    ),
];

fn axes(dataset: &Dataset<'_>) -> Vec<AxisTable> {
    AXES.iter()
        .filter(|(_, a, b, _)| {
            dataset.stacks.iter().any(|s| s == a) && dataset.stacks.iter().any(|s| s == b)
        })
        .map(|(axis, baseline, changed, note)| AxisTable {
            axis: (*axis).into(),
            baseline: (*baseline).into(),
            changed: (*changed).into(),
            note: (*note).into(),
            concurrency: dataset.concurrency.clone(),
            rows: dataset
                .scenarios
                .iter()
                .map(|scenario| {
                    let metric = Metric::for_scenario(scenario);
                    AxisRow {
                        scenario: scenario.clone(),
                        cells: dataset
                            .concurrency
                            .iter()
                            .map(|&c| {
                                let (a, b) = (
                                    Target::Stack((*baseline).into()),
                                    Target::Stack((*changed).into()),
                                );
                                let base = dataset.summary(&a, scenario, c, metric)?;
                                let new = dataset.summary(&b, scenario, c, metric)?;
                                (base.median > 0.0).then_some(())?;
                                let p99 = |t: &Target| {
                                    dataset
                                        .latency(t, scenario, c)
                                        .map(|h| h.value_at_quantile(0.99) as f64)
                                };
                                let p99_change = match (p99(&a), p99(&b)) {
                                    (Some(x), Some(y)) if x > 0.0 => change((y / x - 1.0) * 100.0),
                                    _ => "–".into(),
                                };
                                let goodput = (new.median / base.median - 1.0) * 100.0;
                                Some(AxisCell {
                                    goodput_change: change(goodput),
                                    p99_change,
                                    better: goodput >= 0.0,
                                    significant: stats::differs(&base, &new),
                                })
                            })
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect()
}

fn integrity(dataset: &Dataset<'_>) -> Integrity {
    let mut targets: Vec<(String, Target)> =
        dataset.stacks.iter().map(|s| (s.clone(), Target::Stack(s.clone()))).collect();
    targets.push(("DB ceiling".into(), Target::DbCeiling));
    let mut audits = Vec::new();
    for scenario in &dataset.scenarios {
        for (name, target) in &targets {
            for &concurrency in &dataset.concurrency {
                for cell in dataset.cells(target, scenario, concurrency) {
                    if let Some(audit) = &cell.audit {
                        audits.push(AuditLine {
                            target: name.clone(),
                            scenario: scenario.clone(),
                            concurrency,
                            passed: audit.passed,
                            checkout_rows: audit.checkout_rows,
                            acknowledged: audit.acknowledged_checkouts,
                            failures: audit.failures.join("; "),
                        });
                    }
                }
            }
        }
    }
    let sql = dataset
        .scenarios
        .iter()
        .map(|scenario| {
            let values: Vec<Option<f64>> = targets
                .iter()
                .map(|(_, target)| {
                    let per_request: Vec<f64> = dataset
                        .concurrency
                        .iter()
                        .flat_map(|&c| dataset.cells(target, scenario, c))
                        .filter_map(|cell| cell.sql.as_ref().map(|s| s.statements_per_request))
                        .collect();
                    Summary::of(&per_request).map(|s| s.median)
                })
                .collect();
            // The value most targets share; anything else is flagged.
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for value in values.iter().flatten() {
                *counts.entry(format!("{value:.2}")).or_default() += 1;
            }
            let usual = counts.into_iter().max_by_key(|(_, n)| *n).map(|(v, _)| v);
            SqlRow {
                scenario: scenario.clone(),
                values: values
                    .into_iter()
                    .map(|value| {
                        value.map(|v| {
                            let text = format!("{v:.2}");
                            SqlValue { differs: usual.as_deref().is_some_and(|u| u != text), text }
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    let mut validation = Vec::new();
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    for run in dataset.runs {
        for warning in &run.warnings {
            warnings.push(WarningLine {
                target: format!("run {}", run.run.id),
                message: warning.message.clone(),
            });
        }
        for stack in &run.stacks {
            validation.push(ValidationLine {
                stack: stack.name.clone(),
                passed: stack.validation.iter().filter(|v| v.passed).count(),
                checked: stack.validation.len(),
                problems: stack
                    .validation
                    .iter()
                    .filter_map(|v| v.problem.as_ref().map(|p| format!("{}: {p}", v.scenario)))
                    .collect(),
            });
            if stack.status != "measured" {
                failures.push(FailureLine {
                    stack: stack.name.clone(),
                    status: stack.status.clone(),
                    why: stack.failure.clone().unwrap_or_default(),
                });
            }
            for cell in &stack.cells {
                for warning in &cell.warnings {
                    warnings.push(WarningLine {
                        target: format!(
                            "{} · {} · c = {}",
                            stack.name, cell.scenario, cell.concurrency
                        ),
                        message: warning.message.clone(),
                    });
                }
            }
        }
        for (name, cells) in
            [("HTTP ceiling", &run.ceilings.http), ("DB ceiling", &run.ceilings.db)]
        {
            for cell in cells {
                for warning in &cell.warnings {
                    warnings.push(WarningLine {
                        target: format!("{name} · {} · c = {}", cell.scenario, cell.concurrency),
                        message: warning.message.clone(),
                    });
                }
            }
        }
    }
    Integrity {
        audits,
        sql,
        sql_targets: targets.into_iter().map(|(name, _)| name).collect(),
        validation,
        failures,
        warnings,
    }
}

fn method(dataset: &Dataset<'_>) -> Method {
    let first = &dataset.runs[0];
    let s = &first.settings;
    let e = &first.environment;
    let mut settings = vec![
        ("stacks".into(), s.stacks.join(", ")),
        ("scenarios".into(), s.scenarios.join(", ")),
        (
            "concurrency".into(),
            s.concurrency.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
        ),
        ("warm-up / window".into(), format!("{} s / {} s", s.warmup_seconds, s.window_seconds)),
        (
            "samples per cell".into(),
            format!("{} run(s) × {} repeat(s)", dataset.runs.len(), s.repeat),
        ),
        ("pool".into(), format!("{} connections (min = max)", s.pool_max)),
        (
            "server workers / blocking threads".into(),
            format!("{} / {}", s.server_workers, s.blocking_threads),
        ),
        ("client workers".into(), s.client_workers.to_string()),
        ("request timeout".into(), format!("{} ms", s.request_timeout_ms)),
        (
            "database".into(),
            format!(
                "{} PostgreSQL, {}",
                s.database,
                if s.durable_database { "fsync on" } else { "fsync and synchronous commit off" }
            ),
        ),
        ("command".into(), first.run.command_line.join(" ")),
    ];
    let environment = vec![
        ("CPU".into(), format!("{} × {}", e.cpu_count, e.cpu_model.clone().unwrap_or_default())),
        (
            "memory".into(),
            e.memory_bytes
                .map_or(String::new(), |b| format!("{:.1} GiB", b as f64 / 1_073_741_824.0)),
        ),
        ("kernel".into(), e.kernel.clone().unwrap_or_default()),
        ("PostgreSQL".into(), e.postgres_version.clone().unwrap_or_default()),
        (
            "PostgreSQL settings".into(),
            e.postgres_settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("rustc".into(), e.rustc.clone().unwrap_or_default()),
        ("release profile".into(), e.release_profile.clone()),
        ("RUSTFLAGS".into(), e.rustflags.clone().unwrap_or_default()),
        (
            "commit".into(),
            format!(
                "{}{}",
                e.git_commit.clone().unwrap_or_else(|| "unknown".into()),
                if e.git_dirty == Some(true) { " (with uncommitted changes)" } else { "" }
            ),
        ),
        ("load generator".into(), format!("loadgen {}", e.loadgen_version)),
    ];
    let elsewhere: Vec<String> = first
        .stacks
        .iter()
        .filter_map(|stack| Some(format!("{} at {}", stack.name, stack.address.as_ref()?)))
        .collect();
    let placement = if elsewhere.is_empty() {
        "Client, servers and PostgreSQL share one machine: every number includes their competition for its CPUs. The ceilings are measured the same way, in the same run.".to_owned()
    } else {
        format!(
            "The stacks were started by someone else ({}): their CPU and memory were not measured, and their own settings are whatever they were started with. The environment above is the client's{}.",
            elsewhere.join(", "),
            if first.run.shards.len() > 1 {
                " — shard 1's; each client host's CPU is in the clients row"
            } else {
                ""
            }
        )
    };
    if !first.run.shards.is_empty() {
        let hosts: Vec<String> = first
            .run
            .shards
            .iter()
            .map(|s| {
                format!(
                    "{} of {} on {} ({} × {})",
                    s.index,
                    s.count,
                    s.hostname.as_deref().unwrap_or("?"),
                    s.cpu_count,
                    s.cpu_model.as_deref().unwrap_or("?")
                )
            })
            .collect();
        settings.push(("clients (--shard)".into(), hosts.join(", ")));
    }
    let mut caveats = vec![
        placement,
        "Goodput counts expected successes only; throughput counts every response. Latency percentiles are of successes, from HDR histograms merged over the samples.".to_owned(),
        "The write scenarios run with the seed restored before each cell; they measure the stacks with fsync off unless the run says otherwise, not the disk.".to_owned(),
    ];
    if dataset.runs.iter().all(|r| r.settings.repeat < 2) && dataset.runs.len() < 2 {
        caveats.push("One sample per cell: noise of a few percent between runs is normal on a shared machine; no tie or significance test was possible.".into());
    }
    Method { settings, parity: s.parity.clone(), environment, caveats }
}
