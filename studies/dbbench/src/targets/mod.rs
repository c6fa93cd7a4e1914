//! The databases the bulk strategies and the batch job run on: PostgreSQL always; MariaDB
//! and SQLite when built with the features of the same names (and, for MariaDB, with its
//! server installed: a throwaway one is started). Each is a [`Target`].
//!
//! What the three share — row-by-row and multi-row inserts, the batch job's workers, the
//! batch pools — is written once, in `sql_target!`, and expanded in each database's
//! module with that module's types and SQL; what differs (connections, schema, COPY,
//! arrays, JSON documents, how a writing transaction begins) is in the module.

pub mod open;
pub mod postgres;
mod shared;

#[cfg(feature = "mariadb")]
pub mod mariadb;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub(crate) use shared::diesel_unsupported;
pub use shared::{READ_ITEMS, Target, items_from_rows, json_rows};

#[cfg(test)]
mod tests;
