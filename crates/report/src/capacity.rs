//! Section 4b, for a run with latency objectives (`--slo`): each party's capacity at each
//! objective — the highest offered rate at which its windows met it — per round from its
//! rate ladder (the fixed-load phase's rates, `bookstore_record::objective`), compared with
//! the verdict method (ratios paired by round, one family per scenario × objective, higher
//! is better), and drawn as latency against offered rate.
//!
//! A round whose ladder does not bracket the capacity (missed at the lowest rate, or met at
//! the highest) gives no number: the party is then not ranked and says which bound it
//! showed, never a rate it did not measure.

use std::collections::BTreeMap;

use bookstore_stats::{Better, Summary};
use serde::Serialize;

use super::dataset::{Dataset, RoundKey};
use super::verdicts::{Family, Member, Spread, TwinCalls, twin_calls_in};
use crate::charts::{self, LineChart, RateCurve};
use crate::text::{ComparisonText, colour};
use bookstore_record::ladder::{Capacity, Step, ladder_capacity};
use bookstore_record::objective::{Objective, ScopedObjective};
use bookstore_record::results::Cell;

/// One party's ladders at one objective: its steps per round, by rate.
#[derive(Debug)]
pub(crate) struct PartyLadders {
    pub(crate) party: String,
    pub(crate) rounds: BTreeMap<RoundKey, Vec<Step>>,
    /// The capacity each round's ladder shows.
    pub(crate) found: BTreeMap<RoundKey, Capacity>,
    /// Windows the client limited, left out of their ladder.
    pub(crate) left_out: usize,
}

/// The capacities of one scenario at one objective.
#[derive(Debug)]
pub(crate) struct CapacityFamily {
    pub(crate) scenario: String,
    pub(crate) objective: Objective,
    pub(crate) parties: Vec<PartyLadders>,
    /// Every party, its capacity per bracketed round as its samples.
    pub(crate) family: Family,
}

/// `cell`, an open-loop window, judged against `objective`.
fn judge(cell: &Cell, objective: Objective) -> Option<Step> {
    let offered_rps = cell.open_loop.as_ref()?.offered_rps;
    Step::judge(cell, offered_rps, objective).ok()
}

fn party_ladders(
    dataset: &Dataset<'_>,
    party: &str,
    scenario: &str,
    objective: Objective,
) -> Option<PartyLadders> {
    let mut rounds: BTreeMap<RoundKey, Vec<Step>> = BTreeMap::new();
    for rate in &dataset.equal_load_rates {
        for (key, cell) in dataset.equal_load_cell(party, scenario, rate).samples() {
            if let Some(step) = judge(cell, objective) {
                rounds.entry(*key).or_default().push(step);
            }
        }
    }
    if rounds.is_empty() {
        return None;
    }
    for steps in rounds.values_mut() {
        steps.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    }
    let found = rounds
        .iter()
        .filter_map(|(key, steps)| Some((*key, ladder_capacity(steps, objective)?)))
        .collect();
    let left_out = rounds.values().flatten().filter(|s| s.left_out).count();
    Some(PartyLadders { party: party.to_owned(), rounds, found, left_out })
}

/// Why a party whose ladders did not all bracket its capacity is not ranked, in the words
/// of the bound they showed.
fn unbracketed(ladders: &PartyLadders) -> Option<String> {
    let rounds = ladders.found.len();
    let below: Vec<f64> = ladders
        .found
        .values()
        .filter_map(|f| match f {
            Capacity::NotMet { lowest_rps } => Some(*lowest_rps),
            _ => None,
        })
        .collect();
    let above: Vec<f64> = ladders
        .found
        .values()
        .filter_map(|f| match f {
            Capacity::Above { highest_rps } => Some(*highest_rps),
            _ => None,
        })
        .collect();
    if let Some(lowest) = below.iter().copied().reduce(f64::max) {
        return Some(format!(
            "objective not met at ≥ {lowest:.0} req/s, the lowest rate offered (in {} of {rounds} rounds)",
            below.len()
        ));
    }
    let highest = above.iter().copied().reduce(f64::min)?;
    Some(format!(
        "met at every rate offered: at least {highest:.0} req/s (in {} of {rounds} rounds), not a number",
        above.len()
    ))
}

/// Every scenario × objective of the runs' fixed-load phase, when they had objectives.
pub(crate) fn families(dataset: &Dataset<'_>) -> Vec<CapacityFamily> {
    let Some(objectives) =
        dataset.runs.iter().map(|r| &r.settings.objectives).find(|o| !o.is_empty())
    else {
        return Vec::new();
    };
    let mut families = Vec::new();
    for scenario in &dataset.scenarios {
        for objective in ScopedObjective::for_scenario(objectives, scenario) {
            let parties: Vec<PartyLadders> = dataset
                .stacks
                .iter()
                .filter_map(|party| party_ladders(dataset, party, scenario, objective))
                .collect();
            if parties.is_empty() {
                continue;
            }
            let members = parties
                .iter()
                .map(|ladders| {
                    let samples = ladders
                        .found
                        .iter()
                        .filter_map(|(k, f)| Some((*k, f.rate_rps()?)))
                        .collect();
                    Member::new(dataset, &ladders.party, samples, unbracketed(ladders))
                })
                .collect();
            // Every ladder is measured in every round: a fixed design. Each party is one
            // process for the whole run: its capacity's own lead is not in the rounds.
            let q = |_: &[&[(f64, f64)]]| bookstore_stats::FALSE_DISCOVERY_RATE;
            let family = Family::of_members(members, Better::Higher, q, Spread::Capacities);
            families.push(CapacityFamily {
                scenario: scenario.clone(),
                objective,
                parties,
                family,
            });
        }
    }
    families
}

#[derive(Debug, Serialize)]
pub(crate) struct CapacityTable {
    scenario: String,
    /// "p99 ≤ 10 ms".
    objective: String,
    /// The offered rates, lowest to highest (medians over parties and rounds).
    ladder: String,
    rounds: usize,
    /// The party every ratio is against: the highest ranked capacity.
    first: Option<String>,
    rows: Vec<CapacityRow>,
    chart: LineChart,
    /// What its verdicts could see.
    power: Option<String>,
}

#[derive(Debug, Serialize)]
struct CapacityRow {
    party: String,
    colour: String,
    /// "12345 (11000–13400)" req/s, or "–".
    capacity: String,
    /// Each round's ladder: "met up to 8000, missed at 10000 (p99 was 14 ms)".
    ladders: Vec<String>,
    best: bool,
    against_first: Option<ComparisonText>,
    not_ranked: Option<String>,
    left_out: Option<String>,
}

fn rate(rps: f64) -> String {
    format!("{rps:.0}")
}

/// One round's ladder in words.
fn ladder_text(steps: &[Step], found: Option<&Capacity>) -> String {
    let why = |rps: f64| {
        steps
            .iter()
            .find(|s| s.rate_rps == rps)
            .and_then(|s| s.missed_because.clone())
            .unwrap_or_default()
    };
    match found {
        Some(Capacity::Between { met_rps, missed_rps, .. }) => {
            format!(
                "met at {}, missed at {} ({})",
                rate(*met_rps),
                rate(*missed_rps),
                why(*missed_rps)
            )
        }
        Some(Capacity::NotMet { lowest_rps }) => {
            format!("missed at {} ({})", rate(*lowest_rps), why(*lowest_rps))
        }
        Some(Capacity::Above { highest_rps }) => {
            format!("met at every rate to {}", rate(*highest_rps))
        }
        None => "every window client-limited".into(),
    }
}

/// The median over rounds of each rung's offered rate, p50 and latency at the objective.
fn curve(ladders: &PartyLadders) -> Vec<(f64, u64, u64)> {
    let rungs = ladders.rounds.values().map(Vec::len).max().unwrap_or(0);
    (0..rungs)
        .filter_map(|rung| {
            let steps: Vec<&Step> = ladders
                .rounds
                .values()
                .filter_map(|steps| steps.get(rung))
                .filter(|s| !s.left_out)
                .collect();
            let median = |values: Vec<f64>| Summary::of(&values).map(|s| s.median);
            let offered = median(steps.iter().map(|s| s.rate_rps).collect())?;
            let p50 = median(steps.iter().filter_map(|s| s.p50_us).map(|v| v as f64).collect())?;
            let at =
                median(steps.iter().filter_map(|s| s.at_objective_us).map(|v| v as f64).collect())?;
            Some((offered, p50 as u64, at as u64))
        })
        .collect()
}

fn table(dataset: &Dataset<'_>, capacity: &CapacityFamily) -> CapacityTable {
    let family = &capacity.family;
    let ranking = family.ranking();
    let first = ranking.order.first().map(|&i| family.members[i].name.clone());
    let rows: Vec<CapacityRow> = capacity
        .parties
        .iter()
        .map(|ladders| {
            let member = family.index(&ladders.party).map(|i| &family.members[i]);
            let twin_of = member.and_then(|m| m.twin_of.clone());
            let reference = twin_of.as_ref().or(first.as_ref());
            let against_first = reference
                .filter(|r| **r != ladders.party)
                .and_then(|r| family.compare(r, &ladders.party))
                .map(ComparisonText::from);
            CapacityRow {
                party: ladders.party.clone(),
                colour: colour(dataset, &ladders.party),
                // A number only where every round bracketed one.
                capacity: member
                    .filter(|m| m.not_ranked.is_none())
                    .and_then(|m| m.summary)
                    .map_or("–".into(), |s| crate::text::rate_text(&s)),
                ladders: ladders
                    .rounds
                    .iter()
                    .map(|(key, steps)| ladder_text(steps, ladders.found.get(key)))
                    .collect(),
                best: ranking.best && first.as_deref() == Some(ladders.party.as_str()),
                against_first,
                not_ranked: member.and_then(|m| m.not_ranked.clone()),
                left_out: (ladders.left_out > 0)
                    .then(|| format!("{} window(s) client-limited, left out", ladders.left_out)),
            }
        })
        .collect();
    let curves: Vec<RateCurve> = capacity
        .parties
        .iter()
        .map(|ladders| {
            let member = family.index(&ladders.party).map(|i| &family.members[i]);
            RateCurve {
                colour: colour(dataset, &ladders.party),
                label: ladders.party.clone(),
                points: curve(ladders),
                capacity_rps: member
                    .filter(|m| m.not_ranked.is_none())
                    .and_then(|m| m.summary)
                    .map(|s| s.median),
            }
        })
        .collect();
    let objective = capacity.objective;
    let offered: Vec<String> = {
        let mut by_rung: Vec<Vec<f64>> = Vec::new();
        for ladders in &capacity.parties {
            for steps in ladders.rounds.values() {
                for (rung, step) in steps.iter().enumerate() {
                    if by_rung.len() <= rung {
                        by_rung.push(Vec::new());
                    }
                    by_rung[rung].push(step.rate_rps);
                }
            }
        }
        by_rung.iter().filter_map(|r| Summary::of(r)).map(|s| rate(s.median)).collect()
    };
    let power = family.power().map(|p| {
        let detectable = p.detectable.map_or("none at this noise".into(), |d| format!("{d:.2}×"));
        format!(
            "{} round(s), per-round spread of a pair's log ratio {:.3}, smallest ratio called four times in five {detectable}",
            p.rounds, p.spread
        )
    });
    CapacityTable {
        scenario: capacity.scenario.clone(),
        objective: objective.label(),
        ladder: offered.join(", "),
        rounds: capacity.parties.iter().map(|p| p.rounds.len()).max().unwrap_or(0),
        first,
        rows,
        chart: charts::capacity_chart(
            &format!("{}: latency by offered rate", capacity.scenario),
            &objective.percentile(),
            objective.bound_us,
            &curves,
            true,
        ),
        power,
    }
}

/// Every twin's calls against its stack over the capacity families: whether the method,
/// on capacities, calls a difference where there is none.
pub(crate) fn twin_calls(dataset: &Dataset<'_>, families: Vec<CapacityFamily>) -> Vec<TwinCalls> {
    let labelled: Vec<(String, Family)> = families
        .into_iter()
        .map(|f| (format!("{} at {}", f.scenario, f.objective.label()), f.family))
        .collect();
    twin_calls_in(dataset, &labelled)
}

/// Section 4b: one table per scenario × objective, and the twins' calls over them.
#[derive(Debug, Serialize)]
pub(crate) struct CapacitySection {
    tables: Vec<CapacityTable>,
    twins: Vec<TwinLine>,
}

/// A twin's calls, and whether they are more than chance makes.
#[derive(Debug, Serialize)]
struct TwinLine {
    #[serde(flatten)]
    calls: TwinCalls,
    /// As many calls or more would come by chance less than
    /// [`bookstore_stats::FALSE_DISCOVERY_RATE`] of the time, were each family's false-call
    /// rate that rate: the method is not calibrated for these capacities here.
    beyond_chance: bool,
}

/// The section, when the runs had objectives.
pub(crate) fn section(dataset: &Dataset<'_>) -> Option<CapacitySection> {
    let families = families(dataset);
    if families.is_empty() {
        return None;
    }
    let tables = families.iter().map(|f| table(dataset, f)).collect();
    let rate = bookstore_stats::FALSE_DISCOVERY_RATE;
    let twins = twin_calls(dataset, families)
        .into_iter()
        .map(|calls| TwinLine {
            beyond_chance: calls.called > 0
                && bookstore_stats::chance_of_at_least(
                    calls.called as u64,
                    calls.compared as u64,
                    rate,
                ) < rate,
            calls,
        })
        .collect();
    Some(CapacitySection { tables, twins })
}
