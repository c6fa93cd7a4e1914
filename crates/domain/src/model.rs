//! Response bodies of SPEC §3, field for field and in the order given there.
//!
//! Field order matters: serde writes fields in declaration order, and the contract (and the
//! conformance suite) compares bodies byte for byte. Do not reorder fields.

use serde::Serialize;
use uuid::Uuid;

use crate::datetime::{Date, Timestamp};

/// `{"status":"UP"}` from `/health` and `/health/db`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Health {
    /// Always `"UP"`; failures are errors, not a different status value.
    pub status: &'static str,
}

impl Health {
    /// The only healthy answer.
    pub const UP: Health = Health { status: "UP" };
}

/// One book in a list or search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BookSummary {
    /// `books.id`.
    pub id: i64,
    /// `books.title`.
    pub title: String,
    /// `authors.name` of the book's author.
    pub author_name: String,
    /// `books.price_cents`.
    pub price_cents: i32,
    /// `books.stock`.
    pub stock: i32,
    /// `books.published_at`.
    pub published_at: Date,
}

/// One book with its author, from `GET /api/books/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BookDetail {
    /// `books.id`.
    pub id: i64,
    /// `books.isbn`.
    pub isbn: String,
    /// `books.title`.
    pub title: String,
    /// `books.description`.
    pub description: String,
    /// The book's author.
    pub author: Author,
    /// `books.price_cents`.
    pub price_cents: i32,
    /// `books.stock`.
    pub stock: i32,
    /// `books.published_at`.
    pub published_at: Date,
}

/// The author nested in [`BookDetail`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Author {
    /// `authors.id`.
    pub id: i64,
    /// `authors.name`.
    pub name: String,
    /// `authors.bio`.
    pub bio: String,
}

/// One item of the large-json payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LargeItem {
    /// `books.id`.
    pub id: i64,
    /// `books.title`.
    pub title: String,
    /// `authors.name`.
    pub author_name: String,
    /// `books.description`.
    pub description: String,
    /// `books.published_at`.
    pub published_at: Date,
    /// `books.price_cents`.
    pub price_cents: i32,
    /// `books.stock`.
    pub stock: i32,
}

/// `GET /api/books/bench/large-json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LargeJson<'a> {
    /// The binary name of the stack that answered.
    pub service: &'a str,
    /// When the body was built.
    pub generated_at: Timestamp,
    /// Count and checksum of `items`, so a client can check the body cheaply.
    pub summary: LargeSummary,
    /// The first `limit` books by id.
    pub items: Vec<LargeItem>,
}

/// The `summary` object of [`LargeJson`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LargeSummary {
    /// Number of items.
    pub item_count: usize,
    /// Σ (id + priceCents + stock) over the items.
    pub checksum: i64,
}

impl LargeSummary {
    /// Count and checksum of `items`, as the contract defines them.
    pub fn of(items: &[LargeItem]) -> Self {
        let checksum = items
            .iter()
            .map(|item| item.id + i64::from(item.price_cents) + i64::from(item.stock))
            .sum();
        Self { item_count: items.len(), checksum }
    }
}

/// `GET /api/books/bench/small-json`: no database access, a fixed shape with a fresh time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmallJson<'a> {
    /// The binary name of the stack that answered.
    pub service: &'a str,
    /// Always 1.
    pub version: u32,
    /// The time the body was built.
    pub now: Timestamp,
    /// Framework, serializer, database access, and `"benchmark"`.
    pub tags: [&'a str; 4],
}

/// One row of the aggregate report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorInventory {
    /// `authors.id`.
    pub author_id: i64,
    /// `authors.name`.
    pub author_name: String,
    /// Number of the author's books.
    pub book_count: i64,
    /// Sum of the stock of the author's books.
    pub total_stock: i64,
    /// `floor(avg(price_cents))` over the author's books.
    pub average_price_cents: i64,
}

/// `POST /api/checkouts` answer (201).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutResponse {
    /// `checkouts.id`, a version 4 UUID.
    pub id: Uuid,
    /// The book bought.
    pub book_id: i64,
    /// As sent.
    pub customer_name: String,
    /// As sent.
    pub customer_email: String,
    /// The quantity bought (1 when the request left it out).
    pub quantity: i32,
    /// `checkouts.checked_out_at`.
    pub checked_out_at: Timestamp,
}

/// Rows as the stores load them, in the column order of the statements in [`crate::sql`],
/// and their conversion into the response types: written once for both stores.
pub mod rows {
    use super::*;

    /// `id, title, author name, price_cents, stock, published_at`.
    pub type BookSummaryRow = (i64, String, String, i32, i32, time::Date);
    /// `id, isbn, title, description, author id, author name, author bio, price_cents,
    /// stock, published_at`.
    pub type BookDetailRow =
        (i64, String, String, String, i64, String, String, i32, i32, time::Date);
    /// `id, title, author name, description, published_at, price_cents, stock`.
    pub type LargeItemRow = (i64, String, String, String, time::Date, i32, i32);
    /// `author id, author name, book_count, total_stock, average_price_cents`.
    pub type AuthorInventoryRow = (i64, String, i64, i64, i64);

    impl From<BookSummaryRow> for BookSummary {
        fn from(
            (id, title, author_name, price_cents, stock, published_at): BookSummaryRow,
        ) -> Self {
            Self {
                id,
                title,
                author_name,
                price_cents,
                stock,
                published_at: Date::from(published_at),
            }
        }
    }

    impl From<BookDetailRow> for BookDetail {
        fn from(row: BookDetailRow) -> Self {
            let (
                id,
                isbn,
                title,
                description,
                author_id,
                name,
                bio,
                price_cents,
                stock,
                published_at,
            ) = row;
            Self {
                id,
                isbn,
                title,
                description,
                author: Author { id: author_id, name, bio },
                price_cents,
                stock,
                published_at: Date::from(published_at),
            }
        }
    }

    impl From<LargeItemRow> for LargeItem {
        fn from(
            (id, title, author_name, description, published_at, price_cents, stock): LargeItemRow,
        ) -> Self {
            Self {
                id,
                title,
                author_name,
                description,
                published_at: Date::from(published_at),
                price_cents,
                stock,
            }
        }
    }

    impl From<AuthorInventoryRow> for AuthorInventory {
        fn from(row: AuthorInventoryRow) -> Self {
            let (author_id, author_name, book_count, total_stock, average_price_cents) = row;
            Self { author_id, author_name, book_count, total_stock, average_price_cents }
        }
    }
}

/// The body of every error response: `{"error":"<code>","message":"<text>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorBody<'a> {
    /// The code, see [`crate::Error::code`].
    pub error: &'static str,
    /// The public message, see [`crate::Error::public_message`].
    pub message: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    fn item(id: i64, price_cents: i32, stock: i32) -> LargeItem {
        LargeItem {
            id,
            title: String::new(),
            author_name: String::new(),
            description: String::new(),
            published_at: Date::from(date!(2020 - 01 - 01)),
            price_cents,
            stock,
        }
    }

    #[test]
    fn book_detail_fields_are_camel_case_in_contract_order() {
        let detail = BookDetail {
            id: 3,
            isbn: "0000000000003".into(),
            title: "T".into(),
            description: "D".into(),
            author: Author { id: 3, name: "A".into(), bio: "B".into() },
            price_cents: 1002,
            stock: 7,
            published_at: Date::from(date!(2020 - 01 - 03)),
        };
        assert_eq!(
            serde_json::to_string(&detail).unwrap(),
            r#"{"id":3,"isbn":"0000000000003","title":"T","description":"D","author":{"id":3,"name":"A","bio":"B"},"priceCents":1002,"stock":7,"publishedAt":"2020-01-03"}"#
        );
    }

    #[test]
    fn summary_and_inventory_and_large_item_field_order() {
        let summary = BookSummary {
            id: 1,
            title: "T".into(),
            author_name: "A".into(),
            price_cents: 1000,
            stock: 5,
            published_at: Date::from(date!(2020 - 01 - 01)),
        };
        assert_eq!(
            serde_json::to_string(&summary).unwrap(),
            r#"{"id":1,"title":"T","authorName":"A","priceCents":1000,"stock":5,"publishedAt":"2020-01-01"}"#
        );
        let row = AuthorInventory {
            author_id: 1,
            author_name: "A".into(),
            book_count: 40,
            total_stock: 9,
            average_price_cents: 1234,
        };
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            r#"{"authorId":1,"authorName":"A","bookCount":40,"totalStock":9,"averagePriceCents":1234}"#
        );
        assert_eq!(
            serde_json::to_string(&item(1, 2, 3)).unwrap(),
            r#"{"id":1,"title":"","authorName":"","description":"","publishedAt":"2020-01-01","priceCents":2,"stock":3}"#
        );
    }

    #[test]
    fn large_json_summary_counts_and_checksums_the_items() {
        let items = vec![item(1, 1000, 5), item(2, 1001, 10)];
        let summary = LargeSummary::of(&items);
        assert_eq!(summary, LargeSummary { item_count: 2, checksum: 1 + 1000 + 5 + 2 + 1001 + 10 });
        let body = LargeJson {
            service: "s",
            generated_at: Timestamp::from(datetime!(2026-01-01 00:00:00 UTC)),
            summary,
            items: vec![],
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"service":"s","generatedAt":"2026-01-01T00:00:00.000000Z","summary":{"itemCount":2,"checksum":2019},"items":[]}"#
        );
    }

    #[test]
    fn small_json_and_checkout_response_shapes() {
        let small = SmallJson {
            service: "axum-serde-sqlx",
            version: 1,
            now: Timestamp::from(datetime!(2026-01-01 00:00:00 UTC)),
            tags: ["axum", "serde_json", "sqlx", "benchmark"],
        };
        assert_eq!(
            serde_json::to_string(&small).unwrap(),
            r#"{"service":"axum-serde-sqlx","version":1,"now":"2026-01-01T00:00:00.000000Z","tags":["axum","serde_json","sqlx","benchmark"]}"#
        );
        let checkout = CheckoutResponse {
            id: Uuid::from_u128(0x0123_4567_89ab_4def_8123_4567_89ab_cdef),
            book_id: 3,
            customer_name: "N".into(),
            customer_email: "e@x".into(),
            quantity: 1,
            checked_out_at: Timestamp::from(datetime!(2026-01-01 00:00:00.000001 UTC)),
        };
        assert_eq!(
            serde_json::to_string(&checkout).unwrap(),
            r#"{"id":"01234567-89ab-4def-8123-456789abcdef","bookId":3,"customerName":"N","customerEmail":"e@x","quantity":1,"checkedOutAt":"2026-01-01T00:00:00.000001Z"}"#
        );
    }

    #[test]
    fn error_body_shape() {
        let body = ErrorBody { error: "not_found", message: "book 9 does not exist" };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"error":"not_found","message":"book 9 does not exist"}"#
        );
    }
}
