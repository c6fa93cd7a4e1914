//! `actix-web-any`: any serializer and database access on actix-web — the composed stacks
//! `actix-web+<serializer>+<access>` (`bookstore_registry::stacks::composed`).
//!
//! ```text
//! cargo run --release -p actix-web-any -- --serializer simd-json --access diesel-async \
//!     --database-url postgres://postgres@127.0.0.1:5432/bookstore
//! ```
//!
//! Listens on the triple's registry port (8112–8123 for this framework's twelve) by default; the
//! routes are SPEC §3's.
//! Threads as in the actix presets: `--workers` actix workers, each a single-threaded
//! runtime; with `--access diesel`, each call handed whole to `actix_web::web::block`, as
//! in `actix-serde-diesel`.

use bookstore_app::{Identity, ServerConfig, Shutdown};
use bookstore_codec::Codec;
use bookstore_domain::store::Store;

/// actix-web, as [`bookstore_any::Framework`].
#[derive(Debug)]
pub struct ActixWeb;

impl bookstore_any::Framework for ActixWeb {
    const TAG: &'static str = bookstore_web_actix::FRAMEWORK;
    type Offload = bookstore_web_actix::WebBlock;

    fn serve<S: Store, C: Codec>(
        identity: Identity,
        listener: std::net::TcpListener,
        config: ServerConfig,
        shutdown: Shutdown,
    ) -> anyhow::Result<()> {
        bookstore_web_actix::serve::<S, C>(identity, listener, config, shutdown)
    }
}
