//! The suite end to end against real stack binaries on a throwaway database, with windows
//! short enough for a test. Needs the workspace's binaries in the same target directory
//! (`cargo build --workspace --bins`, which `scripts/test.sh` runs first).

mod liar;
mod proxy;
mod staller;

use bookstore_record::results::StackStatus;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bookstore_app::stacks;
use bookstore_client::scenario::Scenario;
use bookstore_record::outcome;
use bookstore_record::results::{Cell, Rate, RunResults, decode_histogram};
use bookstore_suite::SuiteOptions;

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
    let results = bookstore_suite::run(options, Arc::new(AtomicBool::new(false))).unwrap();
    done.store(true, Ordering::Relaxed);
    (results, watcher.join().unwrap())
}

fn options(output: PathBuf) -> SuiteOptions {
    SuiteOptions {
        stacks: vec![stacks::AXUM_SERDE_SQLX],
        variants: vec![],
        scenarios: Scenario::ALL.to_vec(),
        concurrency: vec![2, 4],
        warmup: Duration::from_millis(50),
        duration: Duration::from_millis(200),
        rounds: 2,
        repeat: 1,
        pool_max: 4,
        server_workers: 2,
        blocking_threads: 4,
        client_workers: 2,
        request_timeout: Duration::from_secs(10),
        validate_every: 10,
        bin_dir: bin_dir(),
        workspace: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        output,
        database_url: None,
        db_provider: bookstore_fixture::Provider::from_env().unwrap(),
        running: None,
        shard: None,
        durable: false,
        ceilings: true,
        db_ceiling_at_concurrency: false,
        rates: vec![],
        arrivals: bookstore_client::engine::Arrivals::Constant,
        placement: None,
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
        bookstore_suite::run(&options(output.clone()), Arc::new(AtomicBool::new(false))).unwrap();

    assert_eq!(results.run.status, "complete");
    // The file reads back under the strict schema and holds the same run (floats aside:
    // serde_json's default parser does not promise the last bit of every f64).
    let saved = RunResults::read(&output).unwrap();
    assert_eq!(
        (saved.run.clone(), saved.settings.clone()),
        (results.run.clone(), results.settings.clone())
    );
    assert_eq!(saved.stacks[0].cells.len(), results.stacks[0].cells.len());
    assert!(
        results.environment.git_commit.is_some() && results.environment.postgres_version.is_some()
    );

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

    let page = bookstore_pages::render(std::slice::from_ref(&results)).unwrap();
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
    options.concurrency = vec![2];
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
    let results = bookstore_suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    assert!(killer.join().unwrap(), "the server was never seen");

    assert_eq!(results.run.status, "complete");
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
    options.concurrency = vec![2];
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
    let results = bookstore_suite::run(&options, stop).unwrap();
    stopper.join().unwrap();
    assert_eq!(results.run.status, "interrupted");
    let saved = RunResults::read(&output).unwrap();
    assert_eq!(saved.run.status, "interrupted");
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
    options.concurrency = vec![2];
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
    let html = bookstore_pages::render(std::slice::from_ref(&results)).unwrap();
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

#[test]
fn stacks_someone_else_started_are_measured_in_place_on_their_restored_database() {
    let _serial = serial();
    let (server, url) = seeded_server();
    let (mut stack, addr) = start_by_hand(&url);
    // Someone used it before: the seed is no longer intact (book 20000's stock is 1 lower).
    let body = r#"{"bookId":20000,"customerName":"Earlier User","customerEmail":"e@example.com","quantity":1}"#;
    let checkout = format!(
        "POST /api/checkouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(status_of(addr, &checkout), Some(201));

    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json");
    let mut options = options(output.clone());
    options.scenarios = vec![Scenario::BookById, Scenario::CheckoutCreate];
    options.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.running = Some(vec![addr]);
    // No stack binary is needed (only the responder, for the HTTP ceiling).
    let results = bookstore_suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();

    // The suite left the stack running: it did not start it, so it does not stop it.
    assert!(stack.try_wait().unwrap().is_none(), "the stack was stopped");
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);

    let measured = &results.stacks[0];
    assert_eq!(measured.status, StackStatus::Measured, "{:?}", measured.failure);
    assert!(measured.validation.iter().all(|v| v.passed), "{:?}", measured.validation);
    assert_eq!(measured.address.as_deref(), Some(addr.to_string().as_str()));
    assert_eq!(measured.ready_ms, None, "it was not started here");
    assert_eq!(measured.cells.len(), 4, "2 scenarios × 2 rounds");
    for cell in &measured.cells {
        assert!(cell.counts.ok > 0, "{}", cell.scenario);
        // Processes the suite cannot see are not measured, rather than measured as zero.
        assert_eq!(cell.cpu_seconds.server, None);
        assert_eq!(cell.cpu_seconds.postgres, None);
        assert_eq!(cell.server_peak_rss_bytes, None);
        assert!(cell.cpu_seconds.client > 0.0);
    }
    // Checkout rows = the checkouts the client saw acknowledged: the earlier user's row was
    // restored away through --database-url before the cell, and the audit read that database.
    for cell in measured.cells.iter().filter(|c| c.scenario == "checkoutCreate") {
        let audit = cell.audit.as_ref().expect("checkoutCreate is audited");
        assert!(audit.passed, "{:?}", audit.failures);
    }
    assert!(results.ceilings.db.iter().any(|c| c.scenario == "checkoutCreate"));
    let written: RunResults =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(written.stacks[0].address, measured.address);
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn two_shards_load_a_stack_together_and_merge_into_their_sum() {
    let _serial = serial();
    let (server, url) = seeded_server();
    let (mut stack, addr) = start_by_hand(&url);

    // Two clients (two hosts in real use; two threads here), one start time.
    let dir = tempfile::tempdir().unwrap();
    let start_at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 4;
    let shard = |index: u32| {
        let mut options = options(dir.path().join(format!("shard{index}.json")));
        options.scenarios = vec![Scenario::BookById, Scenario::CheckoutCreate];
        options.concurrency = vec![5];
        options.rounds = 1;
        options.warmup = Duration::from_millis(300);
        options.duration = Duration::from_secs(1);
        options.database_url = Some(url.clone());
        options.running = Some(vec![addr]);
        options.ceilings = false;
        // A slot holds a whole request timeout of drain: short here.
        options.request_timeout = Duration::from_secs(2);
        options.shard =
            Some(bookstore_suite::ShardPlan { index, count: 2, start_at_unix_seconds: start_at });
        std::thread::spawn(move || bookstore_suite::run(&options, Arc::new(AtomicBool::new(false))))
    };
    let (first, second) = (shard(1), shard(2));
    let first = first.join().unwrap().unwrap();
    let second = second.join().unwrap().unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);

    // Each shard held its share of the five connections, in the same slots.
    let (a, b) = (&first.stacks[0].cells, &second.stacks[0].cells);
    assert_eq!((a.len(), b.len()), (2, 2));
    assert_eq!((a[0].shards[0].connections, b[0].shards[0].connections), (3, 2));
    for (x, y) in a.iter().zip(b) {
        let apart = (x.shards[0].window_started_unix_seconds
            - y.shards[0].window_started_unix_seconds)
            .abs();
        assert!(apart < 0.2, "{}: windows {apart:.3} s apart", x.scenario);
        assert!(x.counts.ok > 0 && y.counts.ok > 0, "{}", x.scenario);
    }
    // Only shard 1 read the database; its audit left rows = acknowledged to the merge, and
    // the rows are more than it acknowledged itself: the other shard wrote too.
    let audit = a[1].audit.as_ref().expect("shard 1 audits");
    assert!(audit.passed, "{:?}", audit.failures);
    assert!(audit.checkout_rows > audit.acknowledged_checkouts);
    assert!(b[1].audit.is_none() && b[1].sql.is_none());

    let merged =
        bookstore_record::merge::merge(vec![second.clone(), first.clone()], "merged").unwrap();
    let cells = &merged.stacks[0].cells;
    for (index, m) in cells.iter().enumerate() {
        let (x, y) = (&a[index], &b[index]);
        assert_eq!(m.counts.ok, x.counts.ok + y.counts.ok);
        assert_eq!(m.counts.total(), x.counts.total() + y.counts.total());
        assert_eq!(m.drained_counts.total(), x.drained_counts.total() + y.drained_counts.total());
        assert_eq!(m.latency_ok_us.unwrap().count, x.counts.ok + y.counts.ok);
        assert_eq!(m.throughput_rps, x.throughput_rps + y.throughput_rps);
    }
    let audit = cells[1].audit.as_ref().unwrap();
    assert!(audit.passed, "{:?}", audit.failures);
    assert_eq!(
        audit.acknowledged_checkouts, audit.checkout_rows,
        "every row acknowledged to one of the shards"
    );
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn across_network_namespaces_two_client_hosts_merge_into_their_sum_with_the_audit_passing() {
    // scripts/multihost.sh: PostgreSQL, the stack and two shards each on a host of its own
    // (a network namespace with its own address on a bridge), as README's recipe runs them.
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: the multi-host run needs root (network namespaces)");
        return;
    }
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/multihost.sh");
    let output = std::process::Command::new(&script)
        .arg("--bin-dir")
        .arg(bin_dir())
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("run scripts/multihost.sh");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "multihost.sh failed:\n{said}");
    assert!(said.contains("client1=10.88.0.11"), "{said}");

    let read = |name: &str| RunResults::read(&dir.path().join(name)).unwrap();
    let (first, second, merged) = (read("shard1.json"), read("shard2.json"), read("merged.json"));
    let (a, b, m) = (&first.stacks[0].cells, &second.stacks[0].cells, &merged.stacks[0].cells);
    assert_eq!((a.len(), b.len(), m.len()), (2, 2, 2), "bookById and checkoutCreate");
    for ((x, y), merged) in a.iter().zip(b).zip(m) {
        // Each host held half of the 16 connections, in the same slot.
        assert_eq!((x.shards[0].connections, y.shards[0].connections), (8, 8));
        let apart = (x.shards[0].window_started_unix_seconds
            - y.shards[0].window_started_unix_seconds)
            .abs();
        assert!(apart < 0.2, "{}: windows {apart:.3} s apart", x.scenario);
        assert!(x.counts.ok > 0 && y.counts.ok > 0, "{}: both hosts were answered", x.scenario);
        assert_eq!(merged.counts.ok, x.counts.ok + y.counts.ok, "{}", x.scenario);
        assert_eq!(merged.counts.total(), x.counts.total() + y.counts.total());
        assert_eq!(merged.latency_ok_us.unwrap().count, x.counts.ok + y.counts.ok);
        assert_eq!(merged.throughput_rps, x.throughput_rps + y.throughput_rps);
        assert_eq!(merged.shards.len(), 2);
    }
    let audit = m[1].audit.as_ref().expect("the merged checkout cell is audited");
    assert!(audit.passed, "{:?}", audit.failures);
    assert!(audit.checkout_rows > 0);
    assert_eq!(
        audit.acknowledged_checkouts, audit.checkout_rows,
        "every row acknowledged to a host"
    );
    // Nothing left behind: the script's namespaces are gone.
    let namespaces = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
        })
        .unwrap_or_else(|_| Vec::new());
    assert!(
        !namespaces.iter().any(|n| n.ends_with("-net") && n.starts_with("bb")),
        "{namespaces:?}"
    );
}

/// The suite against a stack that lies about its checkouts (a proxy in front of a real
/// one), on a database of its own: the results and what the suite's exit status says.
fn suite_against_a_liar(lie: liar::Lie) -> RunResults {
    let (server, url) = seeded_server();
    let (mut stack, upstream) = start_by_hand(&url);
    let liar = proxy::start(upstream, liar::Liar::new(lie));
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::CheckoutCreate, Scenario::CheckoutHotspot];
    options.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.running = Some(vec![liar]);
    options.ceilings = false;
    let results = bookstore_suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);
    results
}

/// The lie passed the contract check, was measured, and every cell it touched is
/// disqualified for the audit with the exit status saying so.
fn assert_caught(results: &RunResults, failure: &str) {
    let stack = &results.stacks[0];
    assert_eq!(
        stack.status,
        StackStatus::Measured,
        "the contract check cannot see it: {:?}",
        stack.failure
    );
    assert_eq!(stack.cells.len(), 4);
    for cell in &stack.cells {
        let audit = cell.audit.as_ref().expect("write windows are audited");
        assert!(!audit.passed, "{}: {:?}", cell.scenario, audit);
        assert!(audit.failures.iter().any(|f| f.contains(failure)), "{:?}", audit.failures);
        let reason = bookstore_record::warnings::disqualification(cell).expect("disqualified");
        assert!(reason.message.contains("audit failed"), "{}", reason.message);
    }
    let problems = outcome::problems(results);
    let disqualified: Vec<&str> = problems
        .iter()
        .filter_map(|p| match p {
            outcome::Problem::Disqualified { scenario, .. } => Some(scenario.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(disqualified, ["checkoutCreate", "checkoutHotspot"], "{problems:?}");
    assert_eq!(outcome::exit_code(&problems), outcome::EXIT_DISQUALIFIED);
    let page = bookstore_pages::render(std::slice::from_ref(results)).unwrap();
    assert!(page.contains("disqualified: the write audit failed"), "the page says why");
    assert!(!page.contains("best: "), "nothing is ranked");
}

#[test]
fn a_stack_that_acknowledges_checkouts_without_writing_them_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::AcknowledgeWithoutWriting);
    assert_caught(&results, "successful checkouts acknowledged");
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn a_stack_that_writes_every_checkout_twice_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::WriteTwice);
    assert_caught(&results, "successful checkouts acknowledged");
    for cell in &results.stacks[0].cells {
        let audit = cell.audit.as_ref().unwrap();
        assert_eq!(audit.checkout_rows, 2 * audit.acknowledged_checkouts, "{}", cell.scenario);
    }
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn a_stack_that_refuses_every_checkout_with_the_stock_in_hand_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::RefuseEverything);
    assert_caught(&results, "out_of_stock refusal(s)");
    for cell in &results.stacks[0].cells {
        // Not a business refusal: every one counts as an error of its own kind.
        assert_eq!((cell.counts.ok, cell.counts.rejected), (0, 0), "{}", cell.scenario);
        assert_eq!(cell.counts.errors_by_kind["unjustified_refusal"], cell.counts.errors);
        let audit = cell.audit.as_ref().unwrap();
        assert_eq!(audit.unjustified_refusals, cell.requests_total());
    }
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn a_labelled_variant_is_measured_beside_its_stack_with_its_own_flags() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::Health, Scenario::BookById];
    options.concurrency = vec![2];
    options.ceilings = false;
    let taken = vec!["axum-serde-sqlx".to_owned()];
    options.variants = vec![
        bookstore_suite::Variant::parse("axum-1w=axum-serde-sqlx --workers 1", &taken).unwrap(),
    ];
    // Every process the suite starts, with its arguments, as seen in `ps`.
    let (results, command_lines) = run_watching_processes(&options);

    assert_eq!(results.settings.stacks, ["axum-serde-sqlx", "axum-1w"]);
    let variant = &results.stacks[1];
    assert_eq!(variant.name, "axum-1w");
    assert_eq!(variant.variant_of.as_deref(), Some("axum-serde-sqlx"));
    assert_eq!(variant.args, ["--workers", "1"]);
    assert_eq!(variant.status, StackStatus::Measured, "{:?}", variant.failure);
    assert_eq!(variant.cells.len(), 4, "2 scenarios × 2 rounds, like the stack");
    // Its process ran with its flag in place of the suite's, the stack's with the suite's.
    let with = |flag: &str| command_lines.iter().filter(|c| c.contains(flag)).count();
    assert!(with("--workers 1") >= 1 && with("--workers 2") >= 1, "{command_lines:?}");
    // The pages compare it like a stack, with its own colour.
    let page = bookstore_pages::render(std::slice::from_ref(&results)).unwrap();
    assert!(page.contains("data-cell=\"axum-1w:bookById:2\""));
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn with_db_latency_a_stack_and_the_database_ceiling_are_measured_again_behind_the_relay_and_each_request_pays_it()
 {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::BookById];
    options.concurrency = vec![2];
    let round_trip = Duration::from_millis(3);
    options.variants =
        vec![bookstore_suite::Variant::with_db_latency(stacks::AXUM_SERDE_SQLX, round_trip)];
    let (results, command_lines) = run_watching_processes(&options);

    let (near, far) = (&results.stacks[0], &results.stacks[1]);
    assert_eq!(far.name, "axum-serde-sqlx.db3ms");
    assert_eq!(far.variant_of.as_deref(), Some("axum-serde-sqlx"));
    assert_eq!(far.db_latency_us, Some(3000));
    assert_eq!(near.db_latency_us, None);
    assert_eq!(far.status, StackStatus::Measured, "{:?}", far.failure);
    // Calibrated at the start of the run: what it adds here, at least what was asked.
    assert_eq!(results.db_relay_calibration.len(), 1);
    let calibration = &results.db_relay_calibration[0];
    assert_eq!(calibration.round_trip_us, 3000);
    assert!(calibration.samples > 0);
    assert!(calibration.added_p50_us >= 2900.0, "{calibration:?}");
    assert!(calibration.added_p99_us >= calibration.added_p50_us);
    // The relay ran, as a process of its own, asked for the round trip; the stack never
    // saw a flag for it.
    assert!(
        command_lines
            .iter()
            .any(|c| c.contains("db-relay run") && c.contains("--round-trip 3000us")),
        "{command_lines:?}"
    );
    assert!(
        !command_lines.iter().any(|c| c.contains("axum-serde-sqlx") && c.contains("--db-latency"))
    );
    // Every request crossed it: a book by id is at least one round trip to the database.
    let (near_p50, far_p50) = (
        merged_latency(&near.cells).value_at_quantile(0.5),
        merged_latency(&far.cells).value_at_quantile(0.5),
    );
    assert!(far_p50 >= near_p50 + 3000, "p50 {near_p50} µs direct, {far_p50} µs behind the relay");
    // The relay's own CPU, per cell, apart from the server's and the client's (in clock
    // ticks of 10 ms: a short window's may read 0).
    for cell in &far.cells {
        let relay = cell.cpu_seconds.relay.expect("the relay's CPU is measured");
        assert!((0.0..=cell.window_seconds * 2.0).contains(&relay), "{relay}");
    }
    assert!(near.cells.iter().all(|c| c.cpu_seconds.relay.is_none()));
    // Each window carries its latency, and the server's threads.
    assert!(far.cells.iter().all(|c| c.db_latency_us == Some(3000)));
    assert!(near.cells.iter().all(|c| c.db_latency_us.is_none()));
    assert!(far.cells.iter().all(|c| c.server_threads.is_some_and(|t| t >= 2)));
    // The database ceiling, through each driver, directly and behind a relay of its own
    // at the same round trip: each of its statements pays it too.
    for driver in ["sqlx", "diesel"] {
        let ceiling = |latency: Option<u64>| -> Vec<Cell> {
            let cells = results.ceilings.db.iter();
            let mine = cells.filter(|c| c.driver.as_deref() == Some(driver));
            mine.filter(|c| c.db_latency_us == latency).cloned().collect()
        };
        let (direct, relayed) = (ceiling(None), ceiling(Some(3000)));
        assert_eq!((direct.len(), relayed.len()), (2, 2), "{driver}: one window per round each");
        assert!(relayed.iter().all(|c| c.cpu_seconds.relay.is_some()));
        let (direct_p50, relayed_p50) = (
            merged_latency(&direct).value_at_quantile(0.5),
            merged_latency(&relayed).value_at_quantile(0.5),
        );
        assert!(
            relayed_p50 >= direct_p50 + 3000,
            "{driver}: p50 {direct_p50} µs direct, {relayed_p50} µs behind the relay"
        );
    }
    // `compare` shows the latency as a column of its own.
    let changes = bookstore_pages::compare::compare(
        std::slice::from_ref(&results),
        std::slice::from_ref(&results),
    );
    let table = bookstore_pages::compare::table(&changes);
    assert!(
        table.lines().any(|l| l.starts_with("axum-serde-sqlx.db3ms") && l.contains(" +3ms ")),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("DB ceiling (sqlx, c = 4, +3ms)")), "{table}");
    // The page says what the variant changed.
    let page = bookstore_pages::render(std::slice::from_ref(&results)).unwrap();
    assert!(
        page.contains("axum-serde-sqlx with a relay adding 3000 µs to each database round trip"),
        "the page does not say what the variant is"
    );
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn the_deployment_study_grid_runs_end_to_end_and_its_page_answers_per_latency_and_pool() {
    // scripts/deployment-study.sh --tiny: pools 2 and 4, directly and 2 ms away, the async
    // stack and the blocking one with threads = pool and = 2 × pool, checkoutCreate.
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (output_file, page_file) = (dir.path().join("study.json"), dir.path().join("study.html"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/deployment-study.sh");
    let output = std::process::Command::new(&script)
        .arg("--tiny")
        .env("BIN_DIR", bin_dir())
        .env("OUTPUT", &output_file)
        .env("PAGE", &page_file)
        .output()
        .expect("run scripts/deployment-study.sh");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "deployment-study.sh failed:\n{said}");
    let results = RunResults::read(&output_file).unwrap();
    // 2 latencies × 2 pools × (async, blocking at pool, blocking at 2 × pool), each once.
    let parties: Vec<(&str, Option<u64>)> =
        results.stacks.iter().map(|s| (s.name.as_str(), s.db_latency_us)).collect();
    assert_eq!(parties.len(), 12, "{parties:?}");
    assert!(results.stacks.iter().all(|s| s.status == StackStatus::Measured), "{parties:?}");
    let flags = |name: &str| &results.stacks.iter().find(|s| s.name == name).unwrap().args;
    assert_eq!(
        flags("axum-serde-diesel.p4.t8.db2ms"),
        &["--pool-max", "4", "--blocking-threads", "8"]
    );
    assert_eq!(parties.iter().filter(|(_, l)| *l == Some(2000)).count(), 6);
    // Every checkout audited, the ceilings measured directly and behind the relay.
    for stack in &results.stacks {
        for cell in &stack.cells {
            assert!(cell.audit.as_ref().is_some_and(|a| a.passed), "{}", stack.name);
        }
    }
    assert!(results.ceilings.db.iter().any(|c| c.db_latency_us == Some(2000)));
    let page = std::fs::read_to_string(&page_file).unwrap();
    let section =
        page.split("data-deployment=\"checkoutCreate:8\"").nth(1).expect("the study's table");
    let table = section.split("</table>").next().unwrap();
    // One row per party, the latency, pool and access style derived from the results.
    assert_eq!(table.matches("<tr><td>").count(), 12, "{table}");
    assert!(table.contains("<td>+2ms</td><td>4</td><td class=\"left\">axum-serde-diesel.p4.t8.db2ms</td><td class=\"left\">blocking, 8 threads</td>"), "{table}");
    // Behind the relay, a bound from the statements counted and the calibrated round trip;
    // each blocking party against the async one of its latency and pool.
    let far_async = table
        .split("<tr>")
        .find(|row| row.contains(">axum-serde-sqlx.p2.db2ms<"))
        .expect("the async party 2 ms away");
    assert!(!far_async.contains("<td>–</td><td>–</td>"), "{far_async}");
    let verdicts = section.split("</table>").nth(1).unwrap();
    assert!(verdicts.contains("+2ms: blocking higher in"), "{verdicts}");
    assert!(verdicts.contains("0: blocking higher in"), "{verdicts}");
    assert!(verdicts.contains("DB ceiling (sqlx, c = 2, +2ms)"), "{verdicts}");
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn with_cpus_each_tier_runs_where_it_was_put_a_tier_not_named_anywhere_and_the_results_record_it() {
    let _serial = serial();
    let allowed = cpus_allowed(std::process::id()).unwrap();
    let (first, last) = (allowed[0], *allowed.last().unwrap());
    let list = |cpus: &[usize]| cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    // What each process the suite started ran on, seen while it ran (a process's CPUs
    // can change once: when the suite places it).
    let placed = |pid: u32, cmdline: String| {
        let tier = match cmdline.split_whitespace().next().unwrap_or("") {
            c if c.ends_with("/axum-serde-sqlx") => "server",
            c if c.starts_with("postgres") || c.ends_with("/postgres") => "db",
            _ => "other",
        };
        let cpus = cpus_allowed(pid).unwrap_or_default();
        format!("{tier} {}", cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |spec: &str| {
        let mut options = options(dir.path().join("run.json"));
        options.scenarios = vec![Scenario::BookById];
        options.concurrency = vec![2];
        options.rounds = 1;
        options.ceilings = false;
        options.placement = Some(bookstore_harness::placement::Placement::parse(spec).unwrap());
        run_watching(&options, placed)
    };

    // Each tier on a CPU of its own (the same one, on a single-CPU machine).
    let (results, seen) = run(&format!("server={last},client={first},db={first}"));
    let recorded: Vec<(&str, &[usize])> = results
        .settings
        .cpu_placement
        .iter()
        .map(|t| (t.tier.as_str(), t.cpus.as_slice()))
        .collect();
    assert_eq!(recorded, [("client", &[first][..]), ("db", &[first][..]), ("server", &[last][..])]);
    assert_eq!(results.stacks[0].status, StackStatus::Measured);
    assert!(seen.contains(&format!("server {last}")), "{seen:?}");
    assert!(seen.contains(&format!("db {first}")), "{seen:?}");
    // The client got its CPUs back.
    assert_eq!(cpus_allowed(std::process::id()).unwrap(), allowed);

    // Only the client placed: the server and the database run anywhere, not on the CPUs
    // they would inherit from it.
    let (results, seen) = run(&format!("client={first}"));
    let recorded: Vec<&str> =
        results.settings.cpu_placement.iter().map(|t| t.tier.as_str()).collect();
    assert_eq!(recorded, ["client"]);
    assert!(seen.contains(&format!("server {}", list(&allowed))), "{seen:?}");
    assert!(seen.contains(&format!("db {}", list(&allowed))), "{seen:?}");
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

/// The CPUs `pid` may run on, from /proc.
fn cpus_allowed(pid: u32) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?.trim();
    Some(
        list.split(',')
            .flat_map(|part| match part.split_once('-') {
                Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
                None => vec![part.parse().unwrap()],
            })
            .collect(),
    )
}

#[test]
fn the_database_allows_every_party_its_own_pool_and_the_ceiling_one() {
    let mut options = options(PathBuf::from("unused.json"));
    options.pool_max = 16;
    let taken = vec![];
    options.variants = vec![
        bookstore_suite::Variant::parse(
            "big=axum-serde-diesel --pool-max 64 --blocking-threads 64",
            &taken,
        )
        .unwrap(),
        bookstore_suite::Variant::parse("far=axum-serde-sqlx --db-latency 1ms --workers 1", &taken)
            .unwrap(),
    ];
    // One stack at 16, the variants at 64 and 16, the ceiling at 16, and 40 spare.
    assert_eq!(options.database_connections(), 16 + 64 + 16 + 16 + 40);
    options.ceilings = false;
    assert_eq!(options.database_connections(), 16 + 64 + 16 + 40);
}

/// The latencies of `cells`' successes, merged.
fn merged_latency(cells: &[Cell]) -> hdrhistogram::Histogram<u64> {
    let mut merged = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for cell in cells {
        merged.add(decode_histogram(&cell.histogram_ok).unwrap()).unwrap();
    }
    merged
}

/// Of `histogram`'s samples, the share above `threshold_us`.
fn share_above(histogram: &hdrhistogram::Histogram<u64>, threshold_us: u64) -> f64 {
    let above: u64 = histogram
        .iter_recorded()
        .filter(|v| v.value_iterated_to() > threshold_us)
        .map(|v| v.count_at_value())
        .sum();
    above as f64 / histogram.len() as f64
}

/// The classic coordinated-omission demonstration, through the suite's fixed-load phase:
/// a stack that freezes for 200 ms of every second, and one that can carry 200 requests a
/// second at most, each offered 500 a second beside the closed loop's rounds.
#[test]
fn at_equal_load_a_stall_counts_for_every_request_it_held_up_and_a_stack_that_cannot_keep_up_is_not_ranked()
 {
    const PERIOD: Duration = Duration::from_secs(1);
    const FREEZE: Duration = Duration::from_millis(200);
    const RATE: f64 = 500.0;
    let _serial = serial();
    let (server, url) = seeded_server();
    let (mut stack, upstream) = start_by_hand(&url);
    let freezer = proxy::start(upstream, staller::Freezer::new(PERIOD, FREEZE));
    let throttled = proxy::start(upstream, staller::Throttle::new(Duration::from_millis(5)));
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.stacks = vec![stacks::AXUM_SERDE_SQLX, stacks::HYPER_SONIC_SQLX];
    options.running = Some(vec![freezer, throttled]);
    options.database_url = Some(url.clone());
    options.ceilings = false;
    options.scenarios = vec![Scenario::Health];
    // The closed loop at 1 connection shows what it hides; 16 is the open loop's cap.
    options.concurrency = vec![1, 16];
    options.warmup = Duration::from_millis(200);
    // Two whole freeze periods: the window holds 20% frozen time wherever it starts.
    options.duration = 2 * PERIOD;
    options.rates = vec![Rate::PerSecond(RATE)];
    let results = bookstore_suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);

    let frozen = &results.stacks[0];
    assert_eq!(frozen.equal_load.len(), 2, "one window per round");
    for cell in &frozen.equal_load {
        let open = cell.open_loop.as_ref().expect("an open-loop window");
        assert_eq!(open.offered_rps, RATE);
        assert_eq!(open.connections_cap, 16);
        assert!((990..=1010).contains(&open.due), "2 s at 500/s: {} due", open.due);
        assert_eq!(cell.counts.errors, 0, "{:?}", cell.counts);
    }
    // 20% of the requests came due while the answers were held, each waiting out the rest
    // of the freeze: P(latency > x) = 0.2 × (1 − x / 200 ms) for x under 200 ms — p90
    // 100 ms, p99 190 ms, p99.9 199 ms. After each freeze the queue drains 16 connections
    // at a time; a drain of D ms moves the share above 100 ms to 0.2 × (100 + D) / 200 and
    // p90 to about 100 + D ms. A debug build on a busy two-core CI machine took D ≈ 30 ms
    // (share 0.1305), so the bounds allow a drain of up to 60 ms.
    const DRAIN_ALLOWANCE_MS: f64 = 60.0;
    let open = merged_latency(&frozen.equal_load);
    let ms = |q: f64| open.value_at_quantile(q) as f64 / 1000.0;
    let most_above_100_ms = 0.2 * (100.0 + DRAIN_ALLOWANCE_MS) / 200.0;
    assert!(
        (0.07..=most_above_100_ms).contains(&share_above(&open, 100_000)),
        "{}",
        share_above(&open, 100_000)
    );
    assert!(
        (80.0..=100.0 + DRAIN_ALLOWANCE_MS).contains(&ms(0.90)),
        "open-loop p90 {} ms",
        ms(0.90)
    );
    assert!(
        (170.0..=190.0 + DRAIN_ALLOWANCE_MS).contains(&ms(0.99)),
        "open-loop p99 {} ms",
        ms(0.99)
    );
    assert!(
        (180.0..=200.0 + DRAIN_ALLOWANCE_MS).contains(&ms(0.999)),
        "open-loop p99.9 {} ms",
        ms(0.999)
    );
    assert!(ms(0.5) < 20.0, "most requests never met a freeze: p50 {} ms", ms(0.5));
    // The closed loop's one connection sent nothing while it waited: each freeze delayed
    // one request of thousands, and the percentiles never see it.
    for cell in frozen.cells.iter().filter(|c| c.concurrency == 1) {
        let closed = merged_latency(std::slice::from_ref(cell));
        let slow = (share_above(&closed, 100_000) * closed.len() as f64).round() as u64;
        assert!(slow <= 3, "{slow} of {} closed-loop requests met a freeze", closed.len());
        assert!(closed.len() >= 300, "{} closed-loop answers", closed.len());
        assert!(
            closed.value_at_quantile(0.99) < 100_000,
            "closed p99 {} µs",
            closed.value_at_quantile(0.99)
        );
    }

    // 500 a second offered to a stack that carries 200: saturated, and not ranked.
    let throttled = &results.stacks[1];
    assert_eq!(throttled.equal_load.len(), 2);
    for cell in &throttled.equal_load {
        let open = cell.open_loop.as_ref().unwrap();
        assert!(open.achieved_fraction < 0.6, "achieved {}", open.achieved_fraction);
        assert!(open.cap_hit, "its requests waited for a connection at the cap");
        let reason = bookstore_record::warnings::saturation(cell).expect("not ranked");
        assert!(reason.message.starts_with("saturated at this rate"), "{}", reason.message);
        assert!(bookstore_record::warnings::disqualification(cell).is_none(), "slow is not broken");
    }
    let page = bookstore_pages::render(std::slice::from_ref(&results)).unwrap();
    assert!(page.contains("4. Latency at equal load"));
    assert!(page.contains("not ranked: saturated at this rate"), "the page says why");
    let summary = bookstore_pages::terminal::summary(std::slice::from_ref(&results));
    assert!(summary.contains("p99 at 500 req/s"), "{summary}");
    let throttled_line = summary.lines().find(|l| l.contains("hyper-sonic-sqlx")).unwrap();
    assert!(throttled_line.trim_end().ends_with("not ranked"), "{summary}");
    assert!(
        summary.contains("health · hyper-sonic-sqlx · at 500 req/s: saturated at this rate"),
        "the reason on a line of its own: {summary}"
    );
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}
