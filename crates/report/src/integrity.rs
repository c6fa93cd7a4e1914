//! Section 7: what makes the numbers trustworthy or not — disqualified cells, the write
//! audits, SQL statements per request, the contract check, and every warning.

use bookstore_record::results::StackStatus;
use std::collections::BTreeMap;

use bookstore_stats::Summary;
use serde::Serialize;

use super::dataset::{CellWindows, Dataset, Target};
use bookstore_record::warnings;

#[derive(Debug, Serialize)]
pub(crate) struct Integrity {
    disqualified: Vec<DisqualifiedLine>,
    audits: Vec<AuditLine>,
    sql: Vec<SqlRow>,
    sql_targets: Vec<String>,
    validation: Vec<ValidationLine>,
    failures: Vec<FailureLine>,
    warnings: Vec<WarningLine>,
    gates: Gates,
}

/// The gates' limits, as the code applies them (for the page's prose).
#[derive(Debug, Serialize)]
struct Gates {
    error_percent: String,
    in_flight_percent: String,
    cpu_bound_percent: String,
    saturation_percent: String,
    client_lag_floor: String,
    client_lag_percent: String,
    /// A window meeting a latency objective: the share of its requests due answered in
    /// time, and the most of them that may fail.
    in_time_percent: String,
    slo_error_percent: String,
}

#[derive(Debug, Serialize)]
struct DisqualifiedLine {
    target: String,
    scenario: String,
    /// `c = 128`, or an equal-load rate.
    load: String,
    reason: String,
}

#[derive(Debug, Serialize)]
struct AuditLine {
    target: String,
    scenario: String,
    load: String,
    passed: usize,
    audited: usize,
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
    /// Windows (rounds) of the cell with this kind of warning.
    windows: usize,
}

fn targets(dataset: &Dataset<'_>) -> Vec<Target> {
    let mut targets: Vec<Target> =
        dataset.stacks.iter().map(|s| Target::Stack(s.clone())).collect();
    targets.extend(dataset.ceiling_targets());
    targets
}

/// Every block of windows of `scenario`: per target its closed-loop cells at each
/// concurrency, then the stacks' equal-load cells at each rate — with the target's name and
/// the load's.
fn blocks<'d, 'a>(
    dataset: &'d Dataset<'a>,
    scenario: &str,
) -> Vec<(String, String, &'d CellWindows<'a>)> {
    let mut blocks = Vec::new();
    for target in targets(dataset) {
        for &concurrency in &dataset.concurrency {
            let windows = dataset.cell(&target, scenario, concurrency);
            blocks.push((target.name(), format!("c = {concurrency}"), windows));
        }
    }
    for stack in &dataset.stacks {
        for rate in &dataset.equal_load_rates {
            let windows = dataset.equal_load_cell(stack, scenario, rate);
            blocks.push((stack.clone(), rate.clone(), windows));
        }
    }
    blocks.retain(|(_, _, windows)| !windows.is_empty());
    blocks
}

pub(crate) fn integrity(dataset: &Dataset<'_>) -> Integrity {
    let mut disqualified = Vec::new();
    let mut audits = Vec::new();
    let mut warnings = Vec::new();
    for scenario in &dataset.scenarios {
        for (target, load, windows) in blocks(dataset, scenario) {
            if let Some(reason) = windows.disqualified() {
                disqualified.push(DisqualifiedLine {
                    target: target.clone(),
                    scenario: scenario.clone(),
                    load: load.clone(),
                    reason,
                });
            }
            let audited: Vec<_> = windows.cells().filter_map(|c| c.audit.as_ref()).collect();
            if !audited.is_empty() {
                let mut failures: Vec<String> =
                    audited.iter().flat_map(|a| a.failures.iter().cloned()).collect();
                failures.dedup();
                audits.push(AuditLine {
                    target: target.clone(),
                    scenario: scenario.clone(),
                    load: load.clone(),
                    passed: audited.iter().filter(|a| a.passed).count(),
                    audited: audited.len(),
                    checkout_rows: audited.iter().map(|a| a.checkout_rows).sum(),
                    acknowledged: audited.iter().map(|a| a.acknowledged_checkouts).sum(),
                    failures: failures.join("; "),
                });
            }
            // One line per kind of warning and cell, with how many windows had it.
            let mut kinds: BTreeMap<String, (String, usize)> = BTreeMap::new();
            for warning in windows.cells().flat_map(|c| &c.warnings) {
                let kind = serde_json::to_value(&warning.kind)
                    .ok()
                    .and_then(|v| v["type"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                kinds.entry(kind).or_insert_with(|| (warning.message.clone(), 0)).1 += 1;
            }
            for (message, count) in kinds.into_values() {
                warnings.push(WarningLine {
                    target: format!("{target} · {scenario} · {load}"),
                    message,
                    windows: count,
                });
            }
        }
    }
    let sql_targets: Vec<Target> =
        targets(dataset).into_iter().filter(|t| *t != Target::HttpCeiling).collect();
    let sql = dataset
        .scenarios
        .iter()
        .map(|scenario| {
            let values: Vec<Option<f64>> = sql_targets
                .iter()
                .map(|target| {
                    let per_request: Vec<f64> = dataset
                        .concurrency
                        .iter()
                        .flat_map(|&c| {
                            dataset.cell(target, scenario, c).cells().collect::<Vec<_>>()
                        })
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
    for run in dataset.runs {
        for warning in &run.warnings {
            warnings.push(WarningLine {
                target: format!("run {}", run.run.id),
                message: warning.message.clone(),
                windows: 0,
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
            if stack.status != StackStatus::Measured {
                failures.push(FailureLine {
                    stack: stack.name.clone(),
                    status: stack.status.name().to_owned(),
                    why: stack.failure.clone().unwrap_or_default(),
                });
            }
        }
    }
    Integrity {
        disqualified,
        audits,
        sql,
        sql_targets: sql_targets.iter().map(Target::name).collect(),
        validation,
        failures,
        warnings,
        gates: Gates {
            error_percent: crate::text::percent(warnings::ERROR_RATE_LIMIT),
            in_flight_percent: crate::text::percent(warnings::IN_FLIGHT_FLOOR),
            cpu_bound_percent: crate::text::percent(warnings::CPU_BOUND_SHARE),
            saturation_percent: crate::text::percent(warnings::SATURATION_SHARE),
            client_lag_floor: bookstore_record::latency_label(warnings::CLIENT_LAG_FLOOR_US as f64),
            client_lag_percent: crate::text::percent(warnings::CLIENT_LAG_SHARE),
            in_time_percent: crate::text::percent(bookstore_record::objective::IN_TIME_SHARE),
            slo_error_percent: crate::text::percent(bookstore_record::objective::ERROR_SHARE_MAX),
        },
    }
}
