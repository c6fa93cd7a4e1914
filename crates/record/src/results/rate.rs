//! The rates the fixed-load phase offers (`--rates`).

use serde::{Deserialize, Serialize};

/// A rate of the fixed-load phase (`--rates`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Rate {
    /// A share of the slowest qualified stack's goodput at the lowest concurrency, measured
    /// in the same run moments before.
    Share(f64),
    /// Requests per second.
    PerSecond(f64),
}

impl Rate {
    /// The fixed-load phase's rate unless `--rates` says otherwise: 70% of the slowest.
    pub const DEFAULT: Rate = Rate::Share(0.7);

    /// The rate ladder a suite with latency objectives (`--slo`) offers unless `--rates`
    /// says otherwise: from a tenth of the slowest stack's saturated rate, where every stack
    /// should meet an objective, to 1.25× it, past which the slowest cannot; a faster stack
    /// that meets it even there is shown "at least" the top rate, not a number. Closer near
    /// the 0.5–1 where the kept runs' p99 at 70% (3–70 ms) says the knees of 10 ms lie.
    pub const CAPACITY_LADDER: [Rate; 8] = [
        Rate::Share(0.1),
        Rate::Share(0.2),
        Rate::Share(0.35),
        Rate::Share(0.5),
        Rate::Share(0.65),
        Rate::Share(0.8),
        Rate::Share(1.0),
        Rate::Share(1.25),
    ];

    /// The rates a suite offers: none with `--no-equal-load`, those asked for, or else
    /// [`Rate::CAPACITY_LADDER`] with latency `objectives`, or else [`Rate::DEFAULT`] —
    /// except in a `--quick` run without objectives, a first look whose fixed-load windows
    /// would be too few and too short to compare (its phase costs about a fifth of it).
    pub fn for_suite(
        asked: Option<Vec<Rate>>,
        no_equal_load: bool,
        quick: bool,
        objectives: bool,
    ) -> Vec<Rate> {
        match asked {
            _ if no_equal_load => Vec::new(),
            Some(rates) => rates,
            None if objectives => Self::CAPACITY_LADDER.to_vec(),
            None if quick => Vec::new(),
            None => vec![Rate::DEFAULT],
        }
    }

    /// `0.7` or `70%` (a share; as a percentage it may pass 100%, `125%`), `5000`
    /// (requests per second, more than 1).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bad = || {
            format!(
                "--rates {text:?}: expected a share like 0.7 or 70%, or requests per second like 5000"
            )
        };
        let (number, percent) = match text.strip_suffix('%') {
            Some(number) => (number, true),
            None => (text, false),
        };
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !value.is_finite() || value <= 0.0 {
            return Err(bad());
        }
        Ok(match (percent, value) {
            (true, v) => Self::Share(v / 100.0),
            (false, v) if v <= 1.0 => Self::Share(v),
            (false, v) => Self::PerSecond(v),
        })
    }

    /// As a reader says it: `70% of the slowest` or `5000 req/s`.
    pub fn label(self) -> String {
        match self {
            Self::Share(share) => format!("{:.0}% of the slowest", share * 100.0),
            Self::PerSecond(rate) => format!("{rate:.0} req/s"),
        }
    }
}
