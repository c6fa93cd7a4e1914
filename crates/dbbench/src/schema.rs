//! The benchmark's tables (`sql/dbbench.sql`), for diesel, and their set-up.

use sqlx::{Executor, PgConnection};

/// `sql/dbbench.sql`.
pub const SCHEMA_SQL: &str = include_str!("../sql/dbbench.sql");

/// The index that the users/orders join needs, created and dropped by the CRUD benchmark.
pub const JOIN_INDEX_SQL: &str =
    "CREATE INDEX IF NOT EXISTS orders_user_id_idx ON orders (user_id)";
/// Its removal.
pub const DROP_JOIN_INDEX_SQL: &str = "DROP INDEX IF EXISTS orders_user_id_idx";

diesel::table! {
    /// The CRUD benchmark's users.
    #[allow(missing_docs)] // named for what they hold
    users (id) {
        /// Key.
        id -> BigInt,
        name -> Text,
        /// E-mail.
        email -> Text,
    }
}

diesel::table! {
    /// The CRUD benchmark's orders, many per user.
    #[allow(missing_docs)] // named for what they hold
    orders (id) {
        /// Key.
        id -> BigInt,
        user_id -> BigInt,
        amount_cents -> Integer,
        /// `new`, `paid`, …
        status -> Text,
    }
}

diesel::table! {
    /// The bulk insert strategies' target.
    #[allow(missing_docs)] // named for what they hold
    items (id) {
        /// Key, given by the generator.
        id -> BigInt,
        /// Stock-keeping unit.
        sku -> Text,
        /// Name (with quotes, escapes and non-ASCII text).
        name -> Text,
        price_cents -> Integer,
        quantity -> Integer,
    }
}

diesel::table! {
    /// The batch job's input.
    batch_source (id) {
        /// Key.
        id -> BigInt,
        /// Text to transform.
        payload -> Text,
        /// Amount to transform.
        amount_cents -> BigInt,
    }
}

diesel::table! {
    /// The batch job's output, one row per source row.
    batch_results (source_id) {
        /// The source row.
        source_id -> BigInt,
        /// The transformed payload.
        label -> Text,
        /// The transformed amount.
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
