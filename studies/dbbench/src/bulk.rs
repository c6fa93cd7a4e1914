//! Bulk insert strategies, for sqlx and for diesel: row by row (autocommit, or in one
//! transaction), multi-row `VALUES` in chunks under the database's bind-parameter limit,
//! one statement for all rows (`UNNEST` of one array per column on PostgreSQL, a JSON
//! document expanded by the server on MariaDB and SQLite), and PostgreSQL's
//! `COPY FROM STDIN` in text and binary format. The strategies are named in
//! [`crate::dimensions`], the code that sends them is in each database's module of
//! [`crate::targets`]; the COPY encoding is here.
//!
//! Every strategy sends the rows' values as data — bound parameters, arrays, a bound JSON
//! document, or the COPY stream — never inside the SQL text (the JVM article's
//! reflection-built `VALUES` strings are the anti-example); a test proves it from
//! PostgreSQL's statement log.

use std::io::Write as _;

use crate::data::Item;
use crate::dimensions::ITEM_COLUMNS;

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

/// The binary COPY trailer: a field count of -1, which ends the stream.
pub fn copy_binary_trailer(out: &mut Vec<u8>) {
    out.extend_from_slice(&(-1i16).to_be_bytes());
}

/// The COPY stream of `rows` in `format` (text or binary), in pieces.
pub(crate) fn copy_pieces(rows: &[Item], binary: bool) -> Vec<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
