//! Graceful shutdown: in-flight requests complete, new connections are refused, the server
//! stops within 10 s (exit code 0 for the binaries on SIGTERM), and no checkout is half
//! written.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use bookstore_conformance::{checkout_request, get_request, wait_for_lock_waiters};
use bookstore_fixture::audit::{self, AuditFacts, Writes};
use bookstore_fixture::testing::seeded_database;
use sqlx::{Connection, PgConnection};

use super::*;

/// The longest a server may take to stop (the bound; both servers' grace period).
const STOP_LIMIT: Duration = Duration::from_secs(10);
/// The book whose checkout is held in flight.
const HELD_BOOK: i64 = 9;

/// A checkout the server cannot finish until [`HeldCheckout::release`]: another
/// transaction holds its book's row lock, so the request is in flight for as long as the
/// test wants.
struct HeldCheckout {
    locker: PgConnection,
    answer: tokio::task::JoinHandle<Result<TestResponse, String>>,
}

impl HeldCheckout {
    async fn start(client: &Client, database_url: &str) -> Self {
        let mut locker = PgConnection::connect(database_url).await.expect("connect");
        sqlx::query("BEGIN").execute(&mut locker).await.expect("begin");
        sqlx::query("SELECT 1 FROM books WHERE id = $1 FOR UPDATE")
            .bind(HELD_BOOK)
            .execute(&mut locker)
            .await
            .expect("lock the book");
        let sender = client.clone();
        let answer =
            tokio::spawn(async move { sender.try_send(checkout_request(HELD_BOOK)).await });
        let mut watcher = PgConnection::connect(database_url).await.expect("connect");
        wait_for_lock_waiters(&mut watcher, 1).await;
        HeldCheckout { locker, answer }
    }

    fn is_answered(&self) -> bool {
        self.answer.is_finished()
    }

    /// Lets the checkout finish and returns its answer.
    async fn release(mut self) -> Result<TestResponse, String> {
        sqlx::query("COMMIT").execute(&mut self.locker).await.expect("commit");
        self.answer.await.expect("the request task panicked")
    }
}

/// Whether a new TCP connection to `addr` is refused.
async fn refuses_connections(addr: SocketAddr) -> bool {
    tokio::net::TcpStream::connect(addr).await.is_err()
}

/// Checkouts spread over many books, one book range per client.
fn spread(client: usize, sequence: usize) -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    checkout_request(100 + (client * 400 + sequence % 400) as i64)
}

/// The write audit of SPEC §5 for `acknowledged` successful checkouts.
async fn assert_audit(name: &str, database_url: &str, acknowledged: u64) {
    let mut conn = PgConnection::connect(database_url).await.expect("connect");
    let facts = AuditFacts::read(&mut conn).await.expect("read the audit facts");
    let verdict = audit::judge(Writes::Spread, acknowledged, &facts);
    assert!(verdict.passed(), "{name}: audit failed: {:?}", verdict.failures);
}

per_stack!(stop_under_load_finishes_in_flight_and_refuses_new_connections, |stack| {
    let mut app = TestApp::spawn(stack).await;
    let name = app.name();
    let url = app.database_url().to_owned();
    let held = HeldCheckout::start(&app.client(), &url).await;
    let load = Load::start(&app.client(), 8, spread);
    tokio::time::sleep(Duration::from_millis(300)).await;

    app.request_stop();
    let asked = Instant::now();
    let stop_at = load.elapsed();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(refuses_connections(app.addr()).await, "{name} accepts connections while stopping");
    assert!(!held.is_answered(), "{name} answered a checkout that cannot have finished");
    let answer = held.release().await;
    let answer =
        answer.unwrap_or_else(|e| panic!("{name}: the in-flight checkout got no answer: {e}"));
    assert_eq!(answer.status, 201, "{name}: in-flight checkout: {}", answer.text());

    let result = app.stopped(STOP_LIMIT.saturating_sub(asked.elapsed())).await;
    let result = result.unwrap_or_else(|| panic!("{name} did not stop within {STOP_LIMIT:?}"));
    result.unwrap_or_else(|error| panic!("{name} stopped with an error: {error}"));
    let sent = load.stop().await;

    // Before the stop every checkout succeeded; after it, a request is either answered
    // in full or refused — never answered 5xx — and every 201 is in the database.
    let mut acknowledged = 1; // the held checkout
    for request in &sent {
        match &request.outcome {
            Ok(response) => {
                assert_eq!(response.status, 201, "{name}: {}", response.text());
                acknowledged += 1;
            }
            Err(error) => assert!(
                request.at + request.took >= stop_at,
                "{name}: a request at {:?} failed before the stop: {error}",
                request.at
            ),
        }
    }
    assert!(sent.iter().any(|s| s.outcome.is_ok()), "{name}: the load got no answer");
    assert_audit(name, &url, acknowledged).await;
});

/// `target/debug`, where cargo put this test and the workspace's binaries.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/debug").to_owned()
}

/// A server binary, killed if the test ends before it exits.
struct Server(Child);

impl Server {
    fn spawn(stack: &Stack, database_url: &str, addr: SocketAddr) -> Self {
        Self::spawn_with(stack, database_url, addr, &[])
    }

    /// As [`Server::spawn`], with more environment (flags by their variables).
    fn spawn_with(
        stack: &Stack,
        database_url: &str,
        addr: SocketAddr,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Self {
        let info = bookstore_app::stacks::find(stack.identity.service).expect("a registry stack");
        let binary = bin_dir().join(info.binary);
        assert!(
            binary.is_file(),
            "{} is not built: run `cargo build --workspace --bins` first (scripts/test.sh does)",
            binary.display()
        );
        let child = Command::new(&binary)
            .args(info.launch_args())
            .env("DATABASE_URL", database_url)
            .env("BIND", addr.to_string())
            .env("DB_POOL_MAX", "4")
            .env("WORKERS", "2")
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        Server(child)
    }

    /// Waits until it answers `/health`; panics naming the stack if it exits or takes more
    /// than 30 s.
    async fn wait_serving(&mut self, client: &Client, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = self.0.try_wait() {
                panic!("{name} exited during start-up ({status}): {}", self.stderr());
            }
            if client.try_send(get_request("/health")).await.is_ok_and(|r| r.status == 200) {
                return;
            }
            assert!(Instant::now() < deadline, "{name} did not serve within 30 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends SIGTERM; returns when.
    fn signal_stop(&self) -> Instant {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("send SIGTERM");
        Instant::now()
    }

    /// Waits for the exit status, at most [`STOP_LIMIT`] after `signalled`.
    async fn wait_exit(&mut self, signalled: Instant, name: &str) -> std::process::ExitStatus {
        loop {
            if let Some(status) = self.0.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(
                signalled.elapsed() < STOP_LIMIT,
                "{name} still running {STOP_LIMIT:?} after SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Its log, once it has exited.
    fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut stderr) = self.0.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

per_stack!(sigterm_drains_and_exits_zero, |stack| {
    let db = seeded_database().await;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let mut server = Server::spawn(stack, db.url(), addr);
    let name = stack.identity.service;
    let client = Client::new(addr, name);
    server.wait_serving(&client, name).await;

    let held = HeldCheckout::start(&client, db.url()).await;
    let signalled = server.signal_stop();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(refuses_connections(addr).await, "{name} accepts connections after SIGTERM");
    assert!(matches!(server.0.try_wait(), Ok(None)), "{name} exited with a request in flight");
    let answer = held.release().await;
    let answer =
        answer.unwrap_or_else(|e| panic!("{name}: the in-flight checkout got no answer: {e}"));
    assert_eq!(answer.status, 201, "{name}: in-flight checkout: {}", answer.text());

    let status = server.wait_exit(signalled, name).await;
    assert_eq!(status.code(), Some(0), "{name} exit status; log: {}", server.stderr());
    assert_audit(name, db.url(), 1).await;
});

per_stack!(timing_file_breaks_each_request_down_at_shutdown, |stack| {
    const REQUESTS: u64 = 20;
    let db = seeded_database().await;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("timing.jsonl");
    let env = [("TIMING_FILE", file.as_os_str())];
    let mut server = Server::spawn_with(stack, db.url(), addr, &env);
    let name = stack.identity.service;
    let client = Client::new(addr, name);
    server.wait_serving(&client, name).await; // /health: no store call, not counted
    for id in 1..=REQUESTS {
        let response = client.get(&format!("/api/books/{id}")).await;
        assert_eq!(response.status, 200, "{name}: {}", response.text());
    }
    let signalled = server.signal_stop();
    let status = server.wait_exit(signalled, name).await;
    assert_eq!(status.code(), Some(0), "{name} exit status; log: {}", server.stderr());

    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{name} wrote no timing report to {}: {e}", file.display()));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{name}: one report per process: {text}");
    let report: serde_json::Value = serde_json::from_str(lines[0]).expect("a JSON line");
    let count = |phase: &str| report["phases"][phase]["count"].as_u64();
    assert_eq!(count("store"), Some(REQUESTS), "{name}: {report}");
    assert_eq!(count("respond"), Some(REQUESTS), "{name}: {report}");
    let per_thread: u64 = report["store_calls_per_thread"]
        .as_object()
        .expect("calls per thread")
        .values()
        .filter_map(serde_json::Value::as_u64)
        .sum();
    assert_eq!(per_thread, REQUESTS, "{name}: {report}");
    let blocking_phases = ["thread_wait", "conn_wait", "query", "handback"];
    if stack.db_calls == bookstore_app::DbCalls::Blocking {
        for phase in blocking_phases {
            assert_eq!(count(phase), Some(REQUESTS), "{name}: {phase}: {report}");
        }
        let slowest = &report["slowest_blocking_calls"];
        assert!(slowest["calls"].as_u64().is_some_and(|n| n >= 1), "{name}: {report}");
        let parts: f64 = ["thread_wait", "conn_wait", "query", "handback"]
            .iter()
            .map(|p| slowest[format!("mean_{p}_us")].as_f64().expect("a mean"))
            .sum();
        let total = slowest["mean_total_us"].as_f64().expect("the mean total");
        assert!((parts - total).abs() < 1e-6 * total.max(1.0), "{name}: {report}");
    } else {
        for phase in blocking_phases {
            assert_eq!(count(phase), None, "{name}: an async store has no {phase}: {report}");
        }
        assert!(report["slowest_blocking_calls"].is_null(), "{name}: {report}");
    }
});
