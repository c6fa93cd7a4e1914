//! The suite end to end against real stack binaries on a throwaway database, with windows
//! short enough for a test. Needs the workspace's binaries in the same target directory
//! (`cargo build --workspace --bins`, which `scripts/test.sh` runs first).

mod equal_load;
mod foreign;
mod hosts;
mod integrity;
mod liar;
mod parties;
mod proxy;
mod staller;

use bookstore_record::results::StackStatus;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bookstore_client::scenario::Scenario;
use bookstore_record::outcome;
use bookstore_record::results::{Cell, Measurement, Rate, RunResults, decode_histogram};
use bookstore_registry::stacks;
use bookstore_runner::suite::SuiteOptions;

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
    for binary in ["axum-serde-sqlx", "hyper-sonic-sqlx", "responder"] {
        assert!(
            dir.join(binary).is_file(),
            "{binary} is not built in {}: run `cargo build --workspace --bins` first (scripts/test.sh does)",
            dir.display()
        );
    }
    dir
}

/// Runs the suite with `options`, noting every process it starts with its arguments (as
/// `ps` would show them) while it runs.
fn run_watching_processes(
    options: &SuiteOptions,
) -> (RunResults, std::collections::BTreeSet<String>) {
    run_watching(options, |_, cmdline| cmdline)
}

/// Runs the suite with `options`, noting what `look` says of every process it starts
/// (given its pid and command line) while it runs.
fn run_watching(
    options: &SuiteOptions,
    look: fn(u32, String) -> String,
) -> (RunResults, std::collections::BTreeSet<String>) {
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while !done.load(Ordering::Relaxed) {
                for pid in children() {
                    if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
                        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                        seen.insert(look(pid, cmdline));
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            seen
        })
    };
    let results = bookstore_runner::suite::run(options, Arc::new(AtomicBool::new(false))).unwrap();
    done.store(true, Ordering::Relaxed);
    (results, watcher.join().unwrap())
}

fn options(output: PathBuf) -> SuiteOptions {
    SuiteOptions {
        build: BUILD,
        stacks: vec![stacks::AXUM_SERDE_SQLX],
        variants: vec![],
        scenarios: Scenario::ALL.to_vec(),
        measurement: Measurement {
            concurrency: vec![2, 4],
            warmup: Duration::from_millis(50),
            duration: Duration::from_millis(200),
            fixed_load_duration: Some(Duration::from_millis(200)),
            rounds: 2,
            max_rounds: 0,
            budget: None,
            repeat: 1,
            request_timeout: Duration::from_secs(10),
            durable: false,
            schedule: bookstore_record::results::Schedule::Grouped,
            tail_question: None,
        },
        tuning: bookstore_registry::Tuning { pool_max: 4, workers: 2, blocking_threads: 4 },
        client_workers: 2,
        validate_every: 10,
        bin_dir: bin_dir(),
        workspace: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        output,
        database_url: None,
        db_provider: bookstore_fixture::Provider::from_env().unwrap(),
        running: None,
        shard: None,
        ceilings: true,
        db_ceiling_at_concurrency: false,
        rates: vec![],
        arrivals: bookstore_client::engine::Arrivals::Constant,
        objectives: vec![],
        placement: None,
        resume: None,
        command_line: vec!["test".into()],
    }
}

/// These tests run one at a time: each starts servers and a cluster, checks that none is
/// left when it ends, and would see the others' otherwise.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Processes this test process started that are still running.
fn children() -> Vec<u32> {
    let me = std::process::id();
    bookstore_client::procfs::process_tree(me)
        .into_iter()
        .filter(|pid| *pid != me && bookstore_fixture::process::process_alive(*pid))
        .collect()
}

fn wait_for_no_children() -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline && !children().is_empty() {
        std::thread::sleep(Duration::from_millis(50));
    }
    children()
}

#[test]
fn a_short_suite_measures_every_cell_and_writes_a_valid_results_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json");
    let results =
        bookstore_runner::suite::run(&options(output.clone()), Arc::new(AtomicBool::new(false)))
            .unwrap();

    assert_eq!(results.run.status, bookstore_record::RunStatus::Complete);
    // The file reads back under the strict schema and holds the same run (floats aside:
    // serde_json's default parser does not promise the last bit of every f64).
    let saved = RunResults::read(&output).unwrap();
    assert_eq!(
        (saved.run.clone(), saved.settings.clone()),
        (results.run.clone(), results.settings.clone())
    );
    assert_eq!(saved.stacks[0].cells.len(), results.stacks[0].cells.len());
    assert_eq!(results.environment.git_commit.as_deref(), BUILD.git_commit);
    assert!(results.environment.postgres_version.is_some());

    let stack = &results.stacks[0];
    assert_eq!(
        (stack.name.as_str(), stack.status.name()),
        ("axum-serde-sqlx", "measured"),
        "{:?}",
        stack.failure
    );
    assert!(
        stack.validation.iter().all(|v| v.passed) && stack.validation.len() == 12,
        "{:?}",
        stack.validation
    );
    assert_eq!(stack.cells.len(), 48, "12 scenarios × 2 concurrencies × 2 rounds");
    for &scenario in Scenario::ALL {
        for concurrency in [2, 4] {
            for round in [0, 1] {
                let cell = stack
                    .cells
                    .iter()
                    .find(|c| {
                        c.scenario == scenario.name()
                            && c.concurrency == concurrency
                            && c.round == round
                    })
                    .unwrap_or_else(|| panic!("no cell {scenario} c={concurrency} round {round}"));
                let label = format!("{scenario} c={concurrency} round {round}");
                assert_eq!(cell.counts.errors, 0, "{label}: {:?} {:?}", cell.counts, cell.problems);
                assert!(cell.counts.ok + cell.counts.rejected > 0, "{label}: nothing measured");
                assert!(
                    cell.latency_ok_us.is_some() || scenario == Scenario::CheckoutSoldOut,
                    "{label}"
                );
                assert_eq!(
                    cell.timeline.len(),
                    1,
                    "{label}: one timeline second for a 0.2 s window"
                );
                assert!(cell.warnings.is_empty(), "{label}: {:?}", cell.warnings);
                assert!(
                    cell.cpu_seconds.server.is_some() && cell.server_peak_rss_bytes.is_some(),
                    "{label}"
                );
                let sql = cell.sql.as_ref().unwrap_or_else(|| panic!("{label}: no SQL statistics"));
                let expected_statements = match scenario {
                    Scenario::Health | Scenario::SmallJson => Some(0.0),
                    Scenario::CheckoutCreate
                    | Scenario::CheckoutHotspot
                    | Scenario::CheckoutDistributed => Some(5.0),
                    Scenario::CheckoutSoldOut => None,
                    _ => Some(1.0),
                };
                match expected_statements {
                    Some(expected) => assert_eq!(
                        sql.statements_per_request, expected,
                        "{label}: {:?}",
                        sql.top_statements
                    ),
                    // 10 sales of 5 statements, then refusals of 3 (BEGIN, SELECT … FOR UPDATE, ROLLBACK).
                    None => {
                        assert!(
                            (3.0..5.0).contains(&sql.statements_per_request),
                            "{label}: {sql:?}"
                        )
                    }
                }
                // PostgreSQL's side: a transaction per checkout (a sale commits, a refusal
                // rolls back), none for a read; the backends sampled during the window.
                let (commits, rollbacks) = match scenario {
                    Scenario::CheckoutSoldOut => (10, sql.requests - 10),
                    _ if scenario.writes() => (sql.requests, 0),
                    _ => (0, 0),
                };
                assert_eq!((sql.commits, sql.rollbacks), (commits, rollbacks), "{label}: {sql:?}");
                assert_eq!(sql.deadlocks, Some(0), "{label}");
                if scenario.uses_database() {
                    assert!(sql.shared_blocks_hit > 0, "{label}: {sql:?}");
                }
                let waits =
                    cell.backend_waits.as_ref().unwrap_or_else(|| panic!("{label}: no waits"));
                assert!(waits.samples >= 2, "{label}: {waits:?}");
                let total: f64 = waits.shares.values().sum();
                assert!((total - 1.0).abs() < 1e-9, "{label}: {waits:?}");
                assert!(waits.mean_backends >= 1.0, "the stack's pool: {waits:?}");
                if scenario.writes() {
                    let audit = cell.audit.as_ref().unwrap_or_else(|| panic!("{label}: no audit"));
                    assert!(audit.passed, "{label}: {:?}", audit.failures);
                    assert_eq!(audit.checkout_rows, audit.acknowledged_checkouts);
                } else {
                    assert!(cell.audit.is_none(), "{label}");
                }
            }
        }
    }
    for sold_out in stack.cells.iter().filter(|c| c.scenario == "checkoutSoldOut") {
        let audit = sold_out.audit.as_ref().unwrap();
        assert_eq!(audit.checkout_rows, 10, "exactly 10 sales per restore, every round");
        assert_eq!(audit.unjustified_refusals, 0, "the refusals were for a sold-out book");
    }

    assert_eq!(
        results.ceilings.http.len(),
        8,
        "the responder in every round of health and smallJson"
    );
    for cell in &results.ceilings.http {
        assert_eq!(cell.counts.errors, 0, "{} {:?}", cell.scenario, cell.problems);
    }
    // Measured in rounds per scenario, in which the stack at both concurrencies and the
    // scenario's ceilings take turns: every window of a round before the next round.
    let scenarios = &results.settings.scenarios;
    let mut timeline: Vec<(f64, usize, u32)> = stack
        .cells
        .iter()
        .chain(&results.ceilings.db)
        .chain(&results.ceilings.http)
        .map(|cell| {
            let scenario = scenarios.iter().position(|s| *s == cell.scenario).unwrap();
            let started = cell.started_seconds.expect("every window says when it started");
            (started, scenario, cell.round)
        })
        .collect();
    timeline.sort_by(|a, b| a.0.total_cmp(&b.0));
    let order: Vec<(usize, u32)> =
        timeline.iter().map(|(_, scenario, round)| (*scenario, *round)).collect();
    assert!(order.is_sorted(), "windows out of their scenarios and rounds: {order:?}");
    // The windows of a round take turns, the order rotating: the stack's window at c = 2
    // has another place in each round.
    let places: Vec<(usize, usize)> = timeline
        .chunk_by(|a, b| (a.1, a.2) == (b.1, b.2))
        .map(|round| {
            let at_2 = |w: &(f64, usize, u32)| {
                stack.cells.iter().any(|c| c.started_seconds == Some(w.0) && c.concurrency == 2)
            };
            let place = round.iter().position(at_2).expect("the stack measured in every round");
            (round[0].1, place)
        })
        .collect();
    assert!(
        places.windows(2).filter(|w| w[0].0 == w[1].0).all(|w| w[0].1 != w[1].1),
        "the order does not rotate: {places:?}"
    );
    // The database ceiling at the pool's size: measured once per round, written beside
    // each concurrency.
    assert_eq!(
        results.ceilings.db.len(),
        80,
        "10 database scenarios × 2 rounds × 2 drivers, each beside 2 concurrencies"
    );
    for driver in ["sqlx", "diesel"] {
        let cells: Vec<_> =
            results.ceilings.db.iter().filter(|c| c.driver.as_deref() == Some(driver)).collect();
        assert_eq!(cells.len(), 40, "{driver}: beside both concurrencies in every round");
        let mut measured: Vec<(String, u32, u64)> = cells
            .iter()
            .map(|c| (c.scenario.clone(), c.round, c.started_seconds.unwrap().to_bits()))
            .collect();
        measured.sort();
        measured.dedup();
        assert_eq!(measured.len(), 20, "{driver}: one measurement per scenario and round");
        for (scenario, round, _) in &measured {
            let beside: Vec<u32> = cells
                .iter()
                .filter(|c| c.scenario == *scenario && c.round == *round)
                .filter_map(|c| c.beside_concurrency)
                .collect();
            assert_eq!(beside, [2, 4], "{driver} {scenario} round {round}");
        }
    }
    assert!(
        results
            .ceilings
            .db
            .iter()
            .all(|c| c.concurrency == results.settings.pool_max && c.beside_concurrency.is_some()),
        "one client per pooled connection, beside the stacks' concurrency"
    );
    assert!(
        results
            .ceilings
            .db
            .iter()
            .all(|c| c.counts.errors == 0 && c.audit.as_ref().is_none_or(|a| a.passed))
    );

    let page = bookstore_report::render(std::slice::from_ref(&results)).unwrap();
    for text in ["axum-serde-sqlx", "checkoutSoldOut", "DB ceiling", "HTTP ceiling"] {
        assert!(page.contains(text), "the summary lacks {text}");
    }
    assert_eq!(outcome::problems(&results), [], "a clean run");
    assert_eq!(outcome::exit_code(&outcome::problems(&results)), 0);
    assert!(wait_for_no_children().is_empty(), "processes left behind: {:?}", children());
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_owned()
}

#[test]
fn a_server_that_dies_mid_run_is_marked_crashed_and_the_next_stack_is_measured() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.stacks = vec![stacks::AXUM_SERDE_SQLX, stacks::HYPER_SONIC_SQLX];
    options.measurement.concurrency = vec![2];
    options.ceilings = false;
    let killer = std::thread::spawn(|| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            // `comm` is cut to 15 characters, which "axum-serde-sqlx" is exactly.
            let axum = || children().into_iter().find(|pid| comm(*pid) == "axum-serde-sqlx");
            if axum().is_some() {
                // A few cells in, kill it during one of its turns (it runs only then).
                std::thread::sleep(Duration::from_secs(2));
                while Instant::now() < deadline {
                    if let Some(pid) = axum() {
                        std::thread::sleep(Duration::from_millis(100)); // into a cell
                        let killed = nix::sys::signal::kill(
                            nix::unistd::Pid::from_raw(pid as i32),
                            nix::sys::signal::Signal::SIGKILL,
                        );
                        if killed.is_ok() {
                            return true;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    });
    let results = bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    assert!(killer.join().unwrap(), "the server was never seen");

    assert_eq!(results.run.status, bookstore_record::RunStatus::Complete);
    let crashed = &results.stacks[0];
    assert_eq!(crashed.status, StackStatus::Crashed);
    assert!(crashed.failure.as_deref().unwrap_or("").contains("exited"), "{:?}", crashed.failure);
    assert!(!crashed.cells.is_empty() && crashed.cells.len() < 24, "{} cells", crashed.cells.len());
    let next = &results.stacks[1];
    assert_eq!((next.status.name(), next.cells.len()), ("measured", 24), "{:?}", next.failure);
    let problems = outcome::problems(&results);
    assert!(problems.iter().any(|p| matches!(p, outcome::Problem::Crashed { .. })), "{problems:?}");
    assert_eq!(outcome::exit_code(&problems), outcome::EXIT_CRASHED);
    assert!(wait_for_no_children().is_empty(), "processes left behind: {:?}", children());
}

#[test]
fn stopping_early_keeps_what_was_measured_and_says_so() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json");
    let mut options = options(output.clone());
    options.measurement.concurrency = vec![2];
    options.ceilings = false;
    let stop = Arc::new(AtomicBool::new(false));
    let stopper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline
                && !children().iter().any(|pid| comm(*pid) == "axum-serde-sqlx")
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_secs(2));
            stop.store(true, Ordering::Relaxed);
        })
    };
    let results = bookstore_runner::suite::run(&options, stop).unwrap();
    stopper.join().unwrap();
    assert_eq!(results.run.status, bookstore_record::RunStatus::Interrupted);
    let saved = RunResults::read(&output).unwrap();
    assert_eq!(saved.run.status, bookstore_record::RunStatus::Interrupted);
    let cells = saved.stacks[0].cells.len();
    assert!(cells > 0 && cells < 24, "{cells} windows kept");
    assert_eq!(outcome::exit_code(&outcome::problems(&saved)), outcome::EXIT_INTERRUPTED);
    assert!(wait_for_no_children().is_empty(), "processes left behind: {:?}", children());
}

#[test]
fn a_database_password_appears_in_no_argument_result_report_or_log() {
    const PASSWORD: &str = "pw-e2c1f07a";
    let _serial = serial();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // An "existing" server whose URL carries a password (trust authentication ignores it).
    let cluster = runtime
        .block_on(bookstore_fixture::PgCluster::start(
            &bookstore_fixture::ClusterOptions::for_tests(),
        ))
        .unwrap();
    let url = cluster.url("postgres").replacen(
        "postgres://postgres@",
        &format!("postgres://postgres:{PASSWORD}@"),
        1,
    );
    assert!(url.contains(PASSWORD), "{url}");

    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json");
    let mut options = options(output.clone());
    options.scenarios = vec![Scenario::BookById, Scenario::CheckoutCreate];
    options.measurement.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.command_line = vec!["loadgen".into(), "suite".into(), format!("--database-url={url}")];

    // Every process the suite starts, with its arguments, as seen in `ps`.
    let (results, command_lines) = run_watching_processes(&options);
    drop(cluster);

    assert_eq!(results.settings.database, "existing");
    assert_eq!(results.stacks[0].status, StackStatus::Measured, "{:?}", results.stacks[0].failure);
    assert!(command_lines.iter().any(|c| c.contains("axum-serde-sqlx")), "{command_lines:?}");
    for command_line in &command_lines {
        assert!(!command_line.contains(PASSWORD), "in the arguments of {command_line}");
    }
    assert_eq!(
        results.run.command_line[2],
        url.replace(PASSWORD, "***").replace("postgres://", "--database-url=postgres://")
    );
    let html = bookstore_report::render(std::slice::from_ref(&results)).unwrap();
    assert!(!html.contains(PASSWORD), "in the HTML report");
    let mut files = vec![output.clone()];
    for entry in std::fs::read_dir(output.with_extension("logs")).unwrap() {
        files.push(entry.unwrap().path());
    }
    assert!(files.len() >= 2, "results and the stack's log: {files:?}");
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(PASSWORD), "in {}", file.display());
    }
}

/// `GET path` on a fresh connection; the status code, or `None` if nothing answered.
fn status_of(addr: std::net::SocketAddr, request: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// A throwaway server of its own with a seeded database `shop`, and that database's URL.
fn seeded_server() -> (bookstore_fixture::DbServer, String) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let server = runtime
        .block_on(bookstore_fixture::DbServer::provide(
            bookstore_fixture::Provider::from_env().unwrap(),
            &bookstore_fixture::ClusterOptions::for_tests(),
        ))
        .unwrap();
    let url = runtime.block_on(server.create_seeded_database("shop")).unwrap();
    (server, url)
}

/// axum-serde-sqlx started as a user would by hand (or in a container, or on another host),
/// on database `url`, answering; the process and its address.
fn start_by_hand(url: &str) -> (std::process::Child, std::net::SocketAddr) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let stack = std::process::Command::new(bin_dir().join("axum-serde-sqlx"))
        .args(["--bind", &addr.to_string(), "--pool-max", "4"])
        .env("DATABASE_URL", url)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while status_of(addr, "GET /health/db HTTP/1.1\r\nHost: x\r\n\r\n") != Some(200) {
        assert!(Instant::now() < deadline, "the stack did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    (stack, addr)
}

/// The latencies of `cells`' successes, merged.
fn merged_latency(cells: &[Cell]) -> hdrhistogram::Histogram<u64> {
    let mut merged = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for cell in cells {
        merged.add(decode_histogram(&cell.histogram_ok).unwrap()).unwrap();
    }
    merged
}
