//! What a suite run keeps running: the benchmark's database, the parties' servers and
//! their database relays, the responder, and what watches the backends — started as the
//! run prepares, stopped when it is dropped.

use std::time::Duration;

use crate::harness::database::BenchDatabase;
use crate::harness::server::ServerProcess;
use crate::suite::sampler::BackendSampler;

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

/// The processes and databases of a run.
pub(crate) struct Running {
    pub(crate) database: BenchDatabase,
    /// The stacks that passed the contract check, in `--stacks` order.
    pub(crate) prepared: Vec<PreparedStack>,
    /// Their processes when the suite started them, by `prepared` index (`None` for stacks
    /// someone else started); kept running from the check to the end of the run.
    pub(crate) servers: Vec<Option<ServerProcess>>,
    /// The database relays of the parties with a `--db-latency`, stopped when dropped.
    pub(crate) relays: Vec<ServerProcess>,
    pub(crate) responder: Option<ServerProcess>,
    pub(crate) db_ceiling_url: Option<String>,
    /// What the stacks' backends do in each window (`None`: the server would not say).
    pub(crate) backends: Option<BackendSampler>,
    /// The database ceiling's relays (`--db-latency`): per round trip, the URL through it
    /// and its process id (the processes are in `relays`).
    pub(crate) ceiling_relays: Vec<(Duration, String, u32)>,
    /// With the client placed (`--cpus client=…`): the CPUs it had before, given to every
    /// process of a tier not named, which would otherwise inherit the client's.
    pub(crate) unplaced: Option<Vec<usize>>,
}

impl Running {
    /// Nothing started yet but the database, watched by `backends`.
    pub(crate) fn new(database: BenchDatabase, backends: Option<BackendSampler>) -> Self {
        Self {
            database,
            prepared: Vec::new(),
            servers: Vec::new(),
            relays: Vec::new(),
            responder: None,
            db_ceiling_url: None,
            backends,
            ceiling_relays: Vec::new(),
            unplaced: None,
        }
    }
}
