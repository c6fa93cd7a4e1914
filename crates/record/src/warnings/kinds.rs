//! What a warning is: its kinds and their data, the sentence each one shows, the limits
//! that raise them, and which of them disqualify a cell. Nothing here reads a cell: the
//! checks that raise warnings are in the parent module.

use serde::{Deserialize, Serialize};

use crate::latency_label;

/// A machine whose client, server and PostgreSQL together used at least this share of its
/// CPUs in a window was CPU-bound there (the kept default run: 386 of its 600 stack windows).
/// There each process's figure is a share of the same CPUs, and a client that took more than
/// its fair share of them took it from the server.
pub const CPU_BOUND_SHARE: f64 = 0.90;
/// Errors above this share of completed requests.
pub const ERROR_RATE_LIMIT: f64 = 0.01;
/// Mean in flight below this share of the concurrency: the client did not hold it.
pub const IN_FLIGHT_FLOOR: f64 = 0.90;
/// An open loop that answered less than this share of the requests due in its window by the
/// window's end plus a grace (less two requests, for the edges) did not keep up: the server
/// fell behind the rate.
pub const SATURATION_SHARE: f64 = 0.99;
/// An open loop's client lateness up to this, at its 99th percentile, is ordinary on a
/// shared machine (a wake-up, a moment without a core: the median window of the default
/// run `2713e02:summary/results/2026-12-01T17-32-30Z.json` had 0.9 ms) and never makes a window
/// client-limited.
pub const CLIENT_LAG_FLOOR_US: u64 = 1_000;
/// Above the floor, a window is client-limited when its client's 99th-percentile lateness
/// is more than this share of the 99th-percentile latency it measured: the client's own
/// lateness, not the server, then made the tail.
pub const CLIENT_LAG_SHARE: f64 = 0.5;

/// Fewer rounds than this give no interval (one round has no spread to measure).
pub const MIN_ROUNDS: u32 = 2;

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
    /// Written by earlier versions (the client above 70% of the machine's CPU, which could
    /// not fire on two cores shared by three processes); read, never written now.
    ClientCpuHigh {
        /// Client CPU seconds per second of window, divided by the CPU count.
        used_fraction: f64,
    },
    /// On a CPU-bound machine (at least [`CPU_BOUND_SHARE`] busy) the client used more than
    /// its fair share — one busy process's part: ½ beside a server, ⅓ with PostgreSQL too;
    /// with the server on another machine, the client alone at [`CPU_BOUND_SHARE`] of its
    /// own. The rate is then bounded by the client as much as by the server.
    ClientOverFairShare {
        /// Client CPU seconds per second of window, divided by the CPU count.
        client_share: f64,
        /// The share it would have had as one of the busy processes.
        fair_share: f64,
        /// Client, server and PostgreSQL together, as a share of the machine.
        machine_share: f64,
    },
    /// More than [`ERROR_RATE_LIMIT`] of the window's requests were errors.
    ErrorRateHigh {
        /// Errors divided by completed requests.
        error_fraction: f64,
    },
    /// Not one request completed in the window: a server that accepts and reads but does
    /// not answer in time measures nothing, and such a window is not a success.
    NothingCompleted {
        /// Requests that ended after the window (most often timed out), in the drain.
        after_window: u64,
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
    /// Fewer than [`MIN_ROUNDS`] rounds per cell: no interval, so no verdict.
    FewRounds {
        /// Rounds per cell (rounds × repeat).
        rounds: u32,
    },
    /// The warm-up reached its longest before every connection had an answer: the window
    /// may hold the start's synchronised burst.
    WarmupUnsettled {
        /// Connections that had an answer by then (from the counts: at least this many).
        answered: u64,
        /// Connections of the cell.
        connections: u32,
    },
    /// The window reached its longest with fewer answers than connections: its rate rests on
    /// less than one request cycle of the closed loop.
    WindowFewAnswers {
        /// Answers in the window.
        answers: u64,
        /// Connections of the cell.
        connections: u32,
    },
    /// Requests were still in flight when the drain ended: the server left them hanging
    /// longer than twice its slowest answer (and at least 1 s).
    Unanswered {
        /// Requests without an answer ([`crate::results::Cell::unanswered`]).
        unanswered: u64,
        /// How long after the window they were waited for, ms.
        waited_ms: u64,
    },
    /// The party refused or dropped some of the idle connections held open to it: it does
    /// not hold the connections asked for, and is not ranked at them.
    IdleNotHeld {
        /// Asked for.
        asked: u64,
        /// Could not be opened.
        refused: u64,
        /// Closed by the server while held.
        dropped: u64,
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
    /// An open loop's server did not keep up with the rate offered: it answered less than
    /// [`SATURATION_SHARE`] of the requests due in the window by the window's end plus a
    /// grace. Its latency at this rate is a growing queue's, and is not ranked.
    Saturated {
        /// Requests answered in time ÷ requests due.
        achieved_fraction: f64,
    },
    /// An open loop's client fell behind its own schedule: late by more than
    /// [`CLIENT_LAG_FLOOR_US`] for half its requests, or at its 99th percentile by more than
    /// the floor and than [`CLIENT_LAG_SHARE`] of the latency p99 it measured. The window
    /// measured the client; it is left out of the comparisons.
    ClientLimited {
        /// The scheduler's median lateness.
        send_lag_p50_us: u64,
        /// The scheduler's 99th-percentile lateness.
        send_lag_p99_us: u64,
        /// The 99th-percentile latency of the answers the scenario is ranked by.
        latency_p99_us: u64,
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

impl WarningKind {
    /// Whether a cell with this warning is disqualified: never ranked, starred, compared or
    /// used in an axis verdict, and shown with this as its reason. These are the integrity
    /// gates: the stack lost or invented work, answered wrongly, failed too often, was not
    /// under the load asked for, or died.
    pub fn disqualifies(&self) -> bool {
        matches!(
            self,
            WarningKind::AuditFailed { .. }
                | WarningKind::InvalidResponses { .. }
                | WarningKind::ErrorRateHigh { .. }
                | WarningKind::NothingCompleted { .. }
                | WarningKind::InFlightLow { .. }
                | WarningKind::ServerCrashed { .. }
                | WarningKind::IdleNotHeld { .. }
        )
    }
}

impl From<WarningKind> for Warning {
    fn from(kind: WarningKind) -> Self {
        let message = match &kind {
            WarningKind::ClientCpuHigh { used_fraction } => format!(
                "the client used {:.0}% of the machine's CPU: it may limit the numbers; give it its own cores or another machine",
                used_fraction * 100.0
            ),
            WarningKind::ClientOverFairShare { client_share, fair_share, machine_share } => {
                format!(
                    "the client used {:.0}% of the machine's CPU, more than its fair share ({:.0}%) of a machine {:.0}% busy: this rate is bounded by the client as much as by the server — give the client its own cores or another machine (loadgen suite --targets)",
                    client_share * 100.0,
                    fair_share * 100.0,
                    machine_share * 100.0
                )
            }
            WarningKind::ErrorRateHigh { error_fraction } => format!(
                "{:.1}% of the requests failed: see errors_by_kind and the server log before reading this cell's latency",
                error_fraction * 100.0
            ),
            WarningKind::NothingCompleted { after_window } => format!(
                "no request completed in the window: the server answered none in time ({after_window} ended after it, counted as drained — see drained_counts and the server log)"
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
            WarningKind::FewRounds { rounds } => format!(
                "{rounds} round(s) per cell: no interval and no verdict is possible below {MIN_ROUNDS}; run with --rounds 5 or more"
            ),
            WarningKind::WarmupUnsettled { answered, connections } => format!(
                "the warm-up ended at its longest with {answered} of {connections} connections answered: the window may include the start's burst; raise --warmup"
            ),
            WarningKind::WindowFewAnswers { answers, connections } => format!(
                "the window ended at its longest with {answers} answers for {connections} connections (less than one request cycle): its rate is coarse; raise --duration"
            ),
            WarningKind::Unanswered { unanswered, waited_ms } => format!(
                "{unanswered} request(s) were still unanswered {waited_ms} ms after the window, when the client stopped waiting: they are in no count of this cell; see the server log"
            ),
            WarningKind::IdleNotHeld { asked, refused, dropped } => format!(
                "of {asked} idle connections, the server refused {refused} and dropped {dropped} while they were held: it does not hold that many open (see its log and its open-files limit)"
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
            WarningKind::Saturated { achieved_fraction } => format!(
                "saturated at this rate: only {:.1}% of the requests due in the window were answered by its end (and a short grace); its latency here is a growing queue's, not ranked — offer a lower rate (--rates)",
                achieved_fraction * 100.0
            ),
            WarningKind::ClientLimited { send_lag_p50_us, send_lag_p99_us, latency_p99_us } => {
                format!(
                    "client-limited: the load generator was {} late at its median and {} at its 99th percentile, against a p99 latency of {}: its own lateness, not the server, set this window's figures, which are left out of the comparisons — give the client its own cores, or offer a lower rate",
                    latency_label(*send_lag_p50_us as f64),
                    latency_label(*send_lag_p99_us as f64),
                    latency_label(*latency_p99_us as f64)
                )
            }
            WarningKind::ShardsOutOfStep { spread_seconds } => format!(
                "the shards' windows opened {spread_seconds:.2} s apart: the target was not loaded by all of them for the whole window (check the hosts' clocks, e.g. chrony, and each shard's late_seconds)"
            ),
        };
        Warning { kind, message }
    }
}
