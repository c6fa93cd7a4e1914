//! `hyper-sonic-sqlx`: bare hyper 1 + sonic-rs + sqlx (async).
//!
//! ```text
//! cargo run --release -p hyper-sonic-sqlx -- --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on `127.0.0.1:8085` by default. Routes (SPEC §3): `GET /health`,
//! `GET /health/db`, `GET /api/books/bench/small-json`, `GET /api/books/bench/large-json`,
//! `GET /api/books/{id}`, `GET /api/books`, `GET /api/books/search`,
//! `GET /api/books/bench/aggregate-report`, `POST /api/checkouts`.
//!
//! Threads: tokio's multi-thread runtime with `--workers` threads runs an accept loop,
//! one hyper HTTP/1.1 connection task per client and a small hand-written router — no
//! framework. Nothing blocks: a request waiting for PostgreSQL is a parked task. JSON is
//! read and written with sonic-rs, whose SIMD paths are compiled in by the workspace's
//! target features (`.cargo/config.toml`).

use bookstore_app::stacks::StackInfo;
use bookstore_app::{ServerConfig, Shutdown};

/// Its serializer (small-json's second tag is its `Codec::NAME`).
pub type Codec = bookstore_codec::SonicRs;
/// Its store (small-json's third tag is its `Store::ACCESS`).
pub type Store = bookstore_store_sqlx::SqlxStore;
/// Its entry in the registry: name, port, tags (checked against the types above).
pub const STACK: StackInfo = bookstore_app::stacks::HYPER_SONIC_SQLX;
bookstore_app::check_stack!(STACK, bookstore_web_hyper::FRAMEWORK, Codec, Store);

/// Serves on `listener` until `shutdown` completes.
pub fn serve(
    listener: std::net::TcpListener,
    config: ServerConfig,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    if !bookstore_codec::SONIC_RS_SIMD {
        tracing::warn!(
            "built without AVX2 and PCLMULQDQ: sonic-rs runs its scalar code (see .cargo/config.toml)"
        );
    }
    bookstore_web_hyper::serve::<Store, Codec>(STACK.identity, listener, config, shutdown)
}
