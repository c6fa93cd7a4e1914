//! What a stack is, as a tool that starts it sees it: its name, framework and port, and
//! whether its database calls block.

/// What a stack is: its binary name, framework and default port (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Binary and crate name, e.g. `axum-serde-sqlx`; the `service` of small-json.
    pub service: &'static str,
    /// Framework tag of small-json, e.g. `axum`.
    pub framework: &'static str,
    /// Port of the default bind address `127.0.0.1:<port>`.
    pub default_port: u16,
}

/// Whether a stack runs its database calls on a blocking thread pool (and so accepts
/// `--blocking-threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbCalls {
    /// The store is async; no blocking pool.
    Async,
    /// The store blocks; calls are handed to a thread pool.
    Blocking,
}
