//! A run of the sequential design (`--max-rounds` above `--rounds`): each family judged at
//! the look its rounds reached, at that look's share of q, and the page says so.

use super::{fixture, text_between};
use bookstore_record::results::RunResults;
use bookstore_report::render;

/// `fixture()` (3 rounds per cell) as a run planned with looks at 3, 5, 8 and 12 rounds.
fn sequential() -> RunResults {
    let mut run = fixture();
    run.settings.measurement.max_rounds = 12;
    run.settings.measurement.budget = Some(std::time::Duration::from_secs(840));
    run
}

/// The width (high ÷ low) of each saturation row's interval against the first stack.
fn widths(run: &RunResults) -> Vec<f64> {
    bookstore_report::export::rows(std::slice::from_ref(run))
        .iter()
        .filter(|r| r.load == "saturation")
        .filter_map(|r| Some(r.vs_first_high? / r.vs_first_low?))
        .collect()
}

#[test]
fn a_family_is_judged_at_its_looks_share_of_q_and_the_page_says_so() {
    let (fixed, looked) = (widths(&fixture()), widths(&sequential()));
    assert_eq!(fixed.len(), looked.len());
    assert!(!fixed.is_empty());
    // Stopped short of the last look with pairs open, at the final level (4.5% of the 5%):
    // every interval a little wider than the fixed design's.
    assert!(fixed.iter().zip(&looked).all(|(f, l)| l > f), "{fixed:?} {looked:?}");
    let page = render(&[sequential()]).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("at least 3 round(s)"), "{method}");
    assert!(method.contains("looked at again at 5, 8, 12 rounds"), "{method}");
    assert!(method.contains("Every other family is judged at the rest of q, 4.50%"), "{method}");
    assert!(method.contains("Families got 3–3 rounds (median 3)"), "{method}");
    assert!(page.contains("then up to 12 for the families still open (looks at 5, 8, 12)"));
    let plain = render(&[fixture()]).unwrap();
    assert!(!plain.contains("pre-set looks"), "a fixed design has none");
}

#[test]
fn a_family_with_more_rounds_is_judged_at_the_later_look() {
    // bookById at c=8 got two more rounds for every stack: the look at 5 rounds.
    let mut run = sequential();
    for stack in &mut run.stacks {
        let extra: Vec<_> = stack
            .cells
            .iter()
            .filter(|c| c.scenario == "bookById" && c.concurrency == 8 && c.round < 2)
            .cloned()
            .map(|mut c| {
                c.round += 3;
                c
            })
            .collect();
        stack.cells.extend(extra);
    }
    let page = render(&[run]).unwrap();
    let method = text_between(&page, "How verdicts are made", "Parity");
    assert!(method.contains("Families got 3–5 rounds"), "{method}");
    let table = text_between(&page, "bookById", "checkoutCreate");
    assert!(table.contains("n = 5)") && table.contains("n = 3)"), "{table}");
}
