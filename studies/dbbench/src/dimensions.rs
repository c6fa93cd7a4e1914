//! What the bulk strategies and the batch job are swept over besides the access style: the
//! [`Database`], the [`Library`] that sends the rows and the bulk insert [`Strategy`]. They
//! are kept together, below everything that measures or reports them, because each asks
//! the others: a database supports some strategies, a strategy's statement count depends
//! on the database's parameter limit.

use serde::{Deserialize, Serialize};

/// Columns of `items`.
pub const ITEM_COLUMNS: usize = 5;

/// A database the bulk strategies and the batch job run on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Database {
    /// PostgreSQL (always).
    Postgres,
    /// MariaDB, a throwaway server (feature `mariadb`).
    Mariadb,
    /// SQLite, a file in a temporary directory (feature `sqlite`).
    Sqlite,
}

impl Database {
    /// All three, in the order they run.
    pub const ALL: [Database; 3] = [Database::Postgres, Database::Mariadb, Database::Sqlite];

    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Database::Postgres => "postgres",
            Database::Mariadb => "mariadb",
            Database::Sqlite => "sqlite",
        }
    }

    /// Its name on the page.
    pub fn label(self) -> &'static str {
        match self {
            Database::Postgres => "PostgreSQL",
            Database::Mariadb => "MariaDB",
            Database::Sqlite => "SQLite",
        }
    }

    /// The most bind parameters one statement may have: PostgreSQL's and MariaDB's
    /// protocols count them in 16 bits; SQLite's default `SQLITE_MAX_VARIABLE_NUMBER` (the
    /// bundled build keeps it).
    pub fn max_bind_params(self) -> usize {
        match self {
            Database::Postgres | Database::Mariadb => 65_535,
            Database::Sqlite => 32_766,
        }
    }

    /// Rows per multi-row `VALUES` statement of `items`: as many as fit under
    /// [`Database::max_bind_params`].
    pub fn rows_per_statement(self) -> usize {
        self.max_bind_params() / ITEM_COLUMNS
    }

    /// Whether `strategy` exists here; if not, why.
    pub fn supports(self, strategy: Strategy) -> Result<(), &'static str> {
        match (self, strategy) {
            (_, Strategy::RowAutocommit | Strategy::RowTransaction | Strategy::MultiValues) => {
                Ok(())
            }
            (Database::Postgres, Strategy::Unnest | Strategy::CopyText | Strategy::CopyBinary) => {
                Ok(())
            }
            (Database::Mariadb | Database::Sqlite, Strategy::JsonRows) => Ok(()),
            (Database::Postgres, Strategy::JsonRows) => {
                Err("arrays do it without JSON here (unnest)")
            }
            (Database::Mariadb | Database::Sqlite, Strategy::Unnest) => {
                Err("no array parameters (json_rows is the analog)")
            }
            (Database::Mariadb, Strategy::CopyText | Strategy::CopyBinary) => {
                Err("no COPY; LOAD DATA LOCAL INFILE is supported by neither library")
            }
            (Database::Sqlite, Strategy::CopyText | Strategy::CopyBinary) => Err("no COPY"),
        }
    }

    /// The strategies it supports, slowest first.
    pub fn strategies(self) -> Vec<Strategy> {
        Strategy::ALL.into_iter().filter(|s| self.supports(*s).is_ok()).collect()
    }
}

/// How the rows get to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One `INSERT` per row, each its own transaction.
    RowAutocommit,
    /// One `INSERT` per row, all in one transaction.
    RowTransaction,
    /// Multi-row `INSERT … VALUES` with bound parameters, in chunks under the limit.
    MultiValues,
    /// One `INSERT … SELECT * FROM UNNEST($1, …)` with an array per column (PostgreSQL).
    Unnest,
    /// One `INSERT … SELECT … FROM` the rows of one bound JSON document, expanded by the
    /// server (MariaDB's `JSON_TABLE`, SQLite's `json_each`): the analog of `UNNEST` where
    /// there are no array parameters.
    JsonRows,
    /// `COPY … FROM STDIN`, text format.
    CopyText,
    /// `COPY … FROM STDIN (FORMAT binary)`.
    CopyBinary,
}

impl Strategy {
    /// All of them, slowest first.
    pub const ALL: [Strategy; 7] = [
        Strategy::RowAutocommit,
        Strategy::RowTransaction,
        Strategy::MultiValues,
        Strategy::Unnest,
        Strategy::JsonRows,
        Strategy::CopyText,
        Strategy::CopyBinary,
    ];

    /// Its name in results and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::RowAutocommit => "row_autocommit",
            Strategy::RowTransaction => "row_transaction",
            Strategy::MultiValues => "multi_values",
            Strategy::Unnest => "unnest",
            Strategy::JsonRows => "json_rows",
            Strategy::CopyText => "copy_text",
            Strategy::CopyBinary => "copy_binary",
        }
    }

    /// Statements that carry data for `rows` rows on `database`.
    pub fn statements(self, rows: usize, database: Database) -> usize {
        match self {
            Strategy::RowAutocommit | Strategy::RowTransaction => rows,
            Strategy::MultiValues => rows.div_ceil(database.rows_per_statement()),
            Strategy::Unnest | Strategy::JsonRows | Strategy::CopyText | Strategy::CopyBinary => {
                1.min(rows)
            }
        }
    }

    /// How the library supports it on `database`, for the page: what it does for you and
    /// what is ours.
    pub fn how(self, library: Library, database: Database) -> &'static str {
        match (library, self) {
            (_, Strategy::JsonRows) if database == Database::Mariadb => {
                "one JSON document bound (serde_json); JSON_TABLE expands it"
            }
            (_, Strategy::JsonRows) => "one JSON document bound (serde_json); json_each expands it",
            (Library::Sqlx, Strategy::MultiValues) => "QueryBuilder::push_values, chunked by us",
            (Library::Diesel, Strategy::MultiValues) => {
                "insert_into().values(&[..]), chunked by us"
            }
            (Library::Sqlx, Strategy::CopyText | Strategy::CopyBinary) => {
                "copy_in_raw; rows encoded by us"
            }
            (Library::Diesel, Strategy::CopyText) => {
                "copy_from().from_raw_data; rows encoded by us"
            }
            (Library::Diesel, Strategy::CopyBinary) => "copy_from().from_insertable",
            (_, Strategy::Unnest) => "arrays bound as parameters",
            _ => "one bound INSERT per row",
        }
    }
}

/// Which library sends the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Library {
    /// sqlx, async.
    Sqlx,
    /// diesel, blocking.
    Diesel,
}

impl Library {
    /// Each library, in the order of the page's columns and bars.
    pub const ALL: [Library; 2] = [Library::Sqlx, Library::Diesel];

    /// Its name in results and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Library::Sqlx => "sqlx",
            Library::Diesel => "diesel",
        }
    }
}

#[cfg(test)]
mod tests {
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
            assert!(
                strategies.contains(&Strategy::Unnest) || strategies.contains(&Strategy::JsonRows)
            );
        }
        assert!(Database::Mariadb.supports(Strategy::CopyText).unwrap_err().contains("LOAD DATA"));
    }
}
