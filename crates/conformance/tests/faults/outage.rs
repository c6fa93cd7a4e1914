//! SPEC §3's `db_unavailable` under a real outage: the stack's PostgreSQL is stopped while
//! clients read and write, and started again.

use bookstore_conformance::{checkout_request, get_request};
use bookstore_fixture::{ClusterOptions, DbServer};

use super::*;

/// The pool's acquire timeout in these tests (the servers' default is 2 s).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(1);
/// What a request may take beyond the acquire timeout: the work around it. (The acquire
/// timeout counts from the request on every stack, including the wait for a blocking
/// thread on the diesel stacks, where requests queue behind others waiting for the pool.)
const SLACK: Duration = Duration::from_millis(500);
/// How soon after PostgreSQL is back the stack must serve normally again (the issue's
/// bound).
const RECOVERY: Duration = Duration::from_secs(5);
/// How long PostgreSQL stays down: the 3 s of `loadgen faults`' outage, long enough for a
/// pool's reconnect backoff to have grown past a second (sqlx's doubles from 10 ms).
const OUTAGE: Duration = Duration::from_secs(3);

/// Half the clients read a book, half check one out.
fn mixed(client: usize, sequence: usize) -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    if client.is_multiple_of(2) {
        get_request(&format!("/api/books/{}", 1 + (sequence % 500)))
    } else {
        checkout_request(3 + ((client * 1000 + sequence) % 4000) as i64)
    }
}

per_stack!(database_outage_is_503_and_recovers_without_restart, |stack| {
    let mut server = DbServer::throwaway(&ClusterOptions::for_tests()).await.expect("a cluster");
    let url = server.create_seeded_database("bookstore").await.expect("a seeded database");
    let mut cluster = server.take_cluster().expect("a throwaway cluster");
    let app = TestApp::spawn_on(stack, &url, |config| {
        config.pool.acquire_timeout = ACQUIRE_TIMEOUT;
    })
    .await;
    let limit = ACQUIRE_TIMEOUT + SLACK;

    let load = Load::start(&app.client(), 4, mixed);
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.stop();
    let stopped_at = load.elapsed();

    // While it is down: every database route says so within the acquire timeout; the
    // process stays up and `/health` does not depend on the database.
    tokio::time::sleep(ACQUIRE_TIMEOUT).await;
    for request in [get_request("/api/books/1"), get_request("/health/db"), checkout_request(7)] {
        let described = format!("{} {}", request.method(), request.uri());
        let started = Instant::now();
        let response = app.send(request).await;
        let took = started.elapsed();
        response.error(503, "db_unavailable");
        assert!(took <= limit, "{}: {described} took {took:?} during the outage", app.name());
    }
    assert_eq!(app.get("/health").await.status, 200);
    tokio::time::sleep(OUTAGE.saturating_sub(load.elapsed() - stopped_at)).await;

    cluster.resume().await.expect("PostgreSQL starts again");
    let resumed = Instant::now();
    loop {
        let db = app.get("/health/db").await.status;
        let book = app.get("/api/books/1").await.status;
        let checkout = app.send(checkout_request(8)).await.status;
        if (db, book, checkout) == (200, 200, 201) {
            break;
        }
        assert!(
            resumed.elapsed() < RECOVERY,
            "{}: still /health/db {db}, /api/books/1 {book}, checkout {checkout} {RECOVERY:?} after PostgreSQL came back",
            app.name()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let recovered_at = load.elapsed();
    // The figure the issue asked about, for the test log (the bound above is loose on
    // purpose; `loadgen faults` measures and reports it).
    eprintln!(
        "{}: serving again {} ms after PostgreSQL accepted connections",
        app.name(),
        resumed.elapsed().as_millis()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = load.stop().await;

    // Under the load: answers only, each a success or `db_unavailable`, none slower than
    // the bound; successes before and after the outage, 503s during it.
    for request in &sent {
        let response = request.outcome.as_ref().unwrap_or_else(|error| {
            panic!("{}: a request at {:?} got no answer: {error}", app.name(), request.at)
        });
        let (status, code) = status_and_code(response);
        assert!(
            matches!((status, code.as_str()), (200 | 201, _) | (503, "db_unavailable")),
            "{}: {status} {code} at {:?}: {}",
            app.name(),
            request.at,
            response.text()
        );
        assert!(
            request.took <= limit,
            "{}: a request at {:?} took {:?}",
            app.name(),
            request.at,
            request.took
        );
    }
    let ok = |sent: &Sent| sent.outcome.as_ref().is_ok_and(|r| r.status < 300);
    assert!(sent.iter().any(|s| s.at < stopped_at && ok(s)), "no success before the outage");
    assert!(sent.iter().any(|s| s.at > stopped_at && !ok(s)), "no 503 during the outage");
    let after: Vec<&Sent> = sent.iter().filter(|s| s.at > recovered_at).collect();
    assert!(
        !after.is_empty() && after.iter().all(|s| ok(s)),
        "{}: failures after recovery",
        app.name()
    );
    drop(app);
    drop(cluster);
});

per_stack!(after_a_restart_an_idle_stack_fails_at_most_one_request, |stack| {
    // An idle stack with its whole pool open, PostgreSQL restarted under it, then one
    // request at a time: every pooled connection is dead, and a store that let each fail
    // the request drawing it failed about one per connection of its pool.
    let mut server = DbServer::throwaway(&ClusterOptions::for_tests()).await.expect("a cluster");
    let url = server.create_seeded_database("bookstore").await.expect("a seeded database");
    let mut cluster = server.take_cluster().expect("a throwaway cluster");
    let app = TestApp::spawn_on(stack, &url, |_| {}).await;
    assert_eq!(app.get("/api/books/1").await.status, 200);
    cluster.stop();
    cluster.resume().await.expect("PostgreSQL starts again");
    let mut failed = Vec::new();
    loop {
        let response = app.get("/api/books/1").await;
        if response.status == 200 {
            break;
        }
        failed.push(format!("{} {}", response.status, response.text()));
        assert!(failed.len() <= 64, "{}: no success after {} requests", app.name(), failed.len());
    }
    assert!(
        failed.len() <= 1,
        "{}: {} requests failed after PostgreSQL came back: {failed:?}",
        app.name(),
        failed.len()
    );
    drop(app);
    drop(cluster);
});
