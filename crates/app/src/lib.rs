//! `bookstore-app`: what the five servers share.
//!
//! - [`App`]: the request handlers of SPEC §3, generic over the store (sqlx or diesel) and
//!   the serializer (serde_json, simd-json, sonic-rs); a server only routes and converts.
//! - [`config`]: the flags every stack accepts (`--bind`, `--database-url`, `--pool-max`,
//!   `--workers`, `--acquire-timeout-ms`, the diagnostic `--timing-file`, and
//!   `--blocking-threads`/`--blocking-pool` for blocking stores), with environment fallbacks.
//! - [`cli::main`]: a server binary's whole `main`.
//! - [`routes`]: the paths, so every router uses the same strings.
//! - [`stacks`]: the five stacks' names, ports and parts, listed once.

pub mod cli;
pub mod config;
pub mod handlers;
pub mod routes;
pub mod stacks;

pub use cli::{DbCalls, ServeFn, Shutdown};
pub use config::{BlockingPool, ServerConfig, Tuning};
pub use handlers::{App, CONTENT_TYPE_JSON, Identity, Reply};
