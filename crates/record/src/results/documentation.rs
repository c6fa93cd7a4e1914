//! Every field a results file can hold is documented in `RESULTS.md`.

use super::*;
use crate::warnings::WarningKind;
use bookstore_client::engine::LoadReport;

fn open_cell() -> Cell {
    let mut cell = cell();
    cell.open_loop = Some(OpenLoop {
        offered_rps: 1.0,
        fraction_of_slowest: Some(0.7),
        arrivals: Arrivals::Constant,
        due: 1,
        achieved_fraction: 1.0,
        dropped: 0,
        connections_cap: 1,
        connections_peak: 1,
        cap_hit: false,
        send_lag_us: cell.latency_ok_us,
    });
    cell
}

fn cell() -> Cell {
    let mut report = LoadReport::new(std::time::Duration::from_secs(1));
    report.latency_ok_us.record(100).unwrap();
    report.latency_rejected_us.record(100).unwrap();
    report.measure.by_status.insert(200, 1);
    report.measure.errors[0] = 1;
    report.unanswered = 1;
    let mut cell = Cell::from_report("s", 1, 0, LoadMode::Open { rate_rps: 1.0 }, &report);
    cell.idle = Some(IdleHeld {
        asked: 1,
        held: 1,
        refused: 0,
        dropped: 0,
        pings: 0,
        opening_seconds: 0.1,
        server_rss_bytes: Some(1),
        server_threads: Some(1),
        server_fds: Some(1),
    });
    cell.beside_concurrency = Some(2);
    cell.driver = Some("diesel".into());
    cell.db_latency_us = Some(1000);
    cell.server_threads = Some(1);
    cell.sql = Some(SqlStats {
        statements_per_request: 1.0,
        statements: 1,
        requests: 1,
        top_statements: vec![StatementCalls { query: "q".into(), calls: 1 }],
        commits: 1,
        rollbacks: 0,
        shared_blocks_hit: 1,
        shared_blocks_read: 0,
        temp_blocks_written: 0,
        deadlocks: Some(0),
    });
    cell.backend_waits = Some(BackendWaits {
        samples: 1,
        interval_ms: 20,
        mean_backends: 1.0,
        shares: [("running".to_owned(), 1.0)].into(),
    });
    cell.audit = Some(Audit {
        passed: true,
        checkout_rows: 0,
        acknowledged_checkouts: 0,
        negative_stock_books: 0,
        stock_mismatches: 0,
        unjustified_refusals: 0,
        failures: vec![],
    });
    cell.warnings = vec![
        WarningKind::ClientCpuHigh { used_fraction: 1.0 }.into(),
        WarningKind::ClientOverFairShare { client_share: 1.0, fair_share: 0.5, machine_share: 1.0 }
            .into(),
        WarningKind::ErrorRateHigh { error_fraction: 1.0 }.into(),
        WarningKind::InFlightLow { mean_in_flight: 1.0, concurrency: 2 }.into(),
        WarningKind::AuditFailed { failures: vec![] }.into(),
        WarningKind::FewRounds { rounds: 1 }.into(),
        WarningKind::WarmupUnsettled { answered: 1, connections: 2 }.into(),
        WarningKind::WindowFewAnswers { answers: 1, connections: 2 }.into(),
        WarningKind::Unanswered { unanswered: 1, waited_ms: 1_000 }.into(),
        WarningKind::IdleNotHeld { asked: 2, refused: 1, dropped: 1 }.into(),
        WarningKind::ServerCrashed { detail: String::new() }.into(),
        WarningKind::StoppedEarly.into(),
        WarningKind::InvalidResponses { problems: vec![] }.into(),
        WarningKind::ShardOnly { index: 1, count: 2 }.into(),
        WarningKind::ShardLate { late_seconds: 1.0 }.into(),
        WarningKind::ShardsOutOfStep { spread_seconds: 1.0 }.into(),
        WarningKind::Saturated { achieved_fraction: 0.5 }.into(),
        WarningKind::ClientLimited { send_lag_p50_us: 1, send_lag_p99_us: 1, latency_p99_us: 1 }
            .into(),
    ];
    cell.shards = vec![ShardPart {
        shard: 1,
        connections: 1,
        window_started_unix_seconds: 0.0,
        late_seconds: 0.0,
        throughput_rps: 0.0,
        goodput_rps: 0.0,
        client_cpu_seconds: 0.0,
    }];
    cell
}

#[test]
fn every_field_a_results_file_can_hold_is_documented() {
    let results = RunResults {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo {
            id: String::new(),
            started_at: String::new(),
            finished_at: None,
            status: crate::RunStatus::Running,
            failure: Some(String::new()),
            command_line: vec![],
            wall_seconds: Some(0.0),
            resumed_at: vec![String::new()],
        },
        shards: vec![ShardInfo {
            index: 1,
            count: 2,
            start_at_unix_seconds: 0,
            hostname: None,
            cpu_model: None,
            cpu_count: 1,
            run_id: String::new(),
        }],
        environment: Environment::default(),
        settings: Settings {
            stacks: vec![],
            scenarios: vec![],
            measurement: Measurement {
                concurrency: vec![],
                warmup: std::time::Duration::ZERO,
                duration: std::time::Duration::ZERO,
                fixed_load_duration: Some(std::time::Duration::ZERO),
                rounds: 1,
                max_rounds: 0,
                budget: None,
                repeat: 1,
                request_timeout: std::time::Duration::from_millis(1),
                durable: false,
                schedule: crate::results::Schedule::Grouped,
                tail_question: None,
            },
            warmup_max_seconds: Some(1.0),
            window_max_seconds: Some(1.0),
            pool_max: 1,
            server_workers: 1,
            blocking_threads: 1,
            client_workers: 1,
            database: String::new(),
            parity: vec![],
            rates: vec![Rate::Share(0.7), Rate::PerSecond(5000.0)],
            arrivals: Some(Arrivals::Constant),
            cpu_placement: vec![TierCpus { tier: String::new(), cpus: vec![0] }],
            objectives: vec![crate::objective::ScopedObjective {
                scenario: Some(String::new()),
                objective: crate::objective::Objective { quantile: 0.99, bound_us: 1 },
            }],
        },
        ceilings: Ceilings { http: vec![cell()], db: vec![cell()] },
        stacks: vec![StackResults {
            name: String::new(),
            status: StackStatus::Measured,
            failure: None,
            ready_ms: None,
            address: None,
            variant_of: Some(String::new()),
            args: vec![String::new()],
            db_latency_us: Some(0),
            idle_connections: Some(1),
            launch: vec!["axum-any".into(), "--serializer".into(), "sonic-rs".into()],
            validation: vec![Validation { scenario: String::new(), passed: true, problem: None }],
            cells: vec![cell()],
            equal_load: vec![open_cell()],
        }],
        warnings: vec![WarningKind::StoppedEarly.into()],
        db_relay_calibration: vec![RelayCalibration {
            round_trip_us: 0,
            samples: 0,
            added_p50_us: 0.0,
            added_p99_us: 0.0,
        }],
    };
    let undocumented: Vec<String> =
        crate::undocumented_fields(&results, include_str!("../../RESULTS.md"))
            .into_iter()
            // Status codes and error kinds are map keys, documented as lists.
            .filter(|key| !key.chars().all(|c| c.is_ascii_digit()))
            .collect();
    assert!(undocumented.is_empty(), "fields missing from RESULTS.md: {undocumented:?}");
}
