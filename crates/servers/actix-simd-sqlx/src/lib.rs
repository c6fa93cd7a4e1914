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

use bookstore_app::{Identity, ServerConfig, Shutdown};
use bookstore_codec::SimdJson;
use bookstore_store_sqlx::SqlxStore;

/// This stack's name, framework and port.
pub const IDENTITY: Identity = bookstore_app::stacks::ACTIX_SIMD_SQLX.identity;

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    bookstore_web_actix::serve::<SqlxStore, SimdJson>(IDENTITY, listener, config, shutdown)
}
