//! The state of a suite run in progress: what was started, what was measured, where the
//! results go. The schedule (`rounds`), the preparation (`prepare`) and the windows
//! (`window`) all work on it.

use bookstore_record::results::StackStatus;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::sampler::BackendSampler;
use super::{SuiteOptions, ceiling};
use crate::harness::database;
use crate::harness::server::ServerProcess;
use crate::suite::progress::Progress;
use bookstore_record::results::RunResults;

/// One window of a round: who measures, and at which concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// The minimal responder beside the stacks at this concurrency, for scenarios without
    /// database access.
    HttpCeiling(u32),
    /// The scenario's statements straight through a driver's store, for the others;
    /// behind the database latency relay with a `db_latency`.
    DbCeiling { driver: ceiling::Driver, clients: DbClients, db_latency: Option<Duration> },
    /// An index into the prepared stacks, at this concurrency.
    Stack(usize, u32),
}

impl Window {
    /// The concurrency whose parties it is compared with; `None` for a database ceiling
    /// with one client per pooled connection, compared with every concurrency.
    pub(crate) fn concurrency(&self) -> Option<u32> {
        match *self {
            Window::HttpCeiling(c) | Window::Stack(_, c) => Some(c),
            Window::DbCeiling { clients: DbClients::Stacks(c), .. } => Some(c),
            Window::DbCeiling { clients: DbClients::Pool, .. } => None,
        }
    }
}

/// How many clients a database ceiling window has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DbClients {
    /// One per pooled connection, whatever the stacks' concurrency: measured once per round
    /// and compared with the stacks at every concurrency of that round.
    Pool,
    /// As many as the stacks have connections at this concurrency.
    Stacks(u32),
}

/// How often, at most, the results file is rewritten during a run.
pub(crate) const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// The database the database ceiling runs on.
pub(crate) const DB_CEILING_DATABASE: &str = "bench_ceiling";

/// A stack that passed the contract check, and how it runs.
#[derive(Debug, Clone)]
pub(crate) struct PreparedStack {
    /// Its entry in `results.stacks`.
    pub(crate) index: usize,
    pub(crate) database: String,
    /// Where its load goes.
    pub(crate) addr: std::net::SocketAddr,
    /// The database relay's process in front of its database (`--db-latency`).
    pub(crate) relay_pid: Option<u32>,
    /// Idle connections held open to it through each of its windows.
    pub(crate) idle_connections: Option<u64>,
}

/// Where a window's load goes.
pub(crate) struct Target<'a> {
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) pid: Option<u32>,
    pub(crate) relay_pid: Option<u32>,
    pub(crate) database: Option<&'a str>,
}

/// A suite run in progress.
pub(crate) struct Suite<'a> {
    pub(crate) options: &'a SuiteOptions,
    pub(crate) database: database::BenchDatabase,
    pub(crate) results: RunResults,
    pub(crate) progress: Progress,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) logs: PathBuf,
    /// The stacks that passed the contract check, in `--stacks` order.
    pub(crate) prepared: Vec<PreparedStack>,
    /// Their processes when the suite started them, by `prepared` index (`None` for stacks
    /// someone else started); kept running from the check to the end of the run.
    pub(crate) processes: Vec<Option<ServerProcess>>,
    /// The database relays of the parties with a `--db-latency`, stopped when dropped.
    pub(crate) relays: Vec<ServerProcess>,
    pub(crate) responder: Option<ServerProcess>,
    pub(crate) db_ceiling_url: Option<String>,
    /// What the stacks' backends do in each window (`None`: the server would not say).
    pub(crate) backends: Option<BackendSampler>,
    pub(crate) started: std::time::Instant,
    /// The windows run so far and their time, setup between them included.
    pub(crate) spent: crate::suite::extend::Spent,
    /// When the results file was last written.
    pub(crate) saved: Option<std::time::Instant>,
    /// The database ceiling's relays (`--db-latency`): per round trip, the URL through it
    /// and its process id (the processes are in `relays`).
    pub(crate) ceiling_relays: Vec<(Duration, String, u32)>,
    /// With the client placed (`--cpus client=…`): the CPUs it had before, given to every
    /// process of a tier not named, which would otherwise inherit the client's.
    pub(crate) unplaced: Option<Vec<usize>>,
}

impl Suite<'_> {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Rewrites the results file, unless it was written less than [`SAVE_EVERY`] ago: the
    /// file grows with every window, and rewriting all of it after each one made the
    /// writing quadratic in the run's length. The run's end (or failure) writes it in any
    /// case ([`Suite::save_now`]).
    pub(crate) fn save(&mut self) -> anyhow::Result<()> {
        if self.saved.is_some_and(|at| at.elapsed() < SAVE_EVERY) {
            return Ok(());
        }
        self.save_now()
    }

    /// Rewrites the results file now.
    pub(crate) fn save_now(&mut self) -> anyhow::Result<()> {
        self.saved = Some(std::time::Instant::now());
        self.results
            .write(&self.options.output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.options.output.display()))
    }

    /// Marks a stack `failed` (before measuring) or `crashed`, skipping its remaining windows.
    pub(crate) fn stack_failed(
        &mut self,
        index: usize,
        status: StackStatus,
        why: String,
    ) -> anyhow::Result<()> {
        let stack = &mut self.results.stacks[index];
        self.progress.note(&format!("{}: {status}: {why}", stack.name));
        let measured = (stack.cells.len() + stack.equal_load.len()) as u64;
        self.progress.skipped(self.options.windows_per_stack().saturating_sub(measured));
        stack.status = status;
        stack.failure = Some(why);
        self.save()
    }
}

/// The error kind of a 409 `out_of_stock` for a book that had the stock.
pub(crate) const UNJUSTIFIED_REFUSAL: &str = "unjustified_refusal";

/// `items` rotated by the round `turn` counts (over the whole run), which it then advances:
/// each party is first, in the middle and last equally often.
pub(crate) fn rotated<T: Clone>(items: &[T], turn: &mut usize) -> Vec<T> {
    let order = rotated_by(items, *turn);
    *turn += 1;
    order
}

/// `items` rotated left by `by` (modulo their number).
pub(crate) fn rotated_by<T: Clone>(items: &[T], by: usize) -> Vec<T> {
    let mut order = items.to_vec();
    if !order.is_empty() {
        let len = order.len();
        order.rotate_left(by % len);
    }
    order
}

/// A rate offered to every stack alike, in the fixed-load phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Offer {
    /// Requests per second.
    pub(crate) rate_rps: f64,
    /// The share of the slowest stack's goodput it was asked as, if so.
    pub(crate) fraction: Option<f64>,
}
