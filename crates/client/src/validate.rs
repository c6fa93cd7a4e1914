//! Full checks of response bodies against the contract (SPEC §3): field names in order,
//! types, formats, and what the seed says about names and titles.
//!
//! Used on every scenario before a stack is measured, and on a sample of the responses
//! while it is. Stock values are not checked (write scenarios change them); everything the
//! benchmark never writes is.

use std::fmt;

use bookstore_domain::datetime::{is_date, is_timestamp};
use bookstore_fixture::seed;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value that keeps object fields in the order they were written.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true`/`false`.
    Bool(bool),
    /// A number without fraction or exponent that fits `i64` or `u64` (a larger one is a
    /// `Float`).
    Int(i128),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string, unescaped.
    Str(String),
    /// An array, items in order.
    Array(Vec<Json>),
    /// An object, fields in order.
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct JsonVisitor;
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Int(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Int(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry()? {
                    fields.push((key, value));
                }
                Ok(Json::Object(fields))
            }
        }
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// Parses `body` as JSON.
pub fn parse(body: &[u8]) -> Result<Json, String> {
    serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))
}

/// Fails unless `object` has exactly `keys`, in that order; returns the values.
pub fn fields<'a>(value: &'a Json, keys: &[&str], what: &str) -> Result<Vec<&'a Json>, String> {
    let Json::Object(fields) = value else {
        return Err(format!("{what} is not an object"));
    };
    let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
    if names != keys {
        return Err(format!("{what} has fields {names:?}, the contract says {keys:?}"));
    }
    Ok(fields.iter().map(|(_, v)| v).collect())
}

fn int(value: &Json, what: &str) -> Result<i128, String> {
    match value {
        Json::Int(v) => Ok(*v),
        other => Err(format!("{what} is not an integer: {other:?}")),
    }
}

fn string<'a>(value: &'a Json, what: &str) -> Result<&'a str, String> {
    match value {
        Json::Str(v) => Ok(v),
        other => Err(format!("{what} is not a string: {other:?}")),
    }
}

fn array<'a>(value: &'a Json, what: &str) -> Result<&'a [Json], String> {
    match value {
        Json::Array(v) => Ok(v),
        other => Err(format!("{what} is not an array: {other:?}")),
    }
}

fn timestamp(value: &Json, what: &str) -> Result<(), String> {
    let text = string(value, what)?;
    if is_timestamp(text) {
        Ok(())
    } else {
        Err(format!("{what} is not a contract timestamp: {text}"))
    }
}

fn date(value: &Json, what: &str) -> Result<(), String> {
    let text = string(value, what)?;
    if is_date(text) { Ok(()) } else { Err(format!("{what} is not a date: {text}")) }
}

/// The id of a seeded book, checked against the seed's title and author name.
fn seeded_book(id: i128, title: &Json, author_name: &Json, what: &str) -> Result<i64, String> {
    let id = i64::try_from(id).ok().filter(|id| (1..=seed::BOOKS).contains(id));
    let id = id.ok_or_else(|| format!("{what} has a book id outside the seed"))?;
    let book = seed::book(id);
    if string(title, what)? != book.title {
        return Err(format!("{what}: book {id} has title {title:?}, seeded {:?}", book.title));
    }
    let expected_author = seed::author(book.author_id).name;
    if string(author_name, what)? != expected_author {
        return Err(format!(
            "{what}: book {id} has author {author_name:?}, seeded {expected_author:?}"
        ));
    }
    Ok(id)
}

/// `{"status":"UP"}`.
pub fn health(body: &[u8]) -> Result<(), String> {
    let value = parse(body)?;
    let [status] = fields(&value, &["status"], "health")?[..] else { unreachable!() };
    (string(status, "status")? == "UP").then_some(()).ok_or_else(|| "status is not UP".into())
}

/// `{"service", "version": 1, "now", "tags"}`, in that order: a contract timestamp and four
/// tags, the last `benchmark`.
pub fn small_json(body: &[u8]) -> Result<(), String> {
    let value = parse(body)?;
    let [service, version, now, tags] =
        fields(&value, &["service", "version", "now", "tags"], "small-json")?[..]
    else {
        unreachable!()
    };
    string(service, "service")?;
    if int(version, "version")? != 1 {
        return Err("version is not 1".into());
    }
    timestamp(now, "now")?;
    let tags = array(tags, "tags")?;
    let names: Result<Vec<&str>, String> = tags.iter().map(|t| string(t, "tag")).collect();
    let names = names?;
    if names.len() != 4 || names[3] != "benchmark" {
        return Err(format!(
            "tags must be [framework, serializer, db access, \"benchmark\"], got {names:?}"
        ));
    }
    Ok(())
}

const SUMMARY_FIELDS: [&str; 6] =
    ["id", "title", "authorName", "priceCents", "stock", "publishedAt"];

/// A `BookSummary`; returns its id.
fn book_summary(value: &Json, what: &str) -> Result<i64, String> {
    let [id, title, author, price, stock, published] = fields(value, &SUMMARY_FIELDS, what)?[..]
    else {
        unreachable!()
    };
    let id = seeded_book(int(id, what)?, title, author, what)?;
    int(price, what)?;
    int(stock, what)?;
    date(published, what)?;
    Ok(id)
}

/// A list of `BookSummary` of `len` items, ids ascending; returns the ids.
pub fn book_list(body: &[u8], len: usize) -> Result<Vec<i64>, String> {
    let value = parse(body)?;
    let items = array(&value, "the list")?;
    if items.len() != len {
        return Err(format!("{} items, expected {len}", items.len()));
    }
    let ids: Vec<i64> =
        items.iter().map(|item| book_summary(item, "a book")).collect::<Result<_, _>>()?;
    if !ids.windows(2).all(|pair| pair[0] < pair[1]) {
        return Err("books are not in id order".into());
    }
    Ok(ids)
}

/// `GET /api/books?limit=len`: the first `len` books.
pub fn first_books(body: &[u8], len: usize) -> Result<(), String> {
    let ids = book_list(body, len)?;
    let expected: Vec<i64> = (1..=len as i64).collect();
    (ids == expected).then_some(()).ok_or_else(|| "not the first books by id".into())
}

/// `GET /api/books/search?q=…&limit=len`: every hit contains `q` in title or author.
pub fn search(body: &[u8], q: &str, len: usize) -> Result<(), String> {
    let ids = book_list(body, len)?;
    let needle = q.to_lowercase();
    for id in ids {
        let book = seed::book(id);
        let author = seed::author(book.author_id).name;
        if !book.title.to_lowercase().contains(&needle) && !author.to_lowercase().contains(&needle)
        {
            return Err(format!("book {id} does not match {q:?}"));
        }
    }
    Ok(())
}

/// `BookDetail` of book `expected_id`.
pub fn book_detail(body: &[u8], expected_id: i64) -> Result<(), String> {
    let value = parse(body)?;
    let keys =
        ["id", "isbn", "title", "description", "author", "priceCents", "stock", "publishedAt"];
    let [id, isbn, title, description, author, price, stock, published] =
        fields(&value, &keys, "the book")?[..]
    else {
        unreachable!()
    };
    let [author_id, name, bio] = fields(author, &["id", "name", "bio"], "the author")?[..] else {
        unreachable!()
    };
    let id = seeded_book(int(id, "id")?, title, name, "the book")?;
    if id != expected_id {
        return Err(format!("asked for book {expected_id}, got {id}"));
    }
    let book = seed::book(id);
    if string(isbn, "isbn")? != book.isbn || string(description, "description")? != book.description
    {
        return Err(format!("book {id}'s isbn or description differs from the seed"));
    }
    if int(author_id, "author.id")? != i128::from(book.author_id)
        || string(bio, "bio")? != seed::author(book.author_id).bio
    {
        return Err(format!("book {id}'s author differs from the seed"));
    }
    int(price, "priceCents")?;
    int(stock, "stock")?;
    date(published, "publishedAt")
}

/// large-json with `len` items.
pub fn large_json(body: &[u8], len: usize) -> Result<(), String> {
    let value = parse(body)?;
    let [service, generated_at, summary, items] =
        fields(&value, &["service", "generatedAt", "summary", "items"], "large-json")?[..]
    else {
        unreachable!()
    };
    string(service, "service")?;
    timestamp(generated_at, "generatedAt")?;
    let [count, checksum] = fields(summary, &["itemCount", "checksum"], "summary")?[..] else {
        unreachable!()
    };
    let items = array(items, "items")?;
    if items.len() != len || int(count, "itemCount")? != len as i128 {
        return Err(format!("{} items (itemCount {count:?}), expected {len}", items.len()));
    }
    let keys = ["id", "title", "authorName", "description", "publishedAt", "priceCents", "stock"];
    let mut sum = 0i128;
    for (index, item) in items.iter().enumerate() {
        let [id, title, author, description, published, price, stock] =
            fields(item, &keys, "an item")?[..]
        else {
            unreachable!()
        };
        let id = seeded_book(int(id, "id")?, title, author, "an item")?;
        if id != index as i64 + 1 {
            return Err(format!("item {index} is book {id}, expected the first books by id"));
        }
        if string(description, "description")? != seed::book(id).description {
            return Err(format!("book {id}'s description differs from the seed"));
        }
        date(published, "publishedAt")?;
        sum += i128::from(id) + int(price, "priceCents")? + int(stock, "stock")?;
    }
    if int(checksum, "checksum")? != sum {
        return Err(format!("checksum {checksum:?} is not Σ(id + priceCents + stock) = {sum}"));
    }
    Ok(())
}

/// The aggregate report with `len` rows, ordered by book count desc then author id.
pub fn aggregate_report(body: &[u8], len: usize) -> Result<(), String> {
    let value = parse(body)?;
    let rows = array(&value, "the report")?;
    if rows.len() != len {
        return Err(format!("{} rows, expected {len}", rows.len()));
    }
    let keys = ["authorId", "authorName", "bookCount", "totalStock", "averagePriceCents"];
    let mut previous: Option<(i128, i128)> = None;
    for row in rows {
        let [author_id, name, count, total, average] = fields(row, &keys, "a row")?[..] else {
            unreachable!()
        };
        let author_id = int(author_id, "authorId")?;
        let seeded = i64::try_from(author_id).ok().filter(|id| (1..=seed::AUTHORS).contains(id));
        let seeded = seeded.ok_or_else(|| format!("author {author_id} is not seeded"))?;
        if string(name, "authorName")? != seed::author(seeded).name {
            return Err(format!("author {author_id}'s name differs from the seed"));
        }
        let count = int(count, "bookCount")?;
        int(total, "totalStock")?;
        int(average, "averagePriceCents")?;
        if let Some((previous_count, previous_id)) = previous
            && (count > previous_count || (count == previous_count && author_id <= previous_id))
        {
            return Err("rows are not ordered by bookCount desc, authorId asc".into());
        }
        previous = Some((count, author_id));
    }
    Ok(())
}

/// A 201 `CheckoutResponse` for `book_id`, quantity 1.
pub fn checkout_created(body: &[u8], book_id: i64) -> Result<(), String> {
    let value = parse(body)?;
    let keys = ["id", "bookId", "customerName", "customerEmail", "quantity", "checkedOutAt"];
    let [id, book, name, email, quantity, at] = fields(&value, &keys, "the checkout")?[..] else {
        unreachable!()
    };
    let id = string(id, "id")?;
    let v4 = id.len() == 36
        && id.as_bytes()[14] == b'4'
        && id.bytes().enumerate().all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == b'-'));
    if !v4 {
        return Err(format!("id {id} is not a version 4 UUID"));
    }
    if int(book, "bookId")? != i128::from(book_id) {
        return Err(format!("bookId is not {book_id}"));
    }
    if string(name, "customerName")? != "Benchmark User"
        || string(email, "customerEmail")? != "bench@example.com"
    {
        return Err("customer fields are not echoed".into());
    }
    if int(quantity, "quantity")? != 1 {
        return Err("quantity is not 1".into());
    }
    timestamp(at, "checkedOutAt")
}

/// A 409 `out_of_stock` error body.
pub fn out_of_stock(body: &[u8]) -> Result<(), String> {
    let value = parse(body)?;
    let [code, message] = fields(&value, &["error", "message"], "the error")?[..] else {
        unreachable!()
    };
    if string(code, "error")? != "out_of_stock" {
        return Err(format!("error code {code:?} is not out_of_stock"));
    }
    string(message, "message").map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_order_is_part_of_the_contract() {
        assert!(health(br#"{"status":"UP"}"#).is_ok());
        let swapped = parse(br#"{"b":1,"a":2}"#).unwrap();
        assert!(fields(&swapped, &["a", "b"], "x").unwrap_err().contains("the contract says"));
        assert!(health(br#"{"status":"DOWN"}"#).is_err());
    }

    #[test]
    fn a_book_detail_must_be_the_seeded_book() {
        let book = br#"{"id":20000,"isbn":"0000000020000","title":"Benchmark Book 20000","description":"Synthetic benchmark book description 20000","author":{"id":500,"name":"Author 500","bio":"Benchmark author biography 500"},"priceCents":4999,"stock":54,"publishedAt":"2024-10-15"}"#;
        assert_eq!(book_detail(book, 20000), Ok(()));
        assert!(book_detail(book, 19999).unwrap_err().contains("asked for book 19999"));
        let wrong_title = String::from_utf8_lossy(book).replace("Benchmark Book 20000", "Book");
        assert!(book_detail(wrong_title.as_bytes(), 20000).is_err());
    }

    #[test]
    fn lists_are_counted_ordered_and_seeded() {
        let item = |id: i64| {
            let b = seed::book(id);
            format!(
                r#"{{"id":{id},"title":"{}","authorName":"{}","priceCents":1,"stock":1,"publishedAt":"2020-01-01"}}"#,
                b.title,
                seed::author(b.author_id).name
            )
        };
        let two = format!("[{},{}]", item(1), item(2));
        assert_eq!(first_books(two.as_bytes(), 2), Ok(()));
        assert!(first_books(two.as_bytes(), 3).is_err());
        let reversed = format!("[{},{}]", item(2), item(1));
        assert!(book_list(reversed.as_bytes(), 2).unwrap_err().contains("id order"));
        assert_eq!(search(two.as_bytes(), "book", 2), Ok(()));
        assert!(search(two.as_bytes(), "Author 7", 2).is_err());
    }

    #[test]
    fn checkouts_and_refusals() {
        let created = br#"{"id":"0b0e1c52-6c4b-4d6e-9a0f-3c2d1e0f9a8b","bookId":3,"customerName":"Benchmark User","customerEmail":"bench@example.com","quantity":1,"checkedOutAt":"2026-11-30T08:31:12.123456Z"}"#;
        assert_eq!(checkout_created(created, 3), Ok(()));
        assert!(checkout_created(created, 4).is_err());
        assert_eq!(
            out_of_stock(
                br#"{"error":"out_of_stock","message":"book 2 has 0 in stock, 1 requested"}"#
            ),
            Ok(())
        );
        assert!(out_of_stock(br#"{"error":"not_found","message":"x"}"#).is_err());
    }
}
