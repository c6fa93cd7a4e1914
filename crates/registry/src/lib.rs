//! `bookstore-registry`: what a stack's name says, declared once for every tool that names
//! one — the servers' identities, the load generator, the suite, the pages, the conformance
//! and fault tests.
//!
//! - [`stacks`]: the five presets of SPEC §1 ([`for_each_stack!`]), the 36 composed
//!   framework × serializer × access triples, the axes and the pairs that change one, each
//!   in its framework's runtime layout or `@per-core`; and servers of one's own, by name.
//! - [`routes`]: the paths of SPEC §3, so every router and every client uses the same strings.
//! - [`Tuning`] and [`flags`]: what a harness sets on every stack it starts.
//!
//! It depends on nothing: a load client or a page can name a stack without compiling a server.

mod identity;
pub mod routes;
pub mod stacks;
mod tuning;

pub use identity::{DbCalls, Identity};
pub use tuning::{LISTEN_BACKLOG, Tuning, flags};
