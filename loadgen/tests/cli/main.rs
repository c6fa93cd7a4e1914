//! The command line as a user meets it: a misspelt stack or scenario is a usage error (exit
//! status 2) that suggests the right name, and `--help` lists the valid ones.

use std::process::{Command, Output};

use bookstore_app::stacks;
use loadgen::scenario::Scenario;

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

#[test]
fn http_takes_the_url_as_its_argument_and_prints_a_percentile_table_or_json_on_stdout() {
    let responder = Responder::start();
    let quick = ["-c", "2", "-z", "200ms", "--warmup", "0s"];
    let output = loadgen(&[&["http", responder.1.as_str()][..], &quick].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("p50      p90      p99    p99.9      max"), "{stdout}");
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
