//! Statistics of repeated measurements: median and range, a t-based 95% confidence interval
//! of the mean, and Welch's t-test for "is this difference more than noise?".

use serde::Serialize;

/// Two-sided 95% critical values of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95% critical value of Student's t with `df` degrees of freedom.
pub fn t_975(df: f64) -> f64 {
    let df = df.floor().max(1.0) as usize;
    match df {
        1..=30 => T_975[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// A set of samples, summarized.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
    pub sd: f64,
    /// 95% confidence interval of the mean; `None` for fewer than two samples.
    pub ci95: Option<(f64, f64)>,
}

impl Summary {
    /// The summary of `samples`, `None` when empty.
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
        let sd = if n > 1 {
            (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = (n > 1).then(|| {
            let half = t_975((n - 1) as f64) * sd / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Self { n, median, min: sorted[0], max: sorted[n - 1], mean, sd, ci95 })
    }

    /// Whether the two 95% intervals overlap; `None` when either has one sample.
    pub fn overlaps(&self, other: &Summary) -> Option<bool> {
        let ((a_low, a_high), (b_low, b_high)) = (self.ci95?, other.ci95?);
        Some(a_low <= b_high && b_low <= a_high)
    }
}

/// Welch's t-test at 95%: whether the means of `a` and `b` differ by more than their noise.
/// `None` when either has fewer than two samples (no test is possible).
pub fn differs(a: &Summary, b: &Summary) -> Option<bool> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd.powi(2) / a.n as f64, b.sd.powi(2) / b.n as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return Some(a.mean != b.mean);
    }
    let t = (a.mean - b.mean).abs() / se;
    let df = (va + vb).powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    Some(t > t_975(df))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_range_and_interval() {
        let s = Summary::of(&[10.0, 12.0, 11.0, 13.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max, s.mean), (4, 11.5, 10.0, 13.0, 11.5));
        let (low, high) = s.ci95.unwrap();
        // sd = 1.291, t(3) = 3.182: 11.5 ± 2.054
        assert!((low - 9.446).abs() < 0.01 && (high - 13.554).abs() < 0.01, "{low} {high}");
        assert_eq!(Summary::of(&[5.0]).unwrap().ci95, None);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn overlap_and_welch_agree_on_clear_cases() {
        let a = Summary::of(&[100.0, 101.0, 99.0, 100.5]).unwrap();
        let b = Summary::of(&[110.0, 111.0, 109.0, 110.5]).unwrap();
        let c = Summary::of(&[100.2, 99.5, 101.1, 100.0]).unwrap();
        assert_eq!((a.overlaps(&b), differs(&a, &b)), (Some(false), Some(true)));
        assert_eq!((a.overlaps(&c), differs(&a, &c)), (Some(true), Some(false)));
        let single = Summary::of(&[100.0]).unwrap();
        assert_eq!((a.overlaps(&single), differs(&a, &single)), (None, None));
    }

    #[test]
    fn critical_values_fall_towards_the_normal() {
        assert_eq!(t_975(1.0), 12.706);
        assert_eq!(t_975(30.0), 2.042);
        assert_eq!(t_975(1000.0), 1.96);
        assert!(t_975(0.3) == 12.706, "fractional degrees of freedom round down, at least 1");
    }
}
