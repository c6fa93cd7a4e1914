//! `loadgen ab`: one question about two running servers, asked on the command line — servers
//! of known cost (the responder spending a fixed time on each request, one at a time), so
//! the answer's direction and size are known before it is asked.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use bookstore_record::ab::AbResults;

/// `target/debug`, where cargo put this test and the workspace's binaries.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|deps| deps.parent()).unwrap().to_owned()
}

/// A responder on one thread spending `work_us` on each request: about 1 ÷ `work_us`
/// requests per second, whatever the concurrency; stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(work_us: u64) -> Self {
        let mut child = Command::new(bin_dir().join("responder"))
            .args(["--bind", "127.0.0.1:0", "--threads", "1", "--work-us", &work_us.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the responder is built (cargo build --workspace --bins)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line.trim().strip_prefix("LISTENING ").expect("LISTENING <address>").to_owned();
        Self { child, url: format!("http://{addr}") }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `loadgen ab` with `args` and a results file of its own: its exit status, what it printed,
/// and the results.
fn ab(args: &[&str]) -> (Option<i32>, String, AbResults) {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("ab.json");
    let run = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .arg("ab")
        .args(args)
        .args(["--path", "/health", "-c", "4", "--precision", "10%", "--budget", "60s"])
        .arg("--output")
        .arg(&output)
        .output()
        .unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    let results = AbResults::read(&output).unwrap_or_else(|e| panic!("{e:#}\n{said}"));
    (run.status.code(), said, results)
}

#[test]
fn a_server_twice_as_slow_is_called_slower_with_an_interval_that_holds_the_built_ratio() {
    let (fast, slow) = (Server::start(1_000), Server::start(2_000));
    let (status, said, results) = ab(&[&fast.url, &slow.url, "--fail-on-regression", "20"]);
    let rate = results.rate.as_ref().expect("an answer");
    assert_eq!(rate.verdict, "lower", "{said}");
    // About 0.5: each answer costs its work and the same small overhead on both.
    assert!(rate.low < 0.52 && rate.high > 0.48 && rate.high < 0.6, "{rate:?}\n{said}");
    assert!(said.contains("B is ") && said.contains("%] slower"), "{said}");
    assert_eq!(results.ended_by, "precision", "{said}");
    assert_eq!(status, Some(3), "B regressed by more than 20%: {said}");
    // One process per side someone else started: the twins' spread assumed, not measured.
    assert_eq!(rate.process_sd, None);
    assert!(results.rounds.iter().all(|r| r.order == "ABBA" || r.order == "BAAB"));
}

#[test]
fn a_server_asked_against_itself_is_not_distinguishable() {
    let server = Server::start(1_000);
    let (status, said, results) = ab(&[&server.url, "--twin"]);
    let rate = results.rate.as_ref().expect("an answer");
    assert_eq!(rate.verdict, "not_distinguishable", "{said}");
    assert!(said.contains("not distinguishable: the data allows"), "{said}");
    assert_eq!(status, Some(0));
    assert_eq!(results.parties[0].what, results.parties[1].what);
}
