//! The soak: a long mixed load, the server's memory, descriptors and threads every second,
//! p99 every 10 s, and the flags a leak would raise.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::record::{Answer, Event};
use bookstore_client::procfs;
use bookstore_record::faults::SoakSample;

/// How often the server's resources are read.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// The span of each p99.
pub const P99_SPAN: Duration = Duration::from_secs(10);
/// Growth is measured from here: the first minute is warm-up (caches, pools, allocator
/// arenas filling).
pub const BASELINE_AT: Duration = Duration::from_secs(60);
/// Samples a baseline or an end value is taken from.
const SAMPLES_PER_READING: usize = 10;
/// More resident memory growth than this is flagged, %.
pub const RSS_GROWTH_FLAG_PERCENT: f64 = 10.0;

/// Reads `pid`'s resources every second from `origin` until `stop` is set, on a thread of
/// its own; the samples when joined.
pub fn sample(
    pid: u32,
    origin: Instant,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<SoakSample>> {
    std::thread::spawn(move || {
        let mut samples = Vec::new();
        let mut next = origin;
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now < next {
                std::thread::sleep((next - now).min(Duration::from_millis(50)));
                continue;
            }
            next += SAMPLE_EVERY;
            let (Some(rss_bytes), Some(open_fds), Some(threads)) =
                (procfs::rss_bytes(pid), procfs::open_fds(pid), procfs::threads(pid))
            else {
                break; // the server is gone
            };
            let at_s = origin.elapsed().as_secs_f64();
            samples.push(SoakSample { at_s, rss_bytes, open_fds, threads });
        }
        samples
    })
}

/// Resident memory growth, % (medians), and descriptor growth (highest values), from the
/// baseline at [`BASELINE_AT`] to the end; `None` when the soak did not run a minute past
/// the baseline's samples.
pub fn growth(samples: &[SoakSample]) -> (Option<f64>, Option<i64>) {
    let baseline_s = BASELINE_AT.as_secs_f64();
    let baseline: Vec<&SoakSample> =
        samples.iter().filter(|s| s.at_s >= baseline_s).take(SAMPLES_PER_READING).collect();
    let end = &samples[samples.len().saturating_sub(SAMPLES_PER_READING)..];
    let long_enough = baseline.len() == SAMPLES_PER_READING
        && end.first().is_some_and(|s| s.at_s >= 2.0 * baseline_s);
    if !long_enough {
        return (None, None);
    }
    let median_rss = |samples: &mut dyn Iterator<Item = u64>| {
        let mut values: Vec<u64> = samples.collect();
        values.sort_unstable();
        values[values.len() / 2] as f64
    };
    let before = median_rss(&mut baseline.iter().map(|s| s.rss_bytes));
    let after = median_rss(&mut end.iter().map(|s| s.rss_bytes));
    let fds_before = baseline.iter().map(|s| s.open_fds).max().unwrap_or(0);
    let fds_after = end.iter().map(|s| s.open_fds).max().unwrap_or(0);
    (Some((after / before - 1.0) * 100.0), Some(fds_after as i64 - fds_before as i64))
}

/// Why a soak with this growth is flagged.
pub fn flags(rss_growth_percent: Option<f64>, fd_growth: Option<i64>) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(growth) = rss_growth_percent.filter(|g| *g > RSS_GROWTH_FLAG_PERCENT) {
        flags.push(format!(
            "resident memory grew {growth:.1}% after the first minute (more than {RSS_GROWTH_FLAG_PERCENT}%)"
        ));
    }
    if let Some(growth) = fd_growth.filter(|g| *g > 0) {
        flags.push(format!("open file descriptors grew by {growth} after the first minute"));
    }
    flags
}

/// p99 of the successes ending in each [`P99_SPAN`] of `seconds`, ms.
pub fn p99_per_span(events: &[Event], seconds: f64) -> Vec<Option<f64>> {
    let span_us = P99_SPAN.as_micros() as u64;
    let spans = (seconds / P99_SPAN.as_secs_f64()).ceil().max(1.0) as usize;
    let mut latencies: Vec<Vec<u64>> = vec![Vec::new(); spans];
    for event in events.iter().filter(|e| e.answer == Answer::Success) {
        let span = ((event.done_us / span_us) as usize).min(spans - 1);
        latencies[span].push(event.latency_us());
    }
    latencies
        .into_iter()
        .map(|mut span| {
            if span.is_empty() {
                return None;
            }
            span.sort_unstable();
            let rank = ((span.len() as f64 * 0.99).ceil() as usize).clamp(1, span.len());
            Some(span[rank - 1] as f64 / 1000.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(
        seconds: u64,
        rss: impl Fn(u64) -> u64,
        fds: impl Fn(u64) -> u64,
    ) -> Vec<SoakSample> {
        (0..seconds)
            .map(|at| SoakSample {
                at_s: at as f64,
                rss_bytes: rss(at),
                open_fds: fds(at),
                threads: 4,
            })
            .collect()
    }

    #[test]
    fn steady_memory_after_a_warm_first_minute_is_not_flagged() {
        // Grows 50% in the first minute, then holds.
        let steady = samples(600, |at| if at < 60 { 100 + at } else { 160 }, |_| 300);
        let (rss, fds) = growth(&steady);
        assert_eq!((rss, fds), (Some(0.0), Some(0)));
        assert!(flags(rss, fds).is_empty());
    }

    #[test]
    fn memory_that_keeps_growing_and_descriptors_that_leak_are_flagged() {
        let leaking = samples(600, |at| 1_000 + at, |at| 300 + at / 100);
        let (rss, fds) = growth(&leaking);
        let rss = rss.unwrap();
        assert!((rss - 49.8).abs() < 0.1, "medians 1065 → 1595: {rss}");
        assert_eq!(fds, Some(305 - 300));
        let flags = flags(Some(rss), fds);
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert!(flags[0].contains("resident memory grew 49."), "{flags:?}");
    }

    #[test]
    fn a_soak_too_short_for_a_baseline_and_an_end_judges_no_growth() {
        assert_eq!(growth(&samples(90, |at| at, |_| 1)), (None, None));
        assert_eq!(growth(&[]), (None, None));
        assert_eq!(growth(&samples(129, |_| 1, |_| 1)), (None, None), "ends 9 s short");
        assert!(growth(&samples(130, |_| 1, |_| 1)).0.is_some(), "a minute past the baseline");
    }

    #[test]
    fn p99_is_taken_per_ten_seconds_of_successes() {
        let event = |done_s: f64, latency_ms: u64, answer: Answer| Event {
            sent_us: (done_s * 1e6) as u64 - latency_ms * 1000,
            done_us: (done_s * 1e6) as u64,
            answer,
            checkout: false,
        };
        let mut events: Vec<Event> =
            (0..100).map(|i| event(1.0 + i as f64 * 0.01, 2, Answer::Success)).collect();
        events.push(event(5.0, 80, Answer::Success));
        events.push(event(15.0, 900, Answer::Unavailable));
        let p99 = p99_per_span(&events, 25.0);
        assert_eq!(
            p99,
            vec![Some(2.0), None, None],
            "101 answers: the 100th is 2 ms; no success after"
        );
    }
}
