//! `loadgen faults` end to end against the real stack binaries, on short windows: every
//! preset, and diesel-async (the access no preset has, composed on axum), survives its backends terminated and PostgreSQL restarted under load with the
//! audit exact, and a stack that loses one acknowledged write is caught. Needs the
//! workspace's binaries in the same target directory (`cargo build --workspace --bins`,
//! which `scripts/test.sh` runs first).

#[path = "../suite/proxy.rs"]
mod proxy;

use bookstore_record::results::StackStatus;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bookstore_record::faults::{FaultLoad, FaultsResults};
use bookstore_runner::faults::{Fault, FaultsOptions};
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

/// What the measuring binary says it was built from: the runner records what it is given
/// (loadgen's own build script finds it, `loadgen/tests/cli` checks that).
const BUILD: bookstore_record::environment::Build = bookstore_record::environment::Build {
    git_commit: Some("0123456789abcdef0123456789abcdef01234567"),
    git_dirty: Some(false),
    rustc: Some("rustc 1.95.0"),
};

/// `target/debug`, where cargo put this test and the workspace's binaries.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_owned();
    for stack in stacks() {
        let binary = stack.binary;
        assert!(
            dir.join(binary).is_file(),
            "{binary} is not built in {}: run `cargo build --workspace --bins` first (scripts/test.sh does)",
            dir.display()
        );
    }
    dir
}

/// The stacks under faults: the presets, and diesel-async composed on axum.
fn stacks() -> Vec<bookstore_registry::stacks::StackInfo> {
    let diesel_async = bookstore_registry::stacks::find("axum+serde_json+diesel-async").unwrap();
    bookstore_registry::stacks::ALL.iter().copied().chain([diesel_async]).collect()
}

/// PostgreSQL stays down longer than the stacks' 2 s acquire timeout, so that requests
/// waiting for a connection are answered 503 before it is back.
const OUTAGE: Duration = Duration::from_millis(2500);
/// A loose bound on the time to serve again, for any machine (the 1 s target is measured by
/// `loadgen faults` on a release build and reported, not asserted).
const RECOVERY_BOUND_MS: f64 = 5000.0;

fn options(output: PathBuf, faults: Vec<Fault>) -> FaultsOptions {
    FaultsOptions {
        build: BUILD,
        stacks: stacks(),
        faults,
        load: FaultLoad {
            connections: 128,
            before: Duration::from_millis(500),
            outage: OUTAGE,
            after: Duration::from_millis(1000),
            timeout: Duration::from_secs(10),
            soak: None,
        },
        client_workers: 2,
        tuning: bookstore_registry::Tuning { pool_max: 8, workers: 2, blocking_threads: 8 },
        bin_dir: bin_dir(),
        workspace: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        output,
        command_line: vec!["test".into()],
        front: None,
        resume: None,
    }
}

/// These tests run one at a time: each starts clusters and servers under load.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn every_stack_survives_its_backends_killed_and_postgres_restarted_under_load() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("faults.json");
    let options = options(output.clone(), vec![Fault::TerminateBackends, Fault::PostgresRestart]);
    let results =
        bookstore_runner::faults::run(&options, Arc::new(AtomicBool::new(false))).unwrap();

    assert_eq!(results.run.status, bookstore_record::RunStatus::Complete);
    // The file holds the run (floats aside: serde_json's default parser does not promise
    // the last bit of every f64).
    let saved = FaultsResults::read(&output).unwrap();
    assert_eq!((&saved.run, &saved.settings), (&results.run, &results.settings));
    let outline = |r: &FaultsResults| -> Vec<(String, String, bool, u64)> {
        r.stacks
            .iter()
            .flat_map(|s| {
                s.faults.iter().map(|f| (s.stack.clone(), f.fault.clone(), f.survived, f.requests))
            })
            .collect()
    };
    assert_eq!(outline(&saved), outline(&results));
    assert_eq!(results.stacks.len(), stacks().len());
    for stack in &results.stacks {
        assert_eq!(stack.status, StackStatus::Measured, "{}: {:?}", stack.stack, stack.failure);
        assert_eq!(stack.faults.len(), 2);
        for fault in &stack.faults {
            let at = format!("{} {}", stack.stack, fault.fault);
            // No 5xx but 503, no timeout, no refused connection, no wrong answer.
            assert_eq!(fault.failures, 0, "{at}: {:?}", fault.failure_examples);
            assert!(fault.audit.passed, "{at}: {:?}", fault.audit.failures);
            assert_eq!(fault.audit.lost_acknowledged, 0, "{at}");
            assert!(fault.audit.acknowledged_checkouts > 0, "{at}: checkouts went through");
            assert!(
                fault.audit.checkout_rows
                    <= fault.audit.acknowledged_checkouts + fault.audit.in_doubt_checkouts,
                "{at}"
            );
            let recovery = fault.recovery_ms.unwrap_or_else(|| panic!("{at}: never served again"));
            assert!(recovery <= RECOVERY_BOUND_MS, "{at}: serving again after {recovery} ms");
            assert!(fault.survived, "{at}");
            assert!(fault.successes > 0, "{at}");
        }
        let restart = &stack.faults[1];
        assert!(restart.unavailable_503 > 0, "{}: no 503 while PostgreSQL was down", stack.stack);
        let window = restart.error_window.expect("errors while PostgreSQL was down");
        assert!(window.first_s >= 0.0, "{}: errors before the fault: {window:?}", stack.stack);
        assert!(restart.detail.contains("2500 ms"), "{}", restart.detail);
        assert!(
            stack.faults[0].detail.ends_with("backends terminated")
                && !stack.faults[0].detail.starts_with("0 "),
            "{}",
            stack.faults[0].detail
        );
    }

    // The reliability table has a row per stack with both faults survived.
    let table = bookstore_report::reliability::markdown(std::slice::from_ref(&results));
    for stack in stacks() {
        let row = table.lines().find(|l| l.starts_with(&format!("| {} |", stack.identity.service)));
        let row = row.unwrap_or_else(|| panic!("no row for {}: {table}", stack.identity.service));
        assert!(row.contains("| 2 of 2 |"), "{row}");
        assert!(row.ends_with("| 0 | not run |"), "no write lost, no soak: {row}");
    }
    let page = bookstore_report::reliability::render(std::slice::from_ref(&results)).unwrap();
    assert!(page.contains("<h2>Each fault</h2>") && page.contains("actix-simd-sqlx"));
}

/// A proxy that passes everything on but the 20th checkout, which it acknowledges with a
/// made-up id and never writes: one acknowledged write lost.
struct LosesOneWrite {
    checkouts: AtomicU64,
}

impl proxy::Answer for LosesOneWrite {
    async fn answer(
        &self,
        request: Request<Bytes>,
        upstream: &proxy::Upstream,
    ) -> Response<Full<Bytes>> {
        let checkout =
            request.method() == hyper::Method::POST && request.uri().path() == "/api/checkouts";
        if !checkout || self.checkouts.fetch_add(1, Ordering::Relaxed) != 20 {
            return upstream.forward(&request).await;
        }
        let order: serde_json::Value = serde_json::from_slice(request.body()).unwrap();
        proxy::json(
            201,
            format!(
                r#"{{"id":"00000000-0000-4000-8000-000000000020","bookId":{},"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1,"checkedOutAt":"2026-12-01T00:00:00.000000Z"}}"#,
                order["bookId"]
            ),
        )
    }
}

#[test]
fn a_stack_that_loses_one_acknowledged_write_fails_the_audit() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("faults.json"), vec![Fault::TerminateBackends]);
    options.stacks = vec![bookstore_registry::stacks::AXUM_SERDE_SQLX];
    options.load.connections = 16;
    options.front = Some(Arc::new(|server: SocketAddr| {
        proxy::start(server, LosesOneWrite { checkouts: AtomicU64::new(0) })
    }));
    let results =
        bookstore_runner::faults::run(&options, Arc::new(AtomicBool::new(false))).unwrap();

    let fault = &results.stacks[0].faults[0];
    assert_eq!(fault.failures, 0, "every answer looked right: {:?}", fault.failure_examples);
    assert_eq!(fault.audit.lost_acknowledged, 1);
    assert!(!fault.audit.passed && !fault.survived);
    assert!(
        fault.audit.failures.iter().any(|f| f.starts_with("1 acknowledged checkout(s) not stored")),
        "{:?}",
        fault.audit.failures
    );
    let table = bookstore_report::reliability::markdown(std::slice::from_ref(&results));
    assert!(table.contains("| 0 of 1 |") && table.contains("audit failed"), "{table}");
    assert!(table.lines().last().unwrap().ends_with("| 1 | not run |"), "one lost: {table}");
}

#[test]
fn a_run_cut_after_its_first_stack_resumes_with_that_stack_from_the_journal_and_the_rest_measured()
{
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("faults.json.zst");
    let mut options = options(output.clone(), vec![Fault::TerminateBackends]);
    options.stacks = vec![
        bookstore_registry::stacks::AXUM_SERDE_SQLX,
        bookstore_registry::stacks::HYPER_SONIC_SQLX,
    ];
    options.load.connections = 16;
    let never = || Arc::new(AtomicBool::new(false));
    let whole = bookstore_runner::faults::run(&options, never()).unwrap();
    // The journal as a kill during the second stack leaves it: up to the first stack's end.
    let journal = bookstore_record::journal::beside(&output);
    let text = std::fs::read_to_string(&journal).unwrap();
    let first_end = text.find("round_end").unwrap();
    let cut = first_end + text[first_end..].find('\n').unwrap() + 1;
    std::fs::write(&journal, &text[..cut]).unwrap();

    let mut other = options.clone();
    other.resume = Some(journal.clone());
    other.load.connections = 32;
    let refused = bookstore_runner::faults::run(&other, never()).unwrap_err();
    let refused = refused.downcast_ref::<bookstore_runner::suite::ResumeRefused>().unwrap();
    assert!(refused.0.contains("connections (16 in the journal, 32 now)"), "{refused}");

    options.resume = Some(journal);
    let resumed = bookstore_runner::faults::run(&options, never()).unwrap();
    assert_eq!(resumed.run.id, whole.run.id);
    assert_eq!(resumed.run.resumed_at.len(), 1);
    // The first stack given back as measured (floats aside, as above).
    let outline = |s: &bookstore_record::faults::StackFaults| {
        let f = &s.faults[0];
        (s.stack.clone(), f.fault.clone(), f.requests, f.successes, f.audit.acknowledged_checkouts)
    };
    assert_eq!(outline(&resumed.stacks[0]), outline(&whole.stacks[0]));
    let names: Vec<&str> = resumed.stacks.iter().map(|s| s.stack.as_str()).collect();
    assert_eq!(names, ["axum-serde-sqlx", "hyper-sonic-sqlx"], "each stack once, in order");
    assert_eq!(resumed.stacks[1].faults.len(), 1);
    assert!(resumed.stacks[1].faults[0].survived);
    let saved = FaultsResults::read(&output).unwrap();
    assert_eq!(saved.run.resumed_at, resumed.run.resumed_at);
}
