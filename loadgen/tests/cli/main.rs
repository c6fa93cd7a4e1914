//! The command line as a user meets it: a misspelt stack or scenario is a usage error (exit
//! status 2) that suggests the right name, and `--help` lists the valid ones; `loadgen http`
//! against real servers (a URL, a body and headers, `-n`, chunked answers, Ctrl-C); shell
//! completions.

mod resume;

use std::process::{Command, Output};

use bookstore_client::scenario::Scenario;
use bookstore_registry::stacks;

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadgen")).args(args).output().unwrap()
}

#[test]
fn a_misspelt_stack_or_scenario_is_a_usage_error_that_suggests_the_name() {
    for (args, meant) in [
        (["suite", "--stacks", "axum-serde-sqx"], "axum-serde-sqlx"),
        (["suite", "--scenarios", "bookByID"], "bookById"),
        (["http", "--scenario", "checkoutCreat"], "checkoutCreate"),
    ] {
        let output = loadgen(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("'{meant}'")), "{args:?} suggests {meant}: {stderr}");
    }
}

#[test]
fn a_twin_of_a_stack_not_measured_is_refused_before_anything_starts() {
    let output = loadgen(&["suite", "--stacks", "axum-serde-sqlx", "--twin", "hyper-sonic-sqlx"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--twin hyper-sonic-sqlx: not among the stacks measured"), "{stderr}");
    let output = loadgen(&["suite", "--twin", "axum-serde-sqlx", "--targets", "x=http://h:1"]);
    assert_eq!(output.status.code(), Some(2), "a twin needs the suite to start its stacks");
}

#[test]
fn the_suites_help_lists_every_stack_and_scenario() {
    let output = loadgen(&["suite", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for name in stacks::names().into_iter().chain(Scenario::ALL.iter().map(|s| s.name())) {
        assert!(help.contains(name), "--help lacks {name}");
    }
}

/// The workspace's responder (built beside this test by `cargo build --workspace --bins`,
/// as scripts/test.sh does), listening on a free port until dropped.
struct Responder(std::process::Child, String);

impl Responder {
    fn start() -> Self {
        let exe = std::env::current_exe().unwrap();
        let binary = exe.parent().and_then(|deps| deps.parent()).unwrap().join("responder");
        assert!(
            binary.is_file(),
            "run `cargo build --workspace --bins` first (scripts/test.sh does)"
        );
        let mut child = Command::new(binary)
            .args(["--bind", "127.0.0.1:0", "--threads", "1"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let addr = line.trim().strip_prefix("LISTENING ").unwrap().to_owned();
        Self(child, format!("http://{addr}/health"))
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server that accepts connections and reads what they send but never answers, for
/// `life`; its address.
fn silent_server(life: std::time::Duration) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let end = std::time::Instant::now() + life;
        let mut held = Vec::new();
        while std::time::Instant::now() < end {
            if let Ok((stream, _)) = listener.accept() {
                held.push(stream); // read by the kernel's buffer, never answered
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    format!("http://{addr}/")
}

#[test]
fn a_window_in_which_nothing_completed_is_a_failure_not_zero_requests_per_second() {
    let url = silent_server(std::time::Duration::from_secs(10));
    let args = ["http", &url, "-c", "2", "-z", "300ms", "--warmup", "0s", "--timeout", "500ms"];
    let output = loadgen(&args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(5), "a disqualified window: {stdout}");
    assert!(stdout.contains("no request completed in the window"), "{stdout}");
    assert!(stdout.contains("2 ended after it"), "both timed out in the drain: {stdout}");
}

#[test]
fn requests_a_silent_server_never_answers_are_counted_unanswered_and_do_not_hold_the_run() {
    let url = silent_server(std::time::Duration::from_secs(20));
    // A timeout far beyond the window: the run must end by the drain's grace, not by it.
    let args = ["http", &url, "-c", "3", "-z", "300ms", "--warmup", "0s", "--timeout", "60s"];
    let started = std::time::Instant::now();
    let output = loadgen(&[&args[..], &["--json", "-"]].concat());
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "nothing completed: {stderr}");
    assert!(took < std::time::Duration::from_secs(30), "the run waited {took:?}: {stderr}");
    assert!(stderr.contains("errors 0, unanswered 3"), "{stderr}");
    assert!(stderr.contains("3 request(s) were still unanswered"), "{stderr}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["cell"]["unanswered"], 3, "{document}");
    assert_eq!(document["cell"]["drained_counts"]["errors"], 0, "none timed out: {document}");
}

/// A server that answers one request at a time, each after `service` (a single worker
/// behind a queue): its capacity is `1 / service` requests per second, whatever the
/// machine, and no answer comes sooner than `service`.
fn one_at_a_time_server(service: std::time::Duration, life: std::time::Duration) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let worker = std::sync::Arc::new(std::sync::Mutex::new(()));
    std::thread::spawn(move || {
        let end = std::time::Instant::now() + life;
        for stream in listener.incoming().flatten() {
            if std::time::Instant::now() > end {
                break;
            }
            let worker = std::sync::Arc::clone(&worker);
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(read) = stream.read(&mut chunk) {
                    if read == 0 || std::time::Instant::now() > end {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..read]);
                    while let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        buffer.drain(..at + 4);
                        let _served = worker.lock().unwrap();
                        std::thread::sleep(service);
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.write_all(answer).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

#[test]
fn the_capacity_at_an_objective_is_the_rate_a_one_at_a_time_server_can_serve_and_not_met_below_its_service_time()
 {
    // 2 ms a request, one at a time: 500 requests/s at most, none answered under 2 ms.
    let url = one_at_a_time_server(
        std::time::Duration::from_millis(2),
        std::time::Duration::from_secs(120),
    );
    let window =
        ["-c", "16", "-z", "500ms", "--warmup", "200ms", "--rate", "400", "--max-rate", "1000"];
    let args = [
        &["http", url.as_str(), "--slo", "p99=50ms", "--slo", "p99=1ms"][..],
        &window,
        &["--json", "-"],
    ]
    .concat();
    let output = loadgen(&args);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["schema"], "bookstore-bench/http-capacity");
    let found = &document["objectives"][0]["searches"][0];
    assert_eq!(found["capacity"]["found"], "between", "{said}");
    let capacity = found["capacity"]["rate_rps"].as_f64().unwrap();
    // The queueing model's 500/s, less what a real machine's scheduling costs it: within
    // 60% to 105% of it.
    assert!((300.0..=525.0).contains(&capacity), "{capacity} req/s: {said}");
    // No rung that met the objective was saturated or over its bound; the search missed
    // above the capacity (the server cannot do 525/s) and says why.
    for step in found["steps"].as_array().unwrap() {
        if step["met"].as_bool().unwrap() {
            assert!(step["in_time_share"].as_f64().unwrap() >= 0.99, "{step}");
            assert!(step["at_objective_us"].as_u64().unwrap() <= 50_000, "{step}");
        } else {
            assert!(step["missed_because"].is_string(), "{step}");
        }
    }
    // The crossing lies between a rung met and the rung above it, one step (10%) apart.
    let (met, missed) = (
        found["capacity"]["met_rps"].as_f64().unwrap(),
        found["capacity"]["missed_rps"].as_f64().unwrap(),
    );
    assert!(met <= capacity && capacity <= missed && missed / met <= 1.1 + 1e-9, "{said}");
    assert!(said.contains("capacity at p99 ≤ 50 ms:"), "{said}");
    // 1 ms is below the service time: no rate meets it.
    let below = &document["objectives"][1]["searches"][0]["capacity"];
    assert_eq!(below["found"], "not_met", "{said}");
    assert!(said.contains("p99 ≤ 1 ms was not met even at"), "{said}");
}

#[test]
fn http_takes_the_url_as_its_argument_and_prints_a_percentile_table_or_json_on_stdout() {
    let responder = Responder::start();
    let quick = ["-c", "2", "-z", "200ms", "--warmup", "0s"];
    let output = loadgen(&[&["http", responder.1.as_str()][..], &quick].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("p50      p90      p99    p99.9   p99.99      max"), "{stdout}");
    // The text histogram: a bar per bucket, the counts adding up to the answers.
    let answers: u64 =
        stdout.split("latency of ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let counted: u64 = stdout
        .lines()
        .filter(|l| l.contains('█'))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, answers, "{stdout}");
    // `--json -`: the document alone on standard output, the lines for people on stderr.
    let output = loadgen(&[&["http", responder.1.as_str(), "--json", "-"][..], &quick].concat());
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["url"], responder.1.as_str());
    assert!(document["throughput_rps"].as_f64().unwrap() > 0.0);
    assert!(String::from_utf8_lossy(&output.stderr).contains("p99.9"));
}

#[test]
fn ctrl_c_ends_the_window_and_prints_what_was_measured_with_status_130() {
    let responder = Responder::start();
    let child = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["http", responder.1.as_str(), "-c", "2", "-z", "60s", "--warmup", "0s"])
        .args(["--json", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Time for the handler to be installed (at start) and the window to open.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let window = document["cell"]["window_seconds"].as_f64().unwrap();
    assert!(window < 30.0, "the window ended at the signal, not after 60 s: {window}");
    assert_eq!(document["cell"]["stopped_early"], true);
    assert!(String::from_utf8_lossy(&output.stderr).contains("stopped early"));
}

/// A hyper server that answers `POST /echo` carrying `x-token: secret` and the body `{"n":1}`
/// with a chunked 200, anything else with a chunked 400; it counts what it was sent.
fn chunked_echo_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&served);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                            let counter = Arc::clone(&counter);
                            async move {
                                counter.fetch_add(1, Ordering::Relaxed);
                                let expected = request.method() == hyper::Method::POST
                                    && request.uri().path() == "/echo"
                                    && request
                                        .headers()
                                        .get("x-token")
                                        .is_some_and(|v| v == "secret");
                                let body = request.into_body().collect().await.unwrap().to_bytes();
                                let ok = expected && body.as_ref() == br#"{"n":1}"#;
                                // An explicit chunked framing: hyper then writes the body as chunks.
                                let response = hyper::Response::builder()
                                    .status(if ok { 200 } else { 400 })
                                    .header("transfer-encoding", "chunked")
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from_static(br#"{"echo":true}"#)))
                                    .unwrap();
                                Ok::<_, std::convert::Infallible>(response)
                            }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    (format!("http://{addr}/echo"), served)
}

#[test]
fn http_posts_a_body_with_headers_n_times_and_reads_chunked_answers() {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;

    let (url, served) = chunked_echo_server();
    // The server really answers chunked (else this test would prove nothing).
    let addr = url.trim_start_matches("http://").trim_end_matches("/echo");
    let mut raw = std::net::TcpStream::connect(addr).unwrap();
    raw.write_all(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).unwrap();
    assert!(answer.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{answer}");
    assert!(!answer.to_ascii_lowercase().contains("content-length"), "{answer}");
    let before = served.load(Ordering::Relaxed);

    let body_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(body_file.path(), br#"{"n":1}"#).unwrap();
    let body_path = body_file.path().to_str().unwrap();
    let post = ["-H", "x-token: secret", "-H", "content-type: application/json"];
    for body in [&["-d", r#"{"n":1}"#][..], &["--body-file", body_path][..]] {
        let served_before = served.load(Ordering::Relaxed);
        let output = loadgen(
            &[&["http", url.as_str(), "-n", "300", "-c", "4", "--json", "-"][..], &post, body]
                .concat(),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{body:?}: {stderr}");
        let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let counts = &document["cell"]["counts"];
        assert_eq!(counts["ok"], 300, "{body:?}: {counts}");
        assert_eq!(counts["errors"], 0, "{body:?}: {counts}");
        assert_eq!(served.load(Ordering::Relaxed) - served_before, 300, "exactly -n sent");
        assert!(stderr.contains("p99.99"), "{stderr}");
    }
    // The server judged each request: a wrong token is an error status on every one.
    let output = loadgen(&[
        "http",
        url.as_str(),
        "-n",
        "20",
        "-c",
        "2",
        "-m",
        "post",
        "-d",
        r#"{"n":1}"#,
        "--json",
        "-",
    ]);
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["cell"]["counts"]["errors_by_kind"]["status"], 20, "{document}");
    assert!(served.load(Ordering::Relaxed) > before);
}

#[test]
fn completions_are_printed_for_the_shells_and_know_the_subcommands() {
    let output = loadgen(&["completions", "bash"]);
    assert!(output.status.success());
    let script = String::from_utf8_lossy(&output.stdout);
    for word in ["complete", "loadgen", "suite", "report", "--stacks"] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    assert_eq!(loadgen(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn the_binary_knows_the_commit_and_compiler_it_was_built_from() {
    let build = bookstore_record::build_identity!();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output();
        out.ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    // Built from a git checkout (CI's clone, a developer's tree): the commit is HEAD's.
    if let Some(head) = git(&["rev-parse", "HEAD"]) {
        assert_eq!(build.git_commit, Some(head.as_str()));
        assert!(build.git_dirty.is_some());
    }
    let rustc = build.rustc.expect("the compiler's version");
    assert!(rustc.starts_with("rustc 1."), "{rustc}");
}
