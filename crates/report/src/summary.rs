//! The summary page (`five-stack-summary.html`): one typed context, one field per section,
//! each built by its section's module, rendered by minijinja from `templates/summary.html`.

use serde::Serialize;

use crate::charts::{self, CEILING_COLOUR};
use crate::dataset::Dataset;
use crate::page::page_environment;
use crate::text::colour;
use crate::{
    axes, capacity, connections, cpu, deployment, efficiency, equal_load, factorial, headline,
    integrity, method, postgres, scenarios,
};

use bookstore_record::results::RunResults;

const SUMMARY_TEMPLATE: &str = include_str!("../templates/summary.html");

#[derive(Debug, Serialize)]
struct Page {
    title: String,
    /// The run's noise and what it could see, in one line.
    glance: String,
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
    cpu: Vec<cpu::CpuTable>,
    cpu_twins: Vec<crate::verdicts::TwinCalls>,
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
    /// When it was resumed from its journal, if it was.
    resumed_at: Vec<String>,
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
                resumed_at: r.run.resumed_at.clone(),
            })
            .collect(),
        samples_note: method::samples_note(&dataset),
        glance: method::glance(&dataset),
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
        cpu: dataset.scenarios.iter().map(|s| cpu::table(&dataset, s)).collect(),
        cpu_twins: cpu::twin_calls(&dataset),
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
