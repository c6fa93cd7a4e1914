//! The suite's closing lines on the terminal: per scenario, each stack's rate at the lowest
//! concurrency and its p99 at the first equal-load rate, the first of each marked the way
//! the page's verdicts say (`best`, `lead`), the others as their ratio to it with the
//! interval; disqualified and unranked cells with their reason; a twin's calls against its
//! own stack. Read from the export's rows,
//! so it says what `report --format md` and the page say.

use std::fmt::Write;

use super::export::{Row, rows};
use bookstore_record::latency_label;
use bookstore_record::results::RunResults;
use bookstore_stats::digits;

/// A row's standing against the first of its table, as a few words.
fn against_first(row: &Row) -> String {
    if super::export::tail_too_wide(row) {
        let twin = if row.standing == "twin" { "twin: " } else { "" };
        return format!("{twin}{}", crate::text::CANNOT_COMPARE);
    }
    match (row.standing, row.vs_first_ratio, row.vs_first_low, row.vs_first_high) {
        ("best" | "lead", None, _, _) => row.standing.to_owned(),
        ("twin", Some(ratio), Some(low), Some(high)) => format!(
            "twin {}{}× [{}–{}]",
            if low <= 1.0 && 1.0 <= high { "≈ " } else { "" },
            digits(ratio),
            digits(low),
            digits(high)
        ),
        (standing, Some(ratio), Some(low), Some(high)) => format!(
            "{}{}× [{}–{}]",
            if standing == "lead" { "≈ " } else { "" },
            digits(ratio),
            digits(low),
            digits(high)
        ),
        ("disqualified", ..) => "disqualified".to_owned(),
        ("not_ranked", ..) => "not ranked".to_owned(),
        _ => String::new(),
    }
}

/// The summary lines of `runs`.
pub fn summary(runs: &[RunResults]) -> String {
    let rows = rows(runs);
    let Some(concurrency) = rows.iter().filter_map(|r| r.concurrency).min() else {
        return String::new();
    };
    let rate = rows.iter().find_map(|r| r.equal_load_rate.clone());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<19} {:<20} {:>9} {:<22} {}",
        "scenario",
        "stack",
        format!("c = {concurrency}"),
        "",
        rate.as_ref().map_or(String::new(), |r| format!("p99 at {r}")),
    );
    let mut scenarios: Vec<&str> = Vec::new();
    for row in rows.iter().filter(|r| r.load == "saturation") {
        if !scenarios.contains(&row.scenario.as_str()) {
            scenarios.push(&row.scenario);
        }
    }
    let mut reasons = Vec::new();
    for scenario in scenarios {
        let saturated = rows.iter().filter(|r| {
            r.load == "saturation" && r.scenario == scenario && r.concurrency == Some(concurrency)
        });
        for (i, row) in saturated.enumerate() {
            let latency = rate.as_ref().and_then(|rate| {
                rows.iter().find(|r| {
                    r.scenario == scenario
                        && r.stack == row.stack
                        && r.equal_load_rate.as_ref() == Some(rate)
                })
            });
            let latency_text = latency.map_or(String::new(), |l| {
                let value = l.p99_us_median.map_or("–".into(), latency_label);
                format!("{value:>8} {}", against_first(l))
            });
            let rate_text = row.rate_rps_median.map_or("–".into(), |v| format!("{v:.0}/s"));
            let label = if i == 0 { scenario } else { "" };
            let _ = writeln!(
                out,
                "{label:<19} {:<20} {rate_text:>9} {:<22} {latency_text}",
                row.stack,
                against_first(row)
            );
            for cell in std::iter::once(row).chain(latency) {
                if let Some(reason) = &cell.reason {
                    let load = cell.equal_load_rate.as_ref().map_or_else(
                        || format!("c = {}", cell.concurrency.unwrap_or_default()),
                        |r| format!("at {r}"),
                    );
                    reasons.push(format!("{scenario} · {} · {load}: {reason}", cell.stack));
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "(medians over the rounds; best: called different from every other stack by the verdict method; lead: first, or not distinguishable from the first (≈); the others ÷ the first with the interval)"
    );
    for reason in reasons {
        let _ = writeln!(out, "{reason}");
    }
    let effects: Vec<&Row> = rows.iter().filter(|r| r.load == "axis_effect").collect();
    if !effects.is_empty() {
        let _ = writeln!(
            out,
            "what each axis costs (rate ratio, level ÷ baseline; ≈: not distinguishable from 1):"
        );
    }
    for row in effects {
        let c = row.concurrency.unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<19} c = {c:<4} {:<15} {:<24} {}",
            row.scenario,
            row.axis.unwrap_or(""),
            row.stack,
            super::export::contrast_cell(row)
        );
    }
    let checks: Vec<&Row> =
        rows.iter().filter(|r| r.load == "binary_check" && r.vs_first_ratio.is_some()).collect();
    if !checks.is_empty() {
        let called = checks.iter().filter(|r| matches!(r.standing, "higher" | "lower")).count();
        let _ = writeln!(
            out,
            "binary check: {called} of {} comparisons of a preset with its triple composed called different; with no effect of the binary, each scenario's family calls any at most {}% of the time",
            checks.len(),
            crate::text::percent(bookstore_stats::FALSE_DISCOVERY_RATE)
        );
    }
    let dataset = super::dataset::Dataset::new(runs);
    let tails = super::verdicts::twin_tail_calls(&dataset);
    let capacities = super::capacity::twin_calls(&dataset, super::capacity::families(&dataset));
    let cpu = super::cpu::twin_calls(&dataset);
    for line in super::cpu::lines(&dataset) {
        let _ = writeln!(out, "{line}");
    }
    for twin in super::verdicts::twin_calls(&dataset) {
        // Its p99 at equal load, judged by the families' shared spread, where it has one.
        let p99 = tails
            .iter()
            .find(|t| t.twin == twin.twin && t.compared > 0)
            .map_or(String::new(), |t| {
                format!("; its p99 at equal load in {} of {} families", t.called, t.compared)
            });
        let capacity = capacities
            .iter()
            .find(|t| t.twin == twin.twin && t.compared > 0)
            .map_or(String::new(), |t| {
                format!("; its capacity at an objective in {} of {}", t.called, t.compared)
            });
        let cpu =
            cpu.iter().find(|t| t.twin == twin.twin && t.compared > 0).map_or(String::new(), |t| {
                format!("; its CPU per request in {} of {} families", t.called, t.compared)
            });
        let _ = writeln!(
            out,
            "twin {} (the same binary and flags as {}): called different in {} of {} cells{p99}{capacity}{cpu}, about {}% expected by chance",
            twin.twin,
            twin.stack,
            twin.called,
            twin.compared,
            crate::text::percent(bookstore_stats::FALSE_DISCOVERY_RATE)
        );
    }
    out
}
