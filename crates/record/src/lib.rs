//! `bookstore-record`: the versioned results documents every report is rendered from, and
//! the judgements a reader needs before trusting a number in them.
//!
//! - [`results`]: the suite's results document (`crates/record/RESULTS.md` documents every field).
//! - [`faults`]: `loadgen faults`' results document; [`ab`]: `loadgen ab`'s.
//! - [`warnings`]: reasons not to trust a number, with what to do; the gates that
//!   disqualify a cell.
//! - [`metric`]: which rate ranks a scenario's stacks.
//! - [`objective`]: latency objectives; [`ladder`]: the capacity a rate ladder shows under
//!   one.
//! - [`outcome`]: what a finished run says to a script (its exit status).
//! - [`merge`]: the shards of a run on several hosts as one run.
//!
//! - [`document`], [`environment`], [`latency`]: what every benchmark of this workspace
//!   (`loadgen`, dbbench) keeps of a run — the run header, atomic writes, reads that refuse
//!   another schema or version, the check that every field is documented, the machine,
//!   latency percentiles.
//!
//! It depends on the load client's types ([`bookstore_client`]) and on nothing that runs:
//! the flags of its measurement settings are parsed only with its `cli` feature.

pub mod ab;
pub mod capacity;
pub mod document;
pub mod environment;
pub mod faults;
pub mod journal;
pub mod ladder;
pub mod latency;
pub mod merge;
pub mod metric;
pub mod objective;
pub mod outcome;
pub mod results;
mod units;
pub mod warnings;

pub use document::{RunInfo, RunStatus, read_document, undocumented_fields, write_document};
pub use environment::Environment;
pub use latency::{LatencySummary, latency_label};
