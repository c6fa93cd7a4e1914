//! The client engine: HTTP/1.1 keep-alive load with exact windows.
//!
//! `workers` threads, each running its own current-thread tokio runtime, share the
//! connections round-robin; each connection is one task, a closed loop (send, read the whole
//! response, send again) or, with a rate, an open loop that measures from the intended send
//! time (no coordinated omission, as wrk2). Nothing is shared between threads while the load
//! runs: requests are pre-built bytes picked by index, responses are parsed in place from a
//! per-connection buffer, and every count and histogram belongs to one thread and is merged
//! once at the end.
//!
//! Time is split into three phases by when a response *completes*: warm-up, measurement
//! (histograms, timeline and throughput come only from here), and drain — requests sent
//! before the measurement closed and answered after. Drained responses are counted apart, so
//! a write audit can add up everything the server was asked to do.

mod conn;
pub mod picker;
pub mod stats;

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use conn::Response;

use conn::{Connection, ReadBuffer};
pub use picker::Picker;
pub use stats::{ErrorKind, LoadReport, Outcome, Phase, PhaseCounts};

use stats::WorkerStats;

/// What to send and how to judge the answers.
pub trait Workload: Send + Sync + 'static {
    /// The pre-built request for pick `pick`.
    fn request(&self, pick: usize) -> &[u8];
    /// The request picker of connection `index` (of `connections`).
    fn picker(&self, index: usize, connections: usize) -> Picker;
    /// The cheap check run on every response.
    fn classify(&self, pick: usize, response: &Response<'_>) -> Outcome;
    /// The full check run on a sample of the responses `classify` accepted.
    fn validate(&self, pick: usize, response: &Response<'_>) -> Result<(), String>;
}

/// How to load one target.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Where to connect.
    pub addr: SocketAddr,
    /// Connections, one per virtual user.
    pub connections: usize,
    /// Client threads.
    pub workers: usize,
    /// Warm-up before the measurement.
    pub warmup: Duration,
    /// The measurement window.
    pub duration: Duration,
    /// A request without a complete response after this is a timeout error.
    pub request_timeout: Duration,
    /// Total requests per second in open-loop mode; `None` is closed loop.
    pub rate_rps: Option<f64>,
    /// Fully validate one accepted response in this many per connection (0: never).
    pub validate_every: u64,
    /// Set to stop early (Ctrl-C); the report then covers what was measured.
    pub stop: Arc<AtomicBool>,
}

/// Called on the orchestrating thread at the measurement's edges (to read CPU counters).
pub trait WindowHooks {
    /// The measurement starts.
    fn measure_started(&mut self) {}
    /// The measurement ends (drain follows).
    fn measure_ended(&mut self) {}
}

impl WindowHooks for () {}

/// How long a failed connect waits before the next attempt, to not spin on a dead target.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(20);
/// How long the threads get to connect before the warm-up starts.
const START_DELAY: Duration = Duration::from_millis(200);

struct Shared {
    plan: LoadPlan,
    workload: Arc<dyn Workload>,
    start: Instant,
    measure_start: Instant,
    measure_end: Instant,
}

/// Runs `plan` with `workload`, blocking the calling thread until the drain is over.
pub fn run(
    plan: &LoadPlan,
    workload: Arc<dyn Workload>,
    hooks: &mut dyn WindowHooks,
) -> LoadReport {
    let start = Instant::now() + START_DELAY;
    let measure_start = start + plan.warmup;
    let measure_end = measure_start + plan.duration;
    let shared =
        Arc::new(Shared { plan: plan.clone(), workload, start, measure_start, measure_end });
    let workers = plan.workers.clamp(1, plan.connections.max(1));
    let threads: Vec<_> = (0..workers)
        .map(|worker| {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("loadgen-{worker}"))
                .spawn(move || run_worker(&shared, worker, workers))
                .expect("spawn a client thread")
        })
        .collect();

    sleep_until(measure_start, &plan.stop);
    hooks.measure_started();
    sleep_until(measure_end, &plan.stop);
    hooks.measure_ended();

    let mut report = LoadReport::new(plan.duration);
    for thread in threads {
        report.merge(thread.join().expect("a client thread panicked"));
    }
    report.stopped_early = plan.stop.load(Ordering::Relaxed);
    report
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

fn run_worker(shared: &Arc<Shared>, worker: usize, workers: usize) -> WorkerStats {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let local = tokio::task::LocalSet::new();
    let stats = Rc::new(std::cell::RefCell::new(WorkerStats::new(shared.plan.duration)));
    local.block_on(&runtime, async {
        let mut tasks = Vec::new();
        for index in (worker..shared.plan.connections).step_by(workers) {
            let shared = Arc::clone(shared);
            let stats = Rc::clone(&stats);
            tasks
                .push(tokio::task::spawn_local(async move { drive(&shared, &stats, index).await }));
        }
        for task in tasks {
            let _ = task.await;
        }
    });
    Rc::try_unwrap(stats)
        .map(|cell| cell.into_inner())
        .unwrap_or_else(|_| unreachable!("tasks are done"))
}

impl Shared {
    /// The index of `at`'s second in the measurement timeline.
    fn second(&self, at: Instant) -> usize {
        at.saturating_duration_since(self.measure_start).as_secs() as usize
    }

    fn phase(&self, at: Instant) -> Phase {
        if at < self.measure_start {
            Phase::Warmup
        } else if at < self.measure_end {
            Phase::Measure
        } else {
            Phase::Drain
        }
    }
}

/// One virtual user: a connection that sends, reads the whole answer, and sends again.
async fn drive(shared: &Shared, stats: &std::cell::RefCell<WorkerStats>, index: usize) {
    let plan = &shared.plan;
    let mut picker = shared.workload.picker(index, plan.connections);
    let mut buffer = ReadBuffer::new();
    let mut stream: Option<Connection> = connect(plan.addr, plan.request_timeout).await.ok();
    // Spread the sampled validations over the connections' request counts.
    let mut until_validation =
        plan.validate_every.max(1) - (index as u64 % plan.validate_every.max(1));
    let interval =
        plan.rate_rps.map(|rate| Duration::from_secs_f64(plan.connections as f64 / rate));
    let mut intended = shared.start
        + interval.map_or(Duration::ZERO, |i| i.mul_f64(index as f64 / plan.connections as f64));
    tokio::time::sleep_until(shared.start.into()).await;
    // One timer per connection, pushed later before each request: tokio re-arms a timer whose
    // deadline only moves later with an atomic store, where a fresh `timeout` per request
    // would insert into and remove from the timer wheel every time.
    let watchdog = tokio::time::sleep_until((shared.measure_end + plan.request_timeout).into());
    tokio::pin!(watchdog);

    loop {
        if plan.stop.load(Ordering::Relaxed) {
            break;
        }
        // When this request counts as sent: now (closed loop) or its slot (open loop).
        let sent = match interval {
            None => Instant::now(),
            Some(interval) => {
                let slot = intended;
                intended += interval;
                if slot > Instant::now() {
                    tokio::time::sleep_until(slot.into()).await;
                }
                slot
            }
        };
        if sent >= shared.measure_end {
            break;
        }
        let connection = match stream.as_ref() {
            Some(connection) => connection,
            None => match connect(plan.addr, plan.request_timeout).await {
                Ok(connection) => stream.insert(connection),
                Err(kind) => {
                    let now = Instant::now();
                    stats.borrow_mut().record(
                        shared.phase(now),
                        shared.second(now),
                        Outcome::Error(kind),
                        0,
                    );
                    tokio::time::sleep(RECONNECT_BACKOFF).await;
                    continue;
                }
            },
        };
        let pick = picker.pick();
        buffer.clear();
        let exchange = conn::exchange(connection, shared.workload.request(pick), &mut buffer);
        watchdog.as_mut().reset((sent + plan.request_timeout).into());
        let result = tokio::select! {
            biased;
            head = exchange => Ok(head),
            () = &mut watchdog => Err(()),
        };
        let done = Instant::now();
        let latency_us = done.saturating_duration_since(sent).as_micros() as u64;
        let outcome = match result {
            Err(_) => {
                stream = None;
                Outcome::Error(ErrorKind::Timeout)
            }
            Ok(Err(kind)) => {
                stream = None;
                Outcome::Error(kind)
            }
            Ok(Ok(head)) => {
                let response = head.response(&buffer);
                let mut outcome = shared.workload.classify(pick, &response);
                if plan.validate_every > 0 && outcome == Outcome::Ok {
                    until_validation -= 1;
                    if until_validation == 0 {
                        until_validation = plan.validate_every;
                        if let Err(problem) = shared.workload.validate(pick, &response) {
                            stats.borrow_mut().note_invalid(problem);
                            outcome = Outcome::Error(ErrorKind::InvalidBody);
                        }
                    }
                }
                if head.close {
                    stream = None;
                }
                stats.borrow_mut().record_status(shared.phase(done), response.status);
                outcome
            }
        };
        stats.borrow_mut().record(shared.phase(done), shared.second(done), outcome, latency_us);
    }
}

async fn connect(addr: SocketAddr, timeout: Duration) -> Result<Connection, ErrorKind> {
    match tokio::time::timeout(timeout, Connection::open(addr)).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(_)) => Err(ErrorKind::Connect),
        Err(_) => Err(ErrorKind::Timeout),
    }
}
