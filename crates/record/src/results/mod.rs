//! The results file: the one source of every number in every report.
//!
//! A run writes one JSON document ([`RunResults`]) under `summary/results/`, compressed
//! as a whole (`<time>.json.zst`), at its end; while it runs, each window is appended to its
//! journal ([`crate::journal`]), so a crash keeps what was measured and `--resume` goes on
//! from it. Units are in the field names (`_rps`, `_us`, `_seconds`, `_bytes`). Latency
//! histograms are stored whole (HDR V2, hex) so runs can be merged and re-percentiled
//! later.
//!
//! `schema_version` changes whenever a field changes meaning or disappears; readers refuse
//! versions they do not know. `RESULTS.md` beside this crate documents every field.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::{Environment, LatencySummary, RunInfo};
use crate::{read_document, write_document};

use crate::warnings::kinds::Warning;
use bookstore_client::engine::Arrivals;

mod cell;
mod measurement;
mod rate;

pub use cell::*;
pub use measurement::{
    DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS, DEFAULT_WARMUP, DEFAULT_WINDOW, Measurement, QUICK,
    Schedule,
};
pub use rate::Rate;

/// Identifies a suite results document.
pub const SCHEMA: &str = "bookstore-bench/results";
/// Identifies a single-cell document written by `loadgen http --json`.
pub const HTTP_CELL_SCHEMA: &str = "bookstore-bench/http-cell";
/// The version of both documents' layout: 2 since cells are measured in rounds, 3 since the
/// fixed-load phase (its fields are additions: a version 2 file reads as a version 3 one
/// without them), 4 since a round holds every concurrency, 5 since PostgreSQL's counters
/// and backend waits per cell, 6 since the database latency relay, 7 since each cell's
/// latency and server threads and the CPU placement (additions: older files read without
/// them), 8 since the order of a round (`settings.schedule`; an older file reads as
/// `rotated`, the order it ran in), 9 since the sequential design, 10 since latency
/// objectives (`settings.objectives`, an addition older files read without), 11 since
/// composed stacks (`stacks[].launch`, an addition older files read without), 12 since the
/// fixed-load phase's own window (`settings.fixed_load_window_seconds`; an older file's
/// fixed-load windows were `window_seconds` long), 13 since the tail question, 14 since a
/// file may be compressed as a whole (`.json.zst`), its histograms V2 without deflate
/// (either reads as before), with `run.resumed_at`, 15 since the histograms are hex, not
/// base64 (either reads).
pub const SCHEMA_VERSION: u32 = 15;
/// The oldest version this one reads.
pub const OLDEST_READABLE_VERSION: u32 = 2;

/// A whole suite run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunResults {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Always [`SCHEMA_VERSION`] when written by this version.
    pub schema_version: u32,
    /// When and how the run went.
    pub run: RunInfo,
    /// Clients on several hosts sharing the load (`--shard K/N`): in a shard's own file its
    /// one entry; in a file written by `loadgen merge`, every shard merged. Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardInfo>,
    /// The machine and software the numbers come from.
    pub environment: Environment,
    /// Every setting of the run.
    pub settings: Settings,
    /// What this machine allows at best, measured in the same run.
    pub ceilings: Ceilings,
    /// One entry per stack, in the order they ran.
    pub stacks: Vec<StackResults>,
    /// Warnings about the run as a whole.
    pub warnings: Vec<Warning>,
    /// What the database latency relay added on this machine, measured at the start of a
    /// run with parties behind it (`--db-latency`): one entry per round trip asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub db_relay_calibration: Vec<RelayCalibration>,
}

/// The database latency relay measured against a direct echo on loopback (see
/// `bookstore_relay::measure`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RelayCalibration {
    /// The round trip asked for, µs.
    pub round_trip_us: u64,
    /// Round trips measured.
    pub samples: usize,
    /// What the relay added to a round trip: median, µs.
    pub added_p50_us: f64,
    /// And 99th percentile, µs.
    pub added_p99_us: f64,
}

/// One client of a load shared by several hosts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// K of `--shard K/N`, from 1.
    pub index: u32,
    /// N of `--shard K/N`.
    pub count: u32,
    /// `--start-at`: when the first cell's warm-up was to begin, seconds since the Unix epoch.
    pub start_at_unix_seconds: u64,
    /// The host the client ran on.
    pub hostname: Option<String>,
    /// Its CPU model (`environment` is shard 1's only).
    pub cpu_model: Option<String>,
    /// Its logical CPUs.
    pub cpu_count: usize,
    /// The shard's results file id (`run.id`).
    pub run_id: String,
}

/// Every setting of a run.
// Not `deny_unknown_fields`: serde cannot refuse unknown fields beside a flattened struct.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    /// Stacks asked for, in order.
    pub stacks: Vec<String>,
    /// Scenarios asked for, in order.
    pub scenarios: Vec<String>,
    /// How every window was measured, as the command line gave it (`concurrency`,
    /// `warmup_seconds`, `window_seconds`, `rounds`, `repeat`, `request_timeout_ms`,
    /// `durable_database`).
    #[serde(flatten)]
    pub measurement: Measurement,
    /// With the settle rule (see `warmup_max_seconds`): the longest warm-up, which otherwise
    /// lasts until every connection has had an answer. Absent: phases by the clock only
    /// (`--shard`, whose clients keep a shared schedule).
    pub warmup_max_seconds: Option<f64>,
    /// With the settle rule: the longest window, which otherwise lasts until it holds one
    /// answer per connection.
    pub window_max_seconds: Option<f64>,
    /// `--pool-max` given to every stack (and the DB ceiling's pool).
    pub pool_max: u32,
    /// `--workers` given to every stack.
    pub server_workers: usize,
    /// `--blocking-threads` given to the blocking stacks.
    pub blocking_threads: usize,
    /// Client threads.
    pub client_workers: usize,
    /// `throwaway` (a cluster started for the run), `container` (`--db-provider
    /// testcontainers`) or `existing` (`--database-url`).
    pub database: String,
    /// The pool parity rules every stack ran under (SPEC §1).
    pub parity: Vec<String>,
    /// `--rates`: the fixed-load phase's rates, each offered to every stack after a
    /// scenario's closed-loop rounds (`stacks[].equal_load`). Empty: no such phase.
    #[serde(default)]
    pub rates: Vec<Rate>,
    /// How the fixed-load phase's requests arrived: `constant` (evenly spaced) or `poisson`
    /// (`--poisson`). Absent without the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// `--cpus`: the CPUs each tier's processes were pinned to, as read back from them after
    /// pinning. Empty: no placement, every process on every CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_placement: Vec<TierCpus>,
    /// `--slo`: the latency objectives the fixed-load phase's rate ladder is judged by
    /// (`crate::objective`). Empty: none asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<crate::objective::ScopedObjective>,
}

/// The CPUs one tier of the run was pinned to (`--cpus`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TierCpus {
    /// `server`, `client`, `db` or `relay`.
    pub tier: String,
    /// The CPUs its processes may run on, as the kernel reports them.
    pub cpus: Vec<usize>,
}

/// What this machine allows at best.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Ceilings {
    /// The client against the minimal responder (`health` scenario), per concurrency: the
    /// ceiling of the scenarios without database access.
    pub http: Vec<Cell>,
    /// Each database scenario's statements issued directly over a pool of `pool_max`
    /// connections through each driver's store (sqlx; diesel on tokio's blocking pool), no
    /// HTTP: the ceiling of the database scenarios is the faster driver's.
    pub db: Vec<Cell>,
}

/// What became of a stack in a run (ordered worst first, as a merge of shards keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StackStatus {
    /// It did not start or failed its contract check: reported, not measured.
    Failed,
    /// It exited during the measurement: its later cells are missing.
    Crashed,
    /// It was measured.
    Measured,
}

impl StackStatus {
    /// As the results file and the pages write it.
    pub fn name(self) -> &'static str {
        match self {
            StackStatus::Failed => "failed",
            StackStatus::Crashed => "crashed",
            StackStatus::Measured => "measured",
        }
    }
}

impl std::fmt::Display for StackStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One stack's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StackResults {
    /// The binary's name.
    pub name: String,
    /// What became of it.
    pub status: StackStatus,
    /// Why it failed or crashed.
    pub failure: Option<String>,
    /// Time from process start to `/health/db` answering 200.
    pub ready_ms: Option<u64>,
    /// Where the load went when someone else started the stack (`--targets`, `--compose`);
    /// absent when the suite started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// For a labelled variant (`--variant label=stack --flag value`): the stack it runs;
    /// `name` is its label. Absent for a stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<String>,
    /// A variant's own flags (they replace the suite's of the same name). Absent for a stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The round trip a relay added between it and its database (`--db-latency`), in µs;
    /// absent when it reached the database directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_latency_us: Option<u64>,
    /// Idle keep-alive connections held open to it during each of its windows
    /// (`--idle-connections`); absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_connections: Option<u64>,
    /// For a composed stack (`axum+sonic-rs+diesel-async`): the binary that served it and
    /// the flags that made it this triple (`["axum-any", "--serializer", "sonic-rs",
    /// "--access", "diesel-async"]`); absent for a preset, whose binary is its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch: Vec<String>,
    /// The contract check of every scenario before measuring.
    pub validation: Vec<Validation>,
    /// Measured windows (one per scenario, concurrency and round), closed loop.
    pub cells: Vec<Cell>,
    /// The fixed-load phase's windows: open loop at a rate every stack is offered alike
    /// (one per scenario, rate and round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equal_load: Vec<Cell>,
}

impl StackResults {
    /// Whether it is a twin: a variant that changes nothing of its stack, the stack again as
    /// a second party (`--twin`).
    pub fn is_twin(&self) -> bool {
        self.variant_of.is_some()
            && self.args.is_empty()
            && self.db_latency_us.is_none()
            && self.idle_connections.is_none()
    }
}

/// One scenario's contract check before measuring.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    /// Scenario name.
    pub scenario: String,
    /// Whether every checked response matched the contract.
    pub passed: bool,
    /// What did not match.
    pub problem: Option<String>,
}

impl RunResults {
    /// Writes the document to `path` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        write_document(self, path)
    }

    /// Reads a results document, refusing other schemas and unknown versions.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let versions = OLDEST_READABLE_VERSION..=SCHEMA_VERSION;
        read_document(path, SCHEMA, versions, "a suite results file")
    }

    /// The hour's speed: the HTTP ceiling's median rate on `health` (or, in a run without
    /// it, the first scenario it was measured at) at its lowest concurrency (`None` without
    /// an HTTP ceiling). This machine's speed moves by 2×
    /// between hours; a figure is read next to the speed of the hour it was measured in.
    pub fn http_ceiling_rps(&self) -> Option<f64> {
        // `health`, or in a run without it (a study's) the first scenario the responder
        // answered: canned bytes either way.
        let scenario = if self.ceilings.http.iter().any(|c| c.scenario == "health") {
            "health"
        } else {
            self.ceilings.http.first()?.scenario.as_str()
        };
        let ceiling = || self.ceilings.http.iter().filter(move |c| c.scenario == scenario);
        let lowest = ceiling().map(|c| c.concurrency).min()?;
        let rates: Vec<f64> =
            ceiling().filter(|c| c.concurrency == lowest).map(|c| c.throughput_rps).collect();
        bookstore_stats::Summary::median_of(rates)
    }
}

/// Where a window's cell goes in a suite's document, as its journal says it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Place {
    /// `ceilings.http`.
    HttpCeiling,
    /// `ceilings.db`.
    DbCeiling,
    /// `stacks[stack].cells`.
    Cells {
        /// The stack's index in `stacks`.
        stack: usize,
    },
    /// `stacks[stack].equal_load`.
    EqualLoad {
        /// The stack's index in `stacks`.
        stack: usize,
    },
}

/// A cell a window added, and where.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Placed {
    /// Where it goes.
    pub place: Place,
    /// The cell.
    pub cell: Cell,
}

/// How many cells each place of a document held at one moment ([`RunResults::mark`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    http: usize,
    db: usize,
    stacks: Vec<(usize, usize)>,
}

/// What kind of run a suite's journal is of.
pub const JOURNAL_KIND: &str = "suite";

impl RunResults {
    /// How many cells each place holds now.
    pub fn mark(&self) -> Mark {
        Mark {
            http: self.ceilings.http.len(),
            db: self.ceilings.db.len(),
            stacks: self.stacks.iter().map(|s| (s.cells.len(), s.equal_load.len())).collect(),
        }
    }

    /// The cells added since `mark`, each with its place.
    pub fn since(&self, mark: &Mark) -> Vec<Placed> {
        fn placed(place: Place, cells: &[Cell]) -> impl Iterator<Item = Placed> + '_ {
            cells.iter().map(move |cell| Placed { place, cell: cell.clone() })
        }
        let mut added: Vec<Placed> = placed(Place::HttpCeiling, &self.ceilings.http[mark.http..])
            .chain(placed(Place::DbCeiling, &self.ceilings.db[mark.db..]))
            .collect();
        for (stack, results) in self.stacks.iter().enumerate() {
            let (cells, equal_load) = mark.stacks.get(stack).copied().unwrap_or_default();
            added.extend(placed(Place::Cells { stack }, &results.cells[cells..]));
            added.extend(placed(Place::EqualLoad { stack }, &results.equal_load[equal_load..]));
        }
        added
    }

    /// `added` put where each says (a stack not in the document is an error).
    pub fn place(&mut self, added: Vec<Placed>) -> anyhow::Result<()> {
        fn stack(results: &mut RunResults, index: usize) -> anyhow::Result<&mut StackResults> {
            let count = results.stacks.len();
            results.stacks.get_mut(index).ok_or_else(|| {
                anyhow::anyhow!("the journal places a cell in stack {index} of {count}")
            })
        }
        for Placed { place, cell } in added {
            match place {
                Place::HttpCeiling => self.ceilings.http.push(cell),
                Place::DbCeiling => self.ceilings.db.push(cell),
                Place::Cells { stack: index } => stack(self, index)?.cells.push(cell),
                Place::EqualLoad { stack: index } => stack(self, index)?.equal_load.push(cell),
            }
        }
        Ok(())
    }

    /// The document a suite's journal holds: its header with every window of a whole round
    /// put in place — what a resumed run starts from. The stacks the run had prepared when
    /// its first window began are the header's, as the journal's places count them.
    pub fn from_journal(
        path: &Path,
    ) -> anyhow::Result<(Self, crate::journal::Read<Self, Vec<Placed>>)> {
        let read: crate::journal::Read<Self, Vec<Placed>> =
            crate::journal::read(path, JOURNAL_KIND)?;
        let mut results = read.header.clone();
        results.run.resumed_at = read.resumed_at.clone();
        for (_, _, added) in &read.windows {
            results.place(added.clone())?;
        }
        Ok((results, read))
    }
}

/// Writes the document at `path` (any of this workspace's, any version) again as
/// `path.zst`, compressed, every histogram in it V2 in hex (`loadgen compact`): the same
/// document field for field, each histogram holding the same counts; returns the new path.
pub fn compact(path: &Path) -> anyhow::Result<std::path::PathBuf> {
    fn replain(value: &mut serde_json::Value) -> anyhow::Result<()> {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    match field {
                        serde_json::Value::String(text)
                            if key.starts_with("histogram_") && !text.is_empty() =>
                        {
                            let histogram = decode_histogram(text).map_err(anyhow::Error::msg)?;
                            let plain = encode_histogram(&histogram);
                            anyhow::ensure!(
                                decode_histogram(&plain).as_ref() == Ok(&histogram),
                                "a histogram did not survive its new encoding"
                            );
                            *text = plain;
                        }
                        field => replain(field)?,
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().try_for_each(replain)?,
            _ => {}
        }
        Ok(())
    }
    let bytes = crate::document::read_bytes(path)?;
    let mut document: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("{} is not JSON: {e}", path.display()))?;
    replain(&mut document)?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    if !crate::document::compressed(path) {
        name.push(".zst");
    }
    let output = path.with_file_name(name);
    write_document(&document, &output)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fixed_load_phase_runs_at_70_percent_unless_asked_otherwise_or_quick() {
        use super::Rate;
        let asked = vec![Rate::PerSecond(5000.0)];
        assert_eq!(Rate::for_suite(None, false, false, false), [Rate::DEFAULT]);
        assert_eq!(Rate::for_suite(None, false, true, false), [], "--quick: no phase");
        assert_eq!(
            Rate::for_suite(Some(asked.clone()), false, true, false),
            asked,
            "--quick --rates"
        );
        assert_eq!(Rate::for_suite(Some(asked.clone()), false, false, false), asked);
        assert_eq!(Rate::for_suite(None, true, false, false), []);
        // --slo: the ladder, --quick or not; --rates still wins.
        assert_eq!(Rate::for_suite(None, false, true, true), Rate::CAPACITY_LADDER);
        assert_eq!(Rate::for_suite(Some(asked.clone()), false, false, true), asked);
    }

    use super::*;

    #[test]
    fn rates_read_as_shares_up_to_one_or_as_percentages_and_else_as_requests_per_second() {
        assert_eq!(Rate::parse("0.7"), Ok(Rate::Share(0.7)));
        assert_eq!(Rate::parse("70%"), Ok(Rate::Share(0.7)));
        assert_eq!(Rate::parse(" 1 "), Ok(Rate::Share(1.0)));
        assert_eq!(Rate::parse("5000"), Ok(Rate::PerSecond(5000.0)));
        assert_eq!(Rate::parse("125%"), Ok(Rate::Share(1.25)), "past the slowest, as a percentage");
        for bad in ["0", "-1", "0%", "fast", "", "nan", "inf"] {
            assert!(Rate::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Rate::Share(0.7).label(), "70% of the slowest");
        assert_eq!(Rate::PerSecond(5000.0).label(), "5000 req/s");
    }
}

#[cfg(test)]
mod documentation;
