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

/// What a soak's samples say of its growth after the first minute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// Resident memory, from the baseline at [`BASELINE_AT`] to the end, % (medians of 10
    /// samples each).
    pub rss_percent: f64,
    /// Resident memory over the second half of that span alone, %: near 0 for a level that
    /// has settled, about half of `rss_percent` for one that grows at a constant rate.
    pub rss_late_percent: f64,
    /// Open descriptors at the end minus at the baseline (highest values).
    pub fds: i64,
}

/// The growth of `samples`; `None` when the soak did not run a minute past the baseline's
/// samples.
pub fn growth(samples: &[SoakSample]) -> Option<Growth> {
    let baseline_s = BASELINE_AT.as_secs_f64();
    let from = |at_s: f64| -> Vec<&SoakSample> {
        samples.iter().filter(|s| s.at_s >= at_s).take(SAMPLES_PER_READING).collect()
    };
    let baseline = from(baseline_s);
    let end: Vec<&SoakSample> =
        samples[samples.len().saturating_sub(SAMPLES_PER_READING)..].iter().collect();
    let long_enough = baseline.len() == SAMPLES_PER_READING
        && end.first().is_some_and(|s| s.at_s >= 2.0 * baseline_s);
    if !long_enough {
        return None;
    }
    let middle = from((baseline_s + end[0].at_s) / 2.0);
    let median_rss = |samples: &[&SoakSample]| {
        let mut values: Vec<u64> = samples.iter().map(|s| s.rss_bytes).collect();
        values.sort_unstable();
        values[values.len() / 2] as f64
    };
    let (before, middle, after) = (median_rss(&baseline), median_rss(&middle), median_rss(&end));
    let fds_before = baseline.iter().map(|s| s.open_fds).max().unwrap_or(0);
    let fds_after = end.iter().map(|s| s.open_fds).max().unwrap_or(0);
    Some(Growth {
        rss_percent: (after / before - 1.0) * 100.0,
        rss_late_percent: (after / middle - 1.0) * 100.0,
        fds: fds_after as i64 - fds_before as i64,
    })
}

/// A memory growth above [`RSS_GROWTH_FLAG_PERCENT`] is flagged only while it is still
/// going at the end: when its second half grew at least this share of the whole — a
/// constant rate gives about half; a level that settles, near nothing.
pub const RSS_STILL_GROWING_SHARE: f64 = 0.25;

/// Why a soak with this growth is flagged.
pub fn flags(growth: Option<Growth>) -> Vec<String> {
    let Some(growth) = growth else { return Vec::new() };
    let mut flags = Vec::new();
    let Growth { rss_percent, rss_late_percent, fds } = growth;
    if rss_percent > RSS_GROWTH_FLAG_PERCENT
        && rss_late_percent >= RSS_STILL_GROWING_SHARE * rss_percent
    {
        flags.push(format!(
            "resident memory grew {rss_percent:.1}% after the first minute (more than {RSS_GROWTH_FLAG_PERCENT}%), {rss_late_percent:.1}% of it in the second half: still growing"
        ));
    }
    if fds > 0 {
        flags.push(format!("open file descriptors grew by {fds} after the first minute"));
    }
    flags
}

/// Sets `record`'s growth and flags from its samples by the rule above: what a soak
/// records, and what `loadgen faults --from` reads an older file's soak as (its stored
/// figures are those of the rule of its day; the samples are what was measured).
pub fn judge(record: &mut bookstore_record::faults::SoakRecord) {
    let growth = growth(&record.samples);
    record.rss_growth_percent = growth.map(|g| g.rss_percent);
    record.rss_growth_late_percent = growth.map(|g| g.rss_late_percent);
    record.fd_growth = growth.map(|g| g.fds);
    record.flags = flags(growth);
}

/// Every soak of `results` judged again from its samples ([`judge`]).
pub fn judge_all(results: &mut bookstore_record::faults::FaultsResults) {
    for soak in results.stacks.iter_mut().filter_map(|s| s.soak.as_mut()) {
        judge(soak);
    }
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
        let held = growth(&steady).unwrap();
        assert_eq!((held.rss_percent, held.rss_late_percent, held.fds), (0.0, 0.0, 0));
        assert!(flags(Some(held)).is_empty());
    }

    #[test]
    fn memory_that_keeps_growing_and_descriptors_that_leak_are_flagged() {
        let leaking = samples(600, |at| 1_000 + at, |at| 300 + at / 100);
        let grown = growth(&leaking).unwrap();
        assert!((grown.rss_percent - 49.8).abs() < 0.1, "medians 1065 → 1595: {grown:?}");
        assert!((grown.rss_late_percent - 19.9).abs() < 0.1, "1330 → 1595: {grown:?}");
        assert_eq!(grown.fds, 305 - 300);
        let flags = flags(Some(grown));
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert!(
            flags[0].contains("resident memory grew 49.") && flags[0].contains("still growing")
        );
    }

    #[test]
    fn memory_that_grows_and_levels_off_is_told_from_memory_still_growing() {
        // +20% over the first four minutes after the baseline, then flat: a plateau.
        let settling =
            samples(1_800, |at| 1_000 + (at.saturating_sub(60)).min(240) * 200 / 240, |_| 300);
        let settled = growth(&settling).unwrap();
        assert!((settled.rss_percent - 19.8).abs() < 0.5, "{settled:?}");
        assert_eq!(settled.rss_late_percent, 0.0, "{settled:?}");
        assert!(flags(Some(settled)).is_empty(), "levelled off: not flagged");
        // The same +20% spread evenly over the half hour: still growing at the end.
        let steady_rate = samples(1_800, |at| 1_000 + at.saturating_sub(60) * 200 / 1_740, |_| 300);
        assert_eq!(flags(growth(&steady_rate)).len(), 1);
    }

    #[test]
    fn a_soak_too_short_for_a_baseline_and_an_end_judges_no_growth() {
        assert_eq!(growth(&samples(90, |at| at, |_| 1)), None);
        assert_eq!(growth(&[]), None);
        assert_eq!(growth(&samples(129, |_| 1, |_| 1)), None, "ends 9 s short");
        assert!(growth(&samples(130, |_| 1, |_| 1)).is_some(), "a minute past the baseline");
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
