//! How large a difference a design can see.

use crate::student::{t_cdf, t_quantile};

/// The smallest true ratio (≥ 1) that a paired comparison of `n` rounds, with a per-round
/// log-ratio standard deviation `sd` and a spread `process_sd` between its two processes
/// that the rounds do not average (0 for none; [`crate::PROCESS_SD`] between stacks), calls
/// different with probability `power` when its interval is at level `1 − alpha`:
/// `exp((t(1 − alpha/2) + t(power)) · se)` with `se = √(sd² / n + process_sd²)`, both
/// quantiles with the degrees of freedom [`crate::Samples::Processes`] gives such a
/// comparison (the usual approximation, which neglects the far tail). `None` below two
/// rounds.
pub fn min_detectable_ratio(
    sd: f64,
    n: usize,
    process_sd: f64,
    alpha: f64,
    power: f64,
) -> Option<f64> {
    let (se, df) = error(sd, n, process_sd)?;
    let shift = t_quantile(df, 1.0 - alpha / 2.0) + t_quantile(df, power);
    Some((shift * se).exp())
}

/// [`min_detectable_ratio`] for a comparison judged by a family's shared spread
/// ([`crate::Samples::PooledProcesses`]): each member's per-round log spread `residual_sd`
/// with `df` degrees of freedom, so a pair's mean log ratio over `n` rounds has standard
/// error `√(2·residual_sd² / n + process_sd²)`.
pub fn min_detectable_ratio_pooled(
    residual_sd: f64,
    df: f64,
    n: usize,
    process_sd: f64,
    alpha: f64,
    power: f64,
) -> Option<f64> {
    if n < 2 || df < 1.0 {
        return None;
    }
    let se = (2.0 * residual_sd.powi(2) / n as f64 + process_sd.powi(2)).sqrt();
    let shift = t_quantile(df, 1.0 - alpha / 2.0) + t_quantile(df, power);
    Some((shift * se).exp())
}

/// The probability that such a comparison (see [`min_detectable_ratio`], whose inverse it
/// is) calls a true ratio `ratio` different at level `1 − alpha`.
pub fn power_of(ratio: f64, sd: f64, n: usize, process_sd: f64, alpha: f64) -> Option<f64> {
    let (se, df) = error(sd, n, process_sd)?;
    if se <= 0.0 {
        return None;
    }
    let shift = ratio.ln().abs() / se - t_quantile(df, 1.0 - alpha / 2.0);
    Some(t_cdf(shift, df))
}

/// The rounds a comparison judged by a pooled spread ([`crate::Samples::Pooled`]) needs for
/// its interval at level `1 − alpha` to be at most `width` wide (upper ÷ lower), each
/// member's per-round log spread `residual_sd`: a pair's mean log ratio has variance
/// 2·sd²/n, so `exp(2·z·sd·√(2/n)) ≤ width` gives `n ≥ 8·z²·sd² / ln(width)²`, with the
/// normal's quantile (the pooled fit's degrees of freedom grow with the rounds). At least
/// two; `None` for a width not above 1 or a spread that is not a positive number.
pub fn rounds_for_width(residual_sd: f64, alpha: f64, width: f64) -> Option<u64> {
    if !(width > 1.0 && residual_sd > 0.0 && residual_sd.is_finite()) {
        return None;
    }
    let z = t_quantile(f64::INFINITY, 1.0 - alpha / 2.0);
    let rounds = 8.0 * (z * residual_sd / width.ln()).powi(2);
    Some((rounds.ceil() as u64).max(2))
}

/// The standard error of the mean log ratio of `n` rounds and its degrees of freedom (the
/// rounds', as [`crate::Samples::Processes`] takes them). `None` below two rounds.
fn error(sd: f64, n: usize, process_sd: f64) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let se = (sd.powi(2) / n as f64 + process_sd.powi(2)).sqrt();
    Some((se, (n - 1) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_rounds_or_less_noise_see_smaller_differences() {
        let five = min_detectable_ratio(0.07, 5, 0.0, 0.005, 0.8).unwrap();
        let ten = min_detectable_ratio(0.07, 10, 0.0, 0.005, 0.8).unwrap();
        let quieter = min_detectable_ratio(0.035, 5, 0.0, 0.005, 0.8).unwrap();
        assert!(ten < five && quieter < five && ten > 1.0, "{five} {ten} {quieter}");
        // (5.598 + 0.941) · 0.07 / √5 = 0.2047
        assert!((five.ln() - 0.2047).abs() < 1e-3, "{five}");
        assert!(min_detectable_ratio(0.07, 1, 0.0, 0.05, 0.8).is_none());
    }

    #[test]
    fn the_spread_between_processes_sets_a_floor_no_number_of_rounds_passes() {
        let process_sd = crate::PROCESS_SD;
        let seen = |n| min_detectable_ratio(0.09, n, process_sd, 0.005, 0.8).unwrap();
        let alone = |n| min_detectable_ratio(0.09, n, 0.0, 0.005, 0.8).unwrap();
        assert!(seen(12) > alone(12), "the processes' part widens it");
        // A thousand rounds leave the processes' part: near (z(0.9975) + z(0.8)) · its sd.
        let floor = ((2.807 + 0.842) * process_sd).exp();
        assert!((seen(1000).ln() - floor.ln()).abs() < 0.01 * floor.ln() + 3e-3, "{}", seen(1000));
        assert!(alone(1000) < floor, "without it, rounds alone would pass it");
    }

    #[test]
    fn the_rounds_for_a_width_give_that_width_and_grow_with_the_square_of_the_noise() {
        // 8 · 1.96² · 0.5² / ln(2)² = 15.99 → 16 rounds at 95%.
        assert_eq!(rounds_for_width(0.5, 0.05, 2.0), Some(16));
        let n = rounds_for_width(0.55, 0.05 / 15.0, 2.0).unwrap();
        let z = crate::student::t_critical(f64::INFINITY, 0.05 / 15.0);
        let width = |n: u64| (2.0 * z * 0.55 * (2.0 / n as f64).sqrt()).exp();
        assert!(width(n) <= 2.0 && width(n - 1) > 2.0, "{n}: {} {}", width(n), width(n - 1));
        let double = rounds_for_width(1.1, 0.05 / 15.0, 2.0).unwrap();
        assert!((double as f64 / n as f64 - 4.0).abs() < 0.1, "{double} vs {n}");
        assert_eq!(rounds_for_width(0.001, 0.05, 2.0), Some(2), "never fewer than two");
        assert_eq!(rounds_for_width(0.5, 0.05, 1.0), None);
        assert_eq!(rounds_for_width(0.0, 0.05, 2.0), None);
        assert_eq!(rounds_for_width(f64::NAN, 0.05, 2.0), None);
    }

    #[test]
    fn power_is_the_inverse_of_the_detectable_ratio() {
        for process_sd in [0.0, crate::PROCESS_SD] {
            let ratio = min_detectable_ratio(0.1, 6, process_sd, 0.05, 0.8).unwrap();
            let power = power_of(ratio, 0.1, 6, process_sd, 0.05).unwrap();
            assert!((power - 0.8).abs() < 1e-9, "{power}");
            assert!(power_of(1.0, 0.1, 6, process_sd, 0.05).unwrap() < 0.05);
        }
    }
}
