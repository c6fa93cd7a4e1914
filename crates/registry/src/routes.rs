//! The paths of SPEC §3. Routers register these; `{id}` placeholders are written in each
//! framework's own syntax where they register the book route.

/// `GET`: liveness, no database.
pub const HEALTH: &str = "/health";
/// `GET`: `SELECT 1`.
pub const HEALTH_DB: &str = "/health/db";
/// `GET`: fixed small body, no database.
pub const SMALL_JSON: &str = "/api/books/bench/small-json";
/// `GET`: the first `limit` books with descriptions.
pub const LARGE_JSON: &str = "/api/books/bench/large-json";
/// `GET`: per-author inventory.
pub const AGGREGATE_REPORT: &str = "/api/books/bench/aggregate-report";
/// `GET`: title/author search.
pub const BOOK_SEARCH: &str = "/api/books/search";
/// `GET`: the book list.
pub const BOOKS: &str = "/api/books";
/// Prefix of `GET /api/books/{id}`; the rest of the path is the raw id segment.
pub const BOOK_BY_ID_PREFIX: &str = "/api/books/";
/// `POST`: create a checkout.
pub const CHECKOUTS: &str = "/api/checkouts";
