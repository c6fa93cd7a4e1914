//! Section 5: the pairs of stacks that differ in one axis, cell by cell.

use serde::Serialize;

use super::ComparisonText;
use super::dataset::Dataset;
use super::verdicts::Family;

#[derive(Debug, Serialize)]
pub(crate) struct AxisTable {
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
    cells: Vec<AxisCell>,
}

#[derive(Debug, Serialize)]
struct AxisCell {
    /// The changed stack's rate against the baseline's.
    rate: Option<ComparisonText>,
    /// Its p99 at saturation against the baseline's (above 1: slower).
    p99: Option<ComparisonText>,
    /// Why there is no comparison: a side disqualified, or not measured.
    missing: Option<String>,
}

pub(crate) fn tables(dataset: &Dataset<'_>) -> Vec<AxisTable> {
    bookstore_app::stacks::AXIS_PAIRS
        .iter()
        .map(|pair| (pair, pair.baseline.identity.service, pair.changed.identity.service))
        .filter(|(_, a, b)| {
            dataset.stacks.iter().any(|s| s == a) && dataset.stacks.iter().any(|s| s == b)
        })
        .map(|(pair, baseline, changed)| AxisTable {
            axis: pair.title.into(),
            baseline: baseline.into(),
            changed: changed.into(),
            note: pair.note.into(),
            concurrency: dataset.concurrency.clone(),
            rows: dataset
                .scenarios
                .iter()
                .map(|scenario| AxisRow {
                    scenario: scenario.clone(),
                    cells: dataset
                        .concurrency
                        .iter()
                        .map(|&c| cell(dataset, scenario, c, baseline, changed))
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

fn cell(dataset: &Dataset<'_>, scenario: &str, c: u32, baseline: &str, changed: &str) -> AxisCell {
    let rates = Family::rates(dataset, scenario, c);
    let rate = rates.compare(baseline, changed);
    let missing = rate.is_none().then(|| {
        let reason = |name: &str| {
            let index = rates.index(name)?;
            let member = &rates.members[index];
            member.disqualified.as_ref().map(|why| format!("{name} disqualified: {why}"))
        };
        reason(baseline).or_else(|| reason(changed)).unwrap_or_else(|| "–".into())
    });
    AxisCell {
        rate: rate.map(ComparisonText::from),
        p99: Family::p99(dataset, scenario, c).compare(baseline, changed).map(ComparisonText::from),
        missing,
    }
}
