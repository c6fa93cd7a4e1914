//! The client engine: closed- or open-loop load with exact windows.
//!
//! `workers` threads, each running its own current-thread tokio runtime, share the virtual
//! users round-robin; each user is one task that does a request, waits for the whole
//! answer, and does the next (closed loop). With a rate, each thread instead offers its
//! share of requests at their intended times over connections opened as needed, and times
//! each from when it was due (the open loop of `open.rs`: no coordinated omission, as wrk2).
//! What a request *is* comes from a [`Client`]: an HTTP/1.1 exchange on a keep-alive
//! connection ([`HttpClient`]), or a store call for the database ceiling.
//!
//! Nothing is shared between threads while the load runs: HTTP requests are pre-built bytes
//! picked by index, responses are parsed in place from a per-connection buffer, and every
//! count and histogram belongs to one thread and is merged once at the end.
//!
//! Time is split into three phases by when a closed loop's request *completes*: warm-up,
//! measurement (histograms, timeline and throughput come only from here), and drain —
//! requests started before the measurement closed and answered after. Drained requests are
//! counted apart, so a write audit can add up everything the server was asked to do; the
//! drain ends when every request has its answer or after a grace (`drain.rs`), and what is
//! still in flight then is counted as unanswered. An
//! open loop's requests count in the phase they were *due* in, so that the window's
//! latencies are those of exactly the requests it offered, the stalled ones included; its
//! throughput is still what completed in the window.

pub(crate) mod conn;
mod drain;
mod http_client;
mod open;
mod pacer;
pub mod picker;
mod plan;
pub mod stats;

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use conn::Response;
pub use drain::{DRAIN_GRACE_MIN, grace as drain_grace};
pub use http_client::{HttpClient, HttpConnection, run_http};
pub use picker::Picker;
pub use plan::{Arrivals, LiveCounter, LoadPlan, Settle, WindowHooks};
pub use stats::{ErrorKind, LoadReport, OpenCounts, Outcome, Phase, PhaseCounts};

use conn::{Connection, ReadBuffer};
use stats::WorkerStats;

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
/// answered in time ([`stats::OpenCounts::in_time`]), and may still be sent: a tenth of the
/// window, at least 50 ms — long enough for any answer of a server that keeps up (its p99 at
/// equal load: `stacks[].equal_load[].latency_ok_us` in the kept
/// `summary/results/2026-12-01T18-45-30Z.json`), short against the backlog of one that does
/// not.
pub fn open_loop_grace(window: Duration) -> Duration {
    (window / 10).max(Duration::from_millis(50))
}

/// How long a failed connect waits before the next attempt, to not spin on a dead target.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(20);
/// How long the threads get to start and connect before a clock-only warm-up starts. A
/// settled warm-up needs none: it waits for every connection's first answer by itself.
pub const START_DELAY: Duration = Duration::from_millis(100);
/// How far ahead a settled phase boundary is announced: the client threads read it as they
/// record, and one that reads it just before it is published must still see its request
/// on the right side.
const BOUNDARY_LEAD: Duration = Duration::from_millis(5);
/// How often the orchestrating thread looks whether a settled phase may end.
const SETTLE_POLL: Duration = Duration::from_millis(2);

/// The phases of one run. The window's edges are nanoseconds after `start`, `u64::MAX`
/// until known: fixed at the start for a clock-only plan, published by the orchestrating
/// thread for a settled one.
struct Window {
    plan: LoadPlan,
    start: Instant,
    measure_start_ns: AtomicU64,
    measure_end_ns: AtomicU64,
    /// Requests the window may still send ([`LoadPlan::requests`]).
    unsent: Option<AtomicU64>,
    drain: drain::Drain,
}

impl Window {
    fn new(plan: &LoadPlan, start: Instant, workers: usize) -> Self {
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
    fn may_send(&self, at: Instant) -> bool {
        let Some(unsent) = &self.unsent else { return true };
        if self.phase(at) == Phase::Warmup {
            return true;
        }
        unsent.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok()
    }

    fn offset(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }

    fn at(&self, offset_ns: u64) -> Option<Instant> {
        (offset_ns != u64::MAX).then(|| self.start + Duration::from_nanos(offset_ns))
    }

    fn publish_start(&self, at: Instant) {
        self.measure_start_ns.store(self.offset(at), Ordering::Release);
    }

    fn publish_end(&self, at: Instant) {
        self.measure_end_ns.store(self.offset(at), Ordering::Release);
    }

    fn measure_start(&self) -> Option<Instant> {
        self.at(self.measure_start_ns.load(Ordering::Acquire))
    }

    fn measure_end(&self) -> Option<Instant> {
        self.at(self.measure_end_ns.load(Ordering::Acquire))
    }

    fn phase(&self, at: Instant) -> Phase {
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
    fn overlap_us(&self, from: Instant, to: Instant) -> u64 {
        let Some(measure_start) = self.measure_start() else { return 0 };
        let start = from.max(measure_start);
        let end = self.measure_end().map_or(to, |end| to.min(end));
        end.saturating_duration_since(start).as_micros() as u64
    }

    /// The index of `at`'s second in the measurement timeline.
    fn second(&self, at: Instant) -> usize {
        self.measure_start().map_or(0, |s| at.saturating_duration_since(s).as_secs() as usize)
    }

    /// The longest the window can last.
    fn longest(&self) -> Duration {
        self.plan.settle.map_or(self.plan.duration, |s| s.window_max.max(self.plan.duration))
    }
}

/// Runs `plan` with one client per thread from `factory`, blocking the calling thread
/// until the drain is over. Fails if a client cannot start.
pub fn run<C, F>(
    plan: &LoadPlan,
    factory: F,
    hooks: &mut dyn WindowHooks,
) -> Result<LoadReport, String>
where
    C: Client,
    F: Fn(usize) -> C + Send + Sync + 'static,
{
    let workers = plan.workers.clamp(1, plan.connections.max(1));
    let mut plan = plan.clone();
    let live = Arc::clone(plan.live.get_or_insert_with(|| Arc::new(LiveCounter::new(workers))));
    let warmed = Arc::new(LiveCounter::new(workers));
    // A closed loop on the clock gives its threads time to connect before the warm-up; a
    // settled one waits for their first answers instead, and an open loop opens its
    // connections as its requests come due, in the warm-up.
    let on_the_clock = plan.settle.is_none() && plan.rate_rps.is_none();
    let start = Instant::now() + if on_the_clock { START_DELAY } else { Duration::ZERO };
    let window = Arc::new(Window::new(&plan, start, workers));
    let factory = Arc::new(factory);
    let threads: Vec<_> = (0..workers)
        .map(|worker| {
            let window = Arc::clone(&window);
            let factory = Arc::clone(&factory);
            let warmed = Arc::clone(&warmed);
            std::thread::Builder::new()
                .name(format!("loadgen-{worker}"))
                .spawn(move || run_worker(&window, factory(worker), worker, workers, &warmed))
                .expect("spawn a client thread")
        })
        .collect();

    let stop = &plan.stop;
    let settle = plan.settle;
    let (mut unsettled_warmup, mut window_capped) = (None, false);
    let measure_start = match settle {
        None => start + plan.warmup,
        Some(settle) => {
            let connections = plan.connections as u64;
            let latest = start + settle.warmup_max.max(plan.warmup);
            sleep_until(start + plan.warmup, stop);
            if !settle_until(|| warmed.total() >= connections, latest, stop) {
                unsettled_warmup = Some(warmed.total());
            }
            let at = Instant::now() + BOUNDARY_LEAD;
            window.publish_start(at);
            at
        }
    };
    sleep_until(measure_start, stop);
    hooks.measure_started();
    let answered_before = live.total();
    let measure_end = match (settle, plan.requests) {
        (None, Some(requests)) => {
            // Every answer since the window opened counts, so a warm-up's last ones would
            // end it early: `loadgen http -n` has no warm-up.
            let latest = measure_start + plan.duration;
            let answered = || live.total() - answered_before >= requests;
            settle_until(answered, latest, stop);
            let at = Instant::now() + BOUNDARY_LEAD;
            window.publish_end(at);
            at
        }
        (None, None) => measure_start + plan.duration,
        (Some(settle), _) => {
            let latest = measure_start + settle.window_max.max(plan.duration);
            sleep_until(measure_start + plan.duration, stop);
            let enough = || live.total() - answered_before >= settle.window_min_completions;
            window_capped = !settle_until(enough, latest, stop);
            let at = Instant::now() + BOUNDARY_LEAD;
            window.publish_end(at);
            at
        }
    };
    sleep_until(measure_end, stop);
    // Stopped (Ctrl-C) before its end, the window is as long as it ran, so that its rates
    // are of the time measured (`loadgen http` prints them; the suite never ranks it).
    let measure_end = measure_end.min(Instant::now().max(measure_start));
    hooks.measure_ended();
    // The drain: until every thread is done, or the grace after the window runs out.
    while !threads.iter().all(std::thread::JoinHandle::is_finished) {
        let grace = drain::grace(window.drain.slowest(), plan.request_timeout);
        if Instant::now() >= measure_end + grace {
            window.drain.give_up();
            break;
        }
        std::thread::sleep(SETTLE_POLL);
    }
    let drain_elapsed = measure_end.elapsed();

    let mut report = LoadReport::new(window.longest());
    if plan.rate_rps.is_some() {
        report.open = Some(stats::OpenCounts::default());
    }
    report.window = measure_end - measure_start;
    report.warmup_elapsed = measure_start - start;
    report.unsettled_warmup = unsettled_warmup;
    report.window_capped = window_capped && !plan.stop.load(Ordering::Relaxed);
    report.drain_elapsed = drain_elapsed;
    let mut failure = None;
    for thread in threads {
        match thread.join().expect("a client thread panicked") {
            Ok(stats) => report.merge(stats),
            Err(error) => failure = Some(error),
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    report.stopped_early = plan.stop.load(Ordering::Relaxed);
    Ok(report)
}

/// Polls `done` until it holds (true), or `latest` passes or `stop` is set (false).
fn settle_until(done: impl Fn() -> bool, latest: Instant, stop: &AtomicBool) -> bool {
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= latest || stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(SETTLE_POLL);
    }
}

fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

fn run_worker<C: Client>(
    window: &Arc<Window>,
    mut client: C,
    worker: usize,
    workers: usize,
    warmed: &Arc<LiveCounter>,
) -> Result<WorkerStats, String> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let local = tokio::task::LocalSet::new();
    let stats = Rc::new(RefCell::new(WorkerStats::new(window.longest())));
    local.block_on(&runtime, async {
        client.start().await?;
        let client = Rc::new(client);
        let load = async {
            if let Some(rate) = window.plan.rate_rps {
                return open::drive(window, &client, &stats, worker, workers, rate).await;
            }
            let mut users = Vec::new();
            for index in (worker..window.plan.connections).step_by(workers) {
                let (window, client, stats, warmed) =
                    (Arc::clone(window), Rc::clone(&client), Rc::clone(&stats), Arc::clone(warmed));
                users.push(tokio::task::spawn_local(async move {
                    drive(&window, &*client, &stats, index, worker, &warmed).await
                }));
            }
            for user in users {
                let _ = user.await;
            }
            Ok(())
        };
        tokio::select! {
            biased;
            done = load => done?,
            // What is still in flight stays counted as such (`WorkerStats::in_flight`).
            () = window.drain.given_up() => {}
        }
        for problem in client.problems() {
            stats.borrow_mut().note_invalid(problem);
        }
        Ok::<(), String>(())
    })?;
    // The tasks given up on hold the stats too.
    drop(local);
    Ok(Rc::try_unwrap(stats)
        .map(RefCell::into_inner)
        .unwrap_or_else(|_| unreachable!("users are done")))
}

/// One virtual user of the closed loop: its next request when the last is answered.
async fn drive<C: Client>(
    window: &Window,
    client: &C,
    stats: &RefCell<WorkerStats>,
    index: usize,
    worker: usize,
    warmed: &LiveCounter,
) {
    let plan = &window.plan;
    let mut answered = false;
    let mut picker = client.picker(index, plan.connections);
    let mut connection = client.connect().await.ok();
    tokio::time::sleep_until(window.start.into()).await;
    // One timer per user, pushed later before each request: tokio re-arms a timer whose
    // deadline only moves later with an atomic store, where a fresh `timeout` per request
    // would insert into and remove from the timer wheel every time.
    let watchdog = tokio::time::sleep_until((window.start + plan.request_timeout).into());
    tokio::pin!(watchdog);

    while !plan.stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        if window.measure_end().is_some_and(|end| sent >= end) || !window.may_send(sent) {
            break;
        }
        let current = match connection.as_mut() {
            Some(current) => current,
            None => match client.connect().await {
                Ok(opened) => connection.insert(opened),
                Err(kind) => {
                    record_connect_error(window, stats, kind);
                    tokio::time::sleep(RECONNECT_BACKOFF).await;
                    continue;
                }
            },
        };
        let pick = picker.pick();
        let exchange =
            exchange(window, client, stats, current, pick, sent, watchdog.as_mut()).await;
        if !exchange.keep_connection {
            connection = None;
        }
        if exchange.answered && !answered {
            answered = true;
            warmed.add(worker);
        }
        let finished = exchange.finished;
        record(window, stats, worker, pick, sent, finished, exchange);
    }
}

/// A connection that could not be opened, counted where it failed.
fn record_connect_error(window: &Window, stats: &RefCell<WorkerStats>, kind: ErrorKind) {
    let now = Instant::now();
    stats.borrow_mut().record(window.phase(now), window.second(now), Outcome::Error(kind), 0, 0);
}

/// How one request ended.
struct Exchange {
    outcome: Outcome,
    status: Option<u16>,
    finished: Instant,
    /// The server answered (whatever it said).
    answered: bool,
    /// The connection can carry the next request.
    keep_connection: bool,
}

/// Request `pick` on `connection`, counted as sent at `sent` (now, or its slot in an open
/// loop) and given up at `sent` + the request timeout (the `watchdog`, re-armed here).
async fn exchange<C: Client>(
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
fn record(
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
