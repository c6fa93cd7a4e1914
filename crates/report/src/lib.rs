//! `bookstore-report`: what every benchmark of this workspace (`loadgen suite`, `dbbench`)
//! shares to record a run and show it — one crate, so neither tool imports the other.
//!
//! - [`document`]: the run header ([`RunInfo`]), atomic writes, reads that refuse another
//!   schema or an unknown version, and the check that every field is documented.
//! - [`environment`]: what the numbers were measured on.
//! - [`latency`]: percentiles of an HDR histogram as the documents record them.
//! - [`page`] and [`charts`]: the pages' shell, style and inline SVG charts.
//! - [`progress`]: the bar (or plain lines) of a long run.
//! - [`signal`]: Ctrl-C that stops a long run after its current cell, keeping what was
//!   measured.

pub mod charts;
pub mod document;
pub mod environment;
pub mod latency;
pub mod page;
pub mod progress;
pub mod signal;

pub use document::{RunInfo, RunStatus, read_document, undocumented_fields, write_document};
pub use environment::Environment;
pub use latency::LatencySummary;
pub use page::page_environment;
