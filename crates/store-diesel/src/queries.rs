//! The statements of SPEC §3 in diesel's DSL, one blocking function each, on a connection
//! the caller checked out. They build the same SQL as `bookstore_domain::sql` (joins, order,
//! limits as bound parameters; the aggregate, which the DSL cannot group this way, as that
//! very text through [`CachedSql`](crate::cached::CachedSql) — not `sql_query`, which diesel never caches).
//! `get_result` rather than `first`: no `LIMIT 1` the sqlx store does not send.

use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::rows::{BookDetailRow, BookSummaryRow, LargeItemRow};
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
};
use bookstore_domain::{Error, sql};
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::cached::CachedSql;
use crate::query_error;
use crate::schema::{authors, books, checkouts};

diesel::define_sql_function! {
    /// PostgreSQL's version 4 UUID generator, as the sqlx store's INSERT uses it.
    fn gen_random_uuid() -> diesel::sql_types::Uuid;
}

/// `SELECT 1`.
pub(crate) fn ping(conn: &mut PgConnection) -> Result<(), Error> {
    CachedSql::new(sql::PING, &[]).execute(conn).map_err(query_error)?;
    Ok(())
}

/// The book with its author.
pub(crate) fn book(conn: &mut PgConnection, id: i64) -> Result<Option<BookDetail>, Error> {
    let row: Option<BookDetailRow> = books::table
        .inner_join(authors::table)
        .filter(books::id.eq(id))
        .select((
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
        .get_result(conn)
        .optional()
        .map_err(query_error)?;
    Ok(row.map(BookDetail::from))
}

/// The first `limit` books by id.
pub(crate) fn books(conn: &mut PgConnection, limit: i64) -> Result<Vec<BookSummary>, Error> {
    let rows: Vec<BookSummaryRow> = books::table
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
        .load(conn)
        .map_err(query_error)?;
    Ok(rows.into_iter().map(BookSummary::from).collect())
}

/// Books whose title or author name matches `pattern`.
pub(crate) fn search_books(
    conn: &mut PgConnection,
    pattern: &str,
    limit: i64,
) -> Result<Vec<BookSummary>, Error> {
    let rows: Vec<BookSummaryRow> = books::table
        .inner_join(authors::table)
        .filter(
            books::title.ilike(pattern).escape('\\').or(authors::name.ilike(pattern).escape('\\')),
        )
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
        .load(conn)
        .map_err(query_error)?;
    Ok(rows.into_iter().map(BookSummary::from).collect())
}

/// The first `limit` books by id with descriptions.
pub(crate) fn large_items(conn: &mut PgConnection, limit: i64) -> Result<Vec<LargeItem>, Error> {
    let rows: Vec<LargeItemRow> = books::table
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
        .load(conn)
        .map_err(query_error)?;
    Ok(rows.into_iter().map(LargeItem::from).collect())
}

#[derive(QueryableByName)]
struct InventoryRow {
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

/// Authors joined to books, grouped, in one statement.
pub(crate) fn author_inventory(
    conn: &mut PgConnection,
    limit: i64,
) -> Result<Vec<AuthorInventory>, Error> {
    let rows: Vec<InventoryRow> =
        CachedSql::new(sql::AUTHOR_INVENTORY, &[limit]).load(conn).map_err(query_error)?;
    Ok(rows
        .into_iter()
        .map(|r| {
            AuthorInventory::from((
                r.id,
                r.name,
                r.book_count,
                r.total_stock,
                r.average_price_cents,
            ))
        })
        .collect())
}

/// Why a checkout transaction ended without committing.
enum Abort {
    Refused(Error),
    Failed(diesel::result::Error),
}

impl From<diesel::result::Error> for Abort {
    fn from(error: diesel::result::Error) -> Self {
        Abort::Failed(error)
    }
}

/// `BEGIN` → lock and read the stock → `UPDATE` → `INSERT … RETURNING` → `COMMIT`; an
/// unknown book or too little stock rolls back.
pub(crate) fn checkout(
    conn: &mut PgConnection,
    order: NewCheckout,
) -> Result<CheckoutResponse, Error> {
    let outcome = conn.transaction::<_, Abort, _>(|conn| {
        let stock: Option<i32> = books::table
            .filter(books::id.eq(order.book_id))
            .select(books::stock)
            .for_update()
            .get_result(conn)
            .optional()?;
        match stock {
            None => return Err(Abort::Refused(Error::BookNotFound(order.book_id))),
            Some(available) if available < order.quantity => {
                return Err(Abort::Refused(Error::OutOfStock {
                    book_id: order.book_id,
                    requested: order.quantity,
                    available,
                }));
            }
            Some(_) => {}
        }
        diesel::update(books::table.filter(books::id.eq(order.book_id)))
            .set(books::stock.eq(books::stock - order.quantity))
            .execute(conn)?;
        let row: (Uuid, OffsetDateTime) = diesel::insert_into(checkouts::table)
            .values((
                checkouts::id.eq(gen_random_uuid()),
                checkouts::book_id.eq(order.book_id),
                checkouts::customer_name.eq(&order.customer_name),
                checkouts::customer_email.eq(&order.customer_email),
                checkouts::quantity.eq(order.quantity),
            ))
            .returning((checkouts::id, checkouts::checked_out_at))
            .get_result(conn)?;
        Ok(row)
    });
    match outcome {
        Ok((id, checked_out_at)) => Ok(order.recorded(id, checked_out_at)),
        Err(Abort::Refused(refusal)) => Err(refusal),
        Err(Abort::Failed(error)) => Err(query_error(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(QueryableByName)]
    struct Prepared {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement: String,
    }

    /// The statements this connection has prepared (and diesel keeps).
    fn prepared(conn: &mut PgConnection) -> Vec<String> {
        diesel::sql_query("SELECT statement FROM pg_prepared_statements")
            .load::<Prepared>(conn)
            .unwrap()
            .into_iter()
            .map(|p| p.statement)
            .collect()
    }

    #[tokio::test]
    async fn every_statement_is_prepared_once_and_kept_like_sqlx_does() {
        let db = bookstore_fixture::testing::seeded_database().await;
        let url = db.url().to_owned();
        tokio::task::spawn_blocking(move || {
            let mut conn = PgConnection::establish(&url).unwrap();
            for _ in 0..3 {
                ping(&mut conn).unwrap();
                book(&mut conn, 7).unwrap();
                let inventory = author_inventory(&mut conn, 5).unwrap();
                assert_eq!(inventory.len(), 5);
            }
            let kept = prepared(&mut conn);
            for (what, marker) in [
                ("the aggregate", "GROUP BY"),
                ("the ping", "SELECT 1"),
                ("a DSL query", "\"books\""),
            ] {
                let count = kept.iter().filter(|s| s.contains(marker)).count();
                assert_eq!(count, 1, "{what} prepared {count} times, kept: {kept:#?}");
            }
        })
        .await
        .unwrap();
    }
}
