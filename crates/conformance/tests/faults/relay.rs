//! A stack behind the database relay (bookstore-relay, the suite's database latency): every
//! byte of PostgreSQL's protocol passes through it, delayed, and the stack must stay
//! correct — reads, a search, a checkout written and visible in the database. One stack per
//! access style: the async driver (sqlx) and the blocking ORM on threads (diesel).

use bookstore_conformance::checkout_request;
use bookstore_fixture::testing::seeded_database;
use bookstore_relay::Relay;

use super::*;

/// The round trip the relay adds: far above loopback's, so each request shows it.
const ROUND_TRIP: Duration = Duration::from_millis(5);

async fn stays_correct_behind_the_relay(stack: &Stack) {
    let db = seeded_database().await;
    let url = db.url().to_owned();
    let upstream = url
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("host:port in the URL");
    let upstream: std::net::SocketAddr = upstream.parse().expect("an address, not a name");
    let relay = Relay::start("127.0.0.1:0".parse().unwrap(), upstream, ROUND_TRIP).unwrap();
    let relayed = url.replace(&upstream.to_string(), &relay.addr().to_string());
    let app = TestApp::spawn_on(stack, &relayed, |_| {}).await;
    let client = app.client();

    let started = Instant::now();
    let book = client.get("/api/books/20000").await;
    let read_took = started.elapsed();
    assert_eq!(book.status, 200, "{}", book.text());
    assert_eq!(book.json()["id"], 20000);
    assert!(read_took >= ROUND_TRIP, "a read took {read_took:?}: it did not cross the relay");

    let page = client.get("/api/books?limit=50").await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(page.json().as_array().map(Vec::len), Some(50));
    let search = client.get("/api/books/search?q=Book&limit=20").await;
    assert_eq!(search.status, 200, "{}", search.text());
    assert_eq!(search.json().as_array().map(Vec::len), Some(20));
    // The largest answer: 500 rows, many protocol messages in one result.
    let large = client.get("/api/books/bench/large-json?limit=500").await;
    assert_eq!(large.status, 200, "{}", large.text());
    assert_eq!(large.json()["items"].as_array().map(Vec::len), Some(500));

    let started = Instant::now();
    let checkout = client.send(checkout_request(42)).await;
    let write_took = started.elapsed();
    assert_eq!(checkout.status, 201, "{}", checkout.text());
    // A checkout is a transaction of several statements, each a round trip.
    assert!(write_took >= 2 * ROUND_TRIP, "a checkout took {write_took:?}");
    let id = checkout.json()["id"].as_str().expect("the checkout's id").to_owned();
    let mut db_conn = app.db().await;
    let (stored,): (i64,) = sqlx::query_as("SELECT count(*) FROM checkouts WHERE id::text = $1")
        .bind(&id)
        .fetch_one(&mut db_conn)
        .await
        .unwrap();
    assert_eq!(stored, 1, "checkout {id} acknowledged and stored, through the relay");
    eprintln!(
        "{}: behind a {ROUND_TRIP:?} relay a read took {read_took:?}, a checkout {write_took:?}",
        stack.identity.service
    );
    drop(app);
    drop(relay);
}

#[tokio::test]
async fn the_async_driver_stays_correct_behind_the_relay() {
    stays_correct_behind_the_relay(&stacks::AXUM_SERDE_SQLX).await
}

#[tokio::test]
async fn the_blocking_orm_stays_correct_behind_the_relay() {
    stays_correct_behind_the_relay(&stacks::AXUM_SERDE_DIESEL).await
}
