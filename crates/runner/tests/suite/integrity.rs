//! Stacks that lie about their writes are caught by the audit and disqualified.

use super::*;

/// The suite against a stack that lies about its checkouts (a proxy in front of a real
/// one), on a database of its own: the results and what the suite's exit status says.
fn suite_against_a_liar(lie: liar::Lie) -> RunResults {
    let (server, url) = seeded_server();
    let (mut stack, upstream) = start_by_hand(&url);
    let liar = proxy::start(upstream, liar::Liar::new(lie));
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::CheckoutCreate, Scenario::CheckoutHotspot];
    options.measurement.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.running = Some(vec![liar]);
    options.ceilings = false;
    let results = bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);
    results
}

/// The lie passed the contract check, was measured, and every cell it touched is
/// disqualified for the audit with the exit status saying so.
fn assert_caught(results: &RunResults, failure: &str) {
    let stack = &results.stacks[0];
    assert_eq!(
        stack.status,
        StackStatus::Measured,
        "the contract check cannot see it: {:?}",
        stack.failure
    );
    assert_eq!(stack.cells.len(), 4);
    for cell in &stack.cells {
        let audit = cell.audit.as_ref().expect("write windows are audited");
        assert!(!audit.passed, "{}: {:?}", cell.scenario, audit);
        assert!(audit.failures.iter().any(|f| f.contains(failure)), "{:?}", audit.failures);
        let reason = bookstore_record::warnings::disqualification(cell).expect("disqualified");
        assert!(reason.message.contains("audit failed"), "{}", reason.message);
    }
    let problems = outcome::problems(results);
    let disqualified: Vec<&str> = problems
        .iter()
        .filter_map(|p| match p {
            outcome::Problem::Disqualified { scenario, .. } => Some(scenario.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(disqualified, ["checkoutCreate", "checkoutHotspot"], "{problems:?}");
    assert_eq!(outcome::exit_code(&problems), outcome::EXIT_DISQUALIFIED);
    let page = bookstore_report::render(std::slice::from_ref(results)).unwrap();
    assert!(page.contains("disqualified: the write audit failed"), "the page says why");
    assert!(!page.contains("best: "), "nothing is ranked");
}

#[test]
fn a_stack_that_acknowledges_checkouts_without_writing_them_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::AcknowledgeWithoutWriting);
    assert_caught(&results, "successful checkouts acknowledged");
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn a_stack_that_writes_every_checkout_twice_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::WriteTwice);
    assert_caught(&results, "successful checkouts acknowledged");
    for cell in &results.stacks[0].cells {
        let audit = cell.audit.as_ref().unwrap();
        assert_eq!(audit.checkout_rows, 2 * audit.acknowledged_checkouts, "{}", cell.scenario);
    }
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn a_stack_that_refuses_every_checkout_with_the_stock_in_hand_is_disqualified() {
    let _serial = serial();
    let results = suite_against_a_liar(liar::Lie::RefuseEverything);
    assert_caught(&results, "out_of_stock refusal(s)");
    for cell in &results.stacks[0].cells {
        // Not a business refusal: every one counts as an error of its own kind.
        assert_eq!((cell.counts.ok, cell.counts.rejected), (0, 0), "{}", cell.scenario);
        assert_eq!(cell.counts.errors_by_kind["unjustified_refusal"], cell.counts.errors);
        let audit = cell.audit.as_ref().unwrap();
        assert_eq!(audit.unjustified_refusals, cell.requests_total());
    }
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}
