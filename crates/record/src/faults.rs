//! The faults results document (`bookstore-bench/faults`, documented field by field in
//! crates/record/RESULTS.md, "Faults results"): what `loadgen faults` measured, from which the
//! reliability page and table are rendered.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Environment, RunInfo};

use crate::results::StackStatus;

/// The document's schema name.
pub const SCHEMA: &str = "bookstore-bench/faults";
/// The version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole faults run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultsResults {
    /// [`SCHEMA`].
    pub schema: String,
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When and how the run went.
    pub run: RunInfo,
    /// The machine, the build and the PostgreSQL server.
    pub environment: Environment,
    /// What the run was told.
    pub settings: FaultSettings,
    /// One entry per stack, in the order run.
    pub stacks: Vec<StackFaults>,
}

/// The load around each fault: one typed record that is `loadgen faults`' flags (flattened
/// into its arguments), its options and the results' settings (flattened there), so a
/// setting added here is parsed, used and recorded without being written again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FaultLoad {
    /// Closed-loop connections.
    #[cfg_attr(feature = "cli", arg(short = 'c', long, default_value_t = 256))]
    pub connections: u32,
    /// Load before each fault.
    #[cfg_attr(feature = "cli", arg(long, default_value = "2s", value_parser = humantime::parse_duration))]
    #[serde(rename = "steady_before_ms", with = "crate::units::millis")]
    pub before: Duration,
    /// How long PostgreSQL stays down in `postgres-restart`.
    #[cfg_attr(feature = "cli", arg(long, default_value = "3s", value_parser = humantime::parse_duration))]
    #[serde(rename = "outage_ms", with = "crate::units::millis")]
    pub outage: Duration,
    /// Load after each fault is over.
    #[cfg_attr(feature = "cli", arg(long, default_value = "3s", value_parser = humantime::parse_duration))]
    #[serde(rename = "steady_after_ms", with = "crate::units::millis")]
    pub after: Duration,
    /// A request without an answer after this is a failure.
    #[cfg_attr(feature = "cli", arg(long, default_value = "10s", value_parser = humantime::parse_duration))]
    #[serde(rename = "request_timeout_ms", with = "crate::units::millis")]
    pub timeout: Duration,
    /// A soak of this length per stack (e.g. 10m): reads, a search and checkouts; the
    /// server's RSS, descriptors and threads every second, p99 every 10 s, the audit at
    /// the end. Only the soak runs unless --faults is given too.
    #[cfg_attr(feature = "cli", arg(long, value_parser = humantime::parse_duration))]
    #[serde(rename = "soak_seconds", with = "crate::units::optional_seconds")]
    pub soak: Option<Duration>,
}

/// The run's settings.
// Not `deny_unknown_fields`: serde cannot refuse unknown fields beside a flattened struct.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FaultSettings {
    /// Stacks, in order.
    pub stacks: Vec<String>,
    /// Faults injected into each stack's load, in order.
    pub faults: Vec<String>,
    /// The scenarios of the load around a fault (their users alternate).
    pub scenarios: Vec<String>,
    /// The load around each fault, as the command line gave it (`connections`,
    /// `steady_before_ms`, `outage_ms`, `steady_after_ms`, `request_timeout_ms`,
    /// `soak_seconds`).
    #[serde(flatten)]
    pub load: FaultLoad,
    /// Client threads.
    pub client_workers: usize,
    /// `--pool-max` of every stack.
    pub pool_max: u32,
    /// `--workers` of every stack.
    pub server_workers: usize,
    /// `--blocking-threads` of the diesel stacks.
    pub blocking_threads: usize,
    /// The scenarios of the soak's load.
    pub soak_scenarios: Vec<String>,
}

/// One stack's faults and soak.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StackFaults {
    /// Its name.
    pub stack: String,
    /// `measured`, or `failed` (it did not start, or the run could not go on).
    pub status: StackStatus,
    /// Why it failed.
    pub failure: Option<String>,
    /// One record per fault, in order.
    pub faults: Vec<FaultRecord>,
    /// The soak, when one ran.
    pub soak: Option<SoakRecord>,
}

/// What happened around one fault.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultRecord {
    /// `terminate-backends`, `postgres-restart` or `server-restart`.
    pub fault: String,
    /// What was done, e.g. "32 backends terminated".
    pub detail: String,
    /// When it was injected, s from the load's start.
    pub injected_at_s: f64,
    /// When it was over (the backends gone, PostgreSQL answering again, the server
    /// started again), s from the load's start.
    pub ended_at_s: f64,
    /// Requests sent (connects refused included).
    pub requests: u64,
    /// Successes.
    pub successes: u64,
    /// 503 `db_unavailable` answers.
    pub unavailable_503: u64,
    /// Connections refused, or closed before any answer.
    pub refused: u64,
    /// Failed requests: another 5xx, another status, a wrong or cut-off answer, a timeout;
    /// a refused connection while the server was meant to be up.
    pub failures: u64,
    /// The first failures, described.
    pub failure_examples: Vec<String>,
    /// First and last end of a request that was not a success, s from the injection.
    pub error_window: Option<ErrorWindow>,
    /// Answers that were not successes per 100 ms, from the injection to the load's end
    /// (by when each ended): the shape of the error window.
    pub errors_per_100ms: Vec<u64>,
    /// From the fault's end to the end of the first success after it, ms.
    pub recovery_ms: Option<f64>,
    /// The write audit after the work in progress drained.
    pub audit: FaultAudit,
    /// No failure, the audit passed, and a success after the fault.
    pub survived: bool,
}

/// The span of the answers that were not successes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErrorWindow {
    /// The first, s from the injection (negative: before it).
    pub first_s: f64,
    /// The last, s from the injection.
    pub last_s: f64,
}

impl ErrorWindow {
    /// Its length, s.
    pub fn seconds(&self) -> f64 {
        self.last_s - self.first_s
    }
}

/// The write audit of a fault or a soak: every acknowledged checkout stored once, no row
/// without a request that could have written it, every book's stock in line with its rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultAudit {
    /// Every check held.
    pub passed: bool,
    /// Checkouts answered 201.
    pub acknowledged_checkouts: u64,
    /// Rows in `checkouts`.
    pub checkout_rows: u64,
    /// Acknowledged checkouts with no row: writes lost (the target is 0).
    pub lost_acknowledged: u64,
    /// Rows of checkouts that were not acknowledged: committed, but the answer was a 503,
    /// cut off or never came. At most `in_doubt_checkouts`.
    pub unacknowledged_rows: u64,
    /// Checkouts that ended without a success, each of which may or may not have committed.
    pub in_doubt_checkouts: u64,
    /// Books whose stock went below zero.
    pub negative_stock_books: u64,
    /// Books whose stock decrease differs from their stored checkouts' quantities.
    pub stock_mismatches: u64,
    /// What failed, one line each.
    pub failures: Vec<String>,
    /// How long the stack's database work took to drain before the audit, ms.
    pub drained_ms: f64,
    /// The work had not drained after the drain limit (the audit ran anyway).
    pub drain_timed_out: bool,
}

/// A soak: a long mixed load, the server's resources every second.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SoakRecord {
    /// How long it ran, s.
    pub seconds: f64,
    /// Requests sent.
    pub requests: u64,
    /// Successes.
    pub successes: u64,
    /// Failures (503s included: nothing was wrong with the database).
    pub failures: u64,
    /// The first failures, described.
    pub failure_examples: Vec<String>,
    /// p99 latency of the successes ending in each 10 s, ms (`None` for a span without
    /// any).
    pub p99_ms_per_10s: Vec<Option<f64>>,
    /// The server's resources, once a second.
    pub samples: Vec<SoakSample>,
    /// Resident memory growth from the second minute's start to the end, % (median of
    /// 10 samples each); `None` for a soak shorter than two minutes.
    pub rss_growth_percent: Option<f64>,
    /// The same over the second half of that span alone, %: near 0 once the level settled,
    /// about half of `rss_growth_percent` at a constant rate. Absent in files from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_growth_late_percent: Option<f64>,
    /// Open file descriptors at the end minus at the second minute's start (highest of 10
    /// samples each); `None` likewise.
    pub fd_growth: Option<i64>,
    /// Why the soak is flagged: RSS grew more than 10%, descriptors grew.
    pub flags: Vec<String>,
    /// The write audit at the end.
    pub audit: FaultAudit,
}

/// The server's resources at one moment of a soak.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SoakSample {
    /// s from the soak's start.
    pub at_s: f64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// Threads.
    pub threads: u64,
}

impl FaultsResults {
    /// Writes the document atomically.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        crate::write_document(self, path)
    }

    /// Reads a document of this schema.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        crate::read_document(
            path,
            SCHEMA,
            SCHEMA_VERSION..=SCHEMA_VERSION,
            "a loadgen faults results file",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_documented_in_results_md() {
        let audit = FaultAudit {
            passed: true,
            acknowledged_checkouts: 0,
            checkout_rows: 0,
            lost_acknowledged: 0,
            unacknowledged_rows: 0,
            in_doubt_checkouts: 0,
            negative_stock_books: 0,
            stock_mismatches: 0,
            failures: vec![],
            drained_ms: 0.0,
            drain_timed_out: false,
        };
        let results = FaultsResults {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo::running("x".into(), vec![]),
            environment: Environment::default(),
            settings: FaultSettings {
                stacks: vec![],
                faults: vec![],
                scenarios: vec![],
                load: FaultLoad {
                    connections: 0,
                    before: Duration::ZERO,
                    outage: Duration::ZERO,
                    after: Duration::ZERO,
                    timeout: Duration::ZERO,
                    soak: Some(Duration::ZERO),
                },
                client_workers: 0,
                pool_max: 0,
                server_workers: 0,
                blocking_threads: 0,
                soak_scenarios: vec![],
            },
            stacks: vec![StackFaults {
                stack: String::new(),
                status: StackStatus::Measured,
                failure: Some(String::new()),
                faults: vec![FaultRecord {
                    fault: String::new(),
                    detail: String::new(),
                    injected_at_s: 0.0,
                    ended_at_s: 0.0,
                    requests: 0,
                    successes: 0,
                    unavailable_503: 0,
                    refused: 0,
                    failures: 0,
                    failure_examples: vec![],
                    error_window: Some(ErrorWindow { first_s: 0.0, last_s: 0.0 }),
                    errors_per_100ms: vec![],
                    recovery_ms: Some(0.0),
                    audit: audit.clone(),
                    survived: true,
                }],
                soak: Some(SoakRecord {
                    seconds: 0.0,
                    requests: 0,
                    successes: 0,
                    failures: 0,
                    failure_examples: vec![],
                    p99_ms_per_10s: vec![],
                    samples: vec![SoakSample { at_s: 0.0, rss_bytes: 0, open_fds: 0, threads: 0 }],
                    rss_growth_percent: None,
                    rss_growth_late_percent: None,
                    fd_growth: None,
                    flags: vec![],
                    audit,
                }),
            }],
        };
        let undocumented = crate::undocumented_fields(&results, include_str!("../RESULTS.md"));
        assert!(undocumented.is_empty(), "fields missing from RESULTS.md: {undocumented:?}");
    }
}
