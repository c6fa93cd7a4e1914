//! `loadgen ab`: one question, answered as precisely as asked — is B faster than A at this
//! request, and by how much? Two sides (URLs, stacks of the registry, or commands that start
//! a server), measured in mirrored rounds, restarted every few rounds where the run starts
//! them, until the interval of B ÷ A is within the precision asked or the budget is spent
//! (`bookstore_stats::question` says why stopping there keeps the interval's promise).
//!
//! With a latency objective (`--slo p99=10ms`) the question is each side's capacity at it
//! ([`capacity`]): every block a fresh process of each, one ladder each; the capacity study
//! asks the same of several parties at once.

mod capacity;
mod parties;
mod run;
mod side;

pub use capacity::{CapacityOptions, run as capacity};
pub use parties::Harness;
pub use run::{AbOptions, run};
pub use side::Side;

/// Where the question of the journal at `path` (a rate or a capacity question's) writes
/// its results.
pub fn resumed_output(path: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use bookstore_record::journal::{Read, read};
    type Header = Read<serde::de::IgnoredAny, serde::de::IgnoredAny>;
    let output = |kind| read(path, kind).map(|read: Header| read.output);
    output(capacity::JOURNAL_KIND).or_else(|_| output(run::JOURNAL_KIND))
}
