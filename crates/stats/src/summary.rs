//! A set of samples in a few numbers, for display.

use serde::Serialize;

/// The samples of one measured thing (one per round), in the samples' unit.
#[allow(missing_docs)] // `min`, `max`: named for what they hold
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Samples summarised: at least 1, as [`Summary::of`] has none for no samples.
    pub n: usize,
    /// The middle sample; of an even number, the mean of the two middle ones.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median =
            if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        Some(Self { n, median, min: sorted[0], max: sorted[n - 1], mean })
    }

    /// The median of `samples`; `None` when there are none.
    pub fn median_of(samples: impl IntoIterator<Item = f64>) -> Option<f64> {
        Self::of(&samples.into_iter().collect::<Vec<_>>()).map(|s| s.median)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_range_and_mean() {
        let s = Summary::of(&[10.0, 12.0, 11.0, 13.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max, s.mean), (4, 11.5, 10.0, 13.0, 11.5));
        assert_eq!(Summary::of(&[5.0, 1.0, 3.0]).unwrap().median, 3.0);
        assert!(Summary::of(&[]).is_none());
        assert_eq!(Summary::median_of([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(Summary::median_of([]), None);
    }
}
