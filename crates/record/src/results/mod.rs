//! The results file: the one source of every number in every report.
//!
//! A run writes one JSON document ([`RunResults`]) under `summary/results/`, rewritten
//! atomically after every cell so a crash or Ctrl-C keeps what was measured. Units are in
//! the field names (`_rps`, `_us`, `_seconds`, `_bytes`). Latency histograms are stored whole
//! (HDR, V2 + deflate, base64) so runs can be merged and re-percentiled later.
//!
//! `schema_version` changes whenever a field changes meaning or disappears; readers refuse
//! versions they do not know. `RESULTS.md` beside this crate documents every field.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

pub use bookstore_report::{Environment, LatencySummary, RunInfo};
use bookstore_report::{read_document, write_document};

use bookstore_client::engine::{Arrivals, ErrorKind, LoadReport, PhaseCounts};
use crate::warnings::Warning;

/// Identifies a suite results document.
pub const SCHEMA: &str = "bookstore-bench/results";
/// Identifies a single-cell document written by `loadgen http --json`.
pub const HTTP_CELL_SCHEMA: &str = "bookstore-bench/http-cell";
/// The version of both documents' layout: 2 since cells are measured in rounds, 3 since the
/// fixed-load phase (its fields are additions: a version 2 file reads as a version 3 one
/// without them), 4 since a round holds every concurrency, 5 since PostgreSQL's counters
/// and backend waits per cell, 6 since the database latency relay, 7 since each cell's
/// latency and server threads and the CPU placement (additions: older files read without
/// them).
pub const SCHEMA_VERSION: u32 = 7;
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
/// `bookstore_relay::calibrate`).
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

impl From<&bookstore_relay::Calibration> for RelayCalibration {
    fn from(c: &bookstore_relay::Calibration) -> Self {
        Self {
            round_trip_us: c.target.as_micros() as u64,
            samples: c.samples,
            added_p50_us: c.added_p50.as_secs_f64() * 1e6,
            added_p99_us: c.added_p99.as_secs_f64() * 1e6,
        }
    }
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Stacks asked for, in order.
    pub stacks: Vec<String>,
    /// Scenarios asked for, in order.
    pub scenarios: Vec<String>,
    /// Connections (closed-loop virtual users) per cell.
    pub concurrency: Vec<u32>,
    /// The shortest warm-up before each window.
    pub warmup_seconds: f64,
    /// The shortest window.
    pub window_seconds: f64,
    /// With the settle rule (see `warmup_max_seconds`): the longest warm-up, which otherwise
    /// lasts until every connection has had an answer. Absent: phases by the clock only
    /// (`--shard`, whose clients keep a shared schedule).
    pub warmup_max_seconds: Option<f64>,
    /// With the settle rule: the longest window, which otherwise lasts until it holds one
    /// answer per connection.
    pub window_max_seconds: Option<f64>,
    /// `--rounds`: rounds per cell before `repeat` multiplies them.
    pub rounds: u32,
    /// `--repeat`: the rounds are run this many times over (rounds × repeat measurements
    /// per cell).
    pub repeat: u32,
    /// `--pool-max` given to every stack (and the DB ceiling's pool).
    pub pool_max: u32,
    /// `--workers` given to every stack.
    pub server_workers: usize,
    /// `--blocking-threads` given to the blocking stacks.
    pub blocking_threads: usize,
    /// Client threads.
    pub client_workers: usize,
    /// A request without a response after this is an error.
    pub request_timeout_ms: u64,
    /// Whether PostgreSQL ran with fsync and synchronous commit on.
    pub durable_database: bool,
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
    pub arrivals: Option<String>,
    /// `--cpus`: the CPUs each tier's processes were pinned to, as read back from them after
    /// pinning. Empty: no placement, every process on every CPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_placement: Vec<TierCpus>,
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

/// A rate of the fixed-load phase (`--rates`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Rate {
    /// A share of the slowest qualified stack's goodput at the lowest concurrency, measured
    /// in the same run moments before.
    Share(f64),
    /// Requests per second.
    PerSecond(f64),
}

impl Rate {
    /// The fixed-load phase's rate unless `--rates` says otherwise: 70% of the slowest.
    pub const DEFAULT: Rate = Rate::Share(0.7);

    /// The rates a suite offers: none with `--no-equal-load`, those asked for, or else
    /// [`Rate::DEFAULT`] — except in a `--quick` run, a first look whose fixed-load windows
    /// would be too few and too short to compare (its phase costs about a fifth of it).
    pub fn for_suite(asked: Option<Vec<Rate>>, no_equal_load: bool, quick: bool) -> Vec<Rate> {
        match asked {
            _ if no_equal_load => Vec::new(),
            Some(rates) => rates,
            None if quick => Vec::new(),
            None => vec![Rate::DEFAULT],
        }
    }

    /// `0.7` or `70%` (a share, at most 1), `5000` (requests per second, more than 1).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bad = || {
            format!(
                "--rates {text:?}: expected a share like 0.7 or 70%, or requests per second like 5000"
            )
        };
        let (number, percent) = match text.strip_suffix('%') {
            Some(number) => (number, true),
            None => (text, false),
        };
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        if !value.is_finite() || value <= 0.0 {
            return Err(bad());
        }
        Ok(match (percent, value) {
            (true, v) if v <= 100.0 => Self::Share(v / 100.0),
            (true, _) => return Err(bad()),
            (false, v) if v <= 1.0 => Self::Share(v),
            (false, v) => Self::PerSecond(v),
        })
    }

    /// As a reader says it: `70% of the slowest` or `5000 req/s`.
    pub fn label(self) -> String {
        match self {
            Self::Share(share) => format!("{:.0}% of the slowest", share * 100.0),
            Self::PerSecond(rate) => format!("{rate:.0} req/s"),
        }
    }
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

/// One stack's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StackResults {
    /// The binary's name.
    pub name: String,
    /// `measured`, `failed` (did not start or failed validation: not measured) or
    /// `crashed` (exited during the measurement; later cells missing).
    pub status: String,
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
    /// The contract check of every scenario before measuring.
    pub validation: Vec<Validation>,
    /// Measured windows (one per scenario, concurrency and round), closed loop.
    pub cells: Vec<Cell>,
    /// The fixed-load phase's windows: open loop at a rate every stack is offered alike
    /// (one per scenario, rate and round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equal_load: Vec<Cell>,
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

/// Closed loop (concurrency = connections) or open loop at a fixed rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum LoadMode {
    /// Each connection sends its next request when the previous answer is in.
    Closed,
    /// Requests are sent at a fixed total rate; latency counts from the intended send.
    Open {
        /// Requests per second, all connections together.
        rate_rps: f64,
    },
}

/// One measured window: scenario × concurrency × round against one target. A report's
/// "cell" is all rounds of one target, scenario and concurrency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// Scenario name (SPEC §4).
    pub scenario: String,
    /// Connections.
    pub concurrency: u32,
    /// The round it was measured in (0-based): windows of the same round were measured side
    /// by side, and are compared pair by pair.
    pub round: u32,
    /// For a ceiling measured at a concurrency of its own (the database ceiling, one client
    /// per pooled connection): the concurrency of the stacks' cells of the same round it is
    /// compared with (a window measured once per round is written once per concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside_concurrency: Option<u32>,
    /// For a database ceiling: the driver its statements went through, `sqlx` or `diesel`
    /// (absent in files written when sqlx was the only one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The round trip a relay added between the measured party and its database
    /// (`--db-latency`), µs: a stack's or variant's cells carry their party's, a database
    /// ceiling's its own. Absent when the database was reached directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_latency_us: Option<u64>,
    /// When its warm-up began, in seconds since the run started (absent in files written
    /// before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_seconds: Option<f64>,
    /// How load was offered.
    pub mode: LoadMode,
    /// The warm-up as it was.
    pub warmup_seconds: f64,
    /// The measurement window as it was.
    pub window_seconds: f64,
    /// Every response completed in the window, per second.
    pub throughput_rps: f64,
    /// Successes completed in the window, per second.
    pub goodput_rps: f64,
    /// Counts in the window.
    pub counts: Counts,
    /// Counts during the warm-up.
    pub warmup_counts: Counts,
    /// Requests sent in the window and answered after it closed.
    pub drained_counts: Counts,
    /// Latency of successes in the window.
    pub latency_ok_us: Option<LatencySummary>,
    /// Latency of refusals in the window.
    pub latency_rejected_us: Option<LatencySummary>,
    /// The successes' HDR histogram (µs), V2 + deflate, base64; empty when none.
    pub histogram_ok: String,
    /// The refusals' HDR histogram (µs), V2 + deflate, base64; empty when none.
    pub histogram_rejected: String,
    /// The window second by second.
    pub timeline: Vec<TimelineSecond>,
    /// Mean requests in flight in the window: each request's time in flight inside the
    /// window, summed, divided by the window (Little's law's quantity, measured exactly).
    pub mean_in_flight: f64,
    /// CPU time over the window.
    pub cpu_seconds: CpuSeconds,
    /// The server's peak resident memory during the cell.
    pub server_peak_rss_bytes: Option<u64>,
    /// The server's threads when the window closed (a blocking pool's threads outlive a
    /// window by seconds, so this is about the most it used). Absent when the process
    /// cannot be seen, and in files before version 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_threads: Option<u64>,
    /// SQL statements per request, and PostgreSQL's counters, over the cell.
    pub sql: Option<SqlStats>,
    /// What the database's client backends were doing during the window, sampled from
    /// `pg_stat_activity`. Absent for a ceiling, on a server the suite cannot query, and in
    /// files before version 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_waits: Option<BackendWaits>,
    /// The write audit (write scenarios only).
    pub audit: Option<Audit>,
    /// The first responses that failed full validation, and why.
    pub problems: Vec<String>,
    /// Ctrl-C stopped this cell before its window closed.
    pub stopped_early: bool,
    /// What to look at before trusting this cell.
    pub warnings: Vec<Warning>,
    /// Each shard's share when clients on several hosts shared the cell (`--shard`): in a
    /// shard's own file its one entry, in a merged file one per shard. Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardPart>,
    /// What an open loop offered and how it kept to it. Absent for a closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoop>,
}

/// An open-loop window: what was offered, and whether the client kept its schedule.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenLoop {
    /// The rate offered, requests per second (also in `mode`).
    pub offered_rps: f64,
    /// The rate as asked for: a share of the slowest qualified stack's goodput at the lowest
    /// concurrency (`--rates 0.7`); absent for a rate given in requests per second.
    pub fraction_of_slowest: Option<f64>,
    /// `constant` (evenly spaced) or `poisson`.
    pub arrivals: String,
    /// Requests due in the window.
    pub due: u64,
    /// The share of them answered by the window's end plus a grace of a tenth of the
    /// window (at least 50 ms): 1 when the server kept up; short when it fell behind.
    pub achieved_fraction: f64,
    /// Requests still waiting in the client when that grace ran out, dropped unsent (the
    /// server was that far behind).
    pub dropped: u64,
    /// The most connections the client may open (the suite's largest concurrency).
    pub connections_cap: u32,
    /// The most it had open.
    pub connections_peak: u32,
    /// A request due in the window found every connection busy at the cap and waited in
    /// the client (its latency still counts from when it was due).
    pub cap_hit: bool,
    /// How late the client's scheduler was against the schedule: its own lag, not the
    /// server's.
    pub send_lag_us: Option<LatencySummary>,
}

impl OpenLoop {
    /// What an open loop offered (`offered_rps`, asked as `fraction` of the slowest if so,
    /// arriving as `arrivals`, over at most `cap` connections), and how the client kept to
    /// it, from the engine's `report`.
    pub fn of(
        offered_rps: f64,
        fraction_of_slowest: Option<f64>,
        arrivals: Arrivals,
        cap: u32,
        report: &LoadReport,
    ) -> Self {
        let due = report.send_lag_us.len();
        let counts = report.open.unwrap_or_default();
        Self {
            offered_rps,
            fraction_of_slowest,
            arrivals: arrivals.name().to_owned(),
            due,
            achieved_fraction: if due > 0 { counts.in_time as f64 / due as f64 } else { 0.0 },
            dropped: counts.dropped,
            connections_cap: cap,
            connections_peak: report.connections_peak as u32,
            cap_hit: report.cap_hit,
            send_lag_us: LatencySummary::of(&report.send_lag_us),
        }
    }
}

/// One shard's part of a cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShardPart {
    /// K of `--shard K/N`.
    pub shard: u32,
    /// Connections this shard opened (its share of the cell's concurrency).
    pub connections: u32,
    /// When its window opened, seconds since the Unix epoch (by this host's clock).
    pub window_started_unix_seconds: f64,
    /// How much later than scheduled its warm-up began (0 when on time).
    pub late_seconds: f64,
    /// Responses completed in its window, per second.
    pub throughput_rps: f64,
    /// Successes completed in its window, per second.
    pub goodput_rps: f64,
    /// CPU of this shard's client over its window, on its own host (a merged cell's
    /// `cpu_seconds.client` is the sum over the hosts, whose CPUs may differ).
    pub client_cpu_seconds: f64,
}

/// Counts of one phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Expected successes.
    pub ok: u64,
    /// Expected business refusals.
    pub rejected: u64,
    /// Everything else.
    pub errors: u64,
    /// Errors by kind (`status`, `invalid_body`, `timeout`, `connect`, `io`, `invalid_response`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Responses by HTTP status.
    pub responses_by_status: BTreeMap<String, u64>,
}

impl From<&PhaseCounts> for Counts {
    fn from(phase: &PhaseCounts) -> Self {
        Self {
            ok: phase.ok,
            rejected: phase.rejected,
            errors: phase.error_total(),
            errors_by_kind: ErrorKind::ALL
                .iter()
                .filter(|kind| phase.errors_of(**kind) > 0)
                .map(|kind| (kind.name().to_owned(), phase.errors_of(*kind)))
                .collect(),
            responses_by_status: phase.by_status.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        }
    }
}

impl Counts {
    /// Every completed request.
    pub fn total(&self) -> u64 {
        self.ok + self.rejected + self.errors
    }
}

/// One second of the window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimelineSecond {
    /// Seconds since the window opened.
    pub second: u32,
    /// Successes completed in this second.
    pub ok: u64,
    /// Refusals completed in this second.
    pub rejected: u64,
    /// Errors completed in this second.
    pub errors: u64,
    /// 99th percentile latency of this second's successes.
    pub p99_ok_us: Option<u64>,
}

/// CPU time spent during the window.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CpuSeconds {
    /// The server process; `None` when it cannot be seen.
    pub server: Option<f64>,
    /// Every PostgreSQL process; `None` for a server on another machine.
    pub postgres: Option<f64>,
    /// This load generator.
    pub client: f64,
    /// The database latency relay in front of the stack's database (`--db-latency`, its own
    /// process); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay: Option<f64>,
}

/// SQL statements per request, from `pg_stat_statements` (reset before the cell).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SqlStats {
    /// Statements executed (including BEGIN/COMMIT) per completed request.
    pub statements_per_request: f64,
    /// Statements executed during the cell (warm-up, window and drain).
    pub statements: u64,
    /// Requests completed during the cell (warm-up, window and drain).
    pub requests: u64,
    /// The most frequent statements, normalized, with their call counts.
    pub top_statements: Vec<StatementCalls>,
    /// Transactions committed: `COMMIT` statements run (pg_stat_statements, exact for the
    /// cell). 0 in files before version 5.
    #[serde(default)]
    pub commits: u64,
    /// Transactions rolled back: `ROLLBACK` statements run.
    #[serde(default)]
    pub rollbacks: u64,
    /// Shared buffer blocks the cell's statements found in PostgreSQL's cache…
    #[serde(default)]
    pub shared_blocks_hit: u64,
    /// …and read from the operating system (disk or its page cache).
    #[serde(default)]
    pub shared_blocks_read: u64,
    /// Temporary-file blocks the statements wrote (sorts and hashes that spilled).
    #[serde(default)]
    pub temp_blocks_written: u64,
    /// Deadlocks PostgreSQL detected in the database (`pg_stat_database`, from the cell's
    /// start to its end). A backend reports its counters at most once a second, so one
    /// near a cell's end may count in the next cell. `None` where it was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadlocks: Option<u64>,
}

/// What the database's client backends (the stack's pooled connections) were doing during a
/// window: `pg_stat_activity` sampled every `interval_ms`, each backend of each sample one
/// observation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackendWaits {
    /// Samples taken.
    pub samples: u64,
    /// Between samples.
    pub interval_ms: u64,
    /// Client backends of the database per sample, on average.
    pub mean_backends: f64,
    /// Share of the observations by what the backend was doing: `running` (active, no
    /// wait event), `idle` (waiting for the stack's next statement), `idle in transaction`
    /// (a transaction open between statements), or `Type:Event` while active, e.g.
    /// `Lock:transactionid` (waiting for another transaction's row lock), `LWLock:WALWrite`,
    /// `IO:WALSync`, `Client:ClientRead`. The shares add up to 1.
    pub shares: BTreeMap<String, f64>,
}

impl BackendWaits {
    /// The share of observations waiting for a heavyweight lock (`Lock:*`: rows, tuples,
    /// transactions).
    pub fn lock_share(&self) -> f64 {
        self.shares.iter().filter(|(k, _)| k.starts_with("Lock:")).map(|(_, v)| v).sum()
    }

    /// The share of `key`, 0 when absent.
    pub fn share(&self, key: &str) -> f64 {
        self.shares.get(key).copied().unwrap_or(0.0)
    }
}

/// One normalized statement and how often it ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StatementCalls {
    /// The statement as `pg_stat_statements` normalizes it.
    pub query: String,
    /// Executions.
    pub calls: u64,
}

/// The write audit of SPEC §5.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Audit {
    /// Every check held.
    pub passed: bool,
    /// Rows in `checkouts`.
    pub checkout_rows: u64,
    /// Successful checkouts the client received (warm-up, window and drain).
    pub acknowledged_checkouts: u64,
    /// Books whose stock went below zero.
    pub negative_stock_books: u64,
    /// Books whose seeded stock minus current stock differs from the quantity of their
    /// checkouts.
    pub stock_mismatches: u64,
    /// 409 `out_of_stock` answers (warm-up, window and drain) for books that still had the
    /// stock after the cell: refusals that were not honest. Counted as errors in `counts`.
    pub unjustified_refusals: u64,
    /// What failed, one line each.
    pub failures: Vec<String>,
}

impl Cell {
    /// A cell from what the client measured; CPU, memory, SQL and audit are added by the
    /// suite.
    pub fn from_report(
        scenario: &str,
        concurrency: u32,
        round: u32,
        mode: LoadMode,
        report: &LoadReport,
    ) -> Self {
        Self {
            scenario: scenario.to_owned(),
            concurrency,
            round,
            beside_concurrency: None,
            driver: None,
            db_latency_us: None,
            started_seconds: None,
            mode,
            warmup_seconds: report.warmup_elapsed.as_secs_f64(),
            window_seconds: report.window.as_secs_f64(),
            throughput_rps: report.throughput_rps(),
            goodput_rps: report.goodput_rps(),
            counts: Counts::from(&report.measure),
            warmup_counts: Counts::from(&report.warmup),
            drained_counts: Counts::from(&report.drain),
            latency_ok_us: LatencySummary::of(&report.latency_ok_us),
            latency_rejected_us: LatencySummary::of(&report.latency_rejected_us),
            histogram_ok: encode_histogram(&report.latency_ok_us),
            histogram_rejected: encode_histogram(&report.latency_rejected_us),
            timeline: report
                .timeline
                .iter()
                .enumerate()
                .map(|(second, s)| TimelineSecond {
                    second: second as u32,
                    ok: s.ok,
                    rejected: s.rejected,
                    errors: s.errors,
                    p99_ok_us: (!s.latency_ok_us.is_empty())
                        .then(|| s.latency_ok_us.value_at_quantile(0.99)),
                })
                .collect(),
            mean_in_flight: report.mean_in_flight(),
            cpu_seconds: CpuSeconds::default(),
            server_peak_rss_bytes: None,
            server_threads: None,
            sql: None,
            backend_waits: None,
            audit: None,
            problems: report.problems.clone(),
            stopped_early: report.stopped_early,
            warnings: Vec::new(),
            shards: Vec::new(),
            open_loop: None,
        }
    }

    /// The rate of an open-loop window as the pages group it: the share of the slowest asked
    /// for (its requests per second differ from run to run), or the rate given; `None` for a
    /// closed loop.
    pub fn equal_load_rate(&self) -> Option<Rate> {
        let open = self.open_loop.as_ref()?;
        Some(open.fraction_of_slowest.map_or(Rate::PerSecond(open.offered_rps), Rate::Share))
    }

    /// The load a window was measured under, for a reader: `c = 128` (the stacks'
    /// concurrency it was measured beside), or the equal-load rate.
    pub fn load_label(&self) -> String {
        match self.equal_load_rate() {
            Some(rate) => rate.label(),
            None => format!("c = {}", self.beside_concurrency.unwrap_or(self.concurrency)),
        }
    }

    /// The latency of the answers its scenario is ranked by: the successes', and for
    /// `checkoutSoldOut` (ranked by expected answers: after ten sales every correct answer is
    /// a refusal) the refusals'.
    pub fn ranked_latency(&self) -> Option<LatencySummary> {
        if self.scenario == bookstore_client::scenario::Scenario::CheckoutSoldOut.name() {
            self.latency_rejected_us.or(self.latency_ok_us)
        } else {
            self.latency_ok_us
        }
    }

    /// Requests the server completed during the whole cell (warm-up, window, drain).
    pub fn requests_total(&self) -> u64 {
        self.warmup_counts.total() + self.counts.total() + self.drained_counts.total()
    }
}

/// `histogram` as base64 of its V2 + deflate encoding; empty when it has no samples.
pub fn encode_histogram(histogram: &Histogram<u64>) -> String {
    if histogram.is_empty() {
        return String::new();
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut bytes).expect("serializing to memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The histogram of [`encode_histogram`]'s text.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    if text.is_empty() {
        return Histogram::new(3).map_err(|e| e.to_string());
    }
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| e.to_string())?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| e.to_string())
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
}

/// The value of `name` among `--flag value` pairs (a variant's flags), if given.
pub fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.chunks(2).find(|pair| pair[0] == name).and_then(|pair| pair.get(1)).map(String::as_str)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fixed_load_phase_runs_at_70_percent_unless_asked_otherwise_or_quick() {
        use super::Rate;
        let asked = vec![Rate::PerSecond(5000.0)];
        assert_eq!(Rate::for_suite(None, false, false), [Rate::DEFAULT]);
        assert_eq!(Rate::for_suite(None, false, true), [], "--quick: no phase");
        assert_eq!(Rate::for_suite(Some(asked.clone()), false, true), asked, "--quick --rates");
        assert_eq!(Rate::for_suite(Some(asked.clone()), false, false), asked);
        assert_eq!(Rate::for_suite(None, true, false), []);
    }

    use super::*;

    #[test]
    fn rates_read_as_shares_up_to_one_and_as_requests_per_second_above() {
        assert_eq!(Rate::parse("0.7"), Ok(Rate::Share(0.7)));
        assert_eq!(Rate::parse("70%"), Ok(Rate::Share(0.7)));
        assert_eq!(Rate::parse(" 1 "), Ok(Rate::Share(1.0)));
        assert_eq!(Rate::parse("5000"), Ok(Rate::PerSecond(5000.0)));
        for bad in ["0", "-1", "150%", "fast", "", "nan", "inf"] {
            assert!(Rate::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Rate::Share(0.7).label(), "70% of the slowest");
        assert_eq!(Rate::PerSecond(5000.0).label(), "5000 req/s");
    }

    #[test]
    fn histograms_survive_the_round_trip_exactly() {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for value in [1, 17, 250, 250, 9_999, 1_234_567] {
            histogram.record(value).unwrap();
        }
        let decoded = decode_histogram(&encode_histogram(&histogram)).unwrap();
        assert_eq!(decoded.len(), histogram.len());
        for quantile in [0.0, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(decoded.value_at_quantile(quantile), histogram.value_at_quantile(quantile));
        }
        assert_eq!(encode_histogram(&Histogram::<u64>::new(3).unwrap()), "");
        assert!(decode_histogram("").unwrap().is_empty());
    }
}

#[cfg(test)]
mod documentation;
