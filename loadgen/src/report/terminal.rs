//! The suite's closing lines on the terminal: per scenario, each stack's saturated rate at
//! the lowest concurrency beside its p99 at the first equal-load rate, each marked the way
//! the page's verdicts say (`best`, `lead` when no single one can be told apart).

use std::fmt::Write;

use super::dataset::Dataset;
use super::verdicts::Family;
use crate::results::RunResults;
use bookstore_report::charts::latency_label;

/// How a member stands in its family, as a few words (empty for the others).
fn standing(family: &Family, name: &str) -> &'static str {
    let ranking = family.ranking();
    let Some(index) = family.index(name) else { return "" };
    match (ranking.leaders.contains(&index), ranking.best) {
        (true, true) => " best",
        (true, false) if ranking.leaders.len() > 1 => " lead",
        _ => "",
    }
}

/// The summary lines of `runs`.
pub fn summary(runs: &[RunResults]) -> String {
    let dataset = Dataset::new(runs);
    let Some(&concurrency) = dataset.concurrency.first() else { return String::new() };
    let rate = dataset.equal_load_rates.first();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:<20} {:>17}   {}",
        "scenario",
        "stack",
        format!("rate c = {concurrency}"),
        rate.map_or(String::new(), |r| format!("p99 at {r}")),
    );
    for scenario in &dataset.scenarios {
        let rates = Family::rates(&dataset, scenario, concurrency);
        let p99 = rate.map(|r| Family::equal_load_p99(&dataset, scenario, r));
        for (i, member) in rates.members.iter().enumerate() {
            let name = &member.name;
            let rate_text = match (&member.disqualified, member.summary) {
                (Some(_), _) => "disqualified".to_owned(),
                (None, Some(s)) => format!("{:>10.0}/s{:<5}", s.median, standing(&rates, name)),
                (None, None) => "–".to_owned(),
            };
            let latency_text = p99.as_ref().map_or(String::new(), |family| {
                let Some(member) = family.index(name).map(|i| &family.members[i]) else {
                    return "–".into();
                };
                if member.disqualified.is_some() {
                    return "disqualified".into();
                }
                let value = member.summary.map_or("–".into(), |s| latency_label(s.median));
                if member.not_ranked.is_some() {
                    format!("{value} (not ranked: see the page)")
                } else {
                    format!("{value}{}", standing(family, name))
                }
            });
            let label = if i == 0 { scenario.as_str() } else { "" };
            let _ = writeln!(out, "{label:<18} {name:<20} {rate_text:>17}   {latency_text}");
        }
    }
    let _ = writeln!(
        out,
        "(medians over the rounds; best: told apart from every other stack by the verdict method; lead: first, but not distinguishable from the others marked so)"
    );
    out
}
