//! `loadgen ab`: one question, answered as precisely as asked — is B faster than A at this
//! request, and by how much? Two sides (URLs, stacks of the registry, or commands that start
//! a server), measured in mirrored rounds, restarted every few rounds where the run starts
//! them, until the interval of B ÷ A is within the precision asked or the budget is spent
//! (`bookstore_stats::question` says why stopping there keeps the interval's promise).

mod run;
mod side;

pub use run::{AbOptions, run};
pub use side::Side;
