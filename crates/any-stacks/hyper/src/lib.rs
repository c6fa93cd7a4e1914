//! `hyper-any`: any serializer and database access on bare hyper — the composed stacks
//! `hyper+<serializer>+<access>` (`bookstore_registry::stacks::composed`).
//!
//! ```text
//! cargo run --release -p hyper-any -- --serializer serde_json --access diesel \
//!     --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on the triple's registry port (8124–8135 for this framework's twelve) by default; the
//! routes are SPEC §3's.
//! Threads as in `hyper-sonic-sqlx`: tokio's multi-thread runtime with `--workers` threads;
//! with `--access diesel`, each call handed whole to `spawn_blocking` (at most
//! `--blocking-threads`), as on axum.

use bookstore_app::{Identity, ServerConfig, Shutdown};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;

/// hyper, as [`bookstore_any::Framework`].
#[derive(Debug)]
pub struct Hyper;

impl bookstore_any::Framework for Hyper {
    const TAG: &'static str = bookstore_web_hyper::FRAMEWORK;
    type Offload = bookstore_store_diesel::SpawnBlocking;

    fn serve<S: Store, C: Codec>(
        identity: Identity,
        listener: std::net::TcpListener,
        config: ServerConfig,
        shutdown: Shutdown,
    ) -> anyhow::Result<()> {
        bookstore_web_hyper::serve::<S, C>(identity, listener, config, shutdown)
    }
}
