//! The benchmark's tables (`sql/dbbench.sql`), for diesel, and their set-up.

use sqlx::{Executor, PgConnection};

/// `sql/dbbench.sql`.
pub const SCHEMA_SQL: &str = include_str!("../sql/dbbench.sql");

/// The index that the users/orders join needs, created and dropped by the CRUD benchmark.
pub const JOIN_INDEX_SQL: &str =
    "CREATE INDEX IF NOT EXISTS orders_user_id_idx ON orders (user_id)";
/// Drops [`JOIN_INDEX_SQL`]'s index again, for the join measured without it.
pub const DROP_JOIN_INDEX_SQL: &str = "DROP INDEX IF EXISTS orders_user_id_idx";

diesel::table! {
    /// The CRUD benchmark's users.
    #[allow(missing_docs)] // columns named for what they hold, as in sql/dbbench.sql
    users (id) {
        id -> BigInt,
        name -> Text,
        email -> Text,
    }
}

diesel::table! {
    /// The CRUD benchmark's orders, many per user.
    #[allow(missing_docs)] // columns named for what they hold, as in sql/dbbench.sql
    orders (id) {
        id -> BigInt,
        user_id -> BigInt,
        amount_cents -> Integer,
        /// `new` when inserted, `paid` once updated.
        status -> Text,
    }
}

diesel::table! {
    /// The bulk insert strategies' target; [`crate::data::Item`] is its row.
    #[allow(missing_docs)] // columns named for what they hold, as in sql/dbbench.sql
    items (id) {
        /// Given by the generator, not by the database: the strategies insert the same keys.
        id -> BigInt,
        sku -> Text,
        /// Carries quotes, escapes and non-ASCII text ([`crate::data::items`]).
        name -> Text,
        price_cents -> Integer,
        quantity -> Integer,
    }
}

diesel::table! {
    /// The batch job's input ([`crate::batch::source_row`]).
    #[allow(missing_docs)] // columns named for what they hold, as in sql/dbbench.sql
    batch_source (id) {
        id -> BigInt,
        payload -> Text,
        amount_cents -> BigInt,
    }
}

diesel::table! {
    /// The batch job's output, one row per source row ([`crate::batch::transform`]).
    #[allow(missing_docs)] // columns named for what they hold, as in sql/dbbench.sql
    batch_results (source_id) {
        /// The `batch_source` row it was made from.
        source_id -> BigInt,
        label -> Text,
        amount_with_tax_cents -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(users, orders);

/// Creates the tables in an empty database.
pub async fn install(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    conn.execute(SCHEMA_SQL).await.map(|_| ())
}

/// Users and their orders for the CRUD benchmark: `users` users with `orders_per_user`
/// orders each, generated in the database; statistics fresh.
pub async fn fill_users_and_orders(
    conn: &mut PgConnection,
    users: i64,
    orders_per_user: i64,
) -> Result<(), sqlx::Error> {
    conn.execute("TRUNCATE users, orders RESTART IDENTITY").await?;
    sqlx::query(
        "INSERT INTO users (name, email)
         SELECT 'user ' || i, 'user' || i || '@example.com' FROM generate_series(1, $1) AS i",
    )
    .bind(users)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO orders (user_id, amount_cents, status)
         SELECT 1 + (i % $1), 100 + (i * 7919) % 100000, 'new' FROM generate_series(1, $1 * $2) AS i",
    )
    .bind(users)
    .bind(orders_per_user)
    .execute(&mut *conn)
    .await?;
    conn.execute("VACUUM ANALYZE users, orders").await.map(|_| ())
}
