//! The summary page, rendered from a checked-in results file of a real (short) run: five
//! stacks, three scenarios, concurrency 8 and 16, two repeats per cell.

use loadgen::report::render;
use loadgen::report::stats::Summary;
use loadgen::results::RunResults;

fn fixture() -> RunResults {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-repeat2.json");
    RunResults::read(&path).expect("the fixture reads under the current schema")
}

#[test]
fn the_page_matches_its_snapshot() {
    let page = render(&[fixture()]).unwrap();
    insta::assert_snapshot!("summary", page);
}

#[test]
fn the_page_fetches_nothing_from_the_network() {
    let page = render(&[fixture()]).unwrap();
    for needle in ["http://", "https://", "src=", "<link", "<script", "@import", "url("] {
        assert!(!page.contains(needle), "the page contains {needle:?}");
    }
}

#[test]
fn every_cell_of_the_fixture_appears() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    for stack in &run.stacks {
        for cell in &stack.cells {
            let id = format!("data-cell=\"{}:{}:{}\"", stack.name, cell.scenario, cell.concurrency);
            assert!(page.contains(&id), "missing {id}");
        }
    }
    for cell in &run.ceilings.db {
        let id = format!("data-cell=\"db-ceiling:{}:{}\"", cell.scenario, cell.concurrency);
        assert!(page.contains(&id), "missing {id}");
    }
    for cell in &run.ceilings.http {
        assert!(page.contains(&format!("data-cell=\"http-ceiling:health:{}\"", cell.concurrency)));
    }
    for section in [
        "Headline",
        "Efficiency",
        "Axis analysis",
        "Integrity",
        "Method",
        "Write audits",
        "SQL statements per request",
    ] {
        assert!(page.contains(section), "missing section {section}");
    }
    assert_eq!(
        page.matches("<svg class=\"chart\"").count(),
        3 * 3,
        "per scenario a bar chart and two latency charts"
    );
}

#[test]
fn repeated_cells_show_their_median_and_range() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    let stack = &run.stacks[0];
    let samples: Vec<f64> = stack
        .cells
        .iter()
        .filter(|c| c.scenario == "bookById" && c.concurrency == 16)
        .map(|c| c.goodput_rps)
        .collect();
    assert_eq!(samples.len(), 2);
    let summary = Summary::of(&samples).unwrap();
    let shown = format!("{:.0} ({:.0}–{:.0})", summary.median, summary.min, summary.max);
    assert!(page.contains(&shown), "the page should show {shown} for {} bookById c=16", stack.name);
    assert!(page.contains("2 samples per cell"));
}

#[test]
fn a_single_run_says_that_no_tie_test_was_possible() {
    let mut run = fixture();
    run.settings.repeat = 1;
    for stack in &mut run.stacks {
        stack.cells.retain(|c| c.repeat == 0);
    }
    let page = render(&[run]).unwrap();
    assert!(page.contains("no tie or significance test was possible"));
    assert!(!page.contains(">tie<"), "no tie can be claimed from one sample");
}

#[test]
fn several_runs_are_read_as_repeats() {
    let mut first = fixture();
    for stack in &mut first.stacks {
        stack.cells.retain(|c| c.repeat == 0);
    }
    first.settings.repeat = 1;
    let mut second = fixture();
    for stack in &mut second.stacks {
        stack.cells.retain(|c| c.repeat == 1);
    }
    second.settings.repeat = 1;
    second.run.id = "second".into();
    let page = render(&[first, second]).unwrap();
    assert!(page.contains("2 samples per cell (2 run(s))"), "two runs of one sample each");
    assert!(page.contains("<code>second</code>"));
}

#[test]
fn a_database_ceiling_measured_once_per_scenario_bounds_every_concurrency() {
    // Today's suite: one DB ceiling cell per scenario (and repeat) at `pool_max` clients.
    let mut run = fixture();
    let pool_max = run.settings.pool_max;
    run.ceilings.db.retain(|c| c.concurrency == 8);
    for cell in &mut run.ceilings.db {
        cell.concurrency = pool_max;
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let ceiling = &run.ceilings.db.iter().find(|c| c.scenario == "bookById").unwrap();
    for concurrency in [8, 16] {
        let id = format!("data-cell=\"db-ceiling:bookById:{concurrency}\"");
        let row = page.split(&id).nth(1).unwrap_or_else(|| panic!("missing {id}"));
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains(&format!("{:.0}", ceiling.goodput_rps)), "{id}: {row}");
    }
    assert!(!page.contains(&format!("db-ceiling:bookById:{pool_max}")));
}

mod compare {
    use super::fixture;
    use loadgen::report::compare::{compare, render, table};

    #[test]
    fn a_run_compared_with_itself_shows_no_change() {
        let run = fixture();
        let changes = compare(std::slice::from_ref(&run), std::slice::from_ref(&run));
        assert!(!changes.is_empty());
        for change in &changes {
            assert_eq!(change.rate_change_percent, 0.0, "{change:?}");
            assert_eq!(change.significant, Some(false), "two samples a side: a test was possible");
        }
    }

    #[test]
    fn a_faster_stack_shows_its_change_and_the_others_none() {
        let base = fixture();
        let mut new = fixture();
        for cell in &mut new.stacks.iter_mut().find(|s| s.name == "hyper-sonic-sqlx").unwrap().cells
        {
            cell.goodput_rps *= 1.25;
            cell.counts.ok = (cell.counts.ok as f64 * 1.25) as u64;
            cell.counts.rejected = (cell.counts.rejected as f64 * 1.25) as u64;
        }
        let changes = compare(&[base], &[new]);
        for change in &changes {
            if change.target == "hyper-sonic-sqlx" {
                assert!((change.rate_change_percent - 25.0).abs() < 0.1, "{change:?}");
                assert!(change.significant.is_some());
            } else {
                assert_eq!(change.rate_change_percent, 0.0, "{change:?}");
            }
        }
        assert!(table(&changes).contains("+25.0%"));
    }

    #[test]
    fn single_samples_cannot_be_called_significant() {
        let mut one = fixture();
        for stack in &mut one.stacks {
            stack.cells.retain(|c| c.repeat == 0);
        }
        one.ceilings.http.retain(|c| c.repeat == 0);
        one.ceilings.db.retain(|c| c.repeat == 0);
        let changes = compare(std::slice::from_ref(&one), std::slice::from_ref(&one));
        assert!(changes.iter().all(|c| c.significant.is_none()));
        let page =
            render(std::slice::from_ref(&one), std::slice::from_ref(&one), &changes).unwrap();
        assert!(page.contains("no change can be called significant"));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
