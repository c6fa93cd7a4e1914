//! `bookstore-app`: what the five servers share.
//!
//! - [`App`]: the request handlers of SPEC §3, generic over the store (sqlx or diesel) and
//!   the serializer (serde_json, simd-json, sonic-rs); a server only routes and converts.
//! - [`config`]: the flags every stack accepts (`--bind`, `--database-url`, `--pool-max`,
//!   `--workers`, `--acquire-timeout-ms`, the diagnostic `--timing-file`, and
//!   `--blocking-threads`/`--blocking-pool` for blocking stores), with environment fallbacks.
//! - [`cli::main`]: a server binary's whole `main`.
//! - [`check_stack!`]: a preset's crate fails to build if its parts are not what the registry
//!   names.
//!
//! The stacks' names, tags and routes are the registry's ([`bookstore_registry`]), re-exported
//! here for the server crates.

pub mod cli;
pub mod config;
pub mod handlers;

pub use bookstore_registry::{
    DbCalls, Identity, LISTEN_BACKLOG, Tuning, for_each_stack, routes, stacks,
};
pub use cli::{ServeFn, Shutdown};
pub use config::{BlockingPool, ServerConfig};
pub use handlers::{App, CONTENT_TYPE_JSON, Reply};

/// Fails the build of a preset's crate whose framework, serializer or store is not what its
/// registry line names: `check_stack!(STACK, bookstore_web_axum::FRAMEWORK, Codec, Store)`.
#[macro_export]
macro_rules! check_stack {
    ($stack:expr, $framework:expr, $codec:ty, $store:ty) => {
        const _: () = {
            let tags = $stack.tags;
            assert!(
                $crate::support::same_str(tags.framework, $framework),
                "the registry (bookstore_registry::for_each_stack!) names another framework for this stack"
            );
            assert!(
                $crate::support::same_str(tags.serializer, <$codec as $crate::support::Codec>::NAME),
                "the registry (bookstore_registry::for_each_stack!) names another serializer for this stack"
            );
            assert!(
                $crate::support::same_str(
                    tags.access,
                    <$store as $crate::support::Store>::ACCESS
                ),
                "the registry (bookstore_registry::for_each_stack!) names another access for this stack"
            );
        };
    };
}

/// What [`check_stack!`] names, reachable from any crate that uses it.
#[doc(hidden)]
pub mod support {
    pub use bookstore_codec::Codec;
    pub use bookstore_domain::store::Store;
    pub use bookstore_registry::stacks::same_str;
}
