//! The statements of `bookstore_diesel_sql`, one blocking function each, on a connection
//! the caller checked out.

use bookstore_diesel_sql::{query_error, statements};
use bookstore_domain::Error;
use bookstore_domain::checkout::NewCheckout;
use bookstore_domain::model::rows::{BookDetailRow, BookSummaryRow, LargeItemRow};
use bookstore_domain::model::{
    AuthorInventory, BookDetail, BookSummary, CheckoutResponse, LargeItem,
};
use diesel::pg::PgConnection;
use diesel::prelude::*;
use statements::Abort;
use time::OffsetDateTime;
use uuid::Uuid;

/// `SELECT 1`.
pub(crate) fn ping(conn: &mut PgConnection) -> Result<(), Error> {
    statements::ping().execute(conn).map_err(query_error)?;
    Ok(())
}

/// The book with its author.
pub(crate) fn book(conn: &mut PgConnection, id: i64) -> Result<Option<BookDetail>, Error> {
    let row: Option<BookDetailRow> =
        statements::book(id).get_result(conn).optional().map_err(query_error)?;
    Ok(row.map(BookDetail::from))
}

/// The first `limit` books by id.
pub(crate) fn books(conn: &mut PgConnection, limit: i64) -> Result<Vec<BookSummary>, Error> {
    let rows: Vec<BookSummaryRow> = statements::books(limit).load(conn).map_err(query_error)?;
    Ok(rows.into_iter().map(BookSummary::from).collect())
}

/// Books whose title or author name matches `pattern`.
pub(crate) fn search_books(
    conn: &mut PgConnection,
    pattern: &str,
    limit: i64,
) -> Result<Vec<BookSummary>, Error> {
    let rows: Vec<BookSummaryRow> =
        statements::search_books(pattern, limit).load(conn).map_err(query_error)?;
    Ok(rows.into_iter().map(BookSummary::from).collect())
}

/// The first `limit` books by id with descriptions.
pub(crate) fn large_items(conn: &mut PgConnection, limit: i64) -> Result<Vec<LargeItem>, Error> {
    let rows: Vec<LargeItemRow> = statements::large_items(limit).load(conn).map_err(query_error)?;
    Ok(rows.into_iter().map(LargeItem::from).collect())
}

/// Authors joined to books, grouped, in one statement.
pub(crate) fn author_inventory(
    conn: &mut PgConnection,
    limit: i64,
) -> Result<Vec<AuthorInventory>, Error> {
    let rows: Vec<statements::InventoryRow> =
        statements::author_inventory(&[limit]).load(conn).map_err(query_error)?;
    Ok(rows.into_iter().map(AuthorInventory::from).collect())
}

/// `BEGIN` → lock and read the stock → `UPDATE` → `INSERT … RETURNING` → `COMMIT`; an
/// unknown book or too little stock rolls back.
pub(crate) fn checkout(
    conn: &mut PgConnection,
    order: NewCheckout,
) -> Result<CheckoutResponse, Error> {
    let (id, checked_out_at) = conn
        .transaction::<(Uuid, OffsetDateTime), Abort, _>(|conn| {
            let stock: Option<i32> =
                statements::lock_stock(order.book_id).get_result(conn).optional()?;
            if let Some(refusal) = order.refusal(stock) {
                return Err(Abort::Refused(refusal));
            }
            statements::take_stock(&order).execute(conn)?;
            Ok(statements::record(&order).get_result(conn)?)
        })
        .map_err(Abort::into_error)?;
    Ok(order.recorded(id, checked_out_at))
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
