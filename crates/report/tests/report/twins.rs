//! A twin (`--twin`): the same stack again, judged against it alone, never ranked, and the
//! run's count of twin cells called different on the page, the terminal and the exports.

use super::{fixture, headline, scale, text_between};
use bookstore_record::results::RunResults;
use bookstore_report::render;

/// `fixture()` with a twin of axum-serde-sqlx: its cells, each round off by a percent or
/// so, as a second process measured in the same rounds would be.
pub(super) fn with_twin() -> RunResults {
    let mut run = fixture();
    let mut twin = run.stacks.iter().find(|s| s.name == "axum-serde-sqlx").unwrap().clone();
    twin.name = "axum-serde-sqlx.twin".into();
    twin.variant_of = Some("axum-serde-sqlx".into());
    for cell in &mut twin.cells {
        let factor = [1.012, 0.991, 1.003][cell.round as usize % 3];
        cell.goodput_rps *= factor;
        cell.throughput_rps *= factor;
    }
    run.stacks.push(twin);
    run
}

#[test]
fn a_twin_is_never_ranked_and_leaves_the_families_as_they_were() {
    let plain = render(&[fixture()]).unwrap();
    let page = render(&[with_twin()]).unwrap();
    assert!(!headline(&page).contains(".twin"), "{}", headline(&page));
    assert_eq!(headline(&page), headline(&plain), "the twin changes no verdict of the stacks");
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("The 10 pairs of one scenario"), "{method}");
}

#[test]
fn the_page_and_the_terminal_count_the_twin_cells_called_different() {
    let run = with_twin();
    let page = render(std::slice::from_ref(&run)).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(
        method.contains(
            "called different from axum-serde-sqlx in 0 of 6 cells (about 5% expected by chance)"
        ),
        "{method}"
    );
    let summary = bookstore_report::terminal::summary(std::slice::from_ref(&run));
    assert!(summary.contains("called different in 0 of 6 cells"), "{summary}");
    assert!(summary.contains("axum-serde-sqlx.twin") && summary.contains("twin ≈ "), "{summary}");
    let rows = bookstore_report::export::rows(std::slice::from_ref(&run));
    let twin: Vec<_> = rows
        .iter()
        .filter(|r| r.stack == "axum-serde-sqlx.twin" && r.load == "saturation")
        .collect();
    assert!(!twin.is_empty() && twin.iter().all(|r| r.standing == "twin"), "{twin:?}");
    assert!(twin.iter().all(|r| r.vs_first_low.unwrap() < 1.0 && r.vs_first_high.unwrap() > 1.0));
}

#[test]
fn a_twin_that_differs_from_its_stack_is_called_and_named() {
    let mut run = with_twin();
    scale(&mut run, "axum-serde-sqlx.twin", "bookById", 1.5);
    let page = render(std::slice::from_ref(&run)).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("in 2 of 6 cells"), "{method}");
    assert!(
        method.contains("bookById c=8: 1.5") && method.contains("bookById c=16: 1.5"),
        "{method}"
    );
}

#[test]
fn the_tails_line_judges_the_twin_by_the_families_shared_spread() {
    let mut run = with_twin();
    let page = render(std::slice::from_ref(&run)).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    let tails = &method[method.find("Tails at equal load").expect("a tails line")..];
    assert!(
        tails.contains("The twin axum-serde-sqlx.twin, judged by the same spread, was called different from axum-serde-sqlx in 0 of 3 families"),
        "{tails}"
    );
    // Pooled over the family, the p99 intervals are narrower than each pair's own three
    // rounds would make them.
    let width = |after: &str| -> f64 {
        let start =
            tails.find(after).unwrap_or_else(|| panic!("no {after} in {tails}")) + after.len();
        tails[start..].split('×').next().unwrap().trim().parse().unwrap()
    };
    let (pooled, own) = (width("intervals "), width("they would be "));
    assert!(pooled < own, "{pooled} vs {own}: {tails}");

    // A twin whose p99 at bookById is three times its stack's in every round is called.
    for stack in run.stacks.iter_mut().filter(|s| s.name == "axum-serde-sqlx.twin") {
        for cell in stack.equal_load.iter_mut().filter(|c| c.scenario == "bookById") {
            let latency = cell.latency_ok_us.as_mut().unwrap();
            latency.p99_us *= 3;
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(
        method.contains("in 1 of 3 families")
            && method.contains("bookById at 70% of the slowest: 3.00×"),
        "{method}"
    );
    let summary = bookstore_report::terminal::summary(std::slice::from_ref(&run));
    assert!(summary.contains("its p99 at equal load in 1 of 3 families"), "{summary}");
}

#[test]
fn a_twin_steadily_a_few_percent_ahead_is_two_processes_differing_not_a_call() {
    // Three percent ahead in every round, within a fifth of a percent: the rounds alone
    // would call it (as they did the kept runs' twins), but two processes of one binary
    // differ by that much (bookstore_stats::PROCESS_SD), and the page says so.
    let mut run = with_twin();
    for stack in run.stacks.iter_mut().filter(|s| s.name == "axum-serde-sqlx.twin") {
        let own = fixture();
        let first = own.stacks.iter().find(|s| s.name == "axum-serde-sqlx").unwrap();
        for (cell, original) in stack.cells.iter_mut().zip(&first.cells) {
            let factor = [1.030, 1.028, 1.032][cell.round as usize % 3];
            cell.goodput_rps = original.goodput_rps * factor;
            cell.throughput_rps = original.throughput_rps * factor;
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("in 0 of 6 cells"), "{method}");
    assert!(method.contains("beyond the rounds' noise is 0.015"), "{method}");
}
