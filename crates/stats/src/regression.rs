//! A straight line through measured points, and a mean with its interval: what a cost per
//! unit (memory per connection) is estimated with.

use serde::Serialize;

/// The least-squares line `y = intercept + slope × x`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Line {
    /// `y` per unit of `x`.
    pub slope: f64,
    /// `y` at `x = 0`.
    pub intercept: f64,
}

impl Line {
    /// The least-squares line through `points` (`(x, y)`); `None` without two distinct `x`.
    pub fn fit(points: &[(f64, f64)]) -> Option<Self> {
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        if points.len() < 2 || sxx <= 0.0 {
            return None;
        }
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let slope = sxy / sxx;
        Some(Self { slope, intercept: mean_y - slope * mean_x })
    }
}

/// A mean over independent samples (e.g. one per round) with its two-sided t interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// Its confidence level.
    pub level: f64,
    /// Samples behind it.
    pub n: usize,
}

impl Estimate {
    /// The mean of `samples` with its `1 − alpha` interval; `None` below two samples.
    pub fn of(samples: &[f64], alpha: f64) -> Option<Self> {
        let n = samples.len();
        if n < 2 {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let variance = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = crate::student::t_critical((n - 1) as f64, alpha) * (variance / n as f64).sqrt();
        Some(Self { mean, low: mean - half, high: mean + half, level: 1.0 - alpha, n })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_exact_points_is_found_and_one_x_has_none() {
        let line = Line::fit(&[(0.0, 10.0), (1000.0, 2010.0), (5000.0, 10010.0)]).unwrap();
        assert!((line.slope - 2.0).abs() < 1e-12 && (line.intercept - 10.0).abs() < 1e-9);
        assert!(Line::fit(&[(5.0, 1.0), (5.0, 2.0)]).is_none());
        assert!(Line::fit(&[(5.0, 1.0)]).is_none());
    }

    #[test]
    fn the_interval_of_a_mean_is_students() {
        // Mean 11, sd √(2/3), n 4: half width t(3, 0.975) × sd / √4.
        let estimate = Estimate::of(&[10.0, 12.0, 11.0, 11.0], 0.05).unwrap();
        assert!((estimate.mean - 11.0).abs() < 1e-12);
        let sd = ((1.0 + 1.0 + 0.0 + 0.0) / 3.0f64).sqrt();
        let half = 3.182_446 * sd / 2.0;
        assert!((estimate.high - estimate.mean - half).abs() < 1e-4, "{estimate:?}");
        assert!(Estimate::of(&[1.0], 0.05).is_none());
    }
}
