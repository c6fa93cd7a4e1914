//! Reasons not to trust a number yet, each with what to do about it — and the gates: the
//! kinds of warning that disqualify a cell, which is then never ranked or compared.
//!
//! [`kinds`] says what a warning is; this module reads cells and raises them.

pub mod kinds;

pub use kinds::*;

use bookstore_client::engine::LoadReport;

use crate::results::{Cell, LoadMode};

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
    if report.unanswered > 0 {
        let (unanswered, waited_ms) = (report.unanswered, report.drain_elapsed.as_millis() as u64);
        found.push(Warning::from(WarningKind::Unanswered { unanswered, waited_ms }));
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

/// The largest share of a party's fixed-load windows that may be saturated with its p99
/// still ranked. A stall now and then at a rate it carries is part of its tail, which a
/// tail question of tens of rounds meets (`2713e02:summary/results/2026-12-06T15-21-52Z-tail-question.json`:
/// 1–3 of 48 and 96 windows, where one would have unranked the party); more often than
/// this, it could not carry the rate and its latency is a growing queue's. With the default
/// run's three rounds, one saturated window is already too many.
pub const SATURATED_SHARE_MAX: f64 = 0.1;

/// Whether a party carried its offered rate: its `saturated` windows of `windows` at most
/// [`SATURATED_SHARE_MAX`] of them.
pub fn carried(saturated: usize, windows: usize) -> bool {
    saturated as f64 <= SATURATED_SHARE_MAX * windows as f64
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
    if total == 0 && !cell.stopped_early {
        found.push(WarningKind::NothingCompleted { after_window: cell.drained_counts.total() });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_party_carries_a_rate_with_a_stall_in_a_tenth_of_its_windows_and_no_more() {
        // The default run's three rounds: one saturated window is already too many.
        assert!(carried(0, 3));
        assert!(!carried(1, 3));
        // A tail question's 48 rounds: the kept run's 1–3 stalls keep a party ranked, the
        // 17 of 48 of a twin that could not carry bookList500's rate do not.
        assert!(carried(3, 48));
        assert!(carried(4, 48));
        assert!(!carried(5, 48));
        assert!(!carried(17, 48));
        assert!(carried(0, 0));
    }

    #[test]
    fn the_results_documentation_states_the_limits_the_code_applies() {
        let doc = include_str!("../../RESULTS.md");
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
