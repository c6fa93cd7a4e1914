//! A server of one's own, by URL under its own name: checked against every part of the
//! contract that can be checked over HTTP, then measured beside a preset — or refused before
//! any window, with the checks it failed.

use super::*;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

use crate::proxy::{self, Answer, Upstream, json};

/// The test's own server that keeps the contract: every request passed to a real stack.
struct Honest;

impl Answer for Honest {
    async fn answer(&self, request: Request<Bytes>, upstream: &Upstream) -> Response<Full<Bytes>> {
        upstream.forward(&request).await
    }
}

/// One that keeps the scenarios' answers but not the errors: an unknown route is a 200.
struct Sloppy;

impl Answer for Sloppy {
    async fn answer(&self, request: Request<Bytes>, upstream: &Upstream) -> Response<Full<Bytes>> {
        if request.uri().path() == "/no/such/route" {
            return json(200, r#"{"status":"UP"}"#.into());
        }
        upstream.forward(&request).await
    }
}

/// `mine`, the server behind `answer`, and the preset axum-serde-sqlx, measured together by
/// URL on one database.
fn suite_with(answer: impl Answer) -> RunResults {
    let (server, url) = seeded_server();
    let (mut stack, upstream) = start_by_hand(&url);
    let mine = proxy::start(upstream, answer);
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.stacks = vec![stacks::foreign("mine").unwrap(), stacks::AXUM_SERDE_SQLX];
    options.scenarios = vec![Scenario::BookById];
    options.measurement.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.running = Some(vec![mine, upstream]);
    options.ceilings = false;
    options.rates.clear();
    let results = bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);
    results
}

#[test]
fn a_server_of_ones_own_that_keeps_the_contract_is_measured_by_its_name_beside_a_preset() {
    let _serial = serial();
    let results = suite_with(Honest);
    let names: Vec<(&str, StackStatus)> =
        results.stacks.iter().map(|s| (s.name.as_str(), s.status)).collect();
    assert_eq!(
        names,
        [("mine", StackStatus::Measured), ("axum-serde-sqlx", StackStatus::Measured)],
        "{:?}",
        results.stacks[0].failure
    );
    assert_eq!(results.stacks[0].cells.len(), 2, "two rounds of bookById at c = 2");
    let page = bookstore_report::render(std::slice::from_ref(&results)).unwrap();
    assert!(page.contains("mine"), "the page names it");
}

#[test]
fn a_server_of_ones_own_that_breaks_the_contract_is_refused_before_any_window_with_what_failed() {
    let _serial = serial();
    let results = suite_with(Sloppy);
    let mine = &results.stacks[0];
    assert_eq!(mine.status, StackStatus::Failed);
    assert!(mine.cells.is_empty(), "refused before any window");
    let why = mine.failure.as_deref().unwrap_or_default();
    assert!(why.contains("does not keep the contract"), "{why}");
    assert!(why.contains("an unknown route: status 200, the contract says 404"), "{why}");
    assert_eq!(results.stacks[1].status, StackStatus::Measured, "the preset beside it is measured");
}
