//! The closed loop, and the run of either loop: threads, each with its own runtime and its
//! share of the virtual users, each user doing a request, waiting for its whole answer, and
//! doing the next; the phases' edges set by the clock or by when the load has settled.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::drain;
use super::exchange::{Client, RECONNECT_BACKOFF, Window, exchange, record, record_connect_error};
use super::open;
use super::plan::{LiveCounter, LoadPlan, WindowHooks};
use super::stats::{self, LoadReport, WorkerStats};

/// How long the threads get to start and connect before a clock-only warm-up starts. A
/// settled warm-up needs none: it waits for every connection's first answer by itself.
pub const START_DELAY: Duration = Duration::from_millis(100);
/// How far ahead a settled phase boundary is announced: the client threads read it as they
/// record, and one that reads it just before it is published must still see its request
/// on the right side.
pub(super) const BOUNDARY_LEAD: Duration = Duration::from_millis(5);
/// How often the orchestrating thread looks whether a settled phase may end.
pub(super) const SETTLE_POLL: Duration = Duration::from_millis(2);

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
pub(super) fn settle_until(done: impl Fn() -> bool, latest: Instant, stop: &AtomicBool) -> bool {
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

pub(super) fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

pub(super) fn run_worker<C: Client>(
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
pub(super) async fn drive<C: Client>(
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
