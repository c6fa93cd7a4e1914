//! `axum-serde-diesel`: axum + serde_json + diesel/r2d2 (blocking, via spawn_blocking).
//!
//! ```text
//! cargo run --release -p axum-serde-diesel -- --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on `127.0.0.1:8082` by default. Routes (SPEC §3): `GET /health`,
//! `GET /health/db`, `GET /api/books/bench/small-json`, `GET /api/books/bench/large-json`,
//! `GET /api/books/{id}`, `GET /api/books`, `GET /api/books/search`,
//! `GET /api/books/bench/aggregate-report`, `POST /api/checkouts`.
//!
//! Threads: tokio's multi-thread runtime with `--workers` threads accepts connections,
//! parses HTTP and writes JSON. Every database call is blocking (diesel over libpq), so it
//! is handed whole to tokio's blocking pool with `tokio::task::spawn_blocking`, at most
//! `--blocking-threads` threads (default: one per pooled connection, more could only wait
//! for a connection). That thread checks out an r2d2 connection, runs the query and hands
//! the rows back; the worker stays free for other requests meanwhile. Against
//! `axum-serde-sqlx` the pair changes the access style — this hand-off, waking a blocking
//! thread and waking the worker again — and the library with it; the composed
//! `axum+serde_json+diesel-async` changes the style alone (docs/findings.md, "The factorial study").

use bookstore_app::stacks::StackInfo;
use bookstore_app::{ServerConfig, Shutdown};

/// Its serializer (small-json's second tag is its `Codec::NAME`).
pub type Codec = bookstore_codec::SerdeJson;
/// Its store (small-json's third tag is its `Store::ACCESS`).
pub type Store = bookstore_store_diesel::DieselStore<bookstore_store_diesel::SpawnBlocking>;
/// Its entry in the registry: name, port, tags (checked against the types above).
pub const STACK: StackInfo = bookstore_app::stacks::AXUM_SERDE_DIESEL;
bookstore_app::check_stack!(STACK, bookstore_web_axum::FRAMEWORK, Codec, Store);

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    bookstore_web_axum::serve::<Store, Codec>(STACK.identity, listener, config, shutdown)
}
