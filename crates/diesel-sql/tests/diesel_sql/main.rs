//! The diesel store's `table!` schema cannot drift from `schema.sql`. Its pool is checked
//! with the sqlx store's by `crates/conformance/tests/stores`, its queries over HTTP by the
//! conformance suite.

use bookstore_diesel_sql::schema::{authors, books, checkouts};
use bookstore_fixture::testing::seeded_database;
use diesel::expression::Expression;
use diesel::prelude::*;
use diesel::sql_types::Text;

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
