//! `loadgen compare`: two sets of runs cell by cell.

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
    let (base_page, new_page) =
        (render(std::slice::from_ref(&base)).unwrap(), render(std::slice::from_ref(&new)).unwrap());
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

#[test]
fn a_target_steadily_a_few_percent_faster_in_a_second_run_is_two_processes_not_a_change() {
    // Rounds within a tenth of a percent, the second run 3% above the first in each: Welch's
    // t on the rounds alone would call it, but a second run is a second process, and two
    // processes of one binary differ by that much (bookstore_stats::PROCESS_SD).
    let steady = |run: &mut RunResults, level: f64| {
        let stack = run.stacks.iter_mut().find(|s| s.name == "hyper-sonic-sqlx").unwrap();
        for cell in stack.cells.iter_mut().filter(|c| c.scenario == "bookById") {
            let rate = level * [1.0, 1.001, 0.999][cell.round as usize % 3];
            cell.goodput_rps = rate;
            cell.throughput_rps = rate;
        }
    };
    let (mut base, mut new) = (fixture(), fixture());
    steady(&mut base, 10_000.0);
    steady(&mut new, 10_300.0);
    let changes = compare(&[base], &[new]);
    let steadied: Vec<&bookstore_report::compare::Change> = changes
        .iter()
        .filter(|c| c.target == "hyper-sonic-sqlx" && c.scenario == "bookById")
        .collect();
    assert!(!steadied.is_empty());
    for change in steadied {
        let c = change.comparison.unwrap();
        assert!((c.ratio - 1.03).abs() < 1e-3 && !c.differs(), "{change:?}");
    }
}
