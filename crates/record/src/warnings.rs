//! Reasons not to trust a number yet, each with what to do about it — and the gates: the
//! kinds of warning that disqualify a cell, which is then never ranked or compared.

use serde::{Deserialize, Serialize};

use bookstore_client::engine::LoadReport;
use crate::results::{Cell, LoadMode};
use bookstore_report::charts::latency_label;

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
/// run `summary/results/2026-12-01T17-32-30Z.json` had 0.9 ms) and never makes a window
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
                | WarningKind::InFlightLow { .. }
                | WarningKind::ServerCrashed { .. }
        )
    }
}

/// Each process's CPU in a window as a share of the machine's `cpus`: client, server (`None`
/// when not on this machine) and PostgreSQL (`None` likewise).
pub fn cpu_shares(cell: &Cell, cpus: usize) -> (f64, Option<f64>, Option<f64>) {
    let share = |seconds: f64| seconds / cell.window_seconds.max(1e-9) / cpus.max(1) as f64;
    let cpu = &cell.cpu_seconds;
    (share(cpu.client), cpu.server.map(share), cpu.postgres.map(share))
}

/// The client took more than its fair share of a CPU-bound machine (see
/// [`WarningKind::ClientOverFairShare`]), or `None`.
fn client_over_fair_share(cell: &Cell, cpus: usize) -> Option<Warning> {
    let (client_share, server, postgres) = cpu_shares(cell, cpus);
    let machine_share = client_share + server.unwrap_or(0.0) + postgres.unwrap_or(0.0);
    let fair_share = match server {
        // The server elsewhere: the client alone saturating its machine is the sign.
        None => CPU_BOUND_SHARE,
        Some(_) => {
            let uses_database = bookstore_client::scenario::Scenario::parse(&cell.scenario)
                .map_or(true, |s| s.uses_database());
            1.0 / (2.0 + f64::from(u8::from(uses_database && postgres.is_some())))
        }
    };
    let bound = server.is_none() || machine_share >= CPU_BOUND_SHARE;
    (bound && client_share > fair_share).then(|| {
        Warning::from(WarningKind::ClientOverFairShare { client_share, fair_share, machine_share })
    })
}

/// Why a window is disqualified (the first gate it failed), or `None`.
pub fn disqualification(cell: &Cell) -> Option<&Warning> {
    cell.warnings.iter().find(|w| w.kind.disqualifies())
}

/// The warnings a window measured by this client deserves, with `cpus` the client machine's
/// logical CPUs.
pub fn cell_warnings(cell: &Cell, cpus: usize) -> Vec<Warning> {
    let mut found: Vec<Warning> = client_over_fair_share(cell, cpus).into_iter().collect();
    // A shard held its own share of the connections.
    let connections = match cell.shards.as_slice() {
        [own] => own.connections,
        _ => cell.concurrency,
    };
    found.extend(load_warnings(cell, connections));
    if let Some(part) = cell.shards.first()
        && part.late_seconds > SHARD_LATE_FRACTION * cell.window_seconds
    {
        found.push(Warning::from(WarningKind::ShardLate { late_seconds: part.late_seconds }));
    }
    found
}

/// The warnings of a window this client measured (with `report`, what the engine said of
/// it): the policy's, its open loop's, and what its settling said.
pub fn window_warnings(cell: &Cell, report: &LoadReport) -> Vec<Warning> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut found = cell_warnings(cell, cpus);
    found.extend(open_loop_warnings(cell));
    let connections = cell.shards.first().map_or(cell.concurrency, |s| s.connections);
    if let Some(answered) = report.unsettled_warmup {
        found.push(Warning::from(WarningKind::WarmupUnsettled { answered, connections }));
    }
    if report.window_capped {
        let answers = cell.counts.total();
        found.push(Warning::from(WarningKind::WindowFewAnswers { answers, connections }));
    }
    found
}

/// The warnings of an open-loop window: did the client keep its schedule, did the server
/// keep up. A client that fell behind explains a shortfall by itself, so it is the one
/// warning then.
pub fn open_loop_warnings(cell: &Cell) -> Vec<Warning> {
    let Some(open) = &cell.open_loop else { return Vec::new() };
    let (send_lag_p50_us, send_lag_p99_us) =
        open.send_lag_us.map_or((0, 0), |l| (l.p50_us, l.p99_us));
    let latency_p99_us = cell.ranked_latency().map_or(0, |l| l.p99_us);
    let behind = send_lag_p50_us > CLIENT_LAG_FLOOR_US;
    let made_the_tail = send_lag_p99_us > CLIENT_LAG_FLOOR_US
        && send_lag_p99_us as f64 > CLIENT_LAG_SHARE * latency_p99_us as f64;
    if behind || made_the_tail {
        let kind = WarningKind::ClientLimited { send_lag_p50_us, send_lag_p99_us, latency_p99_us };
        return vec![Warning::from(kind)];
    }
    let due = open.due as f64;
    // Two requests of slack: a short window of a slow scenario is not judged by one.
    if open.achieved_fraction * due + 2.0 < SATURATION_SHARE * due {
        let achieved_fraction = open.achieved_fraction;
        return vec![Warning::from(WarningKind::Saturated { achieved_fraction })];
    }
    Vec::new()
}

/// Why an open-loop window says the stack could not carry its rate, or `None`: its latency
/// at that rate is not ranked.
pub fn saturation(cell: &Cell) -> Option<&Warning> {
    cell.warnings.iter().find(|w| matches!(w.kind, WarningKind::Saturated { .. }))
}

/// Why an open-loop window measured its client rather than the server, or `None`: the
/// window is left out of the comparisons.
pub fn client_limited(cell: &Cell) -> Option<&Warning> {
    cell.warnings.iter().find(|w| matches!(w.kind, WarningKind::ClientLimited { .. }))
}

/// The warnings about what a window's load and answers were, whoever measured it (one
/// client, or several merged), against the `connections` that were to be in flight. The
/// gravest first: a disqualified cell shows the first gate it failed.
pub fn load_warnings(cell: &Cell, connections: u32) -> Vec<Warning> {
    let mut found = Vec::new();
    if let Some(audit) = &cell.audit
        && !audit.passed
    {
        found.push(WarningKind::AuditFailed { failures: audit.failures.clone() });
    }
    if !cell.problems.is_empty() {
        found.push(WarningKind::InvalidResponses { problems: cell.problems.clone() });
    }
    let total = cell.counts.total();
    if total > 0 {
        let error_fraction = cell.counts.errors as f64 / total as f64;
        if error_fraction > ERROR_RATE_LIMIT {
            found.push(WarningKind::ErrorRateHigh { error_fraction });
        }
    }
    // An open loop holds what its rate needs in flight, not the connections.
    if cell.mode == LoadMode::Closed
        && cell.mean_in_flight < IN_FLIGHT_FLOOR * f64::from(connections)
    {
        found.push(WarningKind::InFlightLow {
            mean_in_flight: cell.mean_in_flight,
            concurrency: connections,
        });
    }
    if cell.stopped_early {
        found.push(WarningKind::StoppedEarly);
    }
    found.into_iter().map(Warning::from).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_documentation_states_the_limits_the_code_applies() {
        let doc = include_str!("../RESULTS.md");
        let percent = |share: f64| format!("{}", (share * 1000.0).round() / 10.0);
        for phrase in [
            format!("at least {}% of its CPUs", percent(CPU_BOUND_SHARE)),
            format!("more than {}% of the window's requests", percent(ERROR_RATE_LIMIT)),
            format!("fewer than {}% of the connections", percent(IN_FLIGHT_FLOOR)),
            format!("fewer than {MIN_ROUNDS} rounds per cell"),
            format!("more than {}% of the window after its slot", percent(SHARD_LATE_FRACTION)),
        ] {
            assert!(doc.contains(&phrase), "RESULTS.md does not say {phrase:?}");
        }
    }

    #[test]
    fn the_gates_are_the_integrity_failures_and_nothing_else() {
        let gates: Vec<bool> = [
            WarningKind::AuditFailed { failures: vec![] },
            WarningKind::InvalidResponses { problems: vec![] },
            WarningKind::ErrorRateHigh { error_fraction: 0.5 },
            WarningKind::InFlightLow { mean_in_flight: 1.0, concurrency: 8 },
            WarningKind::ServerCrashed { detail: String::new() },
        ]
        .iter()
        .map(WarningKind::disqualifies)
        .collect();
        assert!(gates.iter().all(|g| *g));
        for kind in [
            WarningKind::ClientCpuHigh { used_fraction: 0.9 },
            WarningKind::ClientOverFairShare {
                client_share: 0.6,
                fair_share: 0.5,
                machine_share: 1.0,
            },
            WarningKind::StoppedEarly,
            WarningKind::FewRounds { rounds: 1 },
            WarningKind::WarmupUnsettled { answered: 1, connections: 2 },
            WarningKind::WindowFewAnswers { answers: 1, connections: 2 },
        ] {
            assert!(!kind.disqualifies(), "{kind:?}");
        }
    }

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

    /// A window of `scenario` whose client, server and PostgreSQL used these shares of a
    /// two-CPU machine over one second.
    fn window(scenario: &str, client: f64, server: Option<f64>, postgres: Option<f64>) -> Cell {
        let report = LoadReport::new(std::time::Duration::from_secs(1));
        let mut cell = Cell::from_report(scenario, 8, 0, LoadMode::Closed, &report);
        cell.window_seconds = 1.0;
        cell.cpu_seconds.client = client * 2.0;
        cell.cpu_seconds.server = server.map(|s| s * 2.0);
        cell.cpu_seconds.postgres = postgres.map(|p| p * 2.0);
        cell
    }

    fn over(cell: &Cell) -> bool {
        client_over_fair_share(cell, 2).is_some()
    }

    #[test]
    fn a_client_above_its_fair_share_of_a_cpu_bound_machine_is_warned_of() {
        // The kept run's health windows: client 43–49%, server ~50%: within its half.
        assert!(!over(&window("health", 0.49, Some(0.50), Some(0.0))));
        assert!(over(&window("health", 0.55, Some(0.43), Some(0.0))));
        // Not CPU-bound: the client may use what nobody else wants.
        assert!(!over(&window("health", 0.55, Some(0.20), Some(0.0))));
        // With PostgreSQL a third each: 16% (the kept run's bookById at most) is fine.
        assert!(!over(&window("bookById", 0.16, Some(0.39), Some(0.38))));
        assert!(over(&window("bookById", 0.40, Some(0.30), Some(0.25))));
        // The server on another machine: only a client saturating its own is the sign.
        assert!(!over(&window("bookById", 0.80, None, None)));
        assert!(over(&window("bookById", 0.95, None, None)));
    }
}
