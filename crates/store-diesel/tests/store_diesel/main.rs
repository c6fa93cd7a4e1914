//! The diesel store: its `table!` schema cannot drift from `schema.sql`, and its pool
//! behaves as SPEC §1's parity rules say. Queries are checked over HTTP by the conformance
//! suite.

use std::time::Duration;

use bookstore_domain::Error;
use bookstore_domain::store::{OpenError, PoolSettings, Store};
use bookstore_fixture::testing::seeded_database;
use bookstore_store_diesel::schema::{authors, books, checkouts};
use bookstore_store_diesel::{DieselStore, SpawnBlocking};
use diesel::expression::Expression;
use diesel::prelude::*;
use diesel::sql_types::Text;

type Store_ = DieselStore<SpawnBlocking>;

fn settings(url: &str, max_connections: u32, acquire_timeout: Duration) -> PoolSettings {
    PoolSettings { database_url: url.to_owned(), max_connections, acquire_timeout }
}

/// PostgreSQL's `udt_name`s a diesel SQL type may stand for (diesel's `Varchar` is `Text`).
fn udt_names<T: 'static>() -> &'static [&'static str] {
    match std::any::type_name::<T>().rsplit("::").next().unwrap() {
        "BigInt" => &["int8"],
        "Integer" => &["int4"],
        "Text" => &["text", "varchar"],
        "Date" => &["date"],
        "Uuid" => &["uuid"],
        "Timestamptz" => &["timestamptz"],
        other => panic!("no mapping for diesel type {other}"),
    }
}

/// `(table, column, accepted udt names)` for each listed column of a `table!`.
macro_rules! columns {
    ($table:ident: $($column:ident),+) => {
        vec![$((
            stringify!($table),
            stringify!($column),
            udt_names::<<$table::$column as Expression>::SqlType>(),
        )),+]
    };
}

/// Column names of a `table!` in declaration order, from the SQL diesel generates for
/// `SELECT all_columns` — so a column missing from the lists below is noticed.
fn declared_columns(sql: String, table: &str) -> Vec<String> {
    let prefix = format!("\"{table}\".\"");
    sql.split(&prefix).skip(1).map(|rest| rest.split('"').next().unwrap().to_owned()).collect()
}

#[derive(QueryableByName, Debug, PartialEq)]
struct ColumnInfo {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    udt_name: String,
    #[diesel(sql_type = Text)]
    is_nullable: String,
}

#[tokio::test]
async fn the_table_macros_match_the_sql_schema_column_by_column() {
    let db = seeded_database().await;
    let mut conn = PgConnection::establish(db.url()).unwrap();
    let in_database: Vec<ColumnInfo> = diesel::sql_query(
        "SELECT table_name::text, column_name::text, udt_name::text, is_nullable::text
         FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name IN ('authors', 'books', 'checkouts')
         ORDER BY table_name, ordinal_position",
    )
    .load(&mut conn)
    .unwrap();

    let mut in_diesel = columns!(authors: id, name, bio);
    in_diesel.extend(
        columns!(books: id, author_id, isbn, title, description, price_cents, stock, published_at),
    );
    in_diesel.extend(
        columns!(checkouts: id, book_id, customer_name, customer_email, quantity, checked_out_at),
    );

    let listed = |table: &str| -> Vec<String> {
        in_diesel.iter().filter(|c| c.0 == table).map(|c| c.1.to_owned()).collect()
    };
    use diesel::debug_query;
    use diesel::pg::Pg;
    let all = [
        (
            "authors",
            declared_columns(
                debug_query::<Pg, _>(&authors::table.select(authors::all_columns)).to_string(),
                "authors",
            ),
        ),
        (
            "books",
            declared_columns(
                debug_query::<Pg, _>(&books::table.select(books::all_columns)).to_string(),
                "books",
            ),
        ),
        (
            "checkouts",
            declared_columns(
                debug_query::<Pg, _>(&checkouts::table.select(checkouts::all_columns)).to_string(),
                "checkouts",
            ),
        ),
    ];
    for (table, declared) in all {
        assert_eq!(listed(table), declared, "this test lists every column of diesel's {table}");
    }

    assert_eq!(in_database.len(), in_diesel.len(), "number of columns: {in_database:?}");
    let mut expected = in_diesel.clone();
    expected.sort_by_key(|c| c.0);
    for (column, (table, name, udt)) in in_database.iter().zip(expected) {
        assert_eq!(
            (column.table_name.as_str(), column.column_name.as_str()),
            (table, name),
            "column order"
        );
        assert!(
            udt.contains(&column.udt_name.as_str()),
            "{table}.{name}: SQL {} vs diesel {udt:?}",
            column.udt_name
        );
        assert_eq!(column.is_nullable, "NO", "{table}.{name} is NOT NULL in both");
    }
}

async fn client_connections(url: &str) -> i64 {
    let mut conn = PgConnection::establish(url).unwrap();
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let count: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    )
    .get_result(&mut conn)
    .unwrap();
    count.n
}

#[tokio::test]
async fn open_establishes_every_connection_before_returning() {
    let db = seeded_database().await;
    let store = Store_::open(&settings(db.url(), 5, Duration::from_secs(5))).await.unwrap();
    assert_eq!(store.pool().state().connections, 5);
    assert_eq!(client_connections(db.url()).await, 5);
    store.ping().await.unwrap();
}

#[tokio::test]
async fn an_exhausted_pool_answers_db_unavailable_instead_of_waiting_forever() {
    let db = seeded_database().await;
    let store = Store_::open(&settings(db.url(), 1, Duration::from_millis(200))).await.unwrap();
    let held = store.pool().get().unwrap();
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
    let error = Store_::open(&settings(&url, 2, Duration::from_millis(500))).await.unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, OpenError::Connect { .. }), "{message}");
    assert!(message.contains("--database-url/DATABASE_URL"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}/books")), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!message.contains('\n'), "{message}");
}
