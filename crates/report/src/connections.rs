//! Section 6b, for a run whose parties hold idle connections (`--idle-connections`,
//! `loadgen study connections`): what each idle keep-alive connection costs a stack in
//! memory, and whether the measured load's rate and tail survive them.
//!
//! A stack's memory per connection is the slope of its server's peak RSS over the idle
//! connections held — the stack itself at 0, each of its `.idle<N>` variants at N — fitted
//! per scenario and concurrency within a round and averaged over them, one slope per round;
//! its interval is Student's over the rounds. The stacks' slopes are compared with the
//! verdict method (ratios paired by round, one family), and each variant's rate and p99
//! against its own stack's in the same rounds (each table's comparisons a family of their
//! own, as the deployment section's).

use std::collections::BTreeMap;

use bookstore_stats::{Estimate, Group, Line, Summary};
use serde::Serialize;

use super::dataset::{Dataset, RoundKey, Target};
use super::verdicts::Family;
use crate::text::ComparisonText;
use bookstore_record::results::Cell;

/// The interval of a memory slope: 95%, as a single estimate per stack (the comparisons
/// between stacks carry the family's own level).
const SLOPE_ALPHA: f64 = 0.05;

/// A stack and the idle connections each of its parties held.
#[derive(Debug, Clone)]
struct Ladder {
    stack: String,
    /// `(party, idle connections)`, the stack itself first at 0, then by count.
    parties: Vec<(String, u64)>,
}

/// The stacks with idle variants, in the order of the page's parties.
fn ladders(dataset: &Dataset<'_>) -> Vec<Ladder> {
    let entries: Vec<_> = dataset.runs.iter().flat_map(|r| &r.stacks).collect();
    let mut ladders: Vec<Ladder> = Vec::new();
    for name in &dataset.stacks {
        let Some(entry) = entries.iter().find(|s| &s.name == name) else { continue };
        let (Some(count), Some(of)) = (entry.idle_connections, entry.variant_of.as_ref()) else {
            continue;
        };
        let at = match ladders.iter().position(|l| &l.stack == of) {
            Some(at) => at,
            None => {
                ladders.push(Ladder { stack: of.clone(), parties: vec![(of.clone(), 0)] });
                ladders.len() - 1
            }
        };
        let ladder = &mut ladders[at];
        if !ladder.parties.iter().any(|(party, _)| party == name) {
            ladder.parties.push((name.clone(), count));
            ladder.parties.sort_by_key(|(_, count)| *count);
        }
    }
    ladders
}

#[derive(Debug, Serialize)]
pub(crate) struct Connections {
    /// One per stack: its memory per connection.
    slopes: Vec<SlopeRow>,
    /// The stacks' slopes against each other, where the method calls a difference.
    slope_verdicts: Vec<String>,
    /// One per idle party: what its server had with them open.
    held: Vec<HeldRow>,
    /// Per scenario and concurrency: each idle party's rate and p99 against its stack's.
    load: Vec<LoadTable>,
}

#[derive(Debug, Serialize)]
struct SlopeRow {
    stack: String,
    /// "0, 1000, 10000".
    levels: String,
    /// "12.3 [11.0–13.6]" KiB per connection, or "–".
    kib_per_connection: String,
    /// Each round's slope, KiB, in round order: "15.9, 17.9, 19.2" (a trend over the rounds
    /// is the allocator keeping the previous hold's memory; docs/findings.md, "Idle connections").
    kib_by_round: String,
    rounds: usize,
}

#[derive(Debug, Serialize)]
struct HeldRow {
    party: String,
    /// "10000 of 10000".
    held: String,
    /// Refused or dropped, when any: the party is disqualified.
    not_held: Option<String>,
    rss_mib: String,
    threads: String,
    fds: String,
    opening_seconds: String,
}

#[derive(Debug, Serialize)]
struct LoadTable {
    scenario: String,
    concurrency: u32,
    rows: Vec<LoadRow>,
}

#[derive(Debug, Serialize)]
struct LoadRow {
    party: String,
    idle: u64,
    rate: Option<ComparisonText>,
    p99: Option<ComparisonText>,
    disqualified: Option<String>,
}

/// The section, when a run held idle connections.
pub(crate) fn section(dataset: &Dataset<'_>) -> Option<Connections> {
    let ladders = ladders(dataset);
    if ladders.is_empty() {
        return None;
    }
    let measured = measure(dataset, &ladders);
    let slopes = ladders
        .iter()
        .zip(&measured)
        .map(|(ladder, slope)| SlopeRow {
            stack: slope.stack.clone(),
            levels: ladder
                .parties
                .iter()
                .map(|(_, n)| n.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            kib_per_connection: slope.estimate.map_or("–".into(), |e| {
                format!("{:.1} [{:.1}–{:.1}]", e.mean / 1024.0, e.low / 1024.0, e.high / 1024.0)
            }),
            kib_by_round: slope
                .by_round
                .values()
                .map(|bytes| format!("{:.1}", bytes / 1024.0))
                .collect::<Vec<_>>()
                .join(", "),
            rounds: slope.by_round.len(),
        })
        .collect();
    let per_round: Vec<(String, BTreeMap<RoundKey, f64>)> =
        measured.into_iter().map(|slope| (slope.stack, slope.by_round)).collect();
    let group = Group::paired(&per_round);
    let slope_verdicts = group
        .pairs()
        .filter(|(_, _, c)| c.differs())
        .map(|(a, b, c)| format!("{b}'s memory per connection ÷ {a}'s: {}", c.text()))
        .collect();
    Some(Connections {
        slopes,
        slope_verdicts,
        held: ladders.iter().flat_map(|l| held_rows(dataset, l)).collect(),
        load: load_tables(dataset, &ladders),
    })
}

/// Each stack with idle variants: its memory per connection, bytes (Student's interval over
/// the rounds), and the rounds behind it — the exports' `memory_per_connection` rows.
pub(crate) fn slopes(dataset: &Dataset<'_>) -> Vec<(String, Option<Estimate>, usize)> {
    measure(dataset, &ladders(dataset))
        .into_iter()
        .map(|slope| (slope.stack, slope.estimate, slope.by_round.len()))
        .collect()
}

/// One stack's memory per connection: bytes per idle connection in each round, and their
/// Student's interval.
struct Slope {
    stack: String,
    by_round: BTreeMap<RoundKey, f64>,
    estimate: Option<Estimate>,
}

fn measure(dataset: &Dataset<'_>, ladders: &[Ladder]) -> Vec<Slope> {
    ladders
        .iter()
        .map(|ladder| {
            let by_round = slopes_by_round(dataset, ladder);
            let values: Vec<f64> = by_round.values().copied().collect();
            let estimate = Estimate::of(&values, SLOPE_ALPHA);
            Slope { stack: ladder.stack.clone(), by_round, estimate }
        })
        .collect()
}

/// The ladder's slope of peak RSS over idle connections, bytes per connection, per round:
/// fitted per scenario and concurrency, averaged over them.
fn slopes_by_round(dataset: &Dataset<'_>, ladder: &Ladder) -> BTreeMap<RoundKey, f64> {
    let rss = |cell: &Cell| cell.server_peak_rss_bytes.map(|b| b as f64);
    let mut fits: BTreeMap<RoundKey, Vec<f64>> = BTreeMap::new();
    for scenario in &dataset.scenarios {
        for &concurrency in &dataset.concurrency {
            let mut points: BTreeMap<RoundKey, Vec<(f64, f64)>> = BTreeMap::new();
            for (party, count) in &ladder.parties {
                let windows = dataset.cell(&Target::Stack(party.clone()), scenario, concurrency);
                if windows.disqualified().is_some() {
                    continue;
                }
                for (round, value) in windows.by_round(rss) {
                    points.entry(round).or_default().push((*count as f64, value));
                }
            }
            for (round, points) in points {
                if let Some(line) = Line::fit(&points) {
                    fits.entry(round).or_default().push(line.slope);
                }
            }
        }
    }
    fits.into_iter()
        .map(|(round, slopes)| (round, slopes.iter().sum::<f64>() / slopes.len() as f64))
        .collect()
}

fn held_rows(dataset: &Dataset<'_>, ladder: &Ladder) -> Vec<HeldRow> {
    let mut rows = Vec::new();
    for (party, _) in ladder.parties.iter().filter(|(_, count)| *count > 0) {
        let cells: Vec<&Cell> = dataset
            .scenarios
            .iter()
            .flat_map(|s| dataset.concurrency.iter().map(move |&c| (s, c)))
            .flat_map(|(s, c)| dataset.cell(&Target::Stack(party.clone()), s, c).cells())
            .collect();
        let idle: Vec<_> = cells.iter().filter_map(|c| c.idle).collect();
        let Some(first) = idle.first() else { continue };
        let median = |value: &dyn Fn(&bookstore_record::results::IdleHeld) -> Option<f64>| {
            Summary::of(&idle.iter().filter_map(value).collect::<Vec<_>>()).map(|s| s.median)
        };
        let refused: u64 = idle.iter().map(|i| i.refused).sum();
        let dropped: u64 = idle.iter().map(|i| i.dropped).sum();
        let fewest = idle.iter().map(|i| i.held).min().unwrap_or(0);
        rows.push(HeldRow {
            party: party.clone(),
            held: format!("{fewest} of {}", first.asked),
            not_held: (refused + dropped > 0).then(|| {
                format!("{refused} refused, {dropped} dropped over {} windows", idle.len())
            }),
            rss_mib: median(&|i| i.server_rss_bytes.map(|b| b as f64))
                .map_or("–".into(), |b| format!("{:.1}", b / 1_048_576.0)),
            threads: median(&|i| i.server_threads.map(|t| t as f64))
                .map_or("–".into(), |t| format!("{t:.0}")),
            fds: median(&|i| i.server_fds.map(|f| f as f64))
                .map_or("–".into(), |f| format!("{f:.0}")),
            opening_seconds: median(&|i| Some(i.opening_seconds))
                .map_or("–".into(), |s| format!("{s:.2}")),
        });
    }
    rows
}

fn load_tables(dataset: &Dataset<'_>, ladders: &[Ladder]) -> Vec<LoadTable> {
    let mut tables = Vec::new();
    for scenario in &dataset.scenarios {
        for &concurrency in &dataset.concurrency {
            let rates = Family::rates(dataset, scenario, concurrency);
            let p99s = Family::p99(dataset, scenario, concurrency);
            let pairs: Vec<(&str, &str, u64)> = ladders
                .iter()
                .flat_map(|l| {
                    l.parties[1..].iter().map(|(party, n)| (l.stack.as_str(), party.as_str(), *n))
                })
                .collect();
            let asked: Vec<(&str, &str)> = pairs.iter().map(|(a, b, _)| (*a, *b)).collect();
            let rate = rates.pairs_family(&asked);
            let p99 = p99s.pairs_family(&asked);
            let rows = pairs
                .iter()
                .zip(rate.into_iter().zip(p99))
                .map(|((_, party, idle), (rate, p99))| LoadRow {
                    party: (*party).to_owned(),
                    idle: *idle,
                    rate: rate.map(ComparisonText::from),
                    p99: p99.map(ComparisonText::from),
                    disqualified: dataset
                        .cell(&Target::Stack((*party).to_owned()), scenario, concurrency)
                        .disqualified(),
                })
                .collect();
            tables.push(LoadTable { scenario: scenario.clone(), concurrency, rows });
        }
    }
    tables
}
