//! `actix-serde-diesel`: actix-web + serde_json + diesel/r2d2 (blocking, via web::block).
//!
//! ```text
//! cargo run --release -p actix-serde-diesel -- --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on `127.0.0.1:8083` by default. Routes (SPEC §3): `GET /health`,
//! `GET /health/db`, `GET /api/books/bench/small-json`, `GET /api/books/bench/large-json`,
//! `GET /api/books/{id}`, `GET /api/books`, `GET /api/books/search`,
//! `GET /api/books/bench/aggregate-report`, `POST /api/checkouts`.
//!
//! Threads: actix's `HttpServer` runs `--workers` worker threads, each a single-threaded
//! runtime with its own copy of the routes. Every database call is blocking (diesel over
//! libpq), so it is handed whole to the worker's blocking pool with
//! `actix_web::web::block`; the pools together hold at most `--blocking-threads` threads.
//! That thread checks out an r2d2 connection, runs the query and hands the rows back; the
//! worker stays free meanwhile. Compared with `axum-serde-diesel` only the framework (and
//! its hand-off) changes.

use bookstore_app::stacks::StackInfo;
use bookstore_app::{ServerConfig, Shutdown};

/// Its serializer (small-json's second tag is its `Codec::NAME`).
pub type Codec = bookstore_codec::SerdeJson;
/// Its store (small-json's third tag is its `Store::ACCESS`).
pub type Store = bookstore_store_diesel::DieselStore<bookstore_web_actix::WebBlock>;
/// Its entry in the registry: name, port, tags (checked against the types above).
pub const STACK: StackInfo = bookstore_app::stacks::ACTIX_SERDE_DIESEL;
bookstore_app::check_stack!(STACK, bookstore_web_actix::FRAMEWORK, Codec, Store);

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    bookstore_web_actix::serve::<Store, Codec>(STACK.identity, listener, config, shutdown)
}
