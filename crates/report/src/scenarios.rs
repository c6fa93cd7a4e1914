//! Sections 2–3: per scenario, the table of every target at every concurrency and its
//! charts.

use bookstore_stats::Summary;
use serde::Serialize;

use super::dataset::{Dataset, Metric, Target};
use super::verdicts::Family;
use crate::charts::{self, BarChart, BarValue, CEILING_COLOUR, LineChart, Sparkline};
use crate::text::{ComparisonText, colour, rate_text};
use bookstore_client::scenario::Scenario;

#[derive(Debug, Serialize)]
pub(crate) struct ScenarioSection {
    name: String,
    description: String,
    metric: String,
    groups: Vec<TableGroup>,
    bars: BarChart,
    latency: Vec<LineChart>,
}

#[derive(Debug, Serialize)]
struct TableGroup {
    concurrency: u32,
    /// The stack every comparison in the group is against: the first of the ranking.
    first: Option<String>,
    rows: Vec<TableRow>,
    /// What this table's verdicts could see, as a sentence; `None` without a compared pair.
    power: Option<String>,
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
    rate: String,
    throughput: String,
    p50: String,
    p99: String,
    p999: String,
    ok: u64,
    rejected: u64,
    errors: u64,
    rounds: usize,
    /// The first of a ranking that is distinguishable from every other stack.
    best: bool,
    /// Against the first of the ranking (none for the first itself and for ceilings).
    against_first: Option<ComparisonText>,
    disqualified: Option<String>,
    sparkline: Option<Sparkline>,
}

fn table_cell(
    dataset: &Dataset<'_>,
    target: &Target,
    scenario: &str,
    concurrency: u32,
) -> Option<TableCell> {
    let windows = dataset.cell(target, scenario, concurrency);
    let first = windows.cells().next()?;
    let metric = Metric::for_scenario(scenario);
    let summary = |m: Metric| {
        Summary::of(&windows.by_round(|c| Some(m.of(c))).into_values().collect::<Vec<_>>())
    };
    let latency = dataset.latency(target, scenario, concurrency);
    let quantile = |q: f64| {
        latency.as_ref().map_or("–".to_owned(), |h| {
            bookstore_record::latency_label(h.value_at_quantile(q) as f64)
        })
    };
    let per_second: Vec<f64> = first.timeline.iter().map(|s| metric.per_second(s)).collect();
    Some(TableCell {
        id: format!("{}:{scenario}:{concurrency}", target.id()),
        rate: summary(metric).as_ref().map_or("–".into(), rate_text),
        throughput: summary(Metric::Throughput).as_ref().map_or("–".into(), rate_text),
        p50: quantile(0.5),
        p99: quantile(0.99),
        p999: quantile(0.999),
        ok: windows.cells().map(|c| c.counts.ok).sum(),
        rejected: windows.cells().map(|c| c.counts.rejected).sum(),
        errors: windows.cells().map(|c| c.counts.errors).sum(),
        rounds: windows.samples().count(),
        best: false,
        against_first: None,
        disqualified: windows.disqualified(),
        sparkline: charts::sparkline(&per_second, "req/s"),
    })
}

pub(crate) fn section(dataset: &Dataset<'_>, scenario: &str) -> ScenarioSection {
    let metric = Metric::for_scenario(scenario);
    let groups = dataset
        .concurrency
        .iter()
        .map(|&concurrency| {
            let family = Family::rates(dataset, scenario, concurrency);
            let ranking = family.ranking();
            let first = ranking.order.first().map(|&i| family.members[i].name.clone());
            let mut rows: Vec<TableRow> = dataset
                .stacks
                .iter()
                .map(|stack| {
                    let mut cell =
                        table_cell(dataset, &Target::Stack(stack.clone()), scenario, concurrency);
                    if let (Some(cell), Some(first)) = (cell.as_mut(), &first) {
                        cell.best = ranking.best && stack == first;
                        cell.against_first = (stack != first)
                            .then(|| family.compare(first, stack))
                            .flatten()
                            .map(ComparisonText::from);
                    }
                    TableRow {
                        target: stack.clone(),
                        colour: colour(dataset, stack),
                        is_ceiling: false,
                        cell,
                    }
                })
                .collect();
            if let Some((ceiling, cell)) =
                dataset.ceiling(scenario, concurrency).and_then(|ceiling| {
                    Some((ceiling.clone(), table_cell(dataset, &ceiling, scenario, concurrency)?))
                })
            {
                rows.push(TableRow {
                    target: ceiling_label(dataset, &ceiling, scenario, concurrency),
                    colour: CEILING_COLOUR.into(),
                    is_ceiling: true,
                    cell: Some(cell),
                });
            }
            let power = family.power().map(|p| power_text(concurrency, p));
            TableGroup { concurrency, first, rows, power }
        })
        .collect();

    let labels: Vec<String> = dataset.concurrency.iter().map(|c| format!("c = {c}")).collect();
    let mut values = Vec::new();
    let mut ceilings = Vec::new();
    for (group, &concurrency) in dataset.concurrency.iter().enumerate() {
        let family = Family::rates(dataset, scenario, concurrency);
        for (slot, stack) in dataset.stacks.iter().enumerate() {
            let Some(member) = family.index(stack).map(|i| &family.members[i]) else { continue };
            let Some(summary) = member.summary.as_ref().filter(|_| member.qualified()) else {
                continue;
            };
            values.push(BarValue {
                group,
                slot,
                value: summary.median,
                range: (summary.n > 1).then_some((summary.min, summary.max)),
                colour: colour(dataset, stack),
                title: format!(
                    "{stack}, c = {concurrency}: {} {}",
                    rate_text(summary),
                    metric.label()
                ),
            });
        }
        if let Some((ceiling, median)) = dataset.ceilings(scenario, concurrency).into_iter().next()
        {
            ceilings.push((
                group,
                median,
                format!("{} beside c = {concurrency}: {median:.0}/s", ceiling.name()),
            ));
        }
    }
    let bars = charts::bar_chart(&labels, dataset.stacks.len(), &values, &ceilings, metric.label());

    let latency = dataset
        .concurrency
        .iter()
        .filter_map(|&concurrency| {
            let curves: Vec<(String, String, Vec<u64>)> = dataset
                .stacks
                .iter()
                .filter_map(|stack| {
                    let target = Target::Stack(stack.clone());
                    if dataset.cell(&target, scenario, concurrency).disqualified().is_some() {
                        return None;
                    }
                    let histogram = dataset.latency(&target, scenario, concurrency)?;
                    Some((
                        colour(dataset, stack),
                        stack.clone(),
                        charts::percentile_curve(&histogram),
                    ))
                })
                .collect();
            let of = if metric == Metric::Answered { "expected answers" } else { "successes" };
            (!curves.is_empty()).then(|| {
                charts::latency_chart(
                    &format!("latency of {of} at saturation, c = {concurrency}"),
                    &curves,
                )
            })
        })
        .collect();

    ScenarioSection {
        name: scenario.to_owned(),
        description: describe(scenario),
        metric: metric.label().into(),
        groups,
        bars,
        latency,
    }
}

fn describe(scenario: &str) -> String {
    Scenario::parse(scenario).map_or(String::new(), Scenario::describe)
}

/// A ceiling's row name: what it is, and for the database scenarios which driver and how
/// many clients set it, with the other drivers' medians beside it.
fn ceiling_label(
    dataset: &Dataset<'_>,
    ceiling: &Target,
    scenario: &str,
    concurrency: u32,
) -> String {
    match ceiling {
        Target::DbCeiling { .. } => {
            let others: Vec<String> = dataset
                .ceilings(scenario, concurrency)
                .into_iter()
                .filter(|(target, _)| target != ceiling)
                .map(|(target, median)| match target {
                    Target::DbCeiling { driver, clients, .. } => {
                        format!("{driver} at c = {clients}: {median:.0}/s")
                    }
                    other => format!("{}: {median:.0}/s", other.name()),
                })
                .collect();
            let name = format!("{} — same SQL, no HTTP", ceiling.name());
            if others.is_empty() { name } else { format!("{name}; {}", others.join(", ")) }
        }
        _ => "HTTP ceiling (minimal responder)".to_owned(),
    }
}

/// "c = 128: 5 rounds; its pairs' per-round spread 0.067, so a difference of 22% is called
/// four times in five."
fn power_text(concurrency: u32, power: super::verdicts::FamilyPower) -> String {
    let detectable = power.detectable.map_or("no difference".to_owned(), |r| {
        format!("a difference of {:.0}%", (r - 1.0) * 100.0)
    });
    let spread = match power.pooled {
        Some(residual) => format!(
            "its members' shared per-round spread {:.3} ({:.0} degrees of freedom: their noise alike)",
            residual.sd, residual.df
        ),
        None => format!("its pairs' own per-round spread {:.3}", power.spread),
    };
    format!(
        "c = {concurrency}: {} round(s); {spread}, so {detectable} is called four times in five",
        power.rounds
    )
}
