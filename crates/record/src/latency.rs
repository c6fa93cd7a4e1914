//! Latency percentiles of an HDR histogram, as the results documents record them.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Percentiles of a latency histogram, µs. Every value is the histogram's, so exact only
/// to its significant figures (the recorders keep 3): `p99_us` is the value at quantile
/// 0.99, and so on.
#[allow(missing_docs)] // the percentiles and `max_us`: named for what they hold
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LatencySummary {
    /// Latencies recorded; never 0, as an empty histogram has no summary.
    pub count: u64,
    /// Their arithmetic mean.
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl LatencySummary {
    /// The summary of `histogram`, `None` when empty.
    pub fn of(histogram: &Histogram<u64>) -> Option<Self> {
        (!histogram.is_empty()).then(|| Self {
            count: histogram.len(),
            mean_us: histogram.mean(),
            p50_us: histogram.value_at_quantile(0.5),
            p90_us: histogram.value_at_quantile(0.9),
            p99_us: histogram.value_at_quantile(0.99),
            p999_us: histogram.value_at_quantile(0.999),
            max_us: histogram.max(),
        })
    }
}

/// Microseconds as µs, ms or s.
pub fn latency_label(micros: f64) -> String {
    if micros >= 1_000_000.0 {
        format!("{:.1} s", micros / 1_000_000.0).replace(".0 s", " s")
    } else if micros >= 1_000.0 {
        format!("{:.1} ms", micros / 1_000.0).replace(".0 ms", " ms")
    } else {
        format!("{micros:.0} µs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_read_from_the_histogram() {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for value in 1..=1000 {
            histogram.record(value).unwrap();
        }
        let summary = LatencySummary::of(&histogram).unwrap();
        assert_eq!((summary.count, summary.p50_us, summary.max_us), (1000, 500, 1000));
        assert!(summary.p99_us >= 990 && summary.p999_us >= 999);
        assert!(LatencySummary::of(&Histogram::<u64>::new(3).unwrap()).is_none());
    }
}
