//! Reasons not to trust a number yet, each with what to do about it.

use serde::{Deserialize, Serialize};

/// Client CPU above this share of its machine's cores: the client may be the bottleneck.
pub const CLIENT_CPU_LIMIT: f64 = 0.70;
/// Errors above this share of completed requests.
pub const ERROR_RATE_LIMIT: f64 = 0.01;
/// Mean in flight below this share of the concurrency: the client did not hold it.
pub const IN_FLIGHT_FLOOR: f64 = 0.90;
/// Windows shorter than this are too short to trust.
pub const SHORT_WINDOW_SECONDS: f64 = 3.0;

/// A warning as stored in the results: what, with its data, and the sentence to show.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// What happened, with its numbers.
    pub kind: WarningKind,
    /// What it means and what to do, for people.
    pub message: String,
}

/// The kinds of warning.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WarningKind {
    /// The client used more than [`CLIENT_CPU_LIMIT`] of the machine's CPU.
    ClientCpuHigh {
        /// Client CPU seconds per second of window, divided by the CPU count.
        used_fraction: f64,
    },
    /// More than [`ERROR_RATE_LIMIT`] of the window's requests were errors.
    ErrorRateHigh {
        /// Errors divided by completed requests.
        error_fraction: f64,
    },
    /// The client held fewer requests in flight than the concurrency asked for.
    InFlightLow {
        /// Mean in flight by Little's law.
        mean_in_flight: f64,
        /// Connections asked for.
        concurrency: u32,
    },
    /// The write audit found a discrepancy.
    AuditFailed {
        /// What failed.
        failures: Vec<String>,
    },
    /// The window was shorter than [`SHORT_WINDOW_SECONDS`].
    WindowShort {
        /// The window.
        window_seconds: f64,
    },
    /// The server process exited during the run.
    ServerCrashed {
        /// Exit status and the end of its log.
        detail: String,
    },
    /// Ctrl-C stopped the cell early.
    StoppedEarly,
    /// Sampled responses failed full validation.
    InvalidResponses {
        /// The first problems.
        problems: Vec<String>,
    },
    /// The file holds one shard's part of a load shared by several clients (`--shard`).
    ShardOnly {
        /// K of `--shard K/N`.
        index: u32,
        /// N of `--shard K/N`.
        count: u32,
    },
    /// A shard began a cell later than scheduled (by more than [`SHARD_LATE_FRACTION`] of
    /// the window), so its window overlapped the other shards' only in part.
    ShardLate {
        /// How late its warm-up began.
        late_seconds: f64,
    },
    /// The merged shards' windows opened further apart than [`SHARD_LATE_FRACTION`] of the
    /// window (by their hosts' clocks).
    ShardsOutOfStep {
        /// Latest window start minus earliest.
        spread_seconds: f64,
    },
}

/// Shards whose windows are apart by more than this share of the window did not load the
/// target together for the whole window.
pub const SHARD_LATE_FRACTION: f64 = 0.10;

impl From<WarningKind> for Warning {
    fn from(kind: WarningKind) -> Self {
        let message = match &kind {
            WarningKind::ClientCpuHigh { used_fraction } => format!(
                "the client used {:.0}% of the machine's CPU: it may limit the numbers; give it its own cores or another machine",
                used_fraction * 100.0
            ),
            WarningKind::ErrorRateHigh { error_fraction } => format!(
                "{:.1}% of the requests failed: see errors_by_kind and the server log before reading this cell's latency",
                error_fraction * 100.0
            ),
            WarningKind::InFlightLow { mean_in_flight, concurrency } => format!(
                "only {mean_in_flight:.1} of {concurrency} requests were in flight on average: the client did not hold the concurrency (too few client workers, or connections failing)"
            ),
            WarningKind::AuditFailed { failures } => {
                format!(
                    "the write audit failed — the stack lost or duplicated work: {}",
                    failures.join("; ")
                )
            }
            WarningKind::WindowShort { window_seconds } => format!(
                "a {window_seconds:.1} s window is short: use --duration 3s or more for numbers to publish"
            ),
            WarningKind::ServerCrashed { detail } => {
                format!(
                    "the server exited during the run; its remaining cells are missing: {detail}"
                )
            }
            WarningKind::StoppedEarly => {
                "stopped by Ctrl-C before the window closed: this cell is incomplete".to_owned()
            }
            WarningKind::InvalidResponses { problems } => format!(
                "some responses did not match the contract (counted as errors): {}",
                problems.join("; ")
            ),
            WarningKind::ShardOnly { index, count } => format!(
                "shard {index} of {count}: this file holds one client's part of the load; combine the {count} files with `loadgen merge` before reading the numbers"
            ),
            WarningKind::ShardLate { late_seconds } => format!(
                "this shard began {late_seconds:.2} s after its scheduled start: its window overlapped the other shards' only in part (a shard busy too long, or --start-at too soon)"
            ),
            WarningKind::ShardsOutOfStep { spread_seconds } => format!(
                "the shards' windows opened {spread_seconds:.2} s apart: the target was not loaded by all of them for the whole window (check the hosts' clocks, e.g. chrony, and each shard's late_seconds)"
            ),
        };
        Warning { kind, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_says_what_to_do_or_what_happened() {
        let warning =
            Warning::from(WarningKind::InFlightLow { mean_in_flight: 90.2, concurrency: 128 });
        assert!(warning.message.contains("90.2 of 128"), "{}", warning.message);
        let json = serde_json::to_string(&warning).unwrap();
        assert!(json.contains(r#""type":"in_flight_low""#), "{json}");
        let back: Warning = serde_json::from_str(&json).unwrap();
        assert_eq!(back, warning);
    }
}
