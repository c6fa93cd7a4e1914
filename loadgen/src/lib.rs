//! `loadgen`: the bookstore benchmark's measuring instrument.
//!
//! - [`engine`]: the HTTP/1.1 load client (closed or open loop, exact windows).
//! - [`http`]: `loadgen http --url …`, one GET URL, for calibration.
//! - [`results`]: the versioned results document every report is rendered from.
//! - [`warnings`]: reasons not to trust a number, with what to do.
//! - [`procfs`]: CPU time and memory of processes.
//!
//! The binary's `--help` lists the commands; the README shows the main one.

pub mod engine;
pub mod http;
pub mod procfs;
pub mod results;
pub mod warnings;
