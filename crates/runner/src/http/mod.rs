//! `loadgen http`: load one URL, or one scenario against one stack — the mode used to
//! calibrate the client and to look at one thing closely — and, with `--slo`, search its
//! capacity under a latency objective.

pub mod capacity;
mod command;
mod measure;

pub use bookstore_client::raw::{RawRequest, RequestSpec};
pub use command::{HttpRun, run};
pub use measure::{Target, check_reachable, latency_table, measure};
