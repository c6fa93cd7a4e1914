//! How large a difference a design can see.

use crate::{t_cdf, t_quantile};

/// The smallest true ratio (≥ 1) that a paired comparison of `n` rounds, with a per-round
/// log-ratio standard deviation `sd`, calls different with probability `power` when its
/// interval is at level `1 − alpha`: `exp((t(1 − alpha/2) + t(power)) · sd / √n)`, both
/// quantiles with `n − 1` degrees of freedom (the usual approximation, which neglects the
/// far tail). `None` below two rounds.
pub fn min_detectable_ratio(sd: f64, n: usize, alpha: f64, power: f64) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let df = (n - 1) as f64;
    let shift = t_quantile(df, 1.0 - alpha / 2.0) + t_quantile(df, power);
    Some((shift * sd / (n as f64).sqrt()).exp())
}

/// The probability that a paired comparison of `n` rounds with per-round log-ratio
/// standard deviation `sd` calls a true ratio `ratio` different at level `1 − alpha` (the
/// same approximation as [`min_detectable_ratio`], whose inverse it is).
pub fn power_of(ratio: f64, sd: f64, n: usize, alpha: f64) -> Option<f64> {
    if n < 2 || sd <= 0.0 {
        return None;
    }
    let df = (n - 1) as f64;
    let shift = ratio.ln().abs() / (sd / (n as f64).sqrt()) - t_quantile(df, 1.0 - alpha / 2.0);
    Some(t_cdf(shift, df))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_rounds_or_less_noise_see_smaller_differences() {
        let five = min_detectable_ratio(0.07, 5, 0.005, 0.8).unwrap();
        let ten = min_detectable_ratio(0.07, 10, 0.005, 0.8).unwrap();
        let quieter = min_detectable_ratio(0.035, 5, 0.005, 0.8).unwrap();
        assert!(ten < five && quieter < five && ten > 1.0, "{five} {ten} {quieter}");
        // (5.598 + 0.941) · 0.07 / √5 = 0.2047
        assert!((five.ln() - 0.2047).abs() < 1e-3, "{five}");
        assert!(min_detectable_ratio(0.07, 1, 0.05, 0.8).is_none());
    }

    #[test]
    fn power_is_the_inverse_of_the_detectable_ratio() {
        let ratio = min_detectable_ratio(0.1, 6, 0.05, 0.8).unwrap();
        let power = power_of(ratio, 0.1, 6, 0.05).unwrap();
        assert!((power - 0.8).abs() < 1e-9, "{power}");
        assert!(power_of(1.0, 0.1, 6, 0.05).unwrap() < 0.05);
    }
}
