//! `loadgen report`: the HTML summary, a view of one or more results files, and the same
//! verdicts as Markdown, CSV or JSON tables (`export`).
//!
//! Every number on the page is read from the results documents (or computed from them:
//! medians over rounds, percentiles of merged HDR histograms, ratios with their intervals).
//! The page is one self-contained file — inline CSS and inline SVG, no script, nothing
//! fetched — rendered by minijinja from `templates/summary.html` (+ `charts.html`) and the
//! typed context built by one module per section.
//!
//! Several files are read as more rounds of the same suite (their rounds keep apart: round
//! 2 of one file is paired with round 2 of no other). Every comparison on the page comes
//! from `verdicts`, one method for all of them.

mod axes;
mod capacity;
pub mod charts;
pub mod compare;
mod connections;
pub(crate) mod dataset;
mod deployment;
mod efficiency;
mod equal_load;
pub mod export;
mod factorial;
mod headline;
mod integrity;
mod method;
pub mod page;
mod postgres;
pub mod reliability;
mod scenarios;
pub mod terminal;
mod verdicts;

use serde::Serialize;

use crate::page::page_environment;
use charts::CEILING_COLOUR;

use bookstore_record::results::RunResults;
use dataset::Dataset;

const SUMMARY_TEMPLATE: &str = include_str!("../templates/summary.html");

/// A rate as text: median, and the range over the rounds (when there is one).
pub(crate) fn rate_text(summary: &bookstore_stats::Summary) -> String {
    if summary.n > 1 && summary.min < summary.max {
        format!("{:.0} ({:.0}–{:.0})", summary.median, summary.min, summary.max)
    } else {
        format!("{:.0}", summary.median)
    }
}

/// A share as a percentage, without needless digits: 0.05 → "5", 0.9 → "90", 0.015 → "1.5".
pub(crate) fn percent(share: f64) -> String {
    let value = (share * 1000.0).round() / 10.0;
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value}") }
}

/// The colour of `stack` (by its place in the list of stacks and variants).
pub(crate) fn colour(dataset: &Dataset<'_>, stack: &str) -> String {
    charts::series_colour(dataset.stacks.iter().position(|s| s == stack).unwrap_or(0))
}

/// A stack's name with its colour.
#[derive(Debug, Serialize)]
pub(crate) struct Chip {
    pub(crate) stack: String,
    pub(crate) colour: String,
}

impl Chip {
    pub(crate) fn of(dataset: &Dataset<'_>, stack: &str) -> Self {
        Self { stack: stack.to_owned(), colour: colour(dataset, stack) }
    }
}

/// A comparison as the page shows it.
#[derive(Debug, Serialize)]
pub(crate) struct ComparisonText {
    /// "1.23× [1.10–1.37]" or "not distinguishable (…)".
    pub(crate) text: String,
    /// `higher`, `lower` or `not_distinguishable`.
    pub(crate) verdict: bookstore_stats::Verdict,
}

impl From<bookstore_stats::Comparison> for ComparisonText {
    fn from(c: bookstore_stats::Comparison) -> Self {
        Self { text: c.text(), verdict: c.verdict }
    }
}

#[derive(Debug, Serialize)]
struct Page {
    title: String,
    runs: Vec<RunLine>,
    samples_note: String,
    legend: Vec<charts::Legend>,
    headline: Vec<headline::HeadlineRow>,
    scenarios: Vec<scenarios::ScenarioSection>,
    equal_load: Vec<equal_load::EqualLoadSection>,
    equal_load_note: String,
    capacity: Option<capacity::CapacitySection>,
    efficiency: Vec<efficiency::EfficiencyTable>,
    cpu_bound: Option<efficiency::CpuBound>,
    axes: Vec<axes::AxisTable>,
    axis_costs: Option<factorial::Section>,
    deployment: Option<deployment::Deployment>,
    connections: Option<connections::Connections>,
    integrity: integrity::Integrity,
    postgres: Vec<postgres::PostgresRow>,
    postgres_concurrency: u32,
    method: method::Method,
}

#[derive(Debug, Serialize)]
struct RunLine {
    id: String,
    status: String,
    started_at: String,
}

/// Renders `runs` (rounds of one suite) as the summary page.
pub fn render(runs: &[RunResults]) -> anyhow::Result<String> {
    anyhow::ensure!(!runs.is_empty(), "no results to render");
    let dataset = Dataset::new(runs);
    let page = Page {
        title: "Five-stack summary".into(),
        runs: runs
            .iter()
            .map(|r| RunLine {
                id: r.run.id.clone(),
                status: r.run.status.name().to_owned(),
                started_at: r.run.started_at.clone(),
            })
            .collect(),
        samples_note: method::samples_note(&dataset),
        legend: dataset
            .stacks
            .iter()
            .map(|s| charts::Legend { colour: colour(&dataset, s), label: s.clone() })
            .chain(std::iter::once(charts::Legend {
                colour: CEILING_COLOUR.into(),
                label: "ceiling".into(),
            }))
            .collect(),
        headline: headline::rows(&dataset),
        scenarios: dataset.scenarios.iter().map(|s| scenarios::section(&dataset, s)).collect(),
        equal_load: equal_load::sections(&dataset),
        equal_load_note: equal_load::note(&dataset),
        capacity: capacity::section(&dataset),
        efficiency: dataset.scenarios.iter().map(|s| efficiency::table(&dataset, s)).collect(),
        cpu_bound: efficiency::cpu_bound(&dataset),
        axes: axes::tables(&dataset),
        axis_costs: factorial::section(&dataset),
        deployment: deployment::section(&dataset),
        connections: connections::section(&dataset),
        integrity: integrity::integrity(&dataset),
        postgres: postgres::rows(&dataset),
        postgres_concurrency: dataset.concurrency.iter().copied().max().unwrap_or(0),
        method: method::method(&dataset),
    };
    let environment = page_environment("summary.html", SUMMARY_TEMPLATE)?;
    Ok(environment.get_template("summary.html")?.render(minijinja::value::Serde(&page))?)
}
