//! The sqlx store's pool behaves as SPEC §1's parity rules say. The queries themselves are
//! checked through HTTP by the conformance suite.

use std::time::Duration;

use bookstore_domain::Error;
use bookstore_domain::store::{OpenError, PoolSettings, Store};
use bookstore_fixture::testing::seeded_database;
use bookstore_store_sqlx::{APPLICATION_NAME, SqlxStore};
use sqlx::{Connection, PgConnection};

fn settings(url: &str, max_connections: u32, acquire_timeout: Duration) -> PoolSettings {
    PoolSettings { database_url: url.to_owned(), max_connections, acquire_timeout }
}

#[tokio::test]
async fn open_establishes_every_connection_before_returning() {
    let db = seeded_database().await;
    let store = SqlxStore::open(&settings(db.url(), 5, Duration::from_secs(5))).await.unwrap();
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    let open: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
    )
    .bind(APPLICATION_NAME)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(open, 5);
    assert_eq!(store.pool().size(), 5);
    store.close().await;
}

#[tokio::test]
async fn an_exhausted_pool_answers_db_unavailable_instead_of_waiting_forever() {
    let db = seeded_database().await;
    let store = SqlxStore::open(&settings(db.url(), 1, Duration::from_millis(200))).await.unwrap();
    let held = store.pool().acquire().await.unwrap();
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), store.ping()).await.expect("ping hung");
    assert!(matches!(outcome, Err(Error::DbUnavailable(_))), "{outcome:?}");
    drop(held);
    store.ping().await.expect("the connection is usable again once returned");
}

#[tokio::test]
async fn an_unreachable_database_fails_open_naming_the_setting_without_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://bench:hunter2@127.0.0.1:{port}/books");
    let error = SqlxStore::open(&settings(&url, 2, Duration::from_millis(500))).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, OpenError::Connect { .. }), "{message}");
    assert!(message.contains("--database-url/DATABASE_URL"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}/books")), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!message.contains('\n'));
}

#[tokio::test]
async fn a_malformed_database_url_is_rejected_before_connecting() {
    let error =
        SqlxStore::open(&settings("mysql://x", 1, Duration::from_secs(1))).await.unwrap_err();
    assert!(matches!(error, OpenError::InvalidUrl(_)), "{error}");
    assert!(error.to_string().starts_with("invalid --database-url/DATABASE_URL"));
}
