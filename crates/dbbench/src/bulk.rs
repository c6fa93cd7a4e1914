//! Bulk insert strategies, for sqlx and for diesel: row by row (autocommit, or in one
//! transaction), multi-row `VALUES` in chunks under PostgreSQL's bind-parameter limit,
//! `UNNEST` of one array per column, and `COPY FROM STDIN` in text and binary format.
//!
//! Every strategy sends the rows' values as data — bound parameters, arrays, or the COPY
//! stream — never inside the SQL text (the JVM article's reflection-built `VALUES` strings
//! are the anti-example); a test proves it from the server's statement log.

use std::io::Write as _;

use diesel::RunQueryDsl;
use diesel::prelude::ExecuteCopyFromDsl;
use serde::{Deserialize, Serialize};
use sqlx::Connection;

use crate::data::Item;
use crate::schema::items;

/// PostgreSQL's limit on bind parameters in one statement: the protocol counts them in a
/// 16-bit field. sqlx refuses a statement past it; diesel does not split for you either.
pub const MAX_BIND_PARAMS: usize = 65_535;
/// Columns of `items`.
pub const ITEM_COLUMNS: usize = 5;

/// Rows per multi-row `VALUES` statement with `columns` parameters per row: as many as fit
/// under [`MAX_BIND_PARAMS`].
pub const fn rows_per_statement(columns: usize) -> usize {
    MAX_BIND_PARAMS / columns
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
    /// One `INSERT … SELECT * FROM UNNEST($1, …)` with an array per column.
    Unnest,
    /// `COPY … FROM STDIN`, text format.
    CopyText,
    /// `COPY … FROM STDIN (FORMAT binary)`.
    CopyBinary,
}

impl Strategy {
    /// All of them, slowest first.
    pub const ALL: [Strategy; 6] = [
        Strategy::RowAutocommit,
        Strategy::RowTransaction,
        Strategy::MultiValues,
        Strategy::Unnest,
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
            Strategy::CopyText => "copy_text",
            Strategy::CopyBinary => "copy_binary",
        }
    }

    /// Statements that carry data for `rows` rows.
    pub fn statements(self, rows: usize) -> usize {
        match self {
            Strategy::RowAutocommit | Strategy::RowTransaction => rows,
            Strategy::MultiValues => rows.div_ceil(rows_per_statement(ITEM_COLUMNS)),
            Strategy::Unnest | Strategy::CopyText | Strategy::CopyBinary => 1.min(rows),
        }
    }

    /// How the library supports it, for the page: what it does for you and what is ours.
    pub fn how(self, library: Library) -> &'static str {
        match (library, self) {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Library {
    /// sqlx, async.
    Sqlx,
    /// diesel, blocking.
    Diesel,
}

impl Library {
    /// Both.
    pub const ALL: [Library; 2] = [Library::Sqlx, Library::Diesel];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Library::Sqlx => "sqlx",
            Library::Diesel => "diesel",
        }
    }
}

const INSERT_ONE: &str =
    "INSERT INTO items (id, sku, name, price_cents, quantity) VALUES ($1, $2, $3, $4, $5)";
const INSERT_UNNEST: &str = "INSERT INTO items (id, sku, name, price_cents, quantity)
     SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[])";
const COPY_TEXT: &str = "COPY items (id, sku, name, price_cents, quantity) FROM STDIN";
const COPY_BINARY: &str =
    "COPY items (id, sku, name, price_cents, quantity) FROM STDIN (FORMAT binary)";
/// COPY data is sent in pieces of about this size.
const COPY_PIECE_BYTES: usize = 1 << 20;

/// Writes `text` as a COPY text-format field: backslash, tab, newline and carriage return
/// escaped, everything else as is.
pub fn copy_text_field(text: &str, out: &mut Vec<u8>) {
    for byte in text.bytes() {
        match byte {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(byte),
        }
    }
}

/// One item as a COPY text-format line.
pub fn copy_text_row(item: &Item, out: &mut Vec<u8>) {
    write!(out, "{}\t", item.id).expect("writing to memory");
    copy_text_field(&item.sku, out);
    out.push(b'\t');
    copy_text_field(&item.name, out);
    writeln!(out, "\t{}\t{}", item.price_cents, item.quantity).expect("writing to memory");
}

/// The binary COPY header: signature, flags, no extension.
pub fn copy_binary_header(out: &mut Vec<u8>) {
    out.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
}

/// One item as a binary COPY tuple: field count, then each field's length and bytes.
pub fn copy_binary_row(item: &Item, out: &mut Vec<u8>) {
    out.extend_from_slice(&(ITEM_COLUMNS as i16).to_be_bytes());
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        out.extend_from_slice(bytes);
    };
    field(&item.id.to_be_bytes());
    field(item.sku.as_bytes());
    field(item.name.as_bytes());
    field(&item.price_cents.to_be_bytes());
    field(&item.quantity.to_be_bytes());
}

/// The binary COPY trailer.
pub fn copy_binary_trailer(out: &mut Vec<u8>) {
    out.extend_from_slice(&(-1i16).to_be_bytes());
}

/// The COPY stream of `rows` in `format` (text or binary), in pieces.
fn copy_pieces(rows: &[Item], binary: bool) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut piece = Vec::with_capacity(COPY_PIECE_BYTES + 4096);
    if binary {
        copy_binary_header(&mut piece);
    }
    for item in rows {
        if binary {
            copy_binary_row(item, &mut piece);
        } else {
            copy_text_row(item, &mut piece);
        }
        if piece.len() >= COPY_PIECE_BYTES {
            pieces.push(std::mem::replace(&mut piece, Vec::with_capacity(COPY_PIECE_BYTES + 4096)));
        }
    }
    if binary {
        copy_binary_trailer(&mut piece);
    }
    pieces.push(piece);
    pieces
}

/// Inserts `rows` with sqlx by `strategy`.
pub async fn insert_sqlx(
    conn: &mut sqlx::PgConnection,
    strategy: Strategy,
    rows: &[Item],
) -> Result<(), sqlx::Error> {
    match strategy {
        Strategy::RowAutocommit => {
            for item in rows {
                bind_one(sqlx::query(INSERT_ONE), item).execute(&mut *conn).await?;
            }
        }
        Strategy::RowTransaction => {
            let mut tx = conn.begin().await?;
            for item in rows {
                bind_one(sqlx::query(INSERT_ONE), item).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        }
        Strategy::MultiValues => {
            let mut tx = conn.begin().await?;
            for chunk in rows.chunks(rows_per_statement(ITEM_COLUMNS)) {
                values_statement(chunk).build().execute(&mut *tx).await?;
            }
            tx.commit().await?;
        }
        Strategy::Unnest => {
            sqlx::query(INSERT_UNNEST)
                .bind(rows.iter().map(|i| i.id).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.sku.clone()).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.name.clone()).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.price_cents).collect::<Vec<_>>())
                .bind(rows.iter().map(|i| i.quantity).collect::<Vec<_>>())
                .execute(&mut *conn)
                .await?;
        }
        Strategy::CopyText | Strategy::CopyBinary => {
            let binary = strategy == Strategy::CopyBinary;
            let mut copy = conn.copy_in_raw(if binary { COPY_BINARY } else { COPY_TEXT }).await?;
            for piece in copy_pieces(rows, binary) {
                if let Err(error) = copy.send(piece).await {
                    let _ = copy.abort("sending failed").await;
                    return Err(error);
                }
            }
            copy.finish().await?;
        }
    }
    Ok(())
}

fn bind_one<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    item: &'q Item,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query.bind(item.id).bind(&item.sku).bind(&item.name).bind(item.price_cents).bind(item.quantity)
}

/// One multi-row `INSERT … VALUES ($1, …), (…)` of `chunk`, every value bound. Past
/// [`rows_per_statement`] rows sqlx refuses to run it.
pub fn values_statement(chunk: &[Item]) -> sqlx::QueryBuilder<sqlx::Postgres> {
    let mut builder =
        sqlx::QueryBuilder::new("INSERT INTO items (id, sku, name, price_cents, quantity) ");
    builder.push_values(chunk, |mut row, item| {
        row.push_bind(item.id)
            .push_bind(item.sku.clone())
            .push_bind(item.name.clone())
            .push_bind(item.price_cents)
            .push_bind(item.quantity);
    });
    builder
}

/// Inserts `rows` with diesel by `strategy`.
pub fn insert_diesel(
    conn: &mut diesel::PgConnection,
    strategy: Strategy,
    rows: &[Item],
) -> diesel::QueryResult<()> {
    use diesel::Connection as _;
    use diesel::sql_types::{Array, BigInt, Integer, Text};
    match strategy {
        Strategy::RowAutocommit => {
            for item in rows {
                diesel::insert_into(items::table).values(item).execute(conn)?;
            }
        }
        Strategy::RowTransaction => conn.transaction(|conn| {
            for item in rows {
                diesel::insert_into(items::table).values(item).execute(conn)?;
            }
            diesel::QueryResult::Ok(())
        })?,
        Strategy::MultiValues => conn.transaction(|conn| {
            for chunk in rows.chunks(rows_per_statement(ITEM_COLUMNS)) {
                diesel::insert_into(items::table).values(chunk).execute(conn)?;
            }
            diesel::QueryResult::Ok(())
        })?,
        Strategy::Unnest => {
            diesel::sql_query(INSERT_UNNEST)
                .bind::<Array<BigInt>, _>(rows.iter().map(|i| i.id).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(rows.iter().map(|i| i.sku.as_str()).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(rows.iter().map(|i| i.name.as_str()).collect::<Vec<_>>())
                .bind::<Array<Integer>, _>(rows.iter().map(|i| i.price_cents).collect::<Vec<_>>())
                .bind::<Array<Integer>, _>(rows.iter().map(|i| i.quantity).collect::<Vec<_>>())
                .execute(conn)?;
        }
        Strategy::CopyText => {
            diesel::copy_from(items::table)
                .from_raw_data(items::table, |out| {
                    let mut line = Vec::with_capacity(256);
                    for item in rows {
                        line.clear();
                        copy_text_row(item, &mut line);
                        out.write_all(&line)
                            .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
                    }
                    diesel::QueryResult::Ok(())
                })
                .with_format(diesel::pg::CopyFormat::Text)
                .execute(conn)?;
        }
        Strategy::CopyBinary => {
            diesel::copy_from(items::table).from_insertable(rows).execute(conn)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_values_chunk_fills_the_parameter_limit_and_not_one_more_row() {
        let rows = rows_per_statement(ITEM_COLUMNS);
        assert_eq!(rows, 13_107);
        assert!(rows * ITEM_COLUMNS <= MAX_BIND_PARAMS);
        assert!((rows + 1) * ITEM_COLUMNS > MAX_BIND_PARAMS);
        assert_eq!(Strategy::MultiValues.statements(rows), 1);
        assert_eq!(Strategy::MultiValues.statements(rows + 1), 2);
        assert_eq!(Strategy::MultiValues.statements(100_000), 8);
    }

    #[test]
    fn copy_text_escapes_what_the_format_needs_and_nothing_else() {
        let mut out = Vec::new();
        copy_text_field("a\\b\tc\nd\re 'q' \"d\" é", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a\\\\b\\tc\\nd\\re 'q' \"d\" é");
    }

    #[test]
    fn a_binary_copy_row_is_a_field_count_then_length_prefixed_fields() {
        let item = Item { id: 1, sku: "s".into(), name: "né".into(), price_cents: 2, quantity: 3 };
        let mut out = Vec::new();
        copy_binary_row(&item, &mut out);
        let mut expected = vec![0, 5];
        expected.extend([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1]);
        expected.extend([0, 0, 0, 1, b's']);
        expected.extend([0, 0, 0, 3, b'n', 0xC3, 0xA9]);
        expected.extend([0, 0, 0, 4, 0, 0, 0, 2]);
        expected.extend([0, 0, 0, 4, 0, 0, 0, 3]);
        assert_eq!(out, expected);
    }
}
