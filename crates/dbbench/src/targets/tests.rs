//! The databases' limits and strategies, and the JSON rows, without a server.

use super::*;

#[test]
fn a_values_chunk_fills_each_parameter_limit_and_not_one_more_row() {
    for (database, rows) in
        [(Database::Postgres, 13_107), (Database::Mariadb, 13_107), (Database::Sqlite, 6_553)]
    {
        assert_eq!(database.rows_per_statement(), rows);
        assert!(rows * ITEM_COLUMNS <= database.max_bind_params());
        assert!((rows + 1) * ITEM_COLUMNS > database.max_bind_params());
        assert_eq!(Strategy::MultiValues.statements(rows, database), 1);
        assert_eq!(Strategy::MultiValues.statements(rows + 1, database), 2);
    }
    assert_eq!(Strategy::MultiValues.statements(100_000, Database::Postgres), 8);
    assert_eq!(Strategy::MultiValues.statements(100_000, Database::Sqlite), 16);
}

#[test]
fn every_database_has_the_row_and_values_strategies_and_one_set_based_one() {
    for database in Database::ALL {
        let strategies = database.strategies();
        assert_eq!(strategies[..3], Strategy::ALL[..3], "{database:?}");
        assert!(strategies.contains(&Strategy::Unnest) || strategies.contains(&Strategy::JsonRows));
    }
    assert!(Database::Mariadb.supports(Strategy::CopyText).unwrap_err().contains("LOAD DATA"));
}

#[test]
fn json_rows_escape_what_json_needs() {
    let item = Item {
        id: 1,
        sku: "s".into(),
        name: "a \"q\" \\ \t\n é 📚".into(),
        price_cents: 2,
        quantity: 3,
    };
    let json = json_rows(std::slice::from_ref(&item));
    let back: Vec<(i64, String, String, i32, i32)> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, vec![(1, "s".into(), item.name.clone(), 2, 3)]);
}
