//! One cell of a run: a window (or a shard's part of one) of one party at one scenario and
//! concurrency, with its counts, latencies, timeline, CPU, statements and audit.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use serde::{Deserialize, Serialize};

use super::rate::Rate;

pub(super) use crate::LatencySummary;

use crate::warnings::kinds::Warning;
use bookstore_client::engine::{Arrivals, ErrorKind, LoadReport, PhaseCounts};

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
    /// Requests sent and still without an answer when the drain ended (twice the slowest
    /// answer after the window, at least 1 s, at most the request timeout): in no count
    /// above. Absent in files written before it was counted (their drains waited out the
    /// request timeout).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered: u64,
    /// The idle connections held open to the party during the window
    /// (`--idle-connections`); absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleHeld>,
    /// Latency of successes in the window.
    pub latency_ok_us: Option<LatencySummary>,
    /// Latency of refusals in the window.
    pub latency_rejected_us: Option<LatencySummary>,
    /// The successes' HDR histogram (µs), V2 in hex (files before schema 15: base64, before
    /// 14 of V2 + deflate); empty when none.
    pub histogram_ok: String,
    /// The refusals' HDR histogram (µs), as `histogram_ok`; empty when none.
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
    pub arrivals: Arrivals,
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
            arrivals,
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
            unanswered: report.unanswered,
            idle: None,
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

    /// The p99 a fixed-load window is compared by: its ranked answers' (µs), `None` where
    /// the client fell behind its schedule (the latency would then be the client's).
    pub fn fixed_load_p99_us(&self) -> Option<f64> {
        if crate::warnings::client_limited(self).is_some() {
            return None;
        }
        self.ranked_latency().map(|l| l.p99_us as f64)
    }

    /// The histogram [`Cell::ranked_latency`] summarises (the refusals' for
    /// `checkoutSoldOut` when it has them), `None` when it holds no sample.
    pub fn ranked_histogram(&self) -> Result<Option<Histogram<u64>>, String> {
        let sold_out =
            self.scenario == bookstore_client::scenario::Scenario::CheckoutSoldOut.name();
        let text = if sold_out && !self.histogram_rejected.is_empty() {
            &self.histogram_rejected
        } else {
            &self.histogram_ok
        };
        let histogram = decode_histogram(text)?;
        Ok((!histogram.is_empty()).then_some(histogram))
    }

    /// Requests the server completed during the whole cell (warm-up, window, drain).
    pub fn requests_total(&self) -> u64 {
        self.warmup_counts.total() + self.counts.total() + self.drained_counts.total()
    }
}

/// `histogram` as hex of its V2 encoding; empty when it has no samples. Neither deflated
/// nor base64: a results file is compressed as a whole (`.json.zst`), which finds what the
/// windows' histograms share when each byte stays whole in the text. The default run
/// `2026-12-06T08-36-39Z` compressed: 1.54 MB with its histograms base64, 1.43 MB in hex.
pub fn encode_histogram(histogram: &Histogram<u64>) -> String {
    if histogram.is_empty() {
        return String::new();
    }
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(histogram, &mut bytes).expect("serializing to memory");
    hex::encode(bytes)
}

/// The histogram of [`encode_histogram`]'s text, or of an older file's base64 (a V2
/// cookie in base64 begins `HIST`, which is not hex).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    if text.is_empty() {
        return Histogram::new(3).map_err(|e| e.to_string());
    }
    let bytes = if text.starts_with("HIST") {
        base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| e.to_string())?
    } else {
        hex::decode(text).map_err(|e| e.to_string())?
    };
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A version 14 file's base64 and an older one's deflated V2 read as the hex does.
    #[test]
    fn older_files_histograms_read_the_same() {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for value in [3, 480, 480, 7_001, 2_500_000] {
            histogram.record(value).unwrap();
        }
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&histogram, &mut plain).unwrap();
        let mut deflated = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&histogram, &mut deflated)
            .unwrap();
        let hex = encode_histogram(&histogram);
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()), "{hex}");
        for bytes in [plain, deflated] {
            let base64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            assert!(base64.starts_with("HIST"), "{base64}");
            let older = decode_histogram(&base64).unwrap();
            assert_eq!(older, decode_histogram(&hex).unwrap());
        }
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Idle keep-alive connections held open to a party through one window.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdleHeld {
    /// Connections asked for.
    pub asked: u64,
    /// Open when the window started.
    pub held: u64,
    /// Could not be opened.
    pub refused: u64,
    /// Closed by the server (or a ping answered wrongly) before the window ended.
    pub dropped: u64,
    /// Their pings answered during the hold (one per connection every `ping_every`).
    pub pings: u64,
    /// How long opening them took, seconds.
    pub opening_seconds: f64,
    /// The server's resident memory with them open, before the window's load.
    pub server_rss_bytes: Option<u64>,
    /// The server's threads then.
    pub server_threads: Option<u64>,
    /// The server's open file descriptors then.
    pub server_fds: Option<u64>,
}
