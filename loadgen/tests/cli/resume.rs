//! A suite killed with SIGKILL and resumed from its journal: during a window, between
//! rounds, and at the end, when only the results file was left to write. Two real stacks
//! on a throwaway PostgreSQL, two scenarios (one of them writes), three rounds: twelve
//! windows, each round two.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bookstore_record::journal::{self, Read};
use bookstore_record::results::{JOURNAL_KIND, Placed, RunResults};

/// The debug binaries beside this test.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|deps| deps.parent()).unwrap().to_owned()
}

const WINDOWS: usize = 12;

/// The run's flags, after `suite`.
fn flags() -> Vec<String> {
    [
        "--stacks",
        "axum-serde-sqlx,hyper-sonic-sqlx",
        "--scenarios",
        "bookById,checkoutCreate",
        "--concurrency",
        "4",
        "--rounds",
        "3",
        "--max-rounds",
        "3",
        "--duration",
        "200ms",
        "--warmup",
        "50ms",
        "--no-equal-load",
        "--no-twin",
        "--no-ceilings",
        "--pool-max",
        "4",
        "--client-workers",
        "1",
    ]
    .map(str::to_owned)
    .into()
}

fn suite(dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_loadgen"));
    command.arg("suite").args(flags()).arg("--bin-dir").arg(bin_dir());
    command.arg("--report").arg(dir.join("run.html")).args(extra);
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

/// Window lines and round ends in the journal so far.
fn counts(journal: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    // The lines written whole: a kill may come while the last is being written.
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    let (mut windows, mut ends) = (0, 0);
    for line in whole.lines() {
        windows += usize::from(line.contains("\"entry\":\"window\""));
        ends += usize::from(line.contains("\"entry\":\"round_end\""));
    }
    (windows, ends)
}

/// Waits until `until(counts)` holds, then kills `child` with SIGKILL at once.
fn kill_when(mut child: Child, journal: &Path, until: impl Fn((usize, usize)) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !until(counts(journal)) {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before its kill");
        assert!(Instant::now() < deadline, "the journal did not grow: {:?}", counts(journal));
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

fn read(journal: &Path) -> Read<RunResults, Vec<Placed>> {
    journal::read(journal, JOURNAL_KIND).unwrap()
}

#[test]
fn a_suite_killed_at_any_point_resumes_with_every_planned_window_once() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json.zst");
    let journal = journal::beside(&output);
    let resume = ["--resume", journal.to_str().unwrap()];

    // 1. During a window: the third window (the first of round 2) is running.
    let child = suite(dir.path(), &["--output", output.to_str().unwrap()]).spawn().unwrap();
    kill_when(child, &journal, |(windows, _)| windows >= 3);
    let first = read(&journal);
    assert_eq!((first.windows.len(), first.cut_round), (2, 1), "round 1 whole, round 2 cut");

    // 2. Resumed, then killed between rounds: the fourth round has just ended.
    let child = suite(dir.path(), &resume).spawn().unwrap();
    kill_when(child, &journal, |(_, ends)| ends >= 4);
    let second = read(&journal);
    // What the first part measured is kept as it was, never measured again.
    assert_eq!(second.windows[..2], first.windows[..2]);
    assert_eq!(second.resumed_at.len(), 1);

    // 3. Resumed, then killed once every window is journaled: only the results were left.
    let child = suite(dir.path(), &resume).spawn().unwrap();
    kill_when(child, &journal, |(_, ends)| ends >= WINDOWS / 2);
    let third = read(&journal);
    assert_eq!(third.windows.len(), WINDOWS);

    // 4. Resumed to its end: nothing is left to measure.
    let run = suite(dir.path(), &resume).output().unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("{WINDOWS} windows measured before are taken from its journal")),
        "{said}"
    );
    let last = read(&journal);
    assert_eq!(last.windows, third.windows, "nothing measured twice");
    assert_eq!(last.resumed_at.len(), 3);

    // Every planned window exactly once, those of the journal as they were.
    let results = RunResults::read(&output).unwrap();
    assert_eq!(results.run.resumed_at, last.resumed_at);
    assert_eq!(results.run.id, first.run);
    for stack in &results.stacks {
        let mut seen: Vec<(String, u32)> =
            stack.cells.iter().map(|c| (c.scenario.clone(), c.round)).collect();
        seen.sort();
        let planned: Vec<(String, u32)> = ["bookById", "checkoutCreate"]
            .iter()
            .flat_map(|s| (0..3).map(move |r| ((*s).to_owned(), r)))
            .collect();
        assert_eq!(seen, planned, "{}", stack.name);
        // The writes were audited in every window, resumed or not.
        for cell in stack.cells.iter().filter(|c| c.scenario == "checkoutCreate") {
            assert!(cell.audit.as_ref().is_some_and(|a| a.passed), "{}", stack.name);
        }
    }
    let (from_journal, _) = RunResults::from_journal(&journal).unwrap();
    for (kept, journaled) in results.stacks.iter().zip(&from_journal.stacks) {
        assert_eq!(kept.cells, journaled.cells, "{}", kept.name);
    }
    // Its verdicts are the journal's: `loadgen report` of either says the same.
    let report = |file: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_loadgen"))
            .args(["report", "--format", "json"])
            .arg(file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    assert_eq!(report(&output), report(&journal));
    // The page says it was resumed, and when.
    let page = std::fs::read_to_string(dir.path().join("run.html")).unwrap();
    assert!(page.contains(&format!("resumed at {}", last.resumed_at[0])), "the page says so");
}

#[test]
fn a_resume_with_other_measured_flags_is_refused_in_one_line_with_exit_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json.zst");
    let journal = journal::beside(&output);
    let child = suite(dir.path(), &["--output", output.to_str().unwrap()]).spawn().unwrap();
    kill_when(child, &journal, |(windows, _)| windows >= 1);
    let refused = suite(dir.path(), &["--resume", journal.to_str().unwrap(), "--rounds", "4"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    let line = said.lines().find(|l| l.contains("--resume")).expect("the reason");
    assert!(
        line.contains("differ: ") && line.contains("rounds (3 in the journal, 4 now)"),
        "{line}"
    );
    // Nothing was measured or changed: the journal holds what it held.
    assert_eq!(counts(&journal).0, read(&journal).windows.len() + read(&journal).cut_round);
}

#[test]
fn a_study_resumed_from_a_journal_not_of_it_is_refused_in_one_line_with_exit_status_2() {
    // The schedule study runs two designs in turn: the journal's name must say which run.
    let journal = "summary/results/2026-12-07T20-42-22Z-factorial-study.journal";
    let refused = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["study", "schedule", "--tiny", "--resume", journal])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert_eq!(
        said.trim(),
        format!(
            "loadgen: --resume {journal}: not a journal of study schedule with --runs 2 \
             (theirs are named like <UTC time>-schedule-rotated-1.journal)"
        )
    );
}
