//! Every statement the benchmark runs against the database, in one place.
//!
//! The sqlx store executes these texts as prepared statements; the diesel store builds the
//! same statements with its DSL where it can express them and uses these texts where it
//! cannot. Each route runs exactly one statement, except checkout (SPEC §3): `BEGIN`,
//! [`CHECKOUT_LOCK`], [`CHECKOUT_UPDATE`], [`CHECKOUT_INSERT`], `COMMIT`.

/// `/health/db`.
pub const PING: &str = "SELECT 1";

/// `GET /api/books/{id}`: the book with its author. Columns in [`crate::model::BookDetail`] order.
pub const BOOK_BY_ID: &str = "SELECT b.id, b.isbn, b.title, b.description, a.id, a.name, a.bio, \
     b.price_cents, b.stock, b.published_at \
     FROM books b JOIN authors a ON a.id = b.author_id WHERE b.id = $1";

/// `GET /api/books`: the first `$1` books by id.
pub const BOOK_LIST: &str = "SELECT b.id, b.title, a.name, b.price_cents, b.stock, b.published_at \
     FROM books b JOIN authors a ON a.id = b.author_id ORDER BY b.id LIMIT $1";

/// `GET /api/books/search`: `$1` is a LIKE pattern escaped with `\`
/// ([`crate::params::contains_pattern`]), `$2` the limit.
pub const BOOK_SEARCH: &str = "SELECT b.id, b.title, a.name, b.price_cents, b.stock, b.published_at \
     FROM books b JOIN authors a ON a.id = b.author_id \
     WHERE b.title ILIKE $1 ESCAPE '\\' OR a.name ILIKE $1 ESCAPE '\\' \
     ORDER BY b.id LIMIT $2";

/// `GET /api/books/bench/large-json`: the first `$1` books by id, with description.
pub const LARGE_ITEMS: &str = "SELECT b.id, b.title, a.name, b.description, b.published_at, \
     b.price_cents, b.stock \
     FROM books b JOIN authors a ON a.id = b.author_id ORDER BY b.id LIMIT $1";

/// `GET /api/books/bench/aggregate-report`: one statement, grouped in the database.
pub const AUTHOR_INVENTORY: &str = "SELECT a.id, a.name, count(*) AS book_count, \
     sum(b.stock)::bigint AS total_stock, floor(avg(b.price_cents))::bigint AS average_price_cents \
     FROM authors a JOIN books b ON b.author_id = a.id \
     GROUP BY a.id, a.name ORDER BY book_count DESC, a.id ASC LIMIT $1";

/// Checkout step 1: lock the book's row and read its stock (`$1` book id).
pub const CHECKOUT_LOCK: &str = "SELECT stock FROM books WHERE id = $1 FOR UPDATE";

/// Checkout step 2: take the stock (`$1` book id, `$2` quantity).
pub const CHECKOUT_UPDATE: &str = "UPDATE books SET stock = stock - $2 WHERE id = $1";

/// Checkout step 3: record it (`$1` book id, `$2` name, `$3` e-mail, `$4` quantity); the
/// database makes the version 4 UUID and the timestamp.
pub const CHECKOUT_INSERT: &str = "INSERT INTO checkouts \
     (id, book_id, customer_name, customer_email, quantity) \
     VALUES (gen_random_uuid(), $1, $2, $3, $4) RETURNING id, checked_out_at";
