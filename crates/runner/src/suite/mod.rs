//! `loadgen suite`: SPEC §5 end to end.
//!
//! One seeded template database; each stack gets a fresh clone, is started once with
//! identical flags, checked against the contract in every scenario (a stack that fails is
//! reported, not measured) and then kept running for the whole run — an idle server costs
//! next to nothing, and a start per measurement costs a pool's worth of connections. Then
//! the measurement, in rounds (`rounds`): per scenario, every stack at every concurrency,
//! and the ceilings that bound the scenario (the client against the minimal responder at
//! each concurrency, or the scenario's statements straight through each driver's store,
//! once — at the pool's size, they do not depend on the stacks' concurrency), measure one
//! short window per round, one after the other, the order rotating from round to round. This machine's speed drifts by tens of percent over minutes; windows of
//! the parties compared a second apart share the drift, and the report compares them
//! round by round (the ratios of `bookstore-stats`). Restore before each write window, audit
//! after it; per window also CPU seconds of the server, of PostgreSQL and of the client, the
//! server's peak RSS, and SQL statements per request. The results file is rewritten as the
//! windows come in (at most every two seconds) and at the end.
//!
//! A window's phases settle ([`bookstore_client::engine::Settle`]): the warm-up lasts until every
//! connection has had an answer (the closed loop's first, synchronised burst is over), and
//! the window until it holds one answer per connection (a whole request cycle), each up to
//! a limit past which the window is flagged instead.

mod ceiling;
mod equal_load;
mod extend;
mod ledger;
mod options;
mod parties;
mod plan;
mod prepare;
pub mod progress;
pub(crate) mod resume;
mod rounds;
mod running;
mod sampler;
pub mod shard;
mod state;
mod tails;
mod window;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bookstore_record::results::RunResults;

pub use bookstore_record::results::Rate;
pub use options::{SuiteOptions, WARMUP_MAX, WINDOW_MAX_FACTOR};
pub use parties::{COMPOSE_DATABASE_URL, ComposeFrom, DB_LATENCY_FLAG, Variant, parse_targets};
pub use resume::{ResumeRefused, output_of as resumed_output};
pub use shard::ShardPlan;

/// Runs the suite, journaling every window and writing `options.output` at the end;
/// returns the final results.
pub fn run(options: &SuiteOptions, stop: Arc<AtomicBool>) -> anyhow::Result<RunResults> {
    options.check_shard()?;
    options.check_placement()?;
    options.check_binaries()?;
    let output_dir = options.output.parent().unwrap_or(Path::new(".")).to_owned();
    std::fs::create_dir_all(&output_dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output_dir.display()))?;
    state::Suite::run(options, stop)
}
