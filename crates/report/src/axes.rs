//! What one change costs: the pairs of stacks that differ in one axis, and each labelled
//! variant against the stack it runs — at the page's top in plain words and drawn (the
//! changed stack's rate ÷ the baseline's, scenario by scenario), and in section 6 cell by
//! cell with the tails.

use serde::Serialize;

use bookstore_stats::Comparison;

use super::dataset::Dataset;
use super::verdicts::Family;
use crate::charts::{self, Forest, ForestValue};
use crate::text::ComparisonText;

#[derive(Debug, Serialize)]
pub(crate) struct AxisTable {
    axis: String,
    baseline: String,
    changed: String,
    note: String,
    /// What the rates say, in a sentence a reader can check against the rows.
    words: String,
    concurrency: Vec<u32>,
    /// The fixed-load phase's rates (one column each).
    rates: Vec<String>,
    rows: Vec<AxisRow>,
}

#[derive(Debug, Serialize)]
struct AxisRow {
    scenario: String,
    cells: Vec<AxisCell>,
    /// The rate ratios, one row per concurrency, drawn as the headline draws its families.
    forest: Option<Forest>,
    /// The changed stack's p99 at each equal-load rate against the baseline's.
    equal_load: Vec<Option<ComparisonText>>,
}

#[derive(Debug, Serialize)]
struct AxisCell {
    /// The changed stack's rate against the baseline's.
    rate: Option<ComparisonText>,
    /// The same, short: "1.23× [1.10–1.37]", "≈ 1.04× [0.91–1.19]".
    rate_compact: Option<String>,
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
        .map(|(axis, baseline, changed, note)| {
            let rows: Vec<AxisRow> = dataset
                .scenarios
                .iter()
                .map(|scenario| row(dataset, scenario, &baseline, &changed))
                .collect();
            AxisTable {
                words: words(dataset, &rows, &baseline, &changed),
                rows,
                axis,
                baseline,
                changed,
                note,
                concurrency: dataset.concurrency.clone(),
                rates: dataset.equal_load_rates.clone(),
            }
        })
        .collect()
}

fn row(dataset: &Dataset<'_>, scenario: &str, baseline: &str, changed: &str) -> AxisRow {
    let compared: Vec<(u32, Option<Comparison>)> = dataset
        .concurrency
        .iter()
        .map(|&c| (c, Family::rates(dataset, scenario, c).compare(baseline, changed)))
        .collect();
    let values: Vec<ForestValue> = compared
        .iter()
        .filter_map(|(c, comparison)| {
            let comparison = comparison.as_ref()?;
            Some(ForestValue {
                ratio: comparison.ratio,
                low: comparison.low,
                high: comparison.high,
                called: comparison.differs(),
                colour: crate::text::colour(dataset, changed),
                title: format!(
                    "{changed} ÷ {baseline}, {scenario}, c = {c}: {}",
                    comparison.text()
                ),
            })
        })
        .collect();
    AxisRow {
        scenario: scenario.to_owned(),
        cells: dataset
            .concurrency
            .iter()
            .map(|&c| cell(dataset, scenario, c, baseline, changed))
            .collect(),
        forest: (!values.is_empty()).then(|| charts::forest(&values, None)),
        equal_load: dataset
            .equal_load_rates
            .iter()
            .map(|rate| {
                Family::equal_load_p99(dataset, scenario, rate)
                    .compare(baseline, changed)
                    .map(ComparisonText::tail)
            })
            .collect(),
    }
}

/// The rates at the lowest concurrency in a sentence: in how many scenarios `changed` was
/// called faster and slower than `baseline`, the largest of each, and how many were not
/// distinguishable.
fn words(dataset: &Dataset<'_>, rows: &[AxisRow], baseline: &str, changed: &str) -> String {
    let Some(&concurrency) = dataset.concurrency.first() else { return String::new() };
    let compared: Vec<(&str, Comparison)> = rows
        .iter()
        .filter_map(|r| {
            let comparison =
                Family::rates(dataset, &r.scenario, concurrency).compare(baseline, changed)?;
            Some((r.scenario.as_str(), comparison))
        })
        .collect();
    if compared.is_empty() {
        return format!("{changed} and {baseline} were not both measured.");
    }
    let side = |faster: bool| {
        let mut called: Vec<&(&str, Comparison)> =
            compared.iter().filter(|(_, c)| c.differs() && (c.ratio > 1.0) == faster).collect();
        called.sort_by(|a, b| {
            let strength = |c: &Comparison| c.ratio.ln().abs();
            strength(&b.1).total_cmp(&strength(&a.1))
        });
        called
    };
    let (faster, slower) = (side(true), side(false));
    let mut parts = Vec::new();
    for (called, how) in [(&faster, "more"), (&slower, "fewer")] {
        if let Some((scenario, most)) = called.first() {
            parts.push(format!(
                "{how} requests per second than {baseline} in {} (most at {scenario}: {})",
                plural(called.len(), "scenario"),
                most.compact()
            ));
        }
    }
    let open = compared.len() - faster.len() - slower.len();
    let lead = if parts.is_empty() {
        format!(
            "At c = {concurrency}, {changed} was not distinguishable from {baseline} in any of the {} scenarios",
            compared.len()
        )
    } else {
        format!("At c = {concurrency}, {changed} served {}", parts.join(" and "))
    };
    if open > 0 && !parts.is_empty() {
        format!("{lead}; not distinguishable in {}.", plural(open, "other"))
    } else {
        format!("{lead}.")
    }
}

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
        rate_compact: rate.as_ref().map(Comparison::compact),
        rate: rate.map(ComparisonText::from),
        p99: Family::p99(dataset, scenario, c).compare(baseline, changed).map(ComparisonText::from),
        missing,
    }
}
