//! CPU per request: each component's µs per answered request on the page, the terminal and
//! the exports; a twin's CPU judged against its stack; the projection's arithmetic.

use super::fixture;
use super::twins::with_twin;
use bookstore_record::results::{Cell, RunResults, TierCpus};
use bookstore_report::export::{Row, rows};
use bookstore_report::{Format, render, terminal};

/// The saturation windows of `stack` in `scenario` at `concurrency`.
fn cells<'a>(run: &'a RunResults, stack: &str, scenario: &str, concurrency: u32) -> Vec<&'a Cell> {
    let stack = run.stacks.iter().find(|s| s.name == stack).unwrap();
    stack.cells.iter().filter(|c| c.scenario == scenario && c.concurrency == concurrency).collect()
}

/// The geometric mean of `us` over those windows.
fn geomean(cells: &[&Cell], us: impl Fn(&Cell) -> f64) -> f64 {
    (cells.iter().map(|c| us(c).ln()).sum::<f64>() / cells.len() as f64).exp()
}

fn saturation_row<'a>(rows: &'a [Row], stack: &str, scenario: &str, concurrency: u32) -> &'a Row {
    rows.iter()
        .find(|r| {
            r.load == "saturation"
                && r.stack == stack
                && r.scenario == scenario
                && r.concurrency == Some(concurrency)
        })
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-9
}

#[test]
fn each_components_cost_is_its_cpu_seconds_over_the_requests_on_the_page_terminal_and_exports() {
    let run = fixture();
    let windows = cells(&run, "axum-serde-sqlx", "bookById", 8);
    let per_request = |seconds: fn(&Cell) -> f64| {
        geomean(&windows, move |c| seconds(c) * 1e6 / c.counts.total() as f64)
    };
    let server = per_request(|c| c.cpu_seconds.server.unwrap());
    let postgres = per_request(|c| c.cpu_seconds.postgres.unwrap());
    let client = per_request(|c| c.cpu_seconds.client);
    let all = rows(std::slice::from_ref(&run));
    let row = saturation_row(&all, "axum-serde-sqlx", "bookById", 8);
    for (us, low, high, expected) in [
        (row.server_cpu_us, row.server_cpu_us_low, row.server_cpu_us_high, server),
        (row.postgres_cpu_us, row.postgres_cpu_us_low, row.postgres_cpu_us_high, postgres),
        (row.client_cpu_us, row.client_cpu_us_low, row.client_cpu_us_high, client),
    ] {
        let (us, low, high) = (us.unwrap(), low.unwrap(), high.unwrap());
        assert!(close(us, expected), "{us} µs against {expected}");
        assert!(low < us && us < high, "{low} < {us} < {high}");
    }
    // A scenario without the database costs PostgreSQL nothing it could count: no figure.
    assert_eq!(saturation_row(&all, "axum-serde-sqlx", "health", 8).postgres_cpu_us, None);

    let page = render(std::slice::from_ref(&run)).unwrap();
    let section = &page[page.find("id=\"cpu\"").unwrap()..page.find("id=\"axes\"").unwrap()];
    let digits = bookstore_stats::digits;
    for figure in [server, postgres, client] {
        assert!(
            section.contains(&format!("<td>{} [", digits(figure))),
            "{} in {section}",
            digits(figure)
        );
    }
    let summary = terminal::summary(std::slice::from_ref(&run));
    assert!(
        summary.contains("CPU per request, µs (server / PostgreSQL / client, c = 8"),
        "{summary}"
    );
    assert!(summary.contains(&format!("axum-serde-sqlx {} [", digits(server))), "{summary}");
}

#[test]
fn windows_agreeing_to_the_clock_tick_get_an_interval_of_a_tick_not_of_zero() {
    let mut run = fixture();
    let stack = run.stacks.iter_mut().find(|s| s.name == "axum-serde-sqlx").unwrap();
    let same = stack
        .cells
        .iter()
        .find(|c| c.scenario == "bookById" && c.concurrency == 8)
        .unwrap()
        .clone();
    for cell in stack.cells.iter_mut().filter(|c| c.scenario == "bookById" && c.concurrency == 8) {
        cell.cpu_seconds = same.cpu_seconds;
        cell.counts = same.counts.clone();
    }
    let all = rows(std::slice::from_ref(&run));
    let row = saturation_row(&all, "axum-serde-sqlx", "bookById", 8);
    let seconds = same.cpu_seconds.server.unwrap();
    // One tick (10 ms) either way of the window's CPU seconds.
    let tick = 1.0 + 0.01 / seconds;
    assert!(close(row.server_cpu_us_high.unwrap() / row.server_cpu_us.unwrap(), tick));
    assert!(close(row.server_cpu_us.unwrap() / row.server_cpu_us_low.unwrap(), tick));
}

/// The terminal's count of `twin`'s CPU families called different: (called, compared).
fn twin_cpu_calls(run: &RunResults) -> (usize, usize) {
    let summary = terminal::summary(std::slice::from_ref(run));
    let line = summary.lines().find(|l| l.starts_with("twin ")).unwrap();
    let rest =
        &line[line.find("its CPU per request in ").unwrap() + "its CPU per request in ".len()..];
    let mut words = rest.split_whitespace();
    let called = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("of"));
    (called, words.next().unwrap().parse().unwrap())
}

#[test]
fn a_twin_costing_half_again_the_servers_cpu_is_called_and_one_costing_the_same_is_not() {
    let mut run = with_twin();
    let (called, compared) = twin_cpu_calls(&run);
    assert_eq!(called, 0, "the same CPU per request, round for round");
    // Three scenarios × two concurrencies × three components (health's PostgreSQL: none).
    assert!(compared >= 15, "{compared} families");
    let twin = run.stacks.iter_mut().find(|s| s.name == "axum-serde-sqlx.twin").unwrap();
    for cell in &mut twin.cells {
        cell.cpu_seconds.server = cell.cpu_seconds.server.map(|s| s * 1.5);
    }
    let (called, _) = twin_cpu_calls(&run);
    assert!(called >= 3, "the server's CPU, called in {called} families");
}

#[test]
fn the_projection_is_each_groups_cpus_over_its_processes_summed_cost_beside_the_measured_rate() {
    let base = fixture();
    let mut placed = fixture();
    placed.settings.cpu_placement = vec![
        TierCpus { tier: "server".into(), cpus: vec![0] },
        TierCpus { tier: "db".into(), cpus: vec![1] },
        TierCpus { tier: "client".into(), cpus: vec![1] },
    ];
    let table = Format::Projection.render(&[base.clone(), placed.clone()]).unwrap();
    let windows = cells(&base, "axum-serde-sqlx", "bookById", 8);
    let us = |seconds: fn(&Cell) -> f64| {
        geomean(&windows, move |c| seconds(c) * 1e6 / c.counts.total() as f64)
    };
    let server = us(|c| c.cpu_seconds.server.unwrap());
    let rest = us(|c| c.cpu_seconds.postgres.unwrap()) + us(|c| c.cpu_seconds.client);
    let (projected, by) =
        if server > rest { (1e6 / server, "server") } else { (1e6 / rest, "PostgreSQL + client") };
    let mut rates: Vec<f64> =
        cells(&placed, "axum-serde-sqlx", "bookById", 8).iter().map(|c| c.goodput_rps).collect();
    rates.sort_by(f64::total_cmp);
    let line = format!(
        "| server on 1 CPU, PostgreSQL + client on 1 CPU | axum-serde-sqlx | bookById | 8 | {projected:.0} | {by} | {:.0} |",
        rates[1]
    );
    assert!(table.contains(&line), "{line} in {table}");

    // A run without --cpus: every process on every CPU, one group.
    let table = Format::Projection.render(&[base.clone(), base.clone()]).unwrap();
    let cpus = base.environment.cpu_count;
    let shared = format!(
        "| server + PostgreSQL + client on {cpus} CPUs | axum-serde-sqlx | bookById | 8 | {:.0} |",
        cpus as f64 * 1e6 / (server + rest)
    );
    assert!(table.contains(&shared), "{shared} in {table}");
    // health has no PostgreSQL cost to sum: named as left out, not dropped in silence.
    let left_out = table.lines().find(|l| l.starts_with("Not projected")).expect(&table);
    assert!(left_out.contains("axum-serde-sqlx health c=8"), "{left_out}");
    assert!(!left_out.contains("bookById"), "{left_out}");
    let error = Format::Projection.render(&[base]).unwrap_err();
    assert!(error.to_string().contains("then one or more runs to set against it"), "{error}");
}
