//! One builder per statement, each a value the caller runs with the `RunQueryDsl` of its
//! connection (diesel's, blocking, or diesel-async's), and what both stores do with the
//! rows.

use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::AuthorInventory;
use bookstore_domain::sql;
use diesel::dsl;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

use crate::cached::CachedSql;
use crate::schema::{authors, books, checkouts};

diesel::define_sql_function! {
    /// PostgreSQL's version 4 UUID generator, as the sqlx store's INSERT uses it.
    fn gen_random_uuid() -> diesel::sql_types::Uuid;
}

/// `SELECT 1`.
pub fn ping() -> CachedSql<'static> {
    CachedSql::new(sql::PING, &[])
}

/// The book `id` with its author: a `BookDetailRow`.
#[dsl::auto_type(no_type_alias)]
pub fn book(id: i64) -> _ {
    books::table.inner_join(authors::table).filter(books::id.eq(id)).select((
        books::id,
        books::isbn,
        books::title,
        books::description,
        authors::id,
        authors::name,
        authors::bio,
        books::price_cents,
        books::stock,
        books::published_at,
    ))
}

/// The first `limit` books by id: `BookSummaryRow`s.
#[dsl::auto_type(no_type_alias)]
pub fn books(limit: i64) -> _ {
    books::table
        .inner_join(authors::table)
        .select((
            books::id,
            books::title,
            authors::name,
            books::price_cents,
            books::stock,
            books::published_at,
        ))
        .order(books::id)
        .limit(limit)
}

/// Books whose title or author name matches `pattern` (`\` escapes): `BookSummaryRow`s.
#[dsl::auto_type(no_type_alias)]
pub fn search_books<'a>(pattern: &'a str, limit: i64) -> _ {
    let title: dsl::Escape<dsl::ILike<books::title, &'a str>> =
        books::title.ilike(pattern).escape('\\');
    let author: dsl::Escape<dsl::ILike<authors::name, &'a str>> =
        authors::name.ilike(pattern).escape('\\');
    books::table
        .inner_join(authors::table)
        .filter(title.or(author))
        .select((
            books::id,
            books::title,
            authors::name,
            books::price_cents,
            books::stock,
            books::published_at,
        ))
        .order(books::id)
        .limit(limit)
}

/// The first `limit` books by id with descriptions: `LargeItemRow`s.
#[dsl::auto_type(no_type_alias)]
pub fn large_items(limit: i64) -> _ {
    books::table
        .inner_join(authors::table)
        .select((
            books::id,
            books::title,
            authors::name,
            books::description,
            books::published_at,
            books::price_cents,
            books::stock,
        ))
        .order(books::id)
        .limit(limit)
}

/// Authors joined to books, grouped, in one statement: [`InventoryRow`]s.
pub fn author_inventory(limit: &[i64; 1]) -> CachedSql<'_> {
    CachedSql::new(sql::AUTHOR_INVENTORY, limit)
}

/// A row of [`author_inventory`].
#[derive(QueryableByName)]
pub struct InventoryRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Varchar)]
    name: String,
    #[diesel(sql_type = BigInt)]
    book_count: i64,
    #[diesel(sql_type = BigInt)]
    total_stock: i64,
    #[diesel(sql_type = BigInt)]
    average_price_cents: i64,
}

impl From<InventoryRow> for AuthorInventory {
    fn from(r: InventoryRow) -> Self {
        AuthorInventory::from((r.id, r.name, r.book_count, r.total_stock, r.average_price_cents))
    }
}

/// The checkout's first statement: lock book `book_id`'s row and read its stock.
#[dsl::auto_type(no_type_alias)]
pub fn lock_stock(book_id: i64) -> _ {
    books::table.filter(books::id.eq(book_id)).select(books::stock).for_update()
}

/// Then: take the order's quantity from the stock.
#[dsl::auto_type(no_type_alias)]
pub fn take_stock(order: &NewCheckout) -> _ {
    let left: dsl::Sub<books::stock, i32> = books::stock - order.quantity;
    let this_book: dsl::Eq<books::id, i64> = books::id.eq(order.book_id);
    dsl::update(books::table.filter(this_book)).set(books::stock.eq(left))
}

/// Last: record it, returning its id and time (`(Uuid, OffsetDateTime)`).
#[dsl::auto_type(no_type_alias)]
pub fn record<'a>(order: &'a NewCheckout) -> _ {
    let book_id: dsl::Eq<checkouts::book_id, i64> = checkouts::book_id.eq(order.book_id);
    let name: dsl::Eq<checkouts::customer_name, &'a String> =
        checkouts::customer_name.eq(&order.customer_name);
    let email: dsl::Eq<checkouts::customer_email, &'a String> =
        checkouts::customer_email.eq(&order.customer_email);
    let quantity: dsl::Eq<checkouts::quantity, i32> = checkouts::quantity.eq(order.quantity);
    dsl::insert_into(checkouts::table)
        .values((checkouts::id.eq(gen_random_uuid()), book_id, name, email, quantity))
        .returning((checkouts::id, checkouts::checked_out_at))
}

/// Why a checkout transaction ended without committing.
#[derive(Debug)]
pub enum Abort {
    /// [`NewCheckout::refusal`] stopped it: the answer to send.
    Refused(Error),
    /// A statement failed.
    Failed(diesel::result::Error),
}

impl From<diesel::result::Error> for Abort {
    fn from(error: diesel::result::Error) -> Self {
        Abort::Failed(error)
    }
}

impl Abort {
    /// The answer: the refusal, or the failure as [`query_error`](crate::query_error) sees it.
    pub fn into_error(self) -> Error {
        match self {
            Abort::Refused(refusal) => refusal,
            Abort::Failed(error) => crate::query_error(error),
        }
    }
}
