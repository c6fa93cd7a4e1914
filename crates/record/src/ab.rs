//! The one-question document (`bookstore-bench/ab`, documented field by field in
//! crates/record/RESULTS.md, "One-question results"): what `loadgen ab` measured of two
//! parties, round by round, and the answer it stopped with.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Environment, RunInfo};

/// The document's schema name.
pub const SCHEMA: &str = "bookstore-bench/ab";
/// The version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// The level every look's interval of a question holds at together (each look's own,
/// [`AbAnswer::level`], is stricter: Bonferroni over the looks planned).
pub const CONFIDENCE: f64 = 0.95;

/// A whole question.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AbResults {
    /// [`SCHEMA`].
    pub schema: String,
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When and how the run went.
    pub run: RunInfo,
    /// The machine, the build and the PostgreSQL server (when the run started one).
    pub environment: Environment,
    /// How every window was measured and when the question ends.
    pub settings: AbSettings,
    /// What was asked of both: a scenario's name, or the one request (`GET /path`).
    pub request: String,
    /// The two parties, A then B.
    pub parties: [Party; 2],
    /// Every round measured, in order.
    pub rounds: Vec<AbRound>,
    /// B ÷ A of the rate, once two blocks (or rounds) were measured.
    pub rate: Option<AbAnswer>,
    /// B ÷ A of the latency percentile (with an offered rate).
    pub latency: Option<AbAnswer>,
    /// What the mirrored order left of the drift: half the mean difference of the rate's
    /// log ratio measured with A first and with B first, and its standard error.
    pub order_effect: Option<[f64; 2]>,
    /// Processes started for each side over the run (0 for a URL someone else started).
    pub processes: u32,
    /// What ended it: `precision` (the interval as narrow as asked), `budget`, `looks` (the
    /// last planned look), `interrupted` or `failed`.
    pub ended_by: String,
    /// What the run said besides its answer: a precision it could not reach, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How `loadgen ab` measures: one typed record that is at once its flags and the results'
/// settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AbSettings {
    /// Closed-loop connections (with --rate: the most the open loop opens).
    #[cfg_attr(feature = "cli", arg(short = 'c', long, default_value_t = 128))]
    pub concurrency: u32,
    /// Offer this many requests per second to each (an open loop) and compare a latency
    /// percentile too, besides the rate.
    #[cfg_attr(feature = "cli", arg(long, value_name = "RPS"))]
    #[serde(rename = "rate_rps")]
    pub rate: Option<f64>,
    /// The latency percentile compared at --rate.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 99.0))]
    pub percentile: f64,
    /// The shortest warm-up before each window (it lasts until every connection has had an
    /// answer, at most 5 s).
    #[cfg_attr(feature = "cli", arg(long, default_value = crate::results::DEFAULT_WARMUP, value_parser = humantime::parse_duration))]
    #[serde(rename = "warmup_seconds", with = "crate::units::seconds")]
    pub warmup: Duration,
    /// The shortest window (it lasts until it holds one answer per connection, at most 4 ×
    /// this).
    #[cfg_attr(feature = "cli", arg(long, default_value = crate::results::DEFAULT_WINDOW, value_parser = humantime::parse_duration))]
    #[serde(rename = "window_seconds", with = "crate::units::seconds")]
    pub duration: Duration,
    /// End when the interval of B ÷ A is within ±this share (0.02 or 2%).
    #[cfg_attr(feature = "cli", arg(long, default_value = "2%", value_parser = parse_share))]
    pub precision: f64,
    /// With --rate, the latency's interval must also be within this width (upper ÷ lower):
    /// a tail percentile scatters several-fold between short windows, so ±2% is out of
    /// reach (docs/method.md, "A tail question").
    #[cfg_attr(feature = "cli", arg(long, default_value = "2", value_parser = parse_width))]
    #[serde(rename = "tail_width")]
    pub tail_precision: f64,
    /// The question's time, from its start; it ends when spent, with the answer so far.
    #[cfg_attr(feature = "cli", arg(long, default_value = "10m", value_parser = humantime::parse_duration))]
    #[serde(rename = "budget_seconds", with = "crate::units::seconds")]
    pub budget: Duration,
    /// Rounds per process: a side the run starts itself is replaced by a fresh process after
    /// this many rounds, so that no process's own lead sets the answer.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100)))]
    pub rounds_per_process: u32,
    /// A request without an answer after this is an error.
    #[cfg_attr(feature = "cli", arg(long, default_value = "10s", value_parser = humantime::parse_duration))]
    #[serde(rename = "request_timeout_ms", with = "crate::units::millis")]
    pub request_timeout: Duration,
}

/// `0.02`, `2%`: a share.
pub fn parse_share(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, percent) =
        text.strip_suffix('%').map_or((text, false), |number| (number.trim(), true));
    let value: f64 =
        number.parse().map_err(|_| format!("{text:?}: expected a share like 0.02 or 2%"))?;
    let share = if percent { value / 100.0 } else { value };
    if !(share > 0.0 && share < 1.0) {
        return Err(format!("{text:?}: expected a share between 0 and 1 (0.02 or 2%)"));
    }
    Ok(share)
}

/// `2`, `2×`: a width, upper ÷ lower, above 1.
pub fn parse_width(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches(['×', 'x']);
    let width: f64 =
        number.parse().map_err(|_| format!("{text:?}: expected a width like 2 or 2×"))?;
    if width.is_finite() && width > 1.0 {
        Ok(width)
    } else {
        Err(format!("{text:?}: a width is upper ÷ lower, above 1 (2 for 2×)"))
    }
}

/// One side of the question.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Party {
    /// `A` or `B`.
    pub label: String,
    /// `url` (a server someone else started), `stack` (a stack of the registry) or
    /// `command` (a binary and its flags).
    pub kind: String,
    /// The URL, the stack's name, or the command line.
    pub what: String,
}

/// One round: A and B each measured twice, in mirrored order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AbRound {
    /// The pair of processes that measured it (0 for every round of a URL).
    pub block: u32,
    /// `ABBA` or `BAAB`.
    pub order: String,
    /// A's rate in its two windows (goodput, ok/s), in the order measured.
    pub a_rps: [f64; 2],
    /// B's.
    pub b_rps: [f64; 2],
    /// A's latency percentile in its two windows, µs (with an offered rate).
    pub a_latency_us: Option<[u64; 2]>,
    /// B's.
    pub b_latency_us: Option<[u64; 2]>,
}

/// B ÷ A with its interval, and what it was drawn from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AbAnswer {
    /// Estimated B ÷ A.
    pub ratio: f64,
    /// The interval's lower end.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
    /// The interval's level (every planned look's together).
    pub level: f64,
    /// Blocks (pairs of processes) behind it.
    pub blocks: usize,
    /// Rounds behind it.
    pub rounds: usize,
    /// The spread between two processes measured in this run (sd of ln ratio); `null` with
    /// one process per side, where the twins' 0.015 is assumed.
    pub process_sd: Option<f64>,
    /// The spread of one round's log ratio.
    pub round_sd: f64,
    /// `higher`, `lower` or `not_distinguishable`: B's value against A's.
    pub verdict: String,
    /// The answer in words ("B is 4.1% [2.6–5.7%] faster").
    pub words: String,
}

impl AbResults {
    /// Writes the document to `path` atomically.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        crate::write_document(self, path)
    }

    /// Reads a document, refusing other schemas and unknown versions.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        crate::read_document(path, SCHEMA, SCHEMA_VERSION..=SCHEMA_VERSION, "a loadgen ab file")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_is_a_share_written_either_way_and_nothing_else() {
        assert_eq!(parse_share("2%"), Ok(0.02));
        assert_eq!(parse_share("0.05"), Ok(0.05));
        assert!(
            parse_share("0").is_err()
                && parse_share("150%").is_err()
                && parse_share("two").is_err()
        );
    }

    #[test]
    fn a_width_is_above_one_with_or_without_its_sign() {
        assert_eq!(
            (parse_width("2"), parse_width("1.5×"), parse_width("3x")),
            (Ok(2.0), Ok(1.5), Ok(3.0))
        );
        assert!(
            parse_width("1").is_err()
                && parse_width("0.5").is_err()
                && parse_width("wide").is_err()
        );
    }

    #[test]
    fn every_field_of_the_file_is_documented() {
        let answer = AbAnswer {
            ratio: 1.0,
            low: 0.9,
            high: 1.1,
            level: 0.99,
            blocks: 2,
            rounds: 8,
            process_sd: Some(0.01),
            round_sd: 0.05,
            verdict: "not_distinguishable".into(),
            words: String::new(),
        };
        let results = AbResults {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo::running("x".into(), vec![]),
            environment: Environment::default(),
            settings: AbSettings {
                concurrency: 1,
                rate: Some(1.0),
                percentile: 99.0,
                warmup: Duration::ZERO,
                duration: Duration::ZERO,
                precision: 0.02,
                tail_precision: 2.0,
                budget: Duration::ZERO,
                rounds_per_process: 4,
                request_timeout: Duration::ZERO,
            },
            request: "health".into(),
            parties: [0, 1].map(|_| Party {
                label: "A".into(),
                kind: "url".into(),
                what: String::new(),
            }),
            rounds: vec![AbRound {
                block: 0,
                order: "ABBA".into(),
                a_rps: [1.0, 1.0],
                b_rps: [1.0, 1.0],
                a_latency_us: Some([1, 1]),
                b_latency_us: Some([1, 1]),
            }],
            rate: Some(answer.clone()),
            latency: Some(answer),
            order_effect: Some([0.0, 0.0]),
            processes: 0,
            ended_by: "precision".into(),
            notes: vec!["x".into()],
        };
        let undocumented = crate::undocumented_fields(&results, include_str!("../RESULTS.md"));
        assert!(undocumented.is_empty(), "fields missing from RESULTS.md: {undocumented:?}");
    }
}
