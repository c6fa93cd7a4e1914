//! `bookstore-document`: the record every benchmark of this workspace (`loadgen suite`,
//! `dbbench`) keeps of a run — one crate, so neither tool imports the other, and the results
//! records depend on nothing that draws or prints.
//!
//! - [`document`]: the run header ([`RunInfo`]), atomic writes, reads that refuse another
//!   schema or an unknown version, and the check that every field is documented.
//! - [`environment`]: what the numbers were measured on.
//! - [`latency`]: percentiles of an HDR histogram as the documents record them, and how a
//!   latency reads.

pub mod document;
pub mod environment;
pub mod latency;

pub use document::{RunInfo, RunStatus, read_document, undocumented_fields, write_document};
pub use environment::Environment;
pub use latency::{LatencySummary, latency_label};
