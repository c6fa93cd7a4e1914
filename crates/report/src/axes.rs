//! Section 6: the pairs of stacks that differ in one axis, and each labelled variant against
//! the stack it runs, cell by cell.

use serde::Serialize;

use super::dataset::Dataset;
use super::verdicts::Family;
use crate::text::ComparisonText;

#[derive(Debug, Serialize)]
pub(crate) struct AxisTable {
    axis: String,
    baseline: String,
    changed: String,
    note: String,
    concurrency: Vec<u32>,
    /// The fixed-load phase's rates (one column each).
    rates: Vec<String>,
    rows: Vec<AxisRow>,
}

#[derive(Debug, Serialize)]
struct AxisRow {
    scenario: String,
    cells: Vec<AxisCell>,
    /// The changed stack's p99 at each equal-load rate against the baseline's.
    equal_load: Vec<Option<ComparisonText>>,
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
    let measured = |name: &str| dataset.stacks.iter().any(|s| s == name);
    let axes = bookstore_registry::stacks::AXIS_PAIRS
        .iter()
        .map(|pair| {
            let (baseline, changed) = (pair.baseline, pair.changed);
            (pair.title.to_owned(), baseline.to_owned(), changed.to_owned(), pair.note.to_owned())
        })
        .filter(|(_, a, b, _)| measured(a) && measured(b));
    // A variant changes one setting of its stack: its own axis.
    let variants = dataset.variants().into_iter().filter(|(_, stack, _)| measured(stack)).map(
        |(label, stack, change)| {
            let note = format!("{label} is {stack} {change}, in the same rounds.");
            (format!("variant {label}"), stack, label, note)
        },
    );
    axes.chain(variants)
        .map(|(axis, baseline, changed, note)| AxisTable {
            rows: dataset
                .scenarios
                .iter()
                .map(|scenario| AxisRow {
                    scenario: scenario.clone(),
                    cells: dataset
                        .concurrency
                        .iter()
                        .map(|&c| cell(dataset, scenario, c, &baseline, &changed))
                        .collect(),
                    equal_load: dataset
                        .equal_load_rates
                        .iter()
                        .map(|rate| {
                            Family::equal_load_p99(dataset, scenario, rate)
                                .compare(&baseline, &changed)
                                .map(ComparisonText::from)
                        })
                        .collect(),
                })
                .collect(),
            axis,
            baseline,
            changed,
            note,
            concurrency: dataset.concurrency.clone(),
            rates: dataset.equal_load_rates.clone(),
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
