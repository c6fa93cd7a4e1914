//! The harness: starts, watches and stops what a measurement needs — the parties'
//! server processes, the throwaway databases they use, and the CPUs each tier runs on —
//! for `loadgen suite` and `loadgen faults` alike.
//!
//! - [`contract`]: the check a server passes before its first window.
//! - [`database`]: the benchmark's database (a throwaway cluster, a container, or a given
//!   URL), its seeded template and per-party clones, restores and audits.
//! - [`server`]: a stack, the responder or a relay as a child process; the flags every
//!   stack is started with.
//! - [`placement`]: `--cpus`, each tier pinned to its CPUs and recorded as the kernel
//!   reports it.

pub mod contract;
pub mod database;
pub mod placement;
pub mod server;
