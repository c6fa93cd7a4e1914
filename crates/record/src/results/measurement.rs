//! How every window of a suite is measured: one typed record that is at once the command
//! line's flags (`loadgen suite --help` shows them, flattened into its arguments), the
//! suite's options and the results file's `settings` (flattened there too), so a setting
//! added here is parsed, used and recorded without being written again; the page's
//! settings table lists any field it does not word itself (`bookstore-report`'s method
//! section).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Rounds every cell gets by default: the first look of the sequential design, after which
/// the families still open get more, up to [`DEFAULT_MAX_ROUNDS`], while the budget lasts
/// (docs/method.md, "Rounds where they are needed").
pub const DEFAULT_ROUNDS: u32 = 3;

/// The most rounds a family gets by default: the last look (`bookstore_stats::Looks`).
pub const DEFAULT_MAX_ROUNDS: u32 = 12;

/// The shortest warm-up before a window, as `--warmup` takes it: the suite's and `loadgen
/// ab`'s, so that one question is measured as the suite measures.
pub const DEFAULT_WARMUP: &str = "100ms";

/// The shortest window, as `--duration` takes it: the suite's and `loadgen ab`'s.
pub const DEFAULT_WINDOW: &str = "200ms";

/// `--quick`'s shortest warm-up, shortest window and rounds.
pub const QUICK: (Duration, Duration, u32) =
    (Duration::from_millis(100), Duration::from_millis(200), 3);

/// How every window is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Measurement {
    /// Connections (closed-loop virtual users) per cell, comma-separated.
    #[cfg_attr(feature = "cli", arg(long, value_delimiter = ',', default_value = "128,256"))]
    pub concurrency: Vec<u32>,
    /// The shortest warm-up before each window; it lasts until every connection has had an
    /// answer (at most 5 s).
    #[cfg_attr(feature = "cli", arg(long, default_value = DEFAULT_WARMUP, value_parser = humantime::parse_duration))]
    #[serde(rename = "warmup_seconds", with = "crate::units::seconds")]
    pub warmup: Duration,
    /// The shortest measurement window; it lasts until it holds one answer per connection
    /// (at most 4 × this). Short, and more rounds of them: a window's rate scatters with
    /// the machine's state, which a longer window does not average away (docs/method.md,
    /// "Where the noise lives").
    #[cfg_attr(feature = "cli", arg(long, default_value = DEFAULT_WINDOW, value_parser = humantime::parse_duration))]
    #[serde(rename = "window_seconds", with = "crate::units::seconds")]
    pub duration: Duration,
    /// The fixed-load phase's window (its warm-up is half of --warmup): longer than the
    /// closed loop's, for the requests a tail percentile is read from.
    #[cfg_attr(feature = "cli", arg(long, default_value = "500ms", value_parser = humantime::parse_duration))]
    #[serde(
        rename = "fixed_load_window_seconds",
        default,
        with = "crate::units::optional_seconds"
    )]
    pub fixed_load_duration: Option<Duration>,
    /// Rounds every cell gets: every stack and the scenario's ceiling measure one window per
    /// round, side by side, and are compared round by round (at least 2 for a verdict).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = DEFAULT_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=100)))]
    pub rounds: u32,
    /// The most rounds a family (one scenario × concurrency) gets: past --rounds, a family
    /// with a pair still open is judged again at pre-set looks (about 1.5× the rounds each)
    /// and gets more rounds while --budget allows. At or below --rounds: a fixed design.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = DEFAULT_MAX_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=100)))]
    #[serde(default)]
    pub max_rounds: u32,
    /// The suite's time, from its start to its last window: the rounds past --rounds are
    /// spent within it (the rounds every cell gets are run whatever it says).
    #[cfg_attr(feature = "cli", arg(long, default_value = "14m", value_parser = humantime::parse_duration))]
    #[serde(rename = "budget_seconds", default, with = "crate::units::optional_seconds")]
    pub budget: Option<std::time::Duration>,
    /// Run the rounds this many times over (rounds × repeat windows per cell).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100)))]
    pub repeat: u32,
    /// A request without an answer after this is an error.
    #[cfg_attr(feature = "cli", arg(long, default_value = "10s", value_parser = humantime::parse_duration))]
    #[serde(rename = "request_timeout_ms", with = "crate::units::millis")]
    pub request_timeout: Duration,
    /// Keep fsync and synchronous commit on in the throwaway cluster (writes then measure
    /// this machine's disk as much as the stacks).
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(rename = "durable_database")]
    pub durable: bool,
    /// The order of a round's windows: `grouped` puts the windows compared with each other
    /// (the parties of one concurrency) next to each other, rotating within and between the
    /// groups; `shuffled` groups them too, each group in a random order drawn afresh every
    /// round (for a list of many parties in blocks, the factorial study's); `rotated`
    /// rotates the whole round as one list, the schedule before grouping (docs/method.md, "Where the noise lives":
    /// the closer a pair's windows, the less they scatter).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Schedule::Grouped))]
    #[serde(default = "Schedule::before_grouping")]
    pub schedule: Schedule,
    /// Ask a tail question: each scenario's closed loop gets --rounds and no more (its rate
    /// is what the fixed-load share is taken of), and its fixed-load rounds go on, look by
    /// look, until every p99 ratio's interval is within this width (upper ÷ lower; 2 when
    /// the flag is given bare) or --budget is spent (docs/method.md, "A tail question").
    #[cfg_attr(feature = "cli", arg(long, value_name = "WIDTH", num_args = 0..=1,
        default_missing_value = "2", value_parser = crate::ab::parse_width))]
    #[serde(rename = "tail_question_width", default, skip_serializing_if = "Option::is_none")]
    pub tail_question: Option<f64>,
}

/// How a round's windows are ordered (`--schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// The parties of one concurrency together, a group after another; the order rotating
    /// within each group and the groups' order too, round by round.
    Grouped,
    /// Every window of the round in one list, rotating by one per round.
    Rotated,
    /// Grouped, each group in a random order drawn afresh every round (seeded by the
    /// round's place in the run, so the same plan orders alike): no party keeps its place
    /// in the group round after round, so a drift within a group does not favour the
    /// parties a list puts first — the factorial study's order, whose list runs by
    /// framework.
    Shuffled,
}

impl Schedule {
    /// What a results file from before `schedule` was recorded ran: rotated.
    fn before_grouping() -> Self {
        Self::Rotated
    }
}

impl Measurement {
    /// `--quick`: [`QUICK`]'s warm-up, window and rounds in place of those given, a fixed
    /// design (no rounds past them).
    pub fn quick(self) -> Self {
        let (warmup, duration, rounds) = QUICK;
        Self { warmup, duration, rounds, max_rounds: 0, ..self }
    }

    /// The looks every family of the run is judged at: from rounds × repeat to
    /// `max_rounds`, or the one look of a fixed design.
    pub fn looks(&self) -> bookstore_stats::Looks {
        bookstore_stats::Looks::planned(self.total_rounds() as usize, self.max_rounds as usize)
    }

    /// The looks of a tail question's fixed-load rounds (`--tail-question`): from rounds ×
    /// repeat, doubling, to [`bookstore_stats::TAIL_LAST_LOOK`]; `None` without one. Every
    /// look is judged at [`bookstore_stats::Looks::every_look_q`], since the question stops
    /// on its data.
    pub fn tail_looks(&self) -> Option<bookstore_stats::Looks> {
        self.tail_question.map(|_| bookstore_stats::Looks::tail(self.total_rounds() as usize))
    }

    /// The false-discovery rate the fixed-load p99 families are judged at: the whole of `q`
    /// for the fixed design of a default run, every look's share in a tail question.
    pub fn equal_load_q(&self) -> f64 {
        self.tail_looks().map_or(bookstore_stats::FALSE_DISCOVERY_RATE, |l| l.every_look_q())
    }

    /// What clap cannot check alone, as the one-line error a user reads.
    pub fn check(&self) -> Result<(), String> {
        if self.concurrency.is_empty() || self.concurrency.contains(&0) {
            return Err("--concurrency needs one or more positive numbers".into());
        }
        if self.duration.is_zero() {
            return Err("--duration must be longer than zero".into());
        }
        if self.fixed_load_duration.is_some_and(|d| d.is_zero()) {
            return Err("--fixed-load-duration must be longer than zero".into());
        }
        Ok(())
    }

    /// The fixed-load phase's shortest window: `--fixed-load-duration`, or in a file from
    /// before it (version 11 and older) the closed loop's.
    pub fn fixed_load_window(&self) -> Duration {
        self.fixed_load_duration.unwrap_or(self.duration)
    }

    /// Windows per cell: rounds × repeat.
    pub fn total_rounds(&self) -> u32 {
        self.rounds.max(1) * self.repeat.max(1)
    }
}

// The flags are parsed only with the `cli` feature (the runner's); a workspace test run has it.
#[cfg(all(test, feature = "cli"))]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        measurement: Measurement,
    }

    #[test]
    fn the_flags_are_recorded_under_the_results_files_names_and_read_back() {
        let cli = Cli::parse_from(["x", "--concurrency", "8,16", "--warmup", "300ms", "--durable"]);
        let json = serde_json::to_value(&cli.measurement).unwrap();
        assert_eq!(json["concurrency"], serde_json::json!([8, 16]));
        assert_eq!(json["warmup_seconds"], 0.3);
        assert_eq!(json["window_seconds"], 0.2);
        assert_eq!(json["fixed_load_window_seconds"], 0.5);
        assert_eq!(json["request_timeout_ms"], 10_000);
        assert_eq!(json["durable_database"], true);
        assert_eq!(json["rounds"], DEFAULT_ROUNDS);
        let back: Measurement = serde_json::from_value(json).unwrap();
        assert_eq!(back, cli.measurement);
    }

    #[test]
    fn quick_replaces_warmup_window_and_rounds_and_check_refuses_what_clap_lets_through() {
        let cli = Cli::parse_from(["x", "--rounds", "9", "--repeat", "2"]);
        let quick = cli.measurement.clone().quick();
        assert_eq!((quick.warmup, quick.duration, quick.rounds), QUICK);
        assert_eq!(quick.repeat, 2);
        assert_eq!(quick.total_rounds(), 6);
        assert!(cli.measurement.check().is_ok());
        let zero = Cli::parse_from(["x", "--concurrency", "0"]).measurement;
        assert!(zero.check().unwrap_err().contains("--concurrency"));
        let instant = Cli::parse_from(["x", "--duration", "0s"]).measurement;
        assert!(instant.check().unwrap_err().contains("--duration"));
    }

    #[test]
    fn a_run_is_sequential_by_default_and_quick_runs_and_files_from_before_are_fixed() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(cli.measurement.looks().rounds(), [3, 5, 8, 12]);
        assert_eq!(cli.measurement.budget, Some(Duration::from_secs(14 * 60)));
        let json = serde_json::to_value(&cli.measurement).unwrap();
        assert_eq!(
            (json["max_rounds"].as_u64(), json["budget_seconds"].as_f64()),
            (Some(12), Some(840.0))
        );
        assert!(!cli.measurement.clone().quick().looks().sequential());
        let mut old = json.clone();
        for field in ["max_rounds", "budget_seconds"] {
            old.as_object_mut().unwrap().remove(field);
        }
        let old: Measurement = serde_json::from_value(old).unwrap();
        assert_eq!(old.looks(), bookstore_stats::Looks::fixed(3), "the rounds it ran, one look");
        let fixed = Cli::parse_from(["x", "--rounds", "5", "--max-rounds", "5"]).measurement;
        assert_eq!(fixed.looks(), bookstore_stats::Looks::fixed(5));
    }

    #[test]
    fn the_fixed_load_window_is_its_own_and_a_file_from_before_it_had_the_closed_loops() {
        let cli = Cli::parse_from(["x"]).measurement;
        assert_eq!((cli.duration, cli.fixed_load_window()), (ms(200), ms(500)));
        let own = Cli::parse_from(["x", "--fixed-load-duration", "2s"]).measurement;
        assert_eq!(own.fixed_load_window(), Duration::from_secs(2));
        let mut json = serde_json::to_value(&cli).unwrap();
        json.as_object_mut().unwrap().remove("fixed_load_window_seconds");
        let old: Measurement = serde_json::from_value(json).unwrap();
        assert_eq!(old.fixed_load_window(), ms(200), "version 11: the window it ran");
        let instant = Cli::parse_from(["x", "--fixed-load-duration", "0s"]).measurement;
        assert!(instant.check().unwrap_err().contains("--fixed-load-duration"));
    }

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn a_run_is_grouped_by_default_and_a_file_from_before_the_setting_reads_as_rotated() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(cli.measurement.schedule, Schedule::Grouped);
        let mut json = serde_json::to_value(&cli.measurement).unwrap();
        assert_eq!(json["schedule"], "grouped");
        json.as_object_mut().unwrap().remove("schedule");
        let old: Measurement = serde_json::from_value(json).unwrap();
        assert_eq!(old.schedule, Schedule::Rotated, "the order it ran in");
        let rotated = Cli::parse_from(["x", "--schedule", "rotated"]).measurement;
        assert_eq!(rotated.schedule, Schedule::Rotated);
    }
}
