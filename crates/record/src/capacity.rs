//! The capacity question's document (`bookstore-bench/capacity`, documented field by field
//! in crates/record/RESULTS.md, "Capacity questions"): each party's capacity at one latency
//! objective, one ladder per party in every block, every party a fresh process on a fresh
//! database each block; and each party's capacity against the first's. `loadgen ab --slo`
//! writes it for two parties, `loadgen study capacity` for several.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ab::{AbAnswer, Party};
use crate::ladder::{Capacity, Step};
use crate::objective::Objective;
use crate::{Environment, RunInfo};

/// The document's schema name.
pub const SCHEMA: &str = "bookstore-bench/capacity";
/// The version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole capacity question.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapacityResults {
    /// [`SCHEMA`].
    pub schema: String,
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When and how the run went.
    pub run: RunInfo,
    /// The machine, the build and the PostgreSQL server.
    pub environment: Environment,
    /// How every window was measured and when the question ends.
    pub settings: CapacitySettings,
    /// What was asked of every party: a scenario's name, or the one request (`GET /path`).
    pub request: String,
    /// The parties, the first the one every other is compared with.
    pub parties: Vec<Party>,
    /// Each party's closed-loop rate in the first block, requests per second: the centre of
    /// its first ladder.
    pub closed_loop_rps: Vec<f64>,
    /// The highest rate a ladder offered: `--max-rate`, or twice the highest closed-loop
    /// rate.
    pub max_rate_rps: f64,
    /// Every block measured, in order.
    pub blocks: Vec<CapacityBlock>,
    /// Each party's capacity over the blocks, in party order (once two blocks were measured).
    pub capacities: Vec<PartyCapacity>,
    /// Each party after the first, its capacity ÷ the first's (once two blocks were measured).
    pub answers: Vec<CapacityAnswer>,
    /// Processes started for each party over the run.
    pub processes: u32,
    /// What ended it: `precision` (every interval as narrow as asked), `budget`, `looks`,
    /// `interrupted` or `failed`.
    pub ended_by: String,
    /// What the run said besides its answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How a capacity question measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySettings {
    /// The latency objective.
    pub objective: Objective,
    /// The most connections the open loop opens (and the closed loop's, for the first
    /// ladders' centre).
    pub concurrency: u32,
    /// The warm-up before each window.
    #[serde(rename = "warmup_seconds", with = "crate::units::seconds")]
    pub warmup: Duration,
    /// The shortest window; a window at a low rate is longer, so that it holds
    /// [`TAIL_REQUESTS`] requests past the objective's percentile.
    #[serde(rename = "window_seconds", with = "crate::units::seconds")]
    pub duration: Duration,
    /// End when every interval of a party ÷ the first is within ±this share.
    pub precision: f64,
    /// The question's time, from its start.
    #[serde(rename = "budget_seconds", with = "crate::units::seconds")]
    pub budget: Duration,
    /// A request without an answer after this is an error.
    #[serde(rename = "request_timeout_ms", with = "crate::units::millis")]
    pub request_timeout: Duration,
    /// `--max-rate`, when given.
    pub max_rate_rps: Option<f64>,
}

/// The requests a window holds past its objective's percentile, at least: 5 for p99 is 500
/// requests, half a second at 1,000/s. Fewer, and the percentile is one request's latency.
pub const TAIL_REQUESTS: f64 = 5.0;

impl CapacitySettings {
    /// How long a window at `rate_rps` lasts: the shortest window, or longer until it holds
    /// [`TAIL_REQUESTS`] past the percentile (at most 20 times the shortest).
    pub fn window_at(&self, rate_rps: f64) -> Duration {
        let needed = TAIL_REQUESTS / ((1.0 - self.objective.quantile) * rate_rps.max(1e-9));
        let longest = self.duration * 20;
        Duration::from_secs_f64(needed).clamp(self.duration, longest.max(self.duration))
    }
}

/// One block: a fresh process of every party, one ladder each.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapacityBlock {
    /// Its index.
    pub block: u32,
    /// Each party's ladder, in party order.
    pub ladders: Vec<PartyLadder>,
}

/// One party's ladder in one block.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartyLadder {
    /// The rate the ladder was laid around.
    pub centre_rps: f64,
    /// Its windows, in the order measured.
    pub steps: Vec<Step>,
    /// What they show (`None`: every window left out).
    pub capacity: Option<Capacity>,
}

/// One party's capacity over the blocks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartyCapacity {
    /// Its label.
    pub label: String,
    /// The geometric mean of its blocks' capacities, requests per second.
    pub rate_rps: f64,
    /// Student's interval over the blocks' logs: its lower end.
    pub low_rps: f64,
    /// Its upper end.
    pub high_rps: f64,
    /// Its level (95%).
    pub level: f64,
    /// Blocks behind it.
    pub blocks: usize,
    /// The spread of its blocks' ln capacity: processes, ladders and the hour together.
    pub block_sd: f64,
}

/// A party's capacity ÷ the first's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapacityAnswer {
    /// The party's label.
    pub label: String,
    /// The ratio with its interval, as `loadgen ab` gives one (its words say "capacity").
    #[serde(flatten)]
    pub answer: AbAnswer,
}

impl CapacityResults {
    /// Writes the document to `path` atomically.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        crate::write_document(self, path)
    }

    /// Reads a document, refusing other schemas and unknown versions.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        crate::read_document(path, SCHEMA, SCHEMA_VERSION..=SCHEMA_VERSION, "a capacity question")
    }

    /// The label of party `index`.
    pub fn label(&self, index: usize) -> &str {
        &self.parties[index].label
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> CapacitySettings {
        CapacitySettings {
            objective: Objective::parse("p99=10ms").unwrap(),
            concurrency: 64,
            warmup: Duration::from_millis(100),
            duration: Duration::from_millis(200),
            precision: 0.02,
            budget: Duration::from_secs(600),
            request_timeout: Duration::from_secs(10),
            max_rate_rps: None,
        }
    }

    #[test]
    fn a_window_at_a_low_rate_lasts_until_it_holds_enough_requests_past_the_percentile() {
        let s = settings();
        assert_eq!(s.window_at(10_000.0), Duration::from_millis(200));
        // 500 requests at 500/s: a second.
        assert!((s.window_at(500.0).as_secs_f64() - 1.0).abs() < 1e-9);
        assert_eq!(s.window_at(1.0), Duration::from_secs(4), "at most 20 × the shortest");
    }

    #[test]
    fn every_field_of_the_file_is_documented() {
        let step = Step {
            rate_rps: 1.0,
            due: 1,
            in_time_share: 1.0,
            error_share: 0.0,
            p50_us: Some(1),
            at_objective_us: Some(1),
            met: true,
            left_out: false,
            fell_behind: false,
            missed_because: Some("x".into()),
        };
        let answer = AbAnswer {
            ratio: 1.0,
            low: 0.9,
            high: 1.1,
            level: 0.99,
            blocks: 2,
            rounds: 2,
            process_sd: Some(0.1),
            round_sd: 0.0,
            verdict: "not_distinguishable".into(),
            words: String::new(),
        };
        let results = CapacityResults {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo::running("x".into(), vec![]),
            environment: Environment::default(),
            settings: CapacitySettings { max_rate_rps: Some(1.0), ..settings() },
            request: "health".into(),
            parties: vec![Party { label: "A".into(), kind: "stack".into(), what: "x".into() }],
            closed_loop_rps: vec![1.0],
            max_rate_rps: 2.0,
            blocks: vec![CapacityBlock {
                block: 0,
                ladders: vec![PartyLadder {
                    centre_rps: 1.0,
                    steps: vec![step],
                    capacity: Some(Capacity::Between {
                        rate_rps: 1.0,
                        met_rps: 1.0,
                        missed_rps: 1.0,
                    }),
                }],
            }],
            capacities: vec![PartyCapacity {
                label: "A".into(),
                rate_rps: 1.0,
                low_rps: 1.0,
                high_rps: 1.0,
                level: 0.95,
                blocks: 2,
                block_sd: 0.1,
            }],
            answers: vec![CapacityAnswer { label: "B".into(), answer }],
            processes: 1,
            ended_by: "budget".into(),
            notes: vec!["x".into()],
        };
        let undocumented = crate::undocumented_fields(&results, include_str!("../RESULTS.md"));
        assert!(undocumented.is_empty(), "fields missing from RESULTS.md: {undocumented:?}");
    }
}
