//! The engine against a scripted in-process server: what it counts, when, and how it
//! measures latency when the server stalls.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bookstore_client::engine::{self, ErrorKind, LoadPlan, LoadReport, Settle};
use bookstore_client::raw::{RawRequest, RequestSpec};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The engine's request timeout in these tests.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{\"status\":\"UP\"}";

/// What the scripted server does with a request.
#[derive(Debug, Clone, Copy)]
enum Action {
    /// Answer after this long.
    Answer(Duration),
    /// Never answer (the connection stays open, silent).
    Stall,
    /// Reset the connection (RST) instead of answering.
    Reset,
}

/// A keep-alive server that does `script(n)` with request number `n` (counted over all
/// connections, from 1).
fn scripted_server(script: impl Fn(u64) -> Action + Send + Sync + 'static) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let served = Arc::new(AtomicU64::new(0));
    let script = Arc::new(script);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let served = Arc::clone(&served);
                let script = Arc::clone(&script);
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 1024];
                    loop {
                        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let end = buffer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                        buffer.drain(..end);
                        let number = served.fetch_add(1, Ordering::Relaxed) + 1;
                        match script(number) {
                            Action::Answer(delay) => {
                                if !delay.is_zero() {
                                    tokio::time::sleep(delay).await;
                                }
                                if stream.write_all(RESPONSE).await.is_err() {
                                    return;
                                }
                            }
                            Action::Stall => std::future::pending::<()>().await,
                            Action::Reset => {
                                let _ = stream.set_zero_linger();
                                return; // dropped with SO_LINGER 0: an RST
                            }
                        }
                    }
                });
            }
        });
    });
    addr
}

/// Answers every request at once, except: request number `stall_at` waits `stall` first,
/// and with `delay` every answer waits that long.
fn server(stall_at: u64, stall: Duration, delay: Duration) -> SocketAddr {
    scripted_server(move |number| {
        Action::Answer(if number == stall_at { stall + delay } else { delay })
    })
}

fn plan(
    connections: usize,
    warmup: Duration,
    duration: Duration,
    rate_rps: Option<f64>,
) -> LoadPlan {
    LoadPlan {
        connections,
        workers: 1,
        warmup,
        duration,
        request_timeout: REQUEST_TIMEOUT,
        rate_rps,
        arrivals: engine::Arrivals::Constant,
        stop: Arc::new(AtomicBool::new(false)),
        live: None,
        settle: None,
        requests: None,
    }
}

fn run(addr: SocketAddr, plan: &LoadPlan) -> LoadReport {
    let (_, workload) =
        RawRequest::new(&format!("http://{addr}/health"), &RequestSpec::default()).unwrap();
    engine::run_http(plan, addr, Arc::new(workload), 0, &mut ()).unwrap()
}

/// Requests in the window slower than `threshold`.
fn slower_than(report: &LoadReport, threshold_us: u64) -> u64 {
    report
        .latency_ok_us
        .iter_recorded()
        .filter(|v| v.value_iterated_to() > threshold_us)
        .map(|v| v.count_at_value())
        .sum()
}

#[test]
fn open_loop_counts_every_request_a_stall_delayed_closed_loop_only_the_stalled_one() {
    // 100 requests per second on one connection for 2 s; the 60th request (in the window,
    // after 0.3 s of warm-up) stalls 500 ms.
    let open = run(
        server(60, Duration::from_millis(500), Duration::ZERO),
        &plan(1, Duration::from_millis(300), Duration::from_secs(2), Some(100.0)),
    );
    assert!(
        (190..=210).contains(&open.measure.ok),
        "the schedule decides the count: {}",
        open.measure.ok
    );
    // Every request scheduled during the stall was sent late and counts from its slot:
    // the ~45 slots in the 450 ms before the stall ended waited more than 50 ms.
    let delayed = slower_than(&open, 50_000);
    assert!((40..=55).contains(&delayed), "{delayed} requests over 50 ms in open loop");

    let closed = run(
        server(60, Duration::from_millis(500), Duration::ZERO),
        &plan(1, Duration::from_millis(300), Duration::from_secs(2), None),
    );
    let closed_delayed = slower_than(&closed, 50_000);
    assert!(
        (1..=3).contains(&closed_delayed),
        "closed loop sees only the stalled request, {closed_delayed}"
    );
}

#[test]
fn an_open_loop_at_a_modest_rate_keeps_to_it() {
    // 500 requests a second for 2 s against a server that answers at once.
    let mut plan = plan(256, Duration::from_millis(300), Duration::from_secs(2), Some(500.0));
    plan.workers = 2;
    let report = run(server(0, Duration::ZERO, Duration::ZERO), &plan);
    let due = report.send_lag_us.len();
    assert!((998..=1002).contains(&due), "{due} due in 2 s at 500/s");
    assert!(
        (report.throughput_rps() - 500.0).abs() <= 10.0,
        "achieved {:.1} req/s against 500",
        report.throughput_rps()
    );
    let open = report.open.expect("an open loop's counts");
    assert!(open.in_time as f64 >= 0.98 * due as f64, "{open:?} of {due}");
    assert_eq!((open.dropped, report.cap_hit), (0, false));
    assert_eq!(report.measure.ok, due, "every request due in the window, answered");
    // Opened as needed, not all 256: at once-answered requests one or two suffice, but a
    // machine busy with other tests can stall this one-thread server and queue more — a
    // stall of s ms holds s / 2 requests at 500/s (CI runs saw 14 and 50) — so the bound
    // leaves room for a quarter-second stall; how many a given load needs is the next test's.
    assert!(report.connections_peak <= 128, "opened as needed: {}", report.connections_peak);
}

#[test]
fn an_open_loop_opens_connections_as_needed_and_says_when_requests_waited_at_its_cap() {
    // Every answer takes 50 ms: 200 a second keep about 10 requests in flight.
    let delayed = || server(0, Duration::ZERO, Duration::from_millis(50));
    let at_cap = |cap| plan(cap, Duration::from_millis(300), Duration::from_secs(1), Some(200.0));
    let roomy = run(delayed(), &at_cap(64));
    assert!((8..=24).contains(&roomy.connections_peak), "peak {}", roomy.connections_peak);
    assert!(!roomy.cap_hit);
    let p50_ms = roomy.latency_ok_us.value_at_quantile(0.5) as f64 / 1000.0;
    assert!((50.0..70.0).contains(&p50_ms), "p50 {p50_ms} ms");

    // Four connections carry 80 a second: the rest waits in the client, timed from when
    // it was due, and what is still waiting when the grace runs out is not sent.
    let capped = run(delayed(), &at_cap(4));
    assert_eq!(capped.connections_peak, 4);
    assert!(capped.cap_hit);
    let open = capped.open.unwrap();
    let due = capped.send_lag_us.len();
    assert!((open.in_time as f64) < 0.6 * due as f64, "{open:?} of {due}");
    assert!(open.dropped > 0, "{open:?}");
    let p99_ms = capped.latency_ok_us.value_at_quantile(0.99) as f64 / 1000.0;
    assert!(p99_ms > 500.0, "the queue's wait counts: p99 {p99_ms} ms");
}

#[test]
fn answers_after_the_window_closes_are_drained_and_counted_apart() {
    // Every answer takes 300 ms: a request sent near the end of the 1 s window completes after it.
    let report = run(
        server(0, Duration::ZERO, Duration::from_millis(300)),
        &plan(4, Duration::from_millis(100), Duration::from_secs(1), None),
    );
    assert_eq!(report.drain.ok, 4, "each connection had one request in flight at the close");
    assert!(report.measure.ok >= 8, "{}", report.measure.ok);
    assert_eq!(report.measure.error_total() + report.drain.error_total(), 0);
    // Four connections, each always waiting on an answer: four in flight throughout, also
    // across the window's edges (where throughput × mean latency would say 3.6 here).
    let in_flight = report.mean_in_flight();
    assert!((3.9..=4.05).contains(&in_flight), "in flight {in_flight}");
}

#[test]
fn a_target_that_refuses_connections_is_counted_as_connect_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let report = run(addr, &plan(2, Duration::ZERO, Duration::from_millis(300), None));
    assert_eq!(report.measure.ok, 0);
    assert!(report.measure.errors_of(ErrorKind::Connect) > 0);
}

#[test]
fn a_server_that_stops_answering_costs_timeouts_not_an_endless_run() {
    // The first 20 requests are answered, then the server goes silent on every connection.
    let addr =
        scripted_server(
            |number| {
                if number <= 20 { Action::Answer(Duration::ZERO) } else { Action::Stall }
            },
        );
    let mut plan = plan(4, Duration::ZERO, Duration::from_secs(1), None);
    plan.request_timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let report = run(addr, &plan);
    let took = started.elapsed();
    assert_eq!(report.measure.ok + report.drain.ok, 20);
    let timeouts = report.measure.errors_of(ErrorKind::Timeout);
    // Each connection times out, reconnects, is stalled again: about 1 s / 300 ms each.
    assert!((4..=16).contains(&timeouts), "{timeouts} timeouts");
    assert_eq!(report.measure.error_total(), timeouts, "only timeouts");
    // The window, plus at most one request timeout for the requests still waiting.
    assert!(took < Duration::from_secs(3), "the run took {took:?}");
}

#[test]
fn reset_connections_are_counted_and_reopened() {
    // Every 10th request is answered with an RST instead of a response.
    let addr = scripted_server(|number| {
        if number % 10 == 0 { Action::Reset } else { Action::Answer(Duration::from_millis(1)) }
    });
    let report = run(addr, &plan(2, Duration::ZERO, Duration::from_millis(500), None));
    let resets = report.measure.errors_of(ErrorKind::Io);
    assert!(resets > 0, "no reset counted");
    assert_eq!(report.measure.error_total(), resets, "resets are I/O errors");
    // Each reset closed a connection; had it not been reopened the run would have
    // stopped after two resets with at most 18 answers.
    assert!(
        report.measure.ok >= 8 * resets && resets > 2,
        "{} ok, {resets} resets",
        report.measure.ok
    );
}

#[test]
fn a_settled_warm_up_lasts_until_every_connection_has_an_answer() {
    // Answers take 300 ms: a 50 ms warm-up by the clock would open the window on the
    // start's burst, with no connection answered yet.
    let addr = server(0, Duration::ZERO, Duration::from_millis(300));
    let mut plan = plan(4, Duration::from_millis(50), Duration::from_millis(200), None);
    plan.settle = Some(Settle {
        warmup_max: Duration::from_secs(5),
        window_min_completions: 0,
        window_max: Duration::from_secs(1),
    });
    let report = run(addr, &plan);
    assert!(report.warmup_elapsed >= Duration::from_millis(300), "{:?}", report.warmup_elapsed);
    assert_eq!(report.warmup.ok, 4, "each connection was answered once before the window");
    assert_eq!(report.unsettled_warmup, None);
}

#[test]
fn a_settled_window_lasts_until_it_holds_its_answers_or_says_it_did_not() {
    // 4 connections, 300 ms per answer: about 13 answers per second.
    let addr = server(0, Duration::ZERO, Duration::from_millis(300));
    let mut plan = plan(4, Duration::ZERO, Duration::from_millis(100), None);
    plan.settle = Some(Settle {
        warmup_max: Duration::from_secs(5),
        window_min_completions: 8,
        window_max: Duration::from_secs(2),
    });
    let report = run(addr, &plan);
    assert!(report.window >= Duration::from_millis(500), "{:?}", report.window);
    assert!(report.measure.ok >= 8 && !report.window_capped, "{}", report.measure.ok);
    assert!(
        (report.goodput_rps() - report.measure.ok as f64 / report.window.as_secs_f64()).abs()
            < 1e-9
    );

    // 100 answers cannot come in 600 ms: the window ends at its longest, and says so.
    plan.settle = Some(Settle {
        warmup_max: Duration::from_secs(5),
        window_min_completions: 100,
        window_max: Duration::from_millis(600),
    });
    let report = run(addr, &plan);
    assert!(report.window_capped);
    let window = report.window.as_secs_f64();
    assert!((0.6..0.7).contains(&window), "{window}");
}

#[test]
fn a_warm_up_that_cannot_settle_ends_at_its_longest_and_says_how_far_it_got() {
    // Requests 1 and 2 are answered, every later one stalls: two of four connections ever
    // have an answer.
    let addr =
        scripted_server(
            |number| {
                if number <= 2 { Action::Answer(Duration::ZERO) } else { Action::Stall }
            },
        );
    let mut plan = plan(4, Duration::ZERO, Duration::from_millis(100), None);
    plan.request_timeout = Duration::from_millis(500);
    plan.settle = Some(Settle {
        warmup_max: Duration::from_millis(400),
        window_min_completions: 0,
        window_max: Duration::from_millis(100),
    });
    let report = run(addr, &plan);
    assert_eq!(report.unsettled_warmup, Some(2));
    assert!(report.warmup_elapsed >= Duration::from_millis(400));
}

#[test]
fn a_window_stopped_early_is_as_long_as_it_ran_and_its_rates_are_of_that_time() {
    let addr = server(u64::MAX, Duration::ZERO, Duration::from_millis(1));
    let plan = plan(4, Duration::ZERO, Duration::from_secs(30), None);
    let stop = Arc::clone(&plan.stop);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let report = run(addr, &plan);
    assert!(report.stopped_early);
    let seconds = report.window.as_secs_f64();
    assert!((0.4..5.0).contains(&seconds), "the window ran {seconds} s of its 30");
    let rate = report.measure.total() as f64 / seconds;
    assert!((report.throughput_rps() - rate).abs() < 1e-6, "{}", report.throughput_rps());
    // Four connections, each always waiting on an answer, until the stop.
    assert!(report.mean_in_flight() > 3.0, "in flight {}", report.mean_in_flight());
}
