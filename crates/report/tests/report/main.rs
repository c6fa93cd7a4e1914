//! The summary page and `loadgen compare`, rendered from a checked-in results file of a real
//! (short) run: five stacks, three scenarios, concurrency 8 and 16, three rounds per cell.

mod capacity;
mod compare;
mod connections;
mod cpu;
mod equal_load;
mod example;
mod exports;
mod looks;
mod twins;

use bookstore_record::faults::FaultsResults;
use bookstore_record::results::{Audit, RunResults};
use bookstore_record::warnings::{Warning, WarningKind};
use bookstore_report::compare::{compare, pair_verdicts, pairs_table, render as render_compare};
use bookstore_report::render;

fn fixture() -> RunResults {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-rounds3.json");
    RunResults::read(&path).expect("the fixture reads under the current schema")
}

/// Multiplies every rate of `stack` in `scenario` by `factor`, round by round.
fn scale(run: &mut RunResults, stack: &str, scenario: &str, factor: f64) {
    let stack = run.stacks.iter_mut().find(|s| s.name == stack).unwrap();
    for cell in stack.cells.iter_mut().filter(|c| c.scenario == scenario) {
        cell.goodput_rps *= factor;
        cell.throughput_rps *= factor;
        cell.counts.ok = (cell.counts.ok as f64 * factor) as u64;
    }
}

/// The text of the page between two markers, tags removed, spaces collapsed.
fn text_between(page: &str, from: &str, to: &str) -> String {
    let start = page.find(from).unwrap_or_else(|| panic!("no {from}"));
    let end = start + page[start..].find(to).unwrap_or_else(|| panic!("no {to}"));
    let mut text = String::new();
    let mut in_tag = false;
    for c in page[start..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn headline(page: &str) -> String {
    text_between(page, "id=\"headline\"", "id=\"scenarios\"")
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
        let beside = cell.beside_concurrency.expect("measured beside the stacks");
        assert_eq!(cell.driver, None, "a file from when sqlx was the only driver");
        let (scenario, clients) = (&cell.scenario, cell.concurrency);
        let id = format!("data-cell=\"db-ceiling-sqlx-{clients}:{scenario}:{beside}\"");
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
        "Disqualified cells",
        "How verdicts are made",
        "Write audits",
        "SQL statements per request",
    ] {
        assert!(page.contains(section), "missing section {section}");
    }
    assert_eq!(
        page.matches("<svg class=\"chart\"").count(),
        3 * 4,
        "per scenario a bar chart, two latency charts at saturation and one at equal load"
    );
}

#[test]
fn cells_show_their_median_and_range_over_the_rounds() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    let stack = &run.stacks[0];
    let mut samples: Vec<f64> = stack
        .cells
        .iter()
        .filter(|c| c.scenario == "bookById" && c.concurrency == 16)
        .map(|c| c.goodput_rps)
        .collect();
    assert_eq!(samples.len(), 3);
    samples.sort_by(f64::total_cmp);
    let shown = format!("{:.0} ({:.0}–{:.0})", samples[1], samples[0], samples[2]);
    assert!(page.contains(&shown), "the page should show {shown} for {} bookById c=16", stack.name);
    assert!(page.contains("3 rounds per cell"));
}

#[test]
fn one_round_gives_no_verdict_and_says_why() {
    let mut run = fixture();
    run.settings.measurement.rounds = 1;
    for stack in &mut run.stacks {
        stack.cells.retain(|c| c.round == 0);
    }
    let page = render(&[run]).unwrap();
    assert!(page.contains("One round per cell: no comparison can have an interval"));
    let headline = headline(&page);
    assert!(!headline.contains("best:"), "{headline}");
    assert!(!headline.contains('×'), "no ratio without an interval: {headline}");
    assert!(headline.contains("no comparison"), "{headline}");
}

#[test]
fn several_runs_are_read_as_more_rounds() {
    let mut first = fixture();
    for stack in &mut first.stacks {
        stack.cells.retain(|c| c.round < 2);
    }
    first.settings.measurement.rounds = 2;
    let mut second = fixture();
    for stack in &mut second.stacks {
        stack.cells.retain(|c| c.round == 2);
    }
    second.settings.measurement.rounds = 1;
    second.run.id = "second".into();
    let page = render(&[first, second]).unwrap();
    assert!(page.contains("3 rounds per cell (2 run(s))"));
    assert!(page.contains("<code>second</code>"));
}

#[test]
fn a_clearly_faster_stack_is_called_best_and_the_others_slower_with_intervals() {
    let mut run = fixture();
    scale(&mut run, "actix-simd-sqlx", "bookById", 3.0);
    let page = render(std::slice::from_ref(&run)).unwrap();
    let headline = headline(&page);
    let row =
        &headline[headline.find("bookById 8").unwrap()..headline.find("bookById 16").unwrap()];
    assert!(row.contains("best: actix-simd-sqlx"), "{row}");
    // Every other stack is a third or so of it, with an interval below 1.
    for stack in ["axum-serde-sqlx", "axum-serde-diesel", "actix-serde-diesel", "hyper-sonic-sqlx"]
    {
        let after =
            &row[row.find(&format!("{stack} 0.")).unwrap_or_else(|| panic!("{stack}: {row}"))..];
        assert!(after.contains("× [0."), "{stack}: {after}");
    }
}

#[test]
fn stacks_the_data_cannot_tell_apart_share_the_lead_and_no_best_is_claimed() {
    let mut run = fixture();
    // Two stacks identical round by round, far ahead of the rest: neither is best.
    let copy = run.stacks.iter().find(|s| s.name == "axum-serde-sqlx").unwrap().cells.clone();
    run.stacks.iter_mut().find(|s| s.name == "hyper-sonic-sqlx").unwrap().cells = copy;
    scale(&mut run, "axum-serde-sqlx", "health", 3.0);
    scale(&mut run, "hyper-sonic-sqlx", "health", 3.0);
    let page = render(std::slice::from_ref(&run)).unwrap();
    let headline = headline(&page);
    let row = &headline[headline.find("health 8").unwrap()..headline.find("health 16").unwrap()];
    assert!(row.contains("not distinguishable: axum-serde-sqlx hyper-sonic-sqlx"), "{row}");
    assert!(!row.contains("best:"), "{row}");
}

#[test]
fn a_disqualified_cell_is_never_ranked_and_says_why_wherever_it_appears() {
    let mut run = fixture();
    // The fastest stack of checkoutCreate c=16 "lost" checkouts in one round, and is three
    // times faster than anyone: it must not lead.
    scale(&mut run, "hyper-sonic-sqlx", "checkoutCreate", 3.0);
    let stack = run.stacks.iter_mut().find(|s| s.name == "hyper-sonic-sqlx").unwrap();
    let cell = stack
        .cells
        .iter_mut()
        .find(|c| c.scenario == "checkoutCreate" && c.concurrency == 16 && c.round == 1)
        .unwrap();
    let failures = vec!["0 checkout rows but 812 successful checkouts acknowledged".to_owned()];
    cell.audit =
        Some(Audit { passed: false, failures: failures.clone(), ..cell.audit.clone().unwrap() });
    cell.warnings.push(Warning::from(WarningKind::AuditFailed { failures }));
    let page = render(std::slice::from_ref(&run)).unwrap();

    let headline = headline(&page);
    let row = &headline[headline.find("checkoutCreate 16").unwrap()..];
    assert!(row.contains("hyper-sonic-sqlx disqualified: the write audit failed"), "{row}");
    assert!(!row.contains("best: hyper-sonic-sqlx"), "{row}");
    let leaders = &row[..row.find("goodput").unwrap()];
    assert!(!leaders.contains("hyper-sonic-sqlx"), "a disqualified cell leads: {row}");
    let table = text_between(&page, "id=\"scenario-checkoutCreate\"", "id=\"efficiency\"");
    assert!(table.contains("disqualified: the write audit failed"), "{table}");
    let integrity = text_between(&page, "id=\"integrity\"", "Write audits");
    assert!(integrity.contains("hyper-sonic-sqlx · checkoutCreate · c = 16"), "{integrity}");
    // At c = 8 it was honest, and leads.
    let row8 = &headline
        [headline.find("checkoutCreate 8").unwrap()..headline.find("checkoutCreate 16").unwrap()];
    assert!(row8.contains("best: hyper-sonic-sqlx"), "{row8}");
}

#[test]
fn a_results_file_of_version_2_reads_and_its_page_says_equal_load_was_not_measured() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-v2.json");
    let run = RunResults::read(&path).expect("version 2 reads as version 3 without the phase");
    assert_eq!(run.schema_version, 2);
    assert!(run.settings.rates.is_empty() && run.stacks.iter().all(|s| s.equal_load.is_empty()));
    let page = render(std::slice::from_ref(&run)).unwrap();
    let section = text_between(&page, "id=\"equal-load\"", "id=\"efficiency\"");
    assert!(section.contains("Not measured in these runs"), "{section}");
}

#[test]
fn the_method_section_states_this_runs_noise_power_and_calls() {
    let page = render(&[fixture()]).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("false-discovery rate of 5%"), "{method}");
    assert!(method.contains("per-round spread of a pair's log ratio was 0."), "{method}");
    assert!(
        method.contains("with 3 round(s) the median family could call a difference of"),
        "{method}"
    );
    assert!(method.contains("families judged by their shared spread"), "{method}");
    assert!(method.contains("compared pairs were called different"), "{method}");
}

#[test]
fn the_db_ceiling_is_the_faster_drivers_and_says_which_driver_and_clients_set_it() {
    let mut run = fixture();
    // A diesel ceiling beside every sqlx one, 1.5× as fast in bookById only.
    let diesel: Vec<_> = run
        .ceilings
        .db
        .iter()
        .map(|cell| {
            let mut cell = cell.clone();
            cell.driver = Some("diesel".into());
            let factor = if cell.scenario == "bookById" { 1.5 } else { 0.5 };
            cell.goodput_rps *= factor;
            cell.throughput_rps *= factor;
            cell
        })
        .collect();
    let clients = diesel[0].concurrency;
    for cell in &mut run.ceilings.db {
        cell.driver = Some("sqlx".into());
    }
    run.ceilings.db.extend(diesel);
    let page = render(std::slice::from_ref(&run)).unwrap();
    for beside in [8, 16] {
        let diesel = format!("data-cell=\"db-ceiling-diesel-{clients}:bookById:{beside}\"");
        let sqlx = format!("data-cell=\"db-ceiling-sqlx-{clients}:bookById:{beside}\"");
        assert!(page.contains(&diesel), "the faster driver's row: {diesel}");
        assert!(!page.contains(&sqlx), "one ceiling row per cell: {sqlx}");
        let sqlx_list = format!("data-cell=\"db-ceiling-sqlx-{clients}:checkoutCreate:{beside}\"");
        assert!(page.contains(&sqlx_list), "sqlx is the faster driver at checkoutCreate");
    }
    let table = text_between(&page, "id=\"scenario-bookById\"", "id=\"scenario-checkoutCreate\"");
    assert!(
        table.contains(&format!(
            "DB ceiling (diesel, c = {clients}) — same SQL, no HTTP; sqlx at c = {clients}:"
        )),
        "{table}"
    );
    // The stacks' share of the ceiling is of the diesel one: two thirds of what it was.
    let before = render(&[fixture()]).unwrap();
    let efficiency = |page: &str| text_between(page, "id=\"efficiency\"", "id=\"axes\"");
    assert!(efficiency(&page).contains("÷ DB ceiling (diesel"), "{}", efficiency(&page));
    assert_ne!(efficiency(&page), efficiency(&before));
}

#[test]
fn the_page_says_in_how_many_windows_the_machine_was_cpu_bound_and_shows_the_clients_share() {
    let run = fixture();
    let cpus = run.environment.cpu_count as f64;
    let windows: Vec<f64> = run
        .stacks
        .iter()
        .flat_map(|s| &s.cells)
        .map(|c| {
            let cpu = &c.cpu_seconds;
            (cpu.client + cpu.server.unwrap() + cpu.postgres.unwrap_or(0.0))
                / c.window_seconds
                / cpus
        })
        .collect();
    let bound = windows.iter().filter(|&&share| share >= 0.9).count();
    assert!(bound > 0 && bound < windows.len(), "the fixture has both kinds: {bound}");
    let page = render(std::slice::from_ref(&run)).unwrap();
    let efficiency = text_between(&page, "id=\"efficiency\"", "id=\"axes\"");
    let sentence = format!("in {bound} of the {} stack windows at saturation", windows.len());
    assert!(efficiency.contains(&sentence), "{efficiency}");
    assert!(efficiency.contains("client CPU (%)"), "{efficiency}");
}

#[test]
fn without_an_equal_load_phase_the_closing_summary_has_rates_only() {
    let mut run = fixture();
    for stack in &mut run.stacks {
        stack.equal_load.clear();
    }
    run.settings.rates.clear();
    let summary = bookstore_report::terminal::summary(std::slice::from_ref(&run));
    assert!(!summary.contains("p99"), "{summary}");
    let line = summary.lines().find(|l| l.starts_with("bookById")).unwrap();
    assert!(line.contains("/s") && !line.contains(" ms") && !line.contains(" µs"), "{line}");
}
