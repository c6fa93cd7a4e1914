//! Student's t and the binomial tail, from statrs: the distributions every interval and
//! chance on the pages is read from.

/// The two-sided critical value of Student's t with `df` degrees of freedom at level
/// `1 − alpha` (e.g. 2.776 for df 4, alpha 0.05); the normal's for infinite `df`.
pub fn t_critical(df: f64, alpha: f64) -> f64 {
    t_quantile(df, 1.0 - alpha / 2.0)
}

/// The chance that `hits` or more of `trials` independent trials succeed, each with
/// probability `rate` (the binomial's upper tail): e.g. that `hits` of `trials` twin
/// families are called different by chance alone, each at a false-call rate `rate`.
pub fn chance_of_at_least(hits: u64, trials: u64, rate: f64) -> f64 {
    use statrs::distribution::{Binomial, DiscreteCDF};
    if hits == 0 {
        return 1.0;
    }
    let binomial = Binomial::new(rate.clamp(0.0, 1.0), trials).expect("a rate in 0..=1: valid");
    binomial.sf(hits - 1)
}

/// Student's t with `df` degrees of freedom (at least 1), or the standard normal for an
/// infinite `df` (statrs's t quantile does not terminate there).
fn distribution(df: f64) -> Box<dyn statrs::distribution::ContinuousCDF<f64, f64>> {
    use statrs::distribution::{Normal, StudentsT};
    if df.is_finite() {
        Box::new(StudentsT::new(0.0, 1.0, df.max(1.0)).expect("df ≥ 1, unit scale: valid"))
    } else {
        Box::new(Normal::standard())
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom.
pub(crate) fn t_quantile(df: f64, p: f64) -> f64 {
    distribution(df).inverse_cdf(p)
}

/// The lower-tail probability of `x` under Student's t with `df` degrees of freedom.
pub(crate) fn t_cdf(x: f64, df: f64) -> f64 {
    distribution(df).cdf(x)
}

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom.
pub(crate) fn t_p_value(t: f64, df: f64) -> f64 {
    (2.0 * distribution(df).sf(t.abs())).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_chance_calls_in_six_are_rarer_than_one_in_twenty_and_one_is_not() {
        // 1 − 0.95⁶ − 6 × 0.05 × 0.95⁵
        assert!((chance_of_at_least(2, 6, 0.05) - 0.0328).abs() < 1e-4);
        assert!((chance_of_at_least(1, 6, 0.05) - (1.0 - 0.95f64.powi(6))).abs() < 1e-12);
        assert_eq!(chance_of_at_least(0, 6, 0.05), 1.0);
        assert!(chance_of_at_least(7, 6, 0.05) < 1e-12);
    }

    #[test]
    fn critical_values_match_the_tables() {
        for (df, alpha, expected) in [
            (1.0, 0.05, 12.706),
            (4.0, 0.05, 2.776),
            (4.0, 0.005, 5.598),
            (9.0, 0.05, 2.262),
            (30.0, 0.05, 2.042),
            (f64::INFINITY, 0.05, 1.960),
        ] {
            let t = t_critical(df, alpha);
            assert!((t - expected).abs() < 0.001, "df {df}, alpha {alpha}: {t}");
        }
    }

    #[test]
    fn p_values_invert_the_critical_values() {
        for df in [2.0, 4.0, 12.0] {
            for alpha in [0.05, 0.01, 0.005] {
                let p = t_p_value(t_critical(df, alpha), df);
                assert!((p - alpha).abs() < 1e-9, "df {df}: {p} vs {alpha}");
            }
        }
        assert_eq!(t_p_value(0.0, 4.0), 1.0);
    }
}
