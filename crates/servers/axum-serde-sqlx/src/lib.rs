//! `axum-serde-sqlx`: axum + serde_json + sqlx (async `PgPool`), the reference stack.
//!
//! ```text
//! cargo run --release -p axum-serde-sqlx -- --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on `127.0.0.1:8081` by default. Routes (SPEC §3): `GET /health`,
//! `GET /health/db`, `GET /api/books/bench/small-json`, `GET /api/books/bench/large-json`,
//! `GET /api/books/{id}`, `GET /api/books`, `GET /api/books/search`,
//! `GET /api/books/bench/aggregate-report`, `POST /api/checkouts`.
//!
//! Threads: tokio's multi-thread runtime with `--workers` threads runs everything — HTTP,
//! JSON and the database driver. Nothing blocks, so there is no blocking pool to hand off
//! to; a request waiting for PostgreSQL costs a parked task, not a thread.

use bookstore_app::stacks::StackInfo;
use bookstore_app::{ServerConfig, Shutdown};

/// Its serializer (small-json's second tag is its `Codec::NAME`).
pub type Codec = bookstore_codec::SerdeJson;
/// Its store (small-json's third tag is its `Store::ACCESS`).
pub type Store = bookstore_store_sqlx::SqlxStore;
/// Its entry in the registry: name, port, tags (checked against the types above).
pub const STACK: StackInfo = bookstore_app::stacks::AXUM_SERDE_SQLX;
bookstore_app::check_stack!(STACK, bookstore_web_axum::FRAMEWORK, Codec, Store);

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    bookstore_web_axum::serve::<Store, Codec>(STACK.identity, listener, config, shutdown)
}
