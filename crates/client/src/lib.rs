//! `bookstore-client`: the measuring instrument's HTTP/1.1 load client, and what it knows of
//! the contract.
//!
//! - [`engine`]: the load client (closed or open loop, exact windows, HDR histograms).
//! - [`scenario`]: the twelve scenarios of SPEC §4, their requests and checks.
//! - [`validate`]: full contract checks of response bodies.
//! - [`idle`]: idle keep-alive connections held open beside a measurement.
//! - [`probe`]: one blocking request on a new connection, for readiness and contract checks.
//! - [`raw`]: one request given by hand, sent over and over (`loadgen http URL`).
//! - [`procfs`]: CPU time, memory and threads of processes, read from `/proc`.
//!
//! It depends on no other part of the load generator: the results record, the harness,
//! the suite and the pages are built on it.

pub mod engine;
pub mod idle;
pub mod probe;
pub mod procfs;
pub mod raw;
pub mod scenario;
pub mod validate;
