//! SPEC §1's pool parity rules, checked on the three stores through the `Store` interface
//! the servers use: each test body is generic and runs once per store (`sqlx_store::…`,
//! `diesel_store::…`, `diesel_async_store::…`, `tokio_postgres_store::…`).

use std::time::Duration;

use bookstore_conformance::wait_for_lock_waiters;
use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::store::{OpenError, PoolSettings, Store};
use bookstore_fixture::testing::seeded_database;
use sqlx::{Connection, PgConnection};

fn settings(url: &str, max_connections: u32, acquire_timeout: Duration) -> PoolSettings {
    PoolSettings { database_url: url.to_owned(), max_connections, acquire_timeout }
}

/// Client connections to `url`'s database other than the one asking.
async fn open_connections(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    )
    .fetch_one(conn)
    .await
    .unwrap()
}

async fn open_establishes_every_connection_before_returning<S: Store>() {
    let db = seeded_database().await;
    let store = S::open(&settings(db.url(), 5, Duration::from_secs(5))).await.unwrap();
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    assert_eq!(open_connections(&mut conn).await, 5);
    store.ping().await.unwrap();
    assert_eq!(open_connections(&mut conn).await, 5, "serving a request opens no other connection");
    store.close().await;
}

async fn an_exhausted_pool_answers_db_unavailable_and_recovers<S: Store>() {
    let db = seeded_database().await;
    let store = S::open(&settings(db.url(), 1, Duration::from_millis(300))).await.unwrap();
    // Hold book 3's row lock: a checkout of it keeps the only connection busy.
    let mut locker = PgConnection::connect(db.url()).await.unwrap();
    let mut lock = locker.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM books WHERE id = 3 FOR UPDATE").execute(&mut *lock).await.unwrap();
    let order = NewCheckout {
        book_id: 3,
        customer_name: "A".into(),
        customer_email: "a@b".into(),
        quantity: 1,
    };
    let blocked = tokio::spawn({
        let store = store.clone();
        async move { store.checkout(order).await }
    });
    let mut watcher = PgConnection::connect(db.url()).await.unwrap();
    wait_for_lock_waiters(&mut watcher, 1).await;

    let outcome =
        tokio::time::timeout(Duration::from_secs(10), store.ping()).await.expect("ping hung");
    assert!(matches!(outcome, Err(Error::DbUnavailable(_))), "{outcome:?}");

    lock.rollback().await.unwrap();
    let checkout = blocked.await.unwrap().expect("the waiting checkout completes");
    assert_eq!(checkout.book_id, 3);
    store.ping().await.expect("the pool serves again once the connection is back");
}

async fn an_unreachable_database_fails_open_naming_the_setting_without_the_password<S: Store>() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://bench:hunter2@127.0.0.1:{port}/books");
    let error = S::open(&settings(&url, 2, Duration::from_millis(500))).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, OpenError::Connect { .. }), "{message}");
    assert!(message.contains("--database-url/DATABASE_URL"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}/books")), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!message.contains('\n'), "{message}");
}

async fn a_malformed_database_url_is_rejected_before_connecting<S: Store>() {
    let error = S::open(&settings("mysql://x", 1, Duration::from_secs(1))).await.unwrap_err();
    assert!(matches!(error, OpenError::InvalidUrl(_)), "{error}");
    assert!(error.to_string().starts_with("invalid --database-url/DATABASE_URL"));
}

/// One `#[tokio::test]` per store for each generic test above.
macro_rules! for_each_store {
    ($($test:ident),+ $(,)?) => {
        mod sqlx_store {
            $(#[tokio::test]
            async fn $test() {
                super::$test::<bookstore_store_sqlx::SqlxStore>().await
            })+
        }
        mod diesel_store {
            $(#[tokio::test]
            async fn $test() {
                super::$test::<bookstore_store_diesel::DieselStore<bookstore_store_diesel::SpawnBlocking>>().await
            })+
        }
        mod diesel_async_store {
            $(#[tokio::test]
            async fn $test() {
                super::$test::<bookstore_store_diesel_async::DieselAsyncStore>().await
            })+
        }
        mod tokio_postgres_store {
            $(#[tokio::test]
            async fn $test() {
                super::$test::<bookstore_store_tokio_postgres::TokioPostgresStore>().await
            })+
        }
    };
}

for_each_store!(
    open_establishes_every_connection_before_returning,
    an_exhausted_pool_answers_db_unavailable_and_recovers,
    an_unreachable_database_fails_open_naming_the_setting_without_the_password,
    a_malformed_database_url_is_rejected_before_connecting,
);
