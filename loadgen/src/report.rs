//! `loadgen report`: the HTML summary, a view of one results file.
//!
//! Rendered from `templates/summary.html` (minijinja) with a typed context built here;
//! every number on the page comes from the results document. One self-contained file:
//! inline CSS, no script, nothing from the network.

use std::collections::BTreeMap;

use minijinja::Environment;
use serde::Serialize;

use crate::results::{Cell, RunResults};

const TEMPLATE: &str = include_str!("../templates/summary.html");

/// The page's data.
#[derive(Debug, Serialize)]
struct Page<'a> {
    run: &'a RunResults,
    scenarios: Vec<ScenarioTable>,
    failures: Vec<(String, String, String)>,
    warnings: Vec<(String, String)>,
}

/// One scenario's table: a row per target, a column group per concurrency.
#[derive(Debug, Serialize)]
struct ScenarioTable {
    name: String,
    concurrency: Vec<u32>,
    rows: Vec<Row>,
}

#[derive(Debug, Serialize)]
struct Row {
    target: String,
    is_ceiling: bool,
    cells: Vec<Option<CellView>>,
}

#[derive(Debug, Serialize)]
struct CellView {
    goodput_rps: String,
    throughput_rps: String,
    p50_us: String,
    p99_us: String,
    p999_us: String,
    ok: u64,
    rejected: u64,
    errors: u64,
    audit: Option<bool>,
    sql_per_request: Option<String>,
    best: bool,
}

fn view(cell: &Cell) -> CellView {
    let latency = cell.latency_ok_us;
    let micros = |value: Option<u64>| value.map_or("–".to_owned(), |v| v.to_string());
    CellView {
        goodput_rps: format!("{:.0}", cell.goodput_rps),
        throughput_rps: format!("{:.0}", cell.throughput_rps),
        p50_us: micros(latency.map(|l| l.p50_us)),
        p99_us: micros(latency.map(|l| l.p99_us)),
        p999_us: micros(latency.map(|l| l.p999_us)),
        ok: cell.counts.ok,
        rejected: cell.counts.rejected,
        errors: cell.counts.errors,
        audit: cell.audit.as_ref().map(|a| a.passed),
        sql_per_request: cell.sql.as_ref().map(|s| format!("{:.2}", s.statements_per_request)),
        best: false,
    }
}

/// The cell of `scenario` at `concurrency` (first repetition) among `cells`.
fn find<'a>(cells: &'a [Cell], scenario: &str, concurrency: u32) -> Option<&'a Cell> {
    cells.iter().find(|c| c.scenario == scenario && c.concurrency == concurrency && c.repeat == 0)
}

/// Renders `results` as the summary page.
pub fn render(results: &RunResults) -> anyhow::Result<String> {
    let mut scenarios = Vec::new();
    for scenario in &results.settings.scenarios {
        let concurrency = results.settings.concurrency.clone();
        let mut rows = Vec::new();
        let ceiling = if matches!(scenario.as_str(), "health" | "smallJson") {
            ("HTTP ceiling (minimal responder)", &results.ceilings.http, "health")
        } else {
            ("DB ceiling (same SQL, no HTTP)", &results.ceilings.db, scenario.as_str())
        };
        for stack in &results.stacks {
            let cells =
                concurrency.iter().map(|&c| find(&stack.cells, scenario, c).map(view)).collect();
            rows.push(Row { target: stack.name.clone(), is_ceiling: false, cells });
        }
        // Mark the best goodput per concurrency among the stacks.
        for column in 0..concurrency.len() {
            let best = rows
                .iter()
                .enumerate()
                .filter_map(|(i, row)| {
                    row.cells[column]
                        .as_ref()
                        .map(|c| (i, c.goodput_rps.parse::<f64>().unwrap_or(0.0)))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((index, _)) = best
                && let Some(cell) = rows[index].cells[column].as_mut()
            {
                cell.best = true;
            }
        }
        let ceiling_cells: Vec<Option<CellView>> =
            concurrency.iter().map(|&c| find(ceiling.1, ceiling.2, c).map(view)).collect();
        if ceiling_cells.iter().any(Option::is_some) {
            rows.push(Row { target: ceiling.0.to_owned(), is_ceiling: true, cells: ceiling_cells });
        }
        scenarios.push(ScenarioTable { name: scenario.clone(), concurrency, rows });
    }
    let failures = results
        .stacks
        .iter()
        .filter(|s| s.status != "measured")
        .map(|s| (s.name.clone(), s.status.clone(), s.failure.clone().unwrap_or_default()))
        .collect();
    let mut warnings: Vec<(String, String)> =
        results.warnings.iter().map(|w| ("run".to_owned(), w.message.clone())).collect();
    let mut per_target: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for stack in &results.stacks {
        for cell in &stack.cells {
            for warning in &cell.warnings {
                per_target
                    .entry(format!("{} {} c={}", stack.name, cell.scenario, cell.concurrency))
                    .or_default()
                    .push(warning.message.clone());
            }
        }
    }
    for (target, messages) in per_target {
        for message in messages {
            warnings.push((target.clone(), message));
        }
    }
    let page = Page { run: results, scenarios, failures, warnings };
    let mut environment = Environment::new();
    environment.add_template("summary.html", TEMPLATE)?;
    Ok(environment.get_template("summary.html")?.render(minijinja::value::Serde(&page))?)
}
