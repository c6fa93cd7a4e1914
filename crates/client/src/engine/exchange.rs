//! What every request of the engine goes through, closed loop or open: the [`Client`] that
//! does it, the phases of the run it is counted in ([`Window`]), and its recording.

use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::conn::Response;
use super::drain;
use super::picker::Picker;
use super::plan::LoadPlan;
use super::stats::{ErrorKind, Outcome, Phase, WorkerStats};

/// One virtual user's way of doing a request. Created once per client thread (inside it),
/// used by that thread's users only, so it needs no locks.
pub trait Client: 'static {
    /// Per-user state (an HTTP connection and its buffer).
    type Connection;

    /// Prepares the thread (opens a pool); called once, inside the thread's runtime.
    fn start(&mut self) -> impl Future<Output = Result<(), String>> {
        async { Ok(()) }
    }

    /// The request picker of user `index` (of `users`).
    fn picker(&self, index: usize, users: usize) -> Picker;

    /// Opens a connection.
    fn connect(&self) -> impl Future<Output = Result<Self::Connection, ErrorKind>>;

    /// Does request `pick`; `Err` means the connection is unusable and must be reopened.
    fn call(
        &self,
        connection: &mut Self::Connection,
        pick: usize,
    ) -> impl Future<Output = Result<Done, ErrorKind>>;

    /// The first validation problems seen (for the report).
    fn problems(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A completed request as the client judged it.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    /// How it ended.
    pub outcome: Outcome,
    /// The HTTP status, if there was one.
    pub status: Option<u16>,
    /// The connection must be reopened (the server said `Connection: close`).
    pub close: bool,
}

/// What to send over HTTP and how to judge the answers.
pub trait Workload: Send + Sync + 'static {
    /// The pre-built request for pick `pick`.
    fn request(&self, pick: usize) -> &[u8];
    /// The request picker of user `index` (of `users`).
    fn picker(&self, index: usize, users: usize) -> Picker;
    /// The cheap check run on every response.
    fn classify(&self, pick: usize, response: &Response<'_>) -> Outcome;
    /// The full check run on a sample of the responses `classify` accepted.
    fn validate(&self, pick: usize, response: &Response<'_>) -> Result<(), String>;
}

/// How long after an open loop's window its requests due in the window still count as
/// answered in time ([`super::stats::OpenCounts::in_time`]), and may still be sent: a tenth of the
/// window, at least 50 ms — long enough for any answer of a server that keeps up (its p99 at
/// equal load: `stacks[].equal_load[].latency_ok_us` in the run
/// `2713e02:summary/results/2026-12-01T18-45-30Z.json`), short against the backlog of one that does
/// not.
pub fn open_loop_grace(window: Duration) -> Duration {
    (window / 10).max(Duration::from_millis(50))
}

/// How long a failed connect waits before the next attempt, to not spin on a dead target.
pub(super) const RECONNECT_BACKOFF: Duration = Duration::from_millis(20);
/// The phases of one run. The window's edges are nanoseconds after `start`, `u64::MAX`
/// until known: fixed at the start for a clock-only plan, published by the orchestrating
/// thread for a settled one.
pub(super) struct Window {
    pub(super) plan: LoadPlan,
    pub(super) start: Instant,
    pub(super) measure_start_ns: AtomicU64,
    pub(super) measure_end_ns: AtomicU64,
    /// Requests the window may still send ([`LoadPlan::requests`]).
    pub(super) unsent: Option<AtomicU64>,
    pub(super) drain: drain::Drain,
}

impl Window {
    pub(super) fn new(plan: &LoadPlan, start: Instant, workers: usize) -> Self {
        let window = Self {
            plan: plan.clone(),
            start,
            measure_start_ns: AtomicU64::new(u64::MAX),
            measure_end_ns: AtomicU64::new(u64::MAX),
            unsent: plan.requests.map(AtomicU64::new),
            drain: drain::Drain::new(workers),
        };
        if plan.settle.is_none() {
            window.publish_start(start + plan.warmup);
            // A counted window ends when its requests are answered (`run` publishes it).
            if plan.requests.is_none() {
                window.publish_end(start + plan.warmup + plan.duration);
            }
        }
        window
    }

    /// Whether one more request may be sent at `at` (takes it from the count, if any). Only
    /// requests sent in the window are counted: those of the warm-up are free.
    pub(super) fn may_send(&self, at: Instant) -> bool {
        let Some(unsent) = &self.unsent else { return true };
        if self.phase(at) == Phase::Warmup {
            return true;
        }
        unsent.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok()
    }

    pub(super) fn offset(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }

    pub(super) fn at(&self, offset_ns: u64) -> Option<Instant> {
        (offset_ns != u64::MAX).then(|| self.start + Duration::from_nanos(offset_ns))
    }

    pub(super) fn publish_start(&self, at: Instant) {
        self.measure_start_ns.store(self.offset(at), Ordering::Release);
    }

    pub(super) fn publish_end(&self, at: Instant) {
        self.measure_end_ns.store(self.offset(at), Ordering::Release);
    }

    pub(super) fn measure_start(&self) -> Option<Instant> {
        self.at(self.measure_start_ns.load(Ordering::Acquire))
    }

    pub(super) fn measure_end(&self) -> Option<Instant> {
        self.at(self.measure_end_ns.load(Ordering::Acquire))
    }

    pub(super) fn phase(&self, at: Instant) -> Phase {
        let offset = self.offset(at);
        if offset < self.measure_start_ns.load(Ordering::Acquire) {
            Phase::Warmup
        } else if offset < self.measure_end_ns.load(Ordering::Acquire) {
            Phase::Measure
        } else {
            Phase::Drain
        }
    }

    /// How much of `[from, to]` lies inside the measurement window, µs.
    pub(super) fn overlap_us(&self, from: Instant, to: Instant) -> u64 {
        let Some(measure_start) = self.measure_start() else { return 0 };
        let start = from.max(measure_start);
        let end = self.measure_end().map_or(to, |end| to.min(end));
        end.saturating_duration_since(start).as_micros() as u64
    }

    /// The index of `at`'s second in the measurement timeline.
    pub(super) fn second(&self, at: Instant) -> usize {
        self.measure_start().map_or(0, |s| at.saturating_duration_since(s).as_secs() as usize)
    }

    /// The longest the window can last.
    pub(super) fn longest(&self) -> Duration {
        self.plan.settle.map_or(self.plan.duration, |s| s.window_max.max(self.plan.duration))
    }
}

/// A connection that could not be opened, counted where it failed.
pub(super) fn record_connect_error(window: &Window, stats: &RefCell<WorkerStats>, kind: ErrorKind) {
    let now = Instant::now();
    stats.borrow_mut().record(window.phase(now), window.second(now), Outcome::Error(kind), 0, 0);
}

/// How one request ended.
pub(super) struct Exchange {
    pub(super) outcome: Outcome,
    pub(super) status: Option<u16>,
    pub(super) finished: Instant,
    /// The server answered (whatever it said).
    pub(super) answered: bool,
    /// The connection can carry the next request.
    pub(super) keep_connection: bool,
}

/// Request `pick` on `connection`, counted as sent at `sent` (now, or its slot in an open
/// loop) and given up at `sent` + the request timeout (the `watchdog`, re-armed here).
pub(super) async fn exchange<C: Client>(
    window: &Window,
    client: &C,
    stats: &RefCell<WorkerStats>,
    connection: &mut C::Connection,
    pick: usize,
    sent: Instant,
    mut watchdog: std::pin::Pin<&mut tokio::time::Sleep>,
) -> Exchange {
    watchdog.as_mut().reset((sent + window.plan.request_timeout).into());
    // In flight until it ends here; a request the drain gives up on never does.
    stats.borrow_mut().note_sent();
    let result = tokio::select! {
        biased;
        done = client.call(connection, pick) => Some(done),
        () = &mut watchdog => None,
    };
    let finished = Instant::now();
    stats.borrow_mut().note_ended();
    match result {
        None => Exchange {
            outcome: Outcome::Error(ErrorKind::Timeout),
            status: None,
            finished,
            answered: false,
            keep_connection: false,
        },
        Some(Err(kind)) => Exchange {
            outcome: Outcome::Error(kind),
            status: None,
            finished,
            answered: false,
            keep_connection: false,
        },
        Some(Ok(done)) => Exchange {
            outcome: done.outcome,
            status: done.status,
            finished,
            answered: true,
            keep_connection: !done.close,
        },
    }
}

/// Counts a finished request, its latency from `sent`, in the phase and second of `counted_at`
/// (when it finished, in a closed loop; when it was due, in an open one).
pub(super) fn record(
    window: &Window,
    stats: &RefCell<WorkerStats>,
    worker: usize,
    pick: usize,
    sent: Instant,
    counted_at: Instant,
    exchange: Exchange,
) {
    let Exchange { outcome, status, finished, .. } = exchange;
    let latency_us = finished.saturating_duration_since(sent).as_micros() as u64;
    let phase = window.phase(counted_at);
    let mut stats = stats.borrow_mut();
    if matches!(outcome, Outcome::Ok | Outcome::Rejected) && stats.note_answer_us(latency_us) {
        window.drain.note_slowest(worker, latency_us);
    }
    if let Some(status) = status {
        stats.record_status(phase, status);
    }
    if outcome == Outcome::Rejected {
        stats.note_rejected(phase, pick);
    }
    let second = window.second(counted_at);
    stats.record(phase, second, outcome, latency_us, window.overlap_us(sent, finished));
    if let Some(live) = &window.plan.live {
        live.add(worker);
    }
}
