//! The summary page and `loadgen compare`, rendered from a checked-in results file of a real
//! (short) run: five stacks, three scenarios, concurrency 8 and 16, three rounds per cell.

use bookstore_pages::compare::{compare, pair_verdicts, pairs_table, render as render_compare};
use bookstore_pages::render;
use bookstore_record::faults::FaultsResults;
use bookstore_record::results::{Audit, RunResults};
use bookstore_record::warnings::{Warning, WarningKind};

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
    run.settings.rounds = 1;
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
    first.settings.rounds = 2;
    let mut second = fixture();
    for stack in &mut second.stacks {
        stack.cells.retain(|c| c.round == 2);
    }
    second.settings.rounds = 1;
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

/// The fixed-load table of `scenario`, as text.
fn equal_load_table(page: &str, scenario: &str) -> String {
    let from = format!("id=\"equal-load-{scenario}\"");
    let start = page.find(&from).unwrap_or_else(|| panic!("no {from}"));
    // The table, after the section's charts (whose legends name the stacks too).
    let table = start + page[start..].find("<table").unwrap();
    text_between(&page[table..], "<table", "</table>")
}

/// The row of `stack` in a table's text: from its name to the next stack's.
fn row<'t>(table: &'t str, stack: &str, stacks: &[&str]) -> &'t str {
    let start = table.find(stack).unwrap_or_else(|| panic!("no {stack} in {table}"));
    let rest = &table[start + stack.len()..];
    let end = stacks.iter().filter_map(|s| rest.find(s)).min().unwrap_or(rest.len());
    &table[start..start + stack.len() + end]
}

const STACKS: [&str; 5] = [
    "axum-serde-sqlx",
    "axum-serde-diesel",
    "actix-serde-diesel",
    "actix-simd-sqlx",
    "hyper-sonic-sqlx",
];

#[test]
fn every_equal_load_window_appears_under_its_rate() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    assert!(page.contains("4. Latency at equal load"));
    for stack in &run.stacks {
        assert_eq!(stack.equal_load.len(), 9, "3 scenarios × 3 rounds");
        for cell in &stack.equal_load {
            let id = format!("data-cell=\"{}:{}:70% of the slowest\"", stack.name, cell.scenario);
            assert!(page.contains(&id), "missing {id}");
        }
    }
    let section =
        text_between(&page, "id=\"equal-load-bookById\"", "id=\"equal-load-checkoutCreate\"");
    assert!(section.contains("70% of the slowest : 13407 requests/s"), "{section}");
    assert!(section.contains("requests/s offered to every stack, in 3 round(s)"), "{section}");
}

#[test]
fn a_clearly_lower_p99_at_equal_load_is_best_and_a_stack_that_could_not_carry_the_rate_is_not_ranked()
 {
    let mut run = fixture();
    // bookById's p99 at equal load, round by round: hyper-sonic-sqlx a third of the others';
    // axum-serde-diesel lower still, but saturated in one round.
    for (index, stack) in run.stacks.iter_mut().enumerate() {
        let name = stack.name.clone();
        for cell in stack.equal_load.iter_mut().filter(|c| c.scenario == "bookById") {
            let drift = 1.0 + 0.1 * f64::from(cell.round);
            let p99_us = match name.as_str() {
                "hyper-sonic-sqlx" => 1_000.0 * drift,
                "axum-serde-diesel" => 500.0 * drift,
                _ => (3_000.0 + 97.0 * index as f64) * drift,
            };
            cell.latency_ok_us.as_mut().unwrap().p99_us = p99_us as u64;
            if name == "axum-serde-diesel" && cell.round == 1 {
                cell.warnings
                    .push(Warning::from(WarningKind::Saturated { achieved_fraction: 0.62 }));
            }
            if name == "actix-serde-diesel" && cell.round == 2 {
                let kind = WarningKind::ClientLimited {
                    send_lag_p50_us: 40,
                    send_lag_p99_us: 2_500,
                    latency_p99_us: 3_000,
                };
                cell.warnings.push(Warning::from(kind));
            }
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let table = equal_load_table(&page, "bookById");
    assert!(row(&table, "hyper-sonic-sqlx", &STACKS).contains("best (lowest)"), "{table}");
    let saturated = row(&table, "axum-serde-diesel", &STACKS);
    assert!(saturated.contains("not ranked: saturated at this rate: only 62.0%"), "{saturated}");
    assert!(saturated.contains("(in 1 of 3 rounds)"), "{saturated}");
    for stack in ["axum-serde-sqlx", "actix-serde-diesel", "actix-simd-sqlx"] {
        // About three times the first's p99, the interval above 1.
        let row = row(&table, stack, &STACKS);
        assert!(row.contains("× [2.") || row.contains("× [3."), "{row}");
    }
    // A round whose client fell behind is left out; the others still compare (above).
    let limited = row(&table, "actix-serde-diesel", &STACKS);
    assert!(limited.contains("1 round(s) client-limited, left out"), "{limited}");
    let summary = bookstore_pages::terminal::summary(std::slice::from_ref(&run));
    let line = summary
        .lines()
        .skip_while(|l| !l.starts_with("bookById"))
        .find(|l| l.contains("hyper-sonic-sqlx"))
        .unwrap();
    assert!(line.trim_end().ends_with("best"), "{summary}");
}

#[test]
fn each_blocking_stacks_equal_load_p99_is_compared_with_the_median_async_stacks() {
    let mut run = fixture();
    // bookById's p99 at equal load: the async stacks 1.0, 1.1 and 1.2 ms (the median is
    // actix-simd-sqlx's), axum-serde-diesel 1.3 times that, actix-serde-diesel 5 times;
    // every round drifts alike, with a little noise of each stack's own.
    for (index, stack) in run.stacks.iter_mut().enumerate() {
        let name = stack.name.clone();
        for cell in stack.equal_load.iter_mut().filter(|c| c.scenario == "bookById") {
            let noise = 1.0 + 0.02 * f64::from((cell.round + index as u32) % 3);
            let drift = (1.0 + 0.1 * f64::from(cell.round)) * noise;
            let p99_us = match name.as_str() {
                "axum-serde-sqlx" => 1_000.0,
                "actix-simd-sqlx" => 1_100.0,
                "hyper-sonic-sqlx" => 1_200.0,
                "axum-serde-diesel" => 1_430.0,
                _ => 5_500.0,
            } * drift;
            cell.latency_ok_us.as_mut().unwrap().p99_us = p99_us as u64;
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let note = text_between(&page, "data-blocking-tails=\"bookById:70% of the slowest\"", "</p>");
    assert!(
        note.contains("p99 ÷ that of actix-simd-sqlx, the async stack with the median p99"),
        "{note}"
    );
    let axum = &note[note.find("axum-serde-diesel").unwrap()..note.find(';').unwrap()];
    assert!(axum.contains("1.30× [") && axum.ends_with("(within 2×)"), "{note}");
    let actix = &note[note.find("actix-serde-diesel").unwrap()..];
    assert!(actix.contains("5.00× [") && actix.contains("not shown within 2×"), "{note}");
}

#[test]
fn a_variant_is_compared_with_its_stack_like_an_axis_at_saturation_and_at_equal_load() {
    let mut run = fixture();
    let mut variant = run.stacks.iter().find(|s| s.name == "actix-serde-diesel").unwrap().clone();
    variant.name = "actix-1w".into();
    variant.variant_of = Some("actix-serde-diesel".into());
    variant.args = vec!["--workers".into(), "1".into()];
    // Round by round: 0.8 of its stack's rate, 0.4 of its p99 at saturation and at equal
    // load, with a little noise of its own.
    for cell in variant.cells.iter_mut().chain(variant.equal_load.iter_mut()) {
        let noise = 1.0 + 0.02 * f64::from(cell.round % 2);
        cell.goodput_rps *= 0.8 * noise;
        cell.throughput_rps *= 0.8 * noise;
        cell.counts.ok = (cell.counts.ok as f64 * 0.8 * noise) as u64;
        let latency = cell.latency_ok_us.as_mut().unwrap();
        latency.p99_us = (latency.p99_us as f64 * 0.4 * noise) as u64;
    }
    run.stacks.push(variant);
    let page = render(std::slice::from_ref(&run)).unwrap();
    let table = text_between(&page, "variant actix-1w: actix-serde-diesel → actix-1w", "</table>");
    assert!(
        table.contains("actix-1w is actix-serde-diesel run with --workers 1, in the same rounds."),
        "{table}"
    );
    assert!(table.contains("p99 at equal load, 70% of the slowest"), "{table}");
    let row = &table[table.find("bookById").unwrap()..table.find("checkoutCreate").unwrap()];
    // Two concurrencies, each a rate and a p99 at saturation, then the p99 at equal load.
    assert_eq!(row.matches("0.80").count(), 2, "rates: {row}");
    assert_eq!(row.matches("0.40").count(), 3, "p99s: {row}");
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
    assert!(method.contains("with 3 round(s), a difference of"), "{method}");
    assert!(method.contains("compared pairs were called different"), "{method}");
}

mod compare {
    use super::*;

    #[test]
    fn a_run_compared_with_itself_shows_no_change() {
        let run = fixture();
        let changes = compare(std::slice::from_ref(&run), std::slice::from_ref(&run));
        assert!(!changes.is_empty());
        for change in &changes {
            let c = change.comparison.expect("three rounds a side: a comparison");
            assert!((c.ratio - 1.0).abs() < 1e-9, "{change:?}");
            assert!(!c.differs(), "{change:?}");
        }
        for pair in pair_verdicts(std::slice::from_ref(&run), std::slice::from_ref(&run)) {
            assert_eq!(pair.base, pair.new);
            assert!(!pair.contradicts());
        }
    }

    #[test]
    fn a_much_faster_stack_is_the_only_change_and_a_slower_one_a_regression() {
        let base = fixture();
        let mut new = fixture();
        scale(&mut new, "hyper-sonic-sqlx", "bookById", 2.0);
        scale(&mut new, "axum-serde-sqlx", "bookById", 0.5);
        let changes = compare(&[base], &[new]);
        for change in &changes {
            let c = change.comparison.unwrap();
            match (change.target.as_str(), change.scenario.as_str()) {
                ("hyper-sonic-sqlx", "bookById") => {
                    assert!(c.differs() && (c.ratio - 2.0).abs() < 1e-9, "{change:?}");
                    assert!(!change.regressed_by_more_than(10.0));
                }
                ("axum-serde-sqlx", "bookById") => {
                    assert!(c.differs() && (c.ratio - 0.5).abs() < 1e-9, "{change:?}");
                    assert!(change.regressed_by_more_than(10.0));
                    assert!(!change.regressed_by_more_than(60.0), "a drop of 50%, not 60%");
                }
                _ => {
                    assert!((c.ratio - 1.0).abs() < 1e-9 && !c.differs(), "{change:?}");
                    assert!(!change.regressed_by_more_than(0.0));
                }
            }
        }
    }

    #[test]
    fn each_sides_verdicts_are_the_ones_its_own_summary_shows() {
        let base = fixture();
        let mut new = fixture();
        scale(&mut new, "actix-simd-sqlx", "bookById", 3.0);
        let pairs = pair_verdicts(std::slice::from_ref(&base), std::slice::from_ref(&new));
        let (base_page, new_page) = (
            render(std::slice::from_ref(&base)).unwrap(),
            render(std::slice::from_ref(&new)).unwrap(),
        );
        let mut checked = 0;
        for pair in &pairs {
            for (comparison, page) in [(pair.base, &base_page), (pair.new, &new_page)] {
                let Some(c) = comparison else { continue };
                // The summary shows each pair against the first of its ranking: where that
                // is one of the pair, the same comparison must be on the page, either way round.
                let flipped = bookstore_stats_text(1.0 / c.ratio, 1.0 / c.high, 1.0 / c.low, c);
                if page.contains(&c.text()) || page.contains(&flipped) {
                    checked += 1;
                }
            }
        }
        assert!(checked >= 20, "only {checked} comparisons found on the pages");
        let table = pairs_table(&pairs);
        assert!(table.contains("pairs called different: base"), "{table}");
    }

    /// A comparison's text with other numbers, for the flipped direction.
    fn bookstore_stats_text(
        ratio: f64,
        low: f64,
        high: f64,
        like: bookstore_stats::Comparison,
    ) -> String {
        let verdict = match like.verdict {
            bookstore_stats::Verdict::Higher => bookstore_stats::Verdict::Lower,
            bookstore_stats::Verdict::Lower => bookstore_stats::Verdict::Higher,
            v => v,
        };
        bookstore_stats::Comparison { ratio, low, high, verdict, ..like }.text()
    }

    #[test]
    fn opposite_calls_by_the_two_sides_are_flagged_as_contradictions() {
        let base = fixture();
        let mut new = fixture();
        // In NEW, actix-simd-sqlx and actix-serde-diesel trade places in bookById.
        for stack in &mut new.stacks {
            stack.name = match stack.name.as_str() {
                "actix-simd-sqlx" => "actix-serde-diesel".into(),
                "actix-serde-diesel" => "actix-simd-sqlx".into(),
                other => other.into(),
            };
        }
        let pairs = pair_verdicts(std::slice::from_ref(&base), std::slice::from_ref(&new));
        let flagged: Vec<_> = pairs.iter().filter(|p| p.contradicts()).collect();
        assert!(
            flagged.iter().any(|p| p.scenario == "bookById"
                && [p.a.as_str(), p.b.as_str()].contains(&"actix-simd-sqlx")),
            "{}",
            pairs_table(&pairs)
        );
        let page = render_compare(
            std::slice::from_ref(&base),
            std::slice::from_ref(&new),
            &compare(std::slice::from_ref(&base), std::slice::from_ref(&new)),
            &pairs,
        )
        .unwrap();
        assert!(page.contains(&format!(
            "{} pair(s) are called different in opposite directions",
            flagged.len()
        )));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
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

/// The markdown table row of `scenario`, split into its cells (the scenario first).
fn markdown_row(markdown: &str, table_title: &str, scenario: &str) -> Vec<String> {
    let table = &markdown[markdown.find(table_title).unwrap_or_else(|| panic!("{markdown}"))..];
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| `{scenario}` |")))
        .unwrap_or_else(|| panic!("no {scenario} row: {table}"));
    line.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect()
}

#[test]
fn the_markdown_export_says_what_the_page_says() {
    let mut run = fixture();
    scale(&mut run, "actix-simd-sqlx", "bookById", 3.0);
    let markdown = bookstore_pages::export::markdown(std::slice::from_ref(&run));
    let header = markdown.lines().find(|l| l.starts_with("| scenario |")).unwrap();
    let stacks: Vec<&str> = header.trim_matches('|').split(" | ").skip(1).map(str::trim).collect();
    let row = markdown_row(&markdown, "Rate at saturation, c = 8", "bookById");
    let simd = stacks.iter().position(|s| *s == "actix-simd-sqlx").unwrap() + 1;
    assert!(row[simd].starts_with("**") && row[simd].ends_with("** best"), "{row:?}");
    for (i, cell) in row.iter().enumerate().skip(1).filter(|(i, _)| *i != simd) {
        assert!(cell.starts_with("0.") && cell.contains("× [0."), "{}: {cell}", stacks[i - 1]);
    }
    // One table per concurrency and per equal-load rate, every scenario in each.
    for title in ["Rate at saturation, c = 8", "Rate at saturation, c = 16", "p99 at equal load"] {
        for scenario in ["health", "bookById", "checkoutCreate"] {
            assert_eq!(markdown_row(&markdown, title, scenario).len(), stacks.len() + 1);
        }
    }
}

#[test]
fn the_csv_export_has_one_row_per_cell_with_units_in_the_columns() {
    let run = fixture();
    let rows = bookstore_pages::export::rows(std::slice::from_ref(&run));
    let csv = bookstore_pages::export::csv(&rows).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for column in [
        "scenario",
        "stack",
        "concurrency",
        "rate_rps_median",
        "p99_us_median",
        "vs_first_low",
        "standing",
    ] {
        assert!(header.contains(&column), "{header:?}");
    }
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    // No field of the fixture holds a comma, so a plain split reads it.
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(body.iter().all(|r| r.len() == header.len()));
    let saturation = body.iter().filter(|r| r[column("load")] == "saturation").count();
    let scenarios = run.settings.scenarios.len();
    assert_eq!(saturation, run.stacks.len() * scenarios * run.settings.concurrency.len());
    let equal_load = body.iter().filter(|r| r[column("load")] == "equal_load").count();
    assert_eq!(equal_load, run.stacks.len() * scenarios * run.settings.rates.len());
    // A rate is the median of the rounds' goodput, as on the page.
    let line = body
        .iter()
        .find(|r| {
            r[column("scenario")] == "health"
                && r[column("stack")] == "axum-serde-sqlx"
                && r[column("concurrency")] == "8"
        })
        .unwrap();
    let mut rates: Vec<f64> = run
        .stacks
        .iter()
        .find(|s| s.name == "axum-serde-sqlx")
        .unwrap()
        .cells
        .iter()
        .filter(|c| c.scenario == "health" && c.concurrency == 8)
        .map(|c| c.goodput_rps)
        .collect();
    rates.sort_by(f64::total_cmp);
    let median: f64 = line[column("rate_rps_median")].parse().unwrap();
    assert!((median - rates[rates.len() / 2]).abs() < 1e-6, "{median} vs {rates:?}");
    let json: serde_json::Value =
        serde_json::from_str(&bookstore_pages::export::json(&rows).unwrap()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), body.len());
}

/// The results tables of `docs/findings.md` are `loadgen report --format md` of the kept
/// results they name, unedited.
#[test]
fn the_findings_results_tables_are_the_export_of_the_kept_results() {
    let (files, block) =
        generated_block(FINDINGS, "<!-- generated: loadgen report --format md ", "");
    let runs: Vec<RunResults> =
        files.iter().map(|f| RunResults::read(&workspace().join(f)).unwrap()).collect();
    let expected = bookstore_pages::export::markdown(&runs);
    assert!(
        block == expected,
        "{FINDINGS}'s results tables differ from `loadgen report --format md {}`: regenerate them",
        files.join(" ")
    );
}

fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// The document holding the kept default run's verdicts as tables.
const FINDINGS: &str = "docs/findings.md";

/// The document holding the reliability table of the kept faults and soak runs.
const RELIABILITY: &str = "docs/reliability.md";

/// The block of `document` generated by a command starting `open` (the comment's start)
/// and ending `close` before its ` -->`: the files the command names, and the block's text.
fn generated_block(document: &str, open: &str, close: &str) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(workspace().join(document)).unwrap();
    let start = text.find(open).unwrap_or_else(|| panic!("no {open:?} block in {document}"));
    let marker_end = format!("{close} -->\n");
    let command_end = start + text[start..].find(&marker_end).unwrap();
    let files =
        text[start + open.len()..command_end].split_whitespace().map(str::to_owned).collect();
    let body_start = command_end + marker_end.len();
    let end = body_start + text[body_start..].find("<!-- /generated -->").unwrap();
    (files, text[body_start..end].to_owned())
}

#[test]
fn the_reliability_table_is_the_render_of_the_kept_faults_and_soak_runs() {
    let (files, block) =
        generated_block(RELIABILITY, "<!-- generated: loadgen faults --from ", " --format md");
    let documents: Vec<FaultsResults> =
        files.iter().map(|f| FaultsResults::read(&workspace().join(f)).unwrap()).collect();
    assert!(
        block == bookstore_pages::reliability::markdown(&documents),
        "{RELIABILITY}'s reliability table differs from `loadgen faults --from {} --format md`: regenerate it",
        files.join(" ")
    );
    // Every stack ran the three faults and the soak.
    for stack in bookstore_app::stacks::ALL {
        let row = block.lines().find(|l| l.starts_with(&format!("| {} |", stack.identity.service)));
        let row = row.unwrap_or_else(|| panic!("no row for {}", stack.identity.service));
        assert!(row.contains("of 3 |") && !row.ends_with("not run |"), "{row}");
    }
    let page = bookstore_pages::reliability::render(&documents).unwrap();
    if !bookstore_report::page::check_fits(&page, 1280).unwrap_or_else(|e| panic!("{e}")) {
        eprintln!("skipped: no Chromium (scripts/test.sh said so)");
    }
}

#[test]
fn the_summary_of_a_real_run_reads_at_1280_px() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let kept = RunResults::read(&root.join("summary/results/2026-12-01T22-35-54Z.json")).unwrap();
    let page = render(std::slice::from_ref(&kept)).unwrap();
    if !bookstore_report::page::check_fits(&page, 1280).unwrap_or_else(|e| panic!("{e}")) {
        eprintln!("skipped: no Chromium (scripts/test.sh said so)");
    }
}

#[test]
fn without_an_equal_load_phase_the_closing_summary_has_rates_only() {
    let mut run = fixture();
    for stack in &mut run.stacks {
        stack.equal_load.clear();
    }
    run.settings.rates.clear();
    let summary = bookstore_pages::terminal::summary(std::slice::from_ref(&run));
    assert!(!summary.contains("p99"), "{summary}");
    let line = summary.lines().find(|l| l.starts_with("bookById")).unwrap();
    assert!(line.contains("/s") && !line.contains(" ms") && !line.contains(" µs"), "{line}");
}
