//! `loadgen study NAME --tiny`: each declared study runs end to end with this build's
//! binaries, and its results and page hold what the study is for.

use std::path::PathBuf;
use std::sync::Mutex;

use bookstore_record::results::{RunResults, StackStatus};
use bookstore_registry::stacks;

/// `target/debug`, where cargo put this test and the workspace's binaries.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|deps| deps.parent()).unwrap().to_owned()
}

/// One study at a time: each starts its own cluster and servers, and two at once on two
/// cores would time out.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `loadgen study NAME --tiny` with this build's binaries: its results, its page and
/// what it said on stderr.
fn tiny_study(name: &str) -> (RunResults, String, String) {
    let (output_file, page, said, _dir) = tiny_study_files(name);
    (RunResults::read(&output_file).unwrap(), page, said)
}

/// [`tiny_study`]'s results file (in the directory returned beside it), page and stderr.
fn tiny_study_files(name: &str) -> (PathBuf, String, String, tempfile::TempDir) {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (output_file, page_file) = (dir.path().join("study.json"), dir.path().join("study.html"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["study", name, "--tiny", "--bin-dir"])
        .arg(bin_dir())
        .arg("--output")
        .arg(&output_file)
        .arg("--report")
        .arg(&page_file)
        .output()
        .unwrap_or_else(|e| panic!("run loadgen study {name}: {e}"));
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "loadgen study {name} failed:\n{said}");
    let page = std::fs::read_to_string(&page_file).unwrap();
    (output_file, page, said, dir)
}

#[test]
fn the_deployment_study_grid_runs_end_to_end_and_its_page_answers_per_latency_and_pool() {
    // loadgen study deployment --tiny: pools 2 and 4, directly and 2 ms away, the async
    // stack and the blocking one with threads = pool and = 2 × pool, checkoutCreate.
    let (results, page, _) = tiny_study("deployment");
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
}

#[test]
fn the_connections_study_holds_its_idle_connections_through_audited_windows_and_its_page_has_the_slope()
 {
    // loadgen study connections --tiny: axum-serde-sqlx at 0, 100 and 300 idle
    // connections, bookById and checkoutCreate at c=8, 2 rounds.
    let (results, page, said) = tiny_study("connections");
    // Each idle party passed its contract check with its connections held.
    assert!(said.contains("contract check passed with 300 idle connections held"), "{said}");
    let parties: Vec<(&str, Option<u64>)> =
        results.stacks.iter().map(|s| (s.name.as_str(), s.idle_connections)).collect();
    assert_eq!(
        parties,
        [
            ("axum-serde-sqlx", None),
            ("axum-serde-sqlx.idle100", Some(100)),
            ("axum-serde-sqlx.idle300", Some(300))
        ]
    );
    for stack in &results.stacks {
        assert_eq!(stack.status, StackStatus::Measured, "{}", stack.name);
        for cell in &stack.cells {
            // Every window held what it asked for, and its sampled answers and its write
            // audit passed with them open.
            let held = cell.idle.map(|i| (i.held, i.refused, i.dropped));
            assert_eq!(held, stack.idle_connections.map(|n| (n, 0, 0)), "{}", stack.name);
            assert!(cell.problems.is_empty(), "{}: {:?}", stack.name, cell.problems);
            if cell.scenario == "checkoutCreate" {
                assert!(cell.audit.as_ref().is_some_and(|a| a.passed), "{}", stack.name);
            }
            if let Some(idle) = cell.idle {
                // The server holds a descriptor per connection beside its pool's.
                assert!(idle.server_fds.unwrap() >= idle.held, "{idle:?}");
            }
        }
    }
    let slopes = page.split("data-connections=\"slopes\"").nth(1).expect("the slopes table");
    let table = slopes.split("</table>").next().unwrap();
    assert!(table.contains("<td>0, 100, 300</td>"), "{table}");
    assert!(page.contains("data-connections-load=\"checkoutCreate:8\""));
}

#[test]
fn the_capacity_study_restarts_every_party_each_block_and_its_page_has_each_capacity() {
    // loadgen study capacity --tiny: axum-serde-sqlx against its twin at bookById, c = 8,
    // p99 ≤ 10 ms, within 15 s.
    let (file, page, said, _dir) = tiny_study_files("capacity");
    let results = bookstore_record::capacity::CapacityResults::read(&file).unwrap();
    assert_eq!(results.parties.len(), 2, "the stack and its twin");
    assert_eq!(results.parties[0].what, results.parties[1].what);
    assert_eq!(results.run.status, bookstore_record::RunStatus::Complete, "{said}");
    // A fresh process of each in every block, one ladder each that brackets its capacity.
    assert!(results.blocks.len() >= 3, "a look needs three blocks: {said}");
    assert_eq!(results.processes as usize, results.blocks.len());
    for block in &results.blocks {
        for ladder in &block.ladders {
            let capacity = ladder.capacity.and_then(|c| c.rate_rps()).expect("bracketed");
            assert!(ladder.steps.iter().any(|s| s.met && s.rate_rps <= capacity), "{ladder:?}");
            assert!(ladder.steps.iter().any(|s| !s.met && s.rate_rps >= capacity), "{ladder:?}");
        }
    }
    // Each capacity with its interval, and the twin's answer beside it.
    assert_eq!(results.capacities.len(), 2);
    for capacity in &results.capacities {
        assert!(capacity.low_rps <= capacity.rate_rps && capacity.rate_rps <= capacity.high_rps);
    }
    assert_eq!(results.answers.len(), 1);
    assert!(page.contains("one line per process"), "the ladders drawn");
    // The page's text as a reader sees it: the template escapes a '/'.
    let text = page.replace("&#x2f;", "/");
    let capacity = &results.capacities[0];
    let shown = format!(
        "{:.0} req/s [{:.0}–{:.0}]",
        capacity.rate_rps, capacity.low_rps, capacity.high_rps
    );
    assert!(text.contains(&shown), "{shown} not on the page");
}

#[test]
fn the_factorial_study_measures_its_grid_audited_and_its_page_has_each_axis_s_effect() {
    // loadgen study factorial --tiny: axum and hyper × serde_json and sonic-rs × diesel
    // and diesel-async, and the preset axum-serde-diesel beside its triple; bookById and
    // checkoutCreate at c=8, 2 rounds.
    let (results, page, _) = tiny_study("factorial");
    let names: Vec<&str> = results.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 9, "{names:?}");
    assert!(names.contains(&"hyper+sonic-rs+diesel-async") && names.contains(&"axum-serde-diesel"));
    for stack in &results.stacks {
        assert_eq!(stack.status, StackStatus::Measured, "{}", stack.name);
        // A composed stack records the binary and flags that made it its triple.
        let info = stacks::find(&stack.name).unwrap();
        let launch: Vec<String> =
            std::iter::once(info.binary.to_owned()).chain(info.launch_args()).collect();
        let expected = if info.kind == stacks::Kind::Composed { launch } else { Vec::new() };
        assert_eq!(stack.launch, expected, "{}", stack.name);
        for cell in &stack.cells {
            assert!(cell.problems.is_empty(), "{}: {:?}", stack.name, cell.problems);
            if cell.scenario == "checkoutCreate" {
                assert!(cell.audit.as_ref().is_some_and(|a| a.passed), "{}", stack.name);
                // The same five statements per checkout, whatever the access.
                let per_request = cell.sql.as_ref().map_or(0.0, |s| s.statements_per_request);
                assert!((per_request - 5.0).abs() < 0.05, "{}: {per_request}", stack.name);
            }
        }
    }
    // Per scenario the grid's three effects, each a ratio with its interval, and the
    // largest interaction; the preset against its triple.
    for scenario in ["bookById", "checkoutCreate"] {
        let table = page
            .split(&format!("data-costs=\"{scenario}:8\""))
            .nth(1)
            .unwrap_or_else(|| panic!("the effects of {scenario}"))
            .split("</table>")
            .next()
            .unwrap();
        for contrast in ["hyper ÷ axum", "sonic-rs ÷ serde_json", "diesel-async ÷ diesel"] {
            let row = table.split("<tr>").find(|r| r.contains(contrast)).expect(contrast);
            assert!(row.contains("× ["), "{row}");
        }
    }
    assert!(page.contains("largest interaction: "));
    let binary = page.split("data-binary-check").nth(1).expect("the binary check");
    assert!(binary.contains("axum+serde_json+diesel</td>"), "{binary}");
}

#[test]
fn the_layout_study_runs_each_framework_in_both_layouts_and_its_page_separates_them() {
    // loadgen study layout --tiny: axum and actix-web × their own layout and per-core ×
    // sqlx, and a twin of the first; smallJson and bookById at c=8, 2 rounds.
    let (results, page, _) = tiny_study("layout");
    let names: Vec<&str> = results.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.contains(&"actix-web+serde_json+sqlx@per-core"), "{names:?}");
    for stack in &results.stacks {
        assert_eq!(stack.status, StackStatus::Measured, "{}", stack.name);
        let per_core = stack.name.ends_with("@per-core");
        assert_eq!(
            stack.launch.windows(2).any(|w| w == ["--layout", "per-core"]),
            per_core,
            "{:?}",
            stack.launch
        );
    }
    let table = page
        .split("data-costs=\"bookById:8\"")
        .nth(1)
        .expect("the effects of bookById")
        .split("</table>")
        .next()
        .unwrap();
    for contrast in
        ["per-core ÷ framework", "actix-web ÷ axum, per-core", "per-core ÷ framework, actix-web"]
    {
        let row = table.split("<tr>").find(|r| r.contains(contrast)).expect(contrast);
        assert!(row.contains("× ["), "{row}");
    }
}
