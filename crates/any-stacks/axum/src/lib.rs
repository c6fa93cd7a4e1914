//! `axum-any`: any serializer and database access on axum — the composed stacks
//! `axum+<serializer>+<access>` (`bookstore_registry::stacks::composed`).
//!
//! ```text
//! cargo run --release -p axum-any -- --serializer sonic-rs --access diesel-async \
//!     --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on the triple's registry port (8100–8111 for this framework's twelve) by default; the
//! routes are SPEC §3's.
//! Threads as in the axum presets: tokio's multi-thread runtime with `--workers` threads;
//! with `--access diesel`, each call handed whole to `spawn_blocking` (at most
//! `--blocking-threads`), as in `axum-serde-diesel`.

use bookstore_app::{Identity, ServerConfig, Shutdown};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;

/// axum, as [`bookstore_any::Framework`].
#[derive(Debug)]
pub struct Axum;

impl bookstore_any::Framework for Axum {
    const TAG: &'static str = bookstore_web_axum::FRAMEWORK;
    type Offload = bookstore_store_diesel::SpawnBlocking;

    fn serve<S: Store, C: Codec>(
        identity: Identity,
        listener: std::net::TcpListener,
        config: ServerConfig,
        shutdown: Shutdown,
    ) -> anyhow::Result<()> {
        bookstore_web_axum::serve::<S, C>(identity, listener, config, shutdown)
    }
}
