//! `loadgen`: the bookstore benchmark's measuring instrument.
//!
//! - [`engine`]: the HTTP/1.1 load client (closed or open loop, exact windows).
//! - [`http`]: `loadgen http --url …`, one GET URL, for calibration.
//! - [`scenario`]: the twelve scenarios of SPEC §4, their requests and checks.
//! - [`validate`]: full contract checks of response bodies.
//! - [`results`]: the versioned results document every report is rendered from.
//! - [`warnings`]: reasons not to trust a number, with what to do.
//! - [`suite`]: `loadgen suite`, SPEC §5 end to end.
//! - [`outcome`]: what a finished run says to a script (its exit status).
//! - [`merge`]: `loadgen merge`, the shards of a run on several hosts as one run.
//! - [`report`]: the HTML summary of a results file.
//! - [`progress`]: what the suite is doing, on a terminal or in a log.
//! - [`procfs`]: CPU time and memory of processes.
//!
//! The binary's `--help` lists the commands; the README shows the main one.

pub mod engine;
pub mod faults;
pub mod http;
pub mod merge;
pub mod outcome;
pub mod procfs;
pub mod progress;
pub mod report;
pub mod results;
pub mod scenario;
pub mod suite;
pub mod validate;
pub mod warnings;
