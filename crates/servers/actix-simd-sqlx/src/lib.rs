//! `actix-simd-sqlx`: actix-web + simd-json + sqlx (async).
//!
//! ```text
//! cargo run --release -p actix-simd-sqlx -- --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on `127.0.0.1:8084` by default. Routes (SPEC §3): `GET /health`,
//! `GET /health/db`, `GET /api/books/bench/small-json`, `GET /api/books/bench/large-json`,
//! `GET /api/books/{id}`, `GET /api/books`, `GET /api/books/search`,
//! `GET /api/books/bench/aggregate-report`, `POST /api/checkouts`.
//!
//! Threads: actix's `HttpServer` runs `--workers` worker threads, each a single-threaded
//! runtime; nothing blocks, so there is no hand-off. The sqlx pool is opened once on the
//! runtime that starts the server and shared by all workers: its sockets are driven by
//! that runtime's reactor, which wakes the worker awaiting a result — the ordinary way to
//! share one pool across actix workers, and part of what this stack measures. JSON is
//! read and written with simd-json (AVX2).

use bookstore_app::stacks::StackInfo;
use bookstore_app::{ServerConfig, Shutdown};

/// Its serializer (small-json's second tag is its `Codec::NAME`).
pub type Codec = bookstore_codec::SimdJson;
/// Its store (small-json's third tag is its `Store::ACCESS`).
pub type Store = bookstore_store_sqlx::SqlxStore;
/// Its entry in the registry: name, port, tags (checked against the types above).
pub const STACK: StackInfo = bookstore_app::stacks::ACTIX_SIMD_SQLX;
bookstore_app::check_stack!(STACK, bookstore_web_actix::FRAMEWORK, Codec, Store);

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    bookstore_web_actix::serve::<Store, Codec>(STACK.identity, listener, config, shutdown)
}
