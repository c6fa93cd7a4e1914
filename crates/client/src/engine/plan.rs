//! What a window of load is asked to be: its plan (connections, phases, closed or open
//! loop), how its phases settle, the live count of answers, and the hooks at its edges.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How to load one target.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Virtual users (connections).
    pub connections: usize,
    /// Client threads.
    pub workers: usize,
    /// Warm-up before the measurement.
    pub warmup: Duration,
    /// The measurement window.
    pub duration: Duration,
    /// A request without a complete answer after this is a timeout error.
    pub request_timeout: Duration,
    /// Total requests per second in open-loop mode; `None` is closed loop. In an open loop,
    /// `connections` is the most the client opens (a pool, opened as needed).
    pub rate_rps: Option<f64>,
    /// How an open loop's requests arrive.
    pub arrivals: Arrivals,
    /// Set to stop early (Ctrl-C); the report then covers what was measured.
    pub stop: Arc<AtomicBool>,
    /// Completed requests so far, for a live display; each thread adds to its own slot.
    pub live: Option<Arc<LiveCounter>>,
    /// Phases that end by what was answered as well as by the clock; `None`: `warmup` and
    /// `duration` exactly (clients on several hosts keep a shared schedule that way).
    pub settle: Option<Settle>,
    /// Send exactly this many requests in the window (a closed loop without settling or
    /// warm-up): the window ends when all are answered, or at `duration` (then the rest are
    /// not sent).
    pub requests: Option<u64>,
}

/// How an open loop's requests arrive (the results record it by these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly spaced: one every `1 / rate`.
    #[default]
    Constant,
    /// A Poisson process of the same mean rate (exponential gaps, a seeded generator).
    Poisson,
}

impl Arrivals {
    /// As the results record it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::Poisson => "poisson",
        }
    }
}

/// When the warm-up and the window end by what was answered, not only by the clock: the
/// rule that keeps a short window meaningful for slow requests (a request cycle of a closed
/// loop is `connections / rate`, which for the slowest scenario at 256 connections can be
/// as long as a whole short window: `aggregateReport` in the run
/// `2713e02:summary/results/2026-12-01T18-45-30Z.json`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// The warm-up lasts at least [`LoadPlan::warmup`] and until every connection has had an
    /// answer (the first, synchronised burst is over and the queue is in its steady order),
    /// but at most this long.
    pub warmup_max: Duration,
    /// The window lasts at least [`LoadPlan::duration`] and until it holds this many
    /// answers…
    pub window_min_completions: u64,
    /// …but at most this long.
    pub window_max: Duration,
}

/// Requests completed so far, one cache line per client thread (no contention).
#[derive(Debug, Default)]
pub struct LiveCounter {
    slots: Vec<Slot>,
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Slot(std::sync::atomic::AtomicU64);

impl LiveCounter {
    /// A counter for `threads` client threads.
    pub fn new(threads: usize) -> Self {
        Self { slots: (0..threads.max(1)).map(|_| Slot::default()).collect() }
    }

    /// Requests completed by all threads.
    pub fn total(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }

    pub(super) fn add(&self, thread: usize) {
        if let Some(slot) = self.slots.get(thread) {
            slot.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Called on the orchestrating thread at the measurement's edges (to read CPU counters).
pub trait WindowHooks {
    /// The measurement starts.
    fn measure_started(&mut self) {}
    /// The measurement ends (drain follows).
    fn measure_ended(&mut self) {}
}

impl WindowHooks for () {}

/// Both, in order.
impl<A: WindowHooks, B: WindowHooks> WindowHooks for (A, B) {
    fn measure_started(&mut self) {
        self.0.measure_started();
        self.1.measure_started();
    }
    fn measure_ended(&mut self) {
        self.0.measure_ended();
        self.1.measure_ended();
    }
}

/// Hooks that may be absent.
impl<H: WindowHooks> WindowHooks for Option<H> {
    fn measure_started(&mut self) {
        if let Some(hooks) = self {
            hooks.measure_started();
        }
    }
    fn measure_ended(&mut self) {
        if let Some(hooks) = self {
            hooks.measure_ended();
        }
    }
}
