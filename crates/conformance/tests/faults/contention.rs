//! Nothing lost under contention: 256 clients on keep-alive connections check out the same
//! book for a few seconds, and SPEC §5's audit must hold — no negative stock, no lost or
//! duplicated checkout, exactly 10 sales of the sold-out book.

use bookstore_conformance::checkout_request;
use bookstore_fixture::audit::{self, AuditFacts, Writes};
use bookstore_fixture::seed;
use sqlx::{Connection, PgConnection};

use super::*;

/// Concurrent clients (SPEC §5's highest concurrency).
const CLIENTS: usize = 256;
/// How long they keep checking out.
const DURATION: Duration = Duration::from_secs(3);

/// Runs the load on one book and returns `(201s, 409 out_of_stock)`, after checking that
/// nothing else was answered and the audit holds.
async fn contend(stack: &Stack, book_id: i64, writes: Writes) -> (u64, u64) {
    let app = TestApp::spawn_with(stack, |config| {
        // Enough connections to contend on the row lock rather than in the pool, and an
        // acquire timeout no slow machine reaches: this test is about lost writes, not
        // about shedding load.
        config.pool.max_connections = 16;
        config.pool.acquire_timeout = Duration::from_secs(30);
        config.blocking_threads = config.blocking_threads.map(|_| 16);
    })
    .await;
    let name = app.name();
    let request = match book_id {
        seed::HOTSPOT_BOOK_ID => |_, _| checkout_request(seed::HOTSPOT_BOOK_ID),
        _ => |_, _| checkout_request(seed::SOLD_OUT_BOOK_ID),
    };
    let load = Load::start(&app.client(), CLIENTS, request);
    tokio::time::sleep(DURATION).await;
    let sent = load.stop().await;

    let (mut created, mut out_of_stock) = (0, 0);
    for request in &sent {
        let response = request.outcome.as_ref().unwrap_or_else(|error| {
            panic!("{name}: a request at {:?} got no answer: {error}", request.at)
        });
        match status_and_code(response) {
            (201, _) => created += 1,
            (409, code) if code == "out_of_stock" => out_of_stock += 1,
            (status, code) => panic!("{name}: {status} {code}: {}", response.text()),
        }
    }
    assert!(sent.len() >= CLIENTS, "{name}: only {} requests answered", sent.len());

    let mut conn = PgConnection::connect(app.database_url()).await.expect("connect");
    let facts = AuditFacts::read(&mut conn).await.expect("read the audit facts");
    let verdict = audit::judge(writes, created, &facts);
    assert!(verdict.passed(), "{name}: audit failed: {:?}", verdict.failures);
    (created, out_of_stock)
}

per_stack!(hotspot_book_at_256_clients_loses_nothing, |stack| {
    let (created, out_of_stock) = contend(stack, seed::HOTSPOT_BOOK_ID, Writes::Hotspot).await;
    assert_eq!(out_of_stock, 0, "the hotspot book has stock for millions of checkouts");
    assert!(created >= CLIENTS as u64);
});

per_stack!(sold_out_book_at_256_clients_sells_exactly_its_stock, |stack| {
    let (created, out_of_stock) = contend(stack, seed::SOLD_OUT_BOOK_ID, Writes::SoldOut).await;
    assert_eq!(created, seed::SOLD_OUT_STOCK as u64);
    assert!(out_of_stock >= CLIENTS as u64 - created);
});
