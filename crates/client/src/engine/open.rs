//! The open loop: requests offered at a fixed rate whatever the server does, each timed from
//! when it should have been sent (no coordinated omission, as wrk2 and k6's
//! constant-arrival-rate), over a pool of connections opened as needed up to a cap.
//!
//! Each client thread offers `rate / threads` and owns `cap / threads` connections. A
//! scheduler task puts every request on a queue at its intended time; connection tasks take
//! them off one at a time. A request that finds every connection busy and the cap reached
//! waits on the queue — its latency still counts from its intended time — and the cell says
//! the cap was hit. What the client itself owes is measured apart: the scheduler's lateness
//! against the schedule (the send lag), so that a slow client is told from a slow server.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bookstore_fixture::random::SplitMix64;
use tokio::sync::Notify;

use super::exchange::{
    Client, Exchange, RECONNECT_BACKOFF, Window, exchange, open_loop_grace, record,
    record_connect_error,
};
use super::pacer::Pacer;
use super::picker::Picker;
use super::plan::Arrivals;
use super::stats::{ErrorKind, Outcome, WorkerStats};

/// What the scheduler and the connections share on one client thread.
struct Queue {
    /// Intended send times not yet taken by a connection.
    waiting: RefCell<VecDeque<Instant>>,
    /// Wakes an idle connection for a queued request, or all of them when the schedule ends.
    ready: Notify,
    /// Connections waiting for a request and not yet woken for one.
    idle: Cell<usize>,
    /// The schedule is over: connections finish what is queued and stop.
    done: Cell<bool>,
}

impl Queue {
    /// The next request to send, waiting for one; `None` once the schedule is over and
    /// nothing is left.
    async fn next(&self) -> Option<Instant> {
        loop {
            if let Some(intended) = self.waiting.borrow_mut().pop_front() {
                return Some(intended);
            }
            if self.done.get() {
                return None;
            }
            // The scheduler takes this back when it wakes us (one thread: no race between
            // the count and the wait, which registers on its first poll, right here).
            self.idle.set(self.idle.get() + 1);
            self.ready.notified().await;
        }
    }

    /// Queues a request; whether an idle connection was woken for it.
    fn push(&self, intended: Instant) -> bool {
        self.waiting.borrow_mut().push_back(intended);
        let idle = self.idle.get();
        if idle == 0 {
            return false;
        }
        self.idle.set(idle - 1);
        self.ready.notify_one();
        true
    }
}

/// The grid the arrivals are put on: each request is due at the first tick at or after its
/// arrival, and requests of one tick go out together. Every wake-up of a thread is a context
/// switch and a timer, and one per request made the open loop's client CPU per request
/// several times a closed loop's (docs/method.md, "The engine", gives the `loadgen http --rate` runs that
/// showed it); on the grid a thread wakes at most once a tick, `1 s ÷ TICK` times a second.
/// Latency still counts from when a request was due (its tick): the arrivals are batched,
/// the timing is not blurred. Below `1 s ÷ TICK` requests a second per thread, every tick
/// holds at most one request.
pub(crate) const TICK: Duration = Duration::from_micros(250);

/// `arrival` (since the window's start) moved up to the next tick.
fn on_tick(arrival: Duration) -> Duration {
    let tick = TICK.as_nanos();
    Duration::from_nanos((arrival.as_nanos().div_ceil(tick) * tick) as u64)
}

/// The gaps between one thread's arrivals.
struct Schedule {
    interval: Duration,
    arrivals: Arrivals,
    random: SplitMix64,
}

impl Schedule {
    fn next_gap(&mut self) -> Duration {
        match self.arrivals {
            Arrivals::Constant => self.interval,
            Arrivals::Poisson => {
                // An exponential gap of the same mean: −ln(U) × interval, U in (0, 1].
                let uniform = (self.random.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                self.interval.mul_f64(-(1.0 - uniform).ln())
            }
        }
    }
}

/// One client thread's share of the open loop: `rate` requests per second over all
/// `workers` threads; returns when every request it scheduled has its answer (or its
/// timeout).
pub(super) async fn drive<C: Client>(
    window: &Arc<Window>,
    client: &Rc<C>,
    stats: &Rc<RefCell<WorkerStats>>,
    worker: usize,
    workers: usize,
    rate: f64,
) -> Result<(), String> {
    let plan = &window.plan;
    let pacer = Pacer::new().map_err(|e| format!("the open loop's timer: {e}"))?;
    let cap = plan.connections.div_ceil(workers).max(1);
    let queue = Rc::new(Queue {
        waiting: RefCell::new(VecDeque::new()),
        ready: Notify::new(),
        idle: Cell::new(0),
        done: Cell::new(false),
    });
    let interval = Duration::from_secs_f64(workers as f64 / rate.max(f64::MIN_POSITIVE));
    let mut schedule = Schedule {
        interval,
        arrivals: plan.arrivals,
        random: SplitMix64::new(super::picker::PICK_SEED ^ worker as u64),
    };
    let picker = Rc::new(RefCell::new(client.picker(worker, workers)));
    // The threads' schedules interleave: thread k starts k/threads of an interval late.
    let mut arrival = interval.mul_f64(worker as f64 / workers as f64);
    let mut connections = Vec::new();
    while !plan.stop.load(Ordering::Relaxed) {
        let intended = window.start + on_tick(arrival);
        if window.measure_end().is_some_and(|end| intended >= end) {
            break;
        }
        pacer.until(intended).await.map_err(|e| format!("the open loop's timer: {e}"))?;
        let late = Instant::now().saturating_duration_since(intended);
        stats.borrow_mut().record_send_lag(window.phase(intended), late);
        if !queue.push(intended) {
            if connections.len() < cap {
                let (window, client, mine, queue, picker) = (
                    Arc::clone(window),
                    Rc::clone(client),
                    Rc::clone(stats),
                    Rc::clone(&queue),
                    Rc::clone(&picker),
                );
                connections.push(tokio::task::spawn_local(async move {
                    connection(&window, &*client, &mine, &queue, &picker, worker).await
                }));
                stats.borrow_mut().note_connections(connections.len());
            } else {
                stats.borrow_mut().note_cap_hit(window.phase(intended));
            }
        }
        arrival += schedule.next_gap();
    }
    queue.done.set(true);
    queue.ready.notify_waiters();
    let answered = async {
        for connection in connections {
            let _ = connection.await;
        }
    };
    tokio::select! {
        biased;
        () = answered => {}
        () = window.drain.given_up() => {
            // Still queued when the drain ended: never sent.
            let left = queue.waiting.borrow_mut().drain(..).count() as u64;
            stats.borrow_mut().note_dropped(left);
        }
    }
    Ok(())
}

/// One pooled connection: takes queued requests until the schedule is over and the queue
/// is empty; reopens itself after an error. A request counts in the phase it was due in.
async fn connection<C: Client>(
    window: &Window,
    client: &C,
    stats: &RefCell<WorkerStats>,
    queue: &Queue,
    picker: &RefCell<Picker>,
    worker: usize,
) {
    let timeout = window.plan.request_timeout;
    let watchdog = tokio::time::sleep_until((window.start + timeout).into());
    tokio::pin!(watchdog);
    // Known from the start: an open loop's window is on the clock.
    let grace_end = window.measure_end().map(|end| end + open_loop_grace(window.plan.duration));
    let mut connection: Option<C::Connection> = None;
    while let Some(intended) = queue.next().await {
        let pick = picker.borrow_mut().pick();
        let now = Instant::now();
        if grace_end.is_some_and(|end| now > end) {
            // The server is that far behind: what is still queued is dropped, not sent.
            let left = 1 + queue.waiting.borrow_mut().drain(..).count() as u64;
            stats.borrow_mut().note_dropped(left);
            return;
        }
        if now >= intended + timeout {
            // Waited out its whole timeout in the queue: not sent, a timeout all the same
            // (and the connection, which did nothing wrong, is kept).
            let exchange = Exchange {
                outcome: Outcome::Error(ErrorKind::Timeout),
                status: None,
                finished: now,
                answered: false,
                keep_connection: true,
            };
            record(window, stats, worker, pick, intended, intended, exchange);
            continue;
        }
        let current = loop {
            if let Some(current) = connection.as_mut() {
                break Some(current);
            }
            match client.connect().await {
                Ok(opened) => break Some(connection.insert(opened)),
                Err(kind) => {
                    record_connect_error(window, stats, kind);
                    if window.plan.stop.load(Ordering::Relaxed) {
                        break None;
                    }
                    tokio::time::sleep(RECONNECT_BACKOFF).await;
                }
            }
        };
        let Some(current) = current else { return };
        let exchange =
            exchange(window, client, stats, current, pick, intended, watchdog.as_mut()).await;
        if !exchange.keep_connection {
            connection = None;
        }
        let in_time = grace_end.is_some_and(|end| exchange.finished <= end);
        stats.borrow_mut().note_finished(
            window.phase(intended),
            window.phase(exchange.finished),
            exchange.outcome,
            in_time,
        );
        record(window, stats, worker, pick, intended, intended, exchange);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(arrivals: Arrivals, count: usize) -> Vec<f64> {
        let interval = Duration::from_millis(2);
        let mut schedule = Schedule { interval, arrivals, random: SplitMix64::new(7) };
        (0..count).map(|_| schedule.next_gap().as_secs_f64() / interval.as_secs_f64()).collect()
    }

    #[test]
    fn constant_arrivals_are_evenly_spaced_and_poisson_ones_have_the_same_mean() {
        assert!(gaps(Arrivals::Constant, 100).iter().all(|g| (g - 1.0).abs() < 1e-9));
        let poisson = gaps(Arrivals::Poisson, 20_000);
        let mean = poisson.iter().sum::<f64>() / poisson.len() as f64;
        let variance =
            poisson.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / poisson.len() as f64;
        // Exponential gaps: the mean is the interval, and so is the spread.
        assert!((mean - 1.0).abs() < 0.03, "mean gap {mean}");
        assert!((variance.sqrt() - 1.0).abs() < 0.05, "spread {}", variance.sqrt());
        assert!(poisson.iter().all(|g| *g >= 0.0));
    }
}
