//! `bookstore-timing`: where a request's time goes inside a server — a diagnostic, off
//! unless a stack is started with `--timing-file PATH`.
//!
//! Phases (all in µs):
//! - `store`: the handler's whole store call, as the async worker sees it (every stack);
//! - `respond`: encoding the reply with the stack's serializer (every stack);
//! - for a blocking store, the store call split in four, per call:
//!   `thread_wait` (handed to the blocking pool → running on a blocking thread),
//!   `conn_wait` (r2d2's `get`), `query` (statements and row decoding on the thread) and
//!   `handback` (the thread done → the async worker running again).
//!
//! Besides a histogram per phase, the report breaks the slowest 1% of blocking calls down
//! into their four phases (the mean of each), and counts store calls per async worker
//! thread (on actix, each worker owns its connections, so this is their spread). A blocking
//! call that timed out waiting for a connection (a 503) is in `store` only.
//!
//! Off, each hook costs one relaxed atomic load. On, each records under one mutex: the
//! diagnostic's own cost is in what it measures, so compare configurations both with it on.
//! At shutdown the server appends the report as one JSON line to the file (a stack the
//! suite restarts every round adds a line per process).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

/// Version of the report's JSON: bumped when a field changes meaning or goes away.
pub const REPORT_VERSION: u32 = 1;

/// The most blocking calls kept one by one for the slow-call breakdown (16 bytes each).
const MAX_CALLS_KEPT: usize = 4_000_000;

static ENABLED: AtomicBool = AtomicBool::new(false);
static RECORDER: Mutex<Option<Recorder>> = Mutex::new(None);

/// A phase of a request inside the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The handler's store call, whole, from the async worker.
    Store,
    /// Encoding the reply.
    Respond,
    /// Blocking store: waiting for a thread of the blocking pool.
    ThreadWait,
    /// Blocking store: waiting for a pooled connection.
    ConnWait,
    /// Blocking store: statements and row decoding.
    Query,
    /// Blocking store: from the thread's end to the async worker running again.
    Handback,
}

/// One blocking store call, phase by phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockingCall {
    /// Handed to the pool → running on a blocking thread.
    pub thread_wait: Duration,
    /// Waiting for a pooled connection.
    pub conn_wait: Duration,
    /// Statements and row decoding.
    pub query: Duration,
    /// Thread done → async worker running again.
    pub handback: Duration,
}

impl BlockingCall {
    /// The four stamps of a call: handed over, running, connection in hand, work done, and
    /// the async worker running again (`resumed`).
    pub fn from_stamps(queued: Instant, stamps: BlockingStamps, resumed: Instant) -> Self {
        Self {
            thread_wait: stamps.running.saturating_duration_since(queued),
            conn_wait: stamps.connected.saturating_duration_since(stamps.running),
            query: stamps.done.saturating_duration_since(stamps.connected),
            handback: resumed.saturating_duration_since(stamps.done),
        }
    }
}

/// What the blocking thread stamps (taken only when timing is on).
#[derive(Debug, Clone, Copy)]
pub struct BlockingStamps {
    /// The closure started on the blocking thread.
    pub running: Instant,
    /// The pool handed over a connection.
    pub connected: Instant,
    /// The statements are done and their rows decoded.
    pub done: Instant,
}

/// Turns recording on (once, at start-up, before any request).
pub fn enable() {
    let mut recorder = lock();
    if recorder.is_none() {
        *recorder = Some(Recorder::new());
    }
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether recording is on: the hooks' only cost when it is off.
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Now, if recording is on.
#[inline]
pub fn start() -> Option<Instant> {
    enabled().then(Instant::now)
}

/// Records `phase` as lasting from `since` to now; nothing if `since` is `None` (off).
#[inline]
pub fn record(phase: Phase, since: Option<Instant>) {
    if let Some(since) = since {
        record_duration(phase, since.elapsed());
    }
}

/// Records one blocking call's phases (call only when [`enabled`]).
pub fn record_blocking(call: BlockingCall) {
    if let Some(recorder) = lock().as_mut() {
        recorder.blocking(call);
    }
}

fn record_duration(phase: Phase, duration: Duration) {
    if let Some(recorder) = lock().as_mut() {
        recorder.phase(phase, duration);
        if phase == Phase::Store {
            let thread = std::thread::current();
            *recorder
                .per_thread
                .entry(thread.name().unwrap_or("unnamed").to_owned())
                .or_default() += 1;
        }
    }
}

fn lock() -> MutexGuard<'static, Option<Recorder>> {
    // A panic while recording leaves counts that are still counts.
    RECORDER.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct Recorder {
    phases: BTreeMap<Phase, Histogram<u64>>,
    calls: Vec<[u32; 4]>,
    calls_dropped: u64,
    per_thread: BTreeMap<String, u64>,
}

impl Recorder {
    fn new() -> Self {
        Self {
            phases: BTreeMap::new(),
            calls: Vec::new(),
            calls_dropped: 0,
            per_thread: BTreeMap::new(),
        }
    }

    fn phase(&mut self, phase: Phase, duration: Duration) {
        let histogram = self.phases.entry(phase).or_insert_with(|| {
            Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
        });
        histogram.saturating_record(micros(duration).max(1));
    }

    fn blocking(&mut self, call: BlockingCall) {
        self.phase(Phase::ThreadWait, call.thread_wait);
        self.phase(Phase::ConnWait, call.conn_wait);
        self.phase(Phase::Query, call.query);
        self.phase(Phase::Handback, call.handback);
        if self.calls.len() < MAX_CALLS_KEPT {
            let us = |d: Duration| u32::try_from(micros(d)).unwrap_or(u32::MAX);
            self.calls.push([
                us(call.thread_wait),
                us(call.conn_wait),
                us(call.query),
                us(call.handback),
            ]);
        } else {
            self.calls_dropped += 1;
        }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// What a server appends to its `--timing-file` at shutdown.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub version: u32,
    /// The stack's name.
    pub service: String,
    /// The server's own process id (the suite restarts stacks: one line per process).
    pub pid: u32,
    /// Each phase's distribution.
    pub phases: BTreeMap<Phase, PhaseSummary>,
    /// The slowest 1% of blocking calls, phase by phase (`None` for an async store).
    pub slowest_blocking_calls: Option<SlowCalls>,
    /// Store calls per async worker thread, by thread name.
    pub store_calls_per_thread: BTreeMap<String, u64>,
}

/// One phase's distribution, µs, as its histogram reports it (`p99_us`: the value at
/// quantile 0.99, and so on).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[allow(missing_docs)] // the mean, percentiles and max: named for what they hold
pub struct PhaseSummary {
    /// Times the phase was recorded: one per request, or per blocking call.
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

/// The mean of each phase over the slowest 1% of the blocking calls (by their total, at
/// least one call): where a slow call's time went.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[allow(missing_docs)] // `mean_<phase>_us`: the mean of that `Phase` over `calls`
pub struct SlowCalls {
    /// The fastest total among them.
    pub threshold_us: u64,
    /// Calls in the slowest 1% of the kept ones.
    pub calls: u64,
    /// The mean of their totals (the four blocking phases summed).
    pub mean_total_us: f64,
    pub mean_thread_wait_us: f64,
    pub mean_conn_wait_us: f64,
    pub mean_query_us: f64,
    pub mean_handback_us: f64,
    /// Calls recorded beyond the kept ones, not in the breakdown (their phases are in the
    /// histograms).
    pub calls_not_kept: u64,
}

/// The report of what was recorded so far (empty when recording was never on).
pub fn report(service: &str) -> Report {
    let recorder = lock();
    let empty = Recorder::new();
    let recorder = recorder.as_ref().unwrap_or(&empty);
    let phases = recorder
        .phases
        .iter()
        .map(|(phase, histogram)| {
            let summary = PhaseSummary {
                count: histogram.len(),
                mean_us: histogram.mean(),
                p50_us: histogram.value_at_quantile(0.50),
                p99_us: histogram.value_at_quantile(0.99),
                p999_us: histogram.value_at_quantile(0.999),
                max_us: histogram.max(),
            };
            (*phase, summary)
        })
        .collect();
    Report {
        version: REPORT_VERSION,
        service: service.to_owned(),
        pid: std::process::id(),
        phases,
        slowest_blocking_calls: slow_calls(&recorder.calls, recorder.calls_dropped),
        store_calls_per_thread: recorder.per_thread.clone(),
    }
}

fn slow_calls(calls: &[[u32; 4]], calls_not_kept: u64) -> Option<SlowCalls> {
    if calls.is_empty() {
        return None;
    }
    let total = |call: &[u32; 4]| call.iter().map(|&us| u64::from(us)).sum::<u64>();
    // The slowest 1% (at least one call), by total.
    let mut by_total: Vec<&[u32; 4]> = calls.iter().collect();
    by_total.sort_unstable_by_key(|call| std::cmp::Reverse(total(call)));
    let slow = &by_total[..calls.len().div_ceil(100)];
    let n = slow.len() as f64;
    let mean = |phase: usize| slow.iter().map(|call| f64::from(call[phase])).sum::<f64>() / n;
    Some(SlowCalls {
        threshold_us: slow.last().map_or(0, |call| total(call)),
        calls: slow.len() as u64,
        mean_total_us: slow.iter().map(|call| total(call) as f64).sum::<f64>() / n,
        mean_thread_wait_us: mean(0),
        mean_conn_wait_us: mean(1),
        mean_query_us: mean(2),
        mean_handback_us: mean(3),
        calls_not_kept,
    })
}

/// Appends the report as one JSON line to `path`.
pub fn append_report(path: &Path, service: &str) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(&report(service)).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    // One write: processes of a suite appending to one file do not interleave.
    file.write_all(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocking_call_is_split_at_its_stamps() {
        let queued = Instant::now();
        let ms = Duration::from_millis;
        let stamps = BlockingStamps {
            running: queued + ms(5),
            connected: queued + ms(7),
            done: queued + ms(10),
        };
        let call = BlockingCall::from_stamps(queued, stamps, queued + ms(11));
        assert_eq!(
            call,
            BlockingCall { thread_wait: ms(5), conn_wait: ms(2), query: ms(3), handback: ms(1) }
        );
    }

    #[test]
    fn the_slowest_percent_is_broken_down_by_its_own_phases() {
        // 990 fast calls (query only) and 10 slow ones that waited for a thread, mixed.
        let mut calls = vec![[0, 0, 100, 0]; 990];
        for i in 0..10 {
            calls.insert(i * 97, [50_000, 10, 100, 20]);
        }
        let slow = slow_calls(&calls, 0).unwrap();
        assert_eq!(slow.calls, 10);
        assert_eq!(slow.threshold_us, 50_130);
        assert_eq!(slow.mean_thread_wait_us, 50_000.0);
        assert_eq!(slow.mean_conn_wait_us, 10.0);
        assert_eq!(slow.mean_query_us, 100.0);
        assert_eq!(slow.mean_handback_us, 20.0);
        assert!(slow_calls(&[], 0).is_none());
        // Fewer than 100 calls: the slowest one.
        let one = slow_calls(&[[1, 0, 0, 0], [5, 0, 0, 0]], 0).unwrap();
        assert_eq!((one.calls, one.threshold_us), (1, 5));
    }

    #[test]
    fn recording_is_off_until_enabled_and_the_report_counts_what_was_recorded() {
        // Off: hooks do nothing.
        assert!(start().is_none());
        record(Phase::Store, None);
        assert!(report("s").phases.is_empty());

        enable();
        for _ in 0..3 {
            let since = start();
            assert!(since.is_some());
            record(Phase::Store, since);
        }
        let queued = Instant::now();
        let stamps = BlockingStamps { running: queued, connected: queued, done: queued };
        record_blocking(BlockingCall::from_stamps(queued, stamps, queued));
        let report = report("s");
        assert_eq!(report.phases[&Phase::Store].count, 3);
        assert_eq!(report.phases[&Phase::ThreadWait].count, 1);
        assert_eq!(report.store_calls_per_thread.values().sum::<u64>(), 3);
        assert_eq!(report.slowest_blocking_calls.unwrap().calls, 1);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("timing.jsonl");
        append_report(&file, "s").unwrap();
        append_report(&file, "s").unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 2, "one line per report: {text}");
        let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(line["version"], REPORT_VERSION);
        assert_eq!(line["phases"]["store"]["count"], 3);
        assert_eq!(line["slowest_blocking_calls"]["calls"], 1);
    }
}
