//! One comparison: the log ratio of B to A, its standard error and degrees of freedom.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::student::{t_critical, t_p_value};

/// `ln(b / a)` estimated from samples: its mean, standard error and degrees of freedom,
/// from which [`crate::family`] draws the verdict and the interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LogRatio {
    /// Samples behind it: pairs (paired), or the smaller side (unpaired).
    pub(crate) n: usize,
    /// Estimated `ln(b / a)`; `exp` of it is the ratio shown (a geometric mean of ratios).
    pub(crate) mean: f64,
    /// Its standard error.
    pub(crate) se: f64,
    /// Degrees of freedom of its t statistic (Welch–Satterthwaite when unpaired).
    pub(crate) df: f64,
}

/// The spread of `ln(b / a)` between two processes of one binary measured side by side in
/// one run, beyond the rounds' own noise: each process keeps a few-percent lead or lag of
/// its own for as long as it runs (what sets it was not measured), which more rounds of the
/// same two processes do not average away. A comparison of two stacks, each one process, is
/// a comparison of two processes; this is the part of it that says nothing about the
/// stacks. Measured on the twins of the kept runs (each the same binary and flags as its
/// stack): the maximum-likelihood fit over their 359 cells of at least five rounds
/// (`scripts/noise-study.py` on `summary/results/2026-12-0[34]*.json` and
/// `2026-12-06T0[0-5]*.json`, the runs of 2026-12-03 to 2026-12-06 05:00 UTC), 0.0135,
/// rounded up to the next half percent. Without it, 22 of those cells (6.1%) fell outside
/// their 95% interval; with it, 7 (1.9%). The measurement: docs/method.md, "Two
/// processes: the spread rounds do not show".
pub const PROCESS_SD: f64 = 0.015;

fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

fn logs(values: impl IntoIterator<Item = f64>) -> Option<Vec<f64>> {
    values.into_iter().map(|v| (v > 0.0 && v.is_finite()).then(|| v.ln())).collect()
}

impl LogRatio {
    /// From `(a, b)` measured side by side, one pair per round: the mean of `ln(b / a)`.
    /// `None` with fewer than two pairs (no spread, so no interval) or a rate that is not
    /// positive (a target that served nothing is not compared by ratio).
    pub(crate) fn paired(pairs: &[(f64, f64)]) -> Option<Self> {
        if pairs.len() < 2 {
            return None;
        }
        let a = logs(pairs.iter().map(|p| p.0))?;
        let b = logs(pairs.iter().map(|p| p.1))?;
        let differences: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let (mean, variance) = mean_and_variance(&differences);
        let n = differences.len();
        Some(Self { n, mean, se: (variance / n as f64).sqrt(), df: (n - 1) as f64 })
    }

    /// From `(a, b)` measured side by side, the mean of `ln(b / a)` as in [`Self::paired`],
    /// its standard error from a `residual` spread shared by the family (see [`Residual`])
    /// rather than the pair's own few rounds.
    pub(crate) fn with_residual(pairs: &[(f64, f64)], residual: Residual) -> Option<Self> {
        let own = Self::paired(pairs)?;
        let se = residual.sd * (2.0 / own.n as f64).sqrt();
        Some(Self { se, df: residual.df, ..own })
    }

    /// This comparison of two processes (or of means of several, a contrast's), its
    /// variance widened by `process_sd`² ([`PROCESS_SD`] between two): what no number of
    /// rounds in one run removes. The degrees of freedom stay the rounds' own:
    /// Satterthwaite's, which grow as the rounds' part of the error shrinks, would be
    /// computed from that same estimate, and a spread that came out low by chance would then
    /// also lower the critical value — in the sequential simulation (`tests/method`), a
    /// family with no difference then called a pair in more than 5% of runs. The rounds'
    /// own are conservative: the known part of the variance only makes the statistic's
    /// tails lighter than Student's.
    pub(crate) fn widened_by(self, process_sd: f64) -> Self {
        Self { se: (self.se.powi(2) + process_sd.powi(2)).sqrt(), ..self }
    }

    /// From two independent sets of samples (two runs): Welch's t on the logs.
    pub(crate) fn unpaired(a: &[f64], b: &[f64]) -> Option<Self> {
        if a.len() < 2 || b.len() < 2 {
            return None;
        }
        let (a, b) = (logs(a.iter().copied())?, logs(b.iter().copied())?);
        let ((mean_a, var_a), (mean_b, var_b)) = (mean_and_variance(&a), mean_and_variance(&b));
        let (va, vb) = (var_a / a.len() as f64, var_b / b.len() as f64);
        let se = (va + vb).sqrt();
        let df = if se > 0.0 {
            (va + vb).powi(2)
                / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64)
        } else {
            (a.len() + b.len() - 2) as f64
        };
        Some(Self { n: a.len().min(b.len()), mean: mean_b - mean_a, se, df })
    }

    /// The estimated ratio `b / a`.
    pub(crate) fn ratio(&self) -> f64 {
        self.mean.exp()
    }

    /// The two-sided p-value of "no difference" (ratio 1). Exactly 0 or 1 when every round
    /// gave the same ratio (no spread: the difference is certain, or there is none).
    pub(crate) fn p_value(&self) -> f64 {
        if self.se == 0.0 {
            return if self.mean == 0.0 { 1.0 } else { 0.0 };
        }
        t_p_value(self.mean / self.se, self.df)
    }

    /// The interval of the ratio at level `1 − alpha`, as `(low, high)`.
    pub(crate) fn interval(&self, alpha: f64) -> (f64, f64) {
        let half = t_critical(self.df, alpha) * self.se;
        ((self.mean - half).exp(), (self.mean + half).exp())
    }
}

/// The spread a family's members share, from the additive model `ln x[member, round] =
/// member + round + noise` fitted to the rounds every member was measured in (two-way
/// analysis of variance without replication): `sd` is the noise's, `df` = (members − 1) ×
/// (rounds − 1). Where every pair's own spread rests on a few rounds (one degree of freedom
/// per round beyond the first), the family's rests on all its members' rounds together; the
/// price is the assumption that the members are equally noisy, which the twins check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Residual {
    /// The per-member, per-round spread of `ln x` around the additive fit.
    pub sd: f64,
    /// Its degrees of freedom.
    pub df: f64,
}

impl Residual {
    /// The fit over `members` (each its value per round), on the rounds all of them share.
    /// `None` with fewer than two members or two shared rounds, or a value that is not
    /// positive.
    pub fn additive<K: Ord>(members: &[&BTreeMap<K, f64>]) -> Option<Self> {
        let (residuals, df) = additive_residuals(members)?;
        let squares: f64 = residuals.iter().flatten().map(|r| r * r).sum();
        Some(Self { sd: (squares / df).sqrt(), df })
    }

    /// Whether the members' noise around the additive fit is alike enough to share, by
    /// Cochran's test (1941) at level `alpha`: the largest member's share of the residual
    /// sum of squares against what sampling alone gives when every member is equally noisy
    /// (each member's squares then about σ² χ² with (rounds − 1)(members − 1) ÷ members
    /// degrees of freedom). `None` where [`Residual::additive`] has no fit.
    pub fn alike<K: Ord>(members: &[&BTreeMap<K, f64>], alpha: f64) -> Option<bool> {
        use statrs::distribution::{ContinuousCDF, FisherSnedecor};
        let (residuals, df) = additive_residuals(members)?;
        let squares: Vec<f64> =
            residuals.iter().map(|row| row.iter().map(|r| r * r).sum()).collect();
        let total: f64 = squares.iter().sum();
        if total <= 0.0 {
            return Some(true);
        }
        let k = squares.len() as f64;
        let largest = squares.iter().copied().fold(0.0, f64::max) / total;
        let nu = df / k;
        let f = FisherSnedecor::new(nu, (k - 1.0) * nu).ok()?.inverse_cdf(1.0 - alpha / k);
        let critical = 1.0 / (1.0 + (k - 1.0) / f);
        Some(largest <= critical)
    }
}

/// The residuals of `ln x[member, round] = member + round + noise` fitted to the rounds every
/// member shares (one row per member), and their degrees of freedom.
fn additive_residuals<K: Ord>(members: &[&BTreeMap<K, f64>]) -> Option<(Vec<Vec<f64>>, f64)> {
    let (first, rest) = members.split_first()?;
    let rounds: Vec<&K> =
        first.keys().filter(|k| rest.iter().all(|m| m.contains_key(*k))).collect();
    let (s, r) = (members.len(), rounds.len());
    if s < 2 || r < 2 {
        return None;
    }
    let y: Vec<Vec<f64>> =
        members.iter().map(|m| logs(rounds.iter().map(|k| m[*k]))).collect::<Option<_>>()?;
    let grand = y.iter().flatten().sum::<f64>() / (s * r) as f64;
    let member_means: Vec<f64> = y.iter().map(|row| row.iter().sum::<f64>() / r as f64).collect();
    let round_means: Vec<f64> =
        (0..r).map(|j| y.iter().map(|row| row[j]).sum::<f64>() / s as f64).collect();
    let residuals = y
        .iter()
        .zip(&member_means)
        .map(|(row, m)| row.iter().zip(&round_means).map(|(v, c)| v - m - c + grand).collect())
        .collect();
    Some((residuals, ((s - 1) * (r - 1)) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cancel_what_both_sides_share() {
        // B is 20% faster in every round while the machine drifts by half: the ratio is
        // certain, the averages' spread is not.
        let pairs: Vec<(f64, f64)> =
            [100.0, 150.0, 80.0, 120.0].iter().map(|&a| (a, a * 1.2)).collect();
        let ratio = LogRatio::paired(&pairs).unwrap();
        assert!((ratio.ratio() - 1.2).abs() < 1e-12);
        assert!(ratio.se < 1e-12 && ratio.p_value() < 1e-12, "{ratio:?}");
        let unpaired = LogRatio::unpaired(
            &pairs.iter().map(|p| p.0).collect::<Vec<_>>(),
            &pairs.iter().map(|p| p.1).collect::<Vec<_>>(),
        )
        .unwrap();
        assert!((unpaired.ratio() - 1.2).abs() < 1e-12);
        assert!(unpaired.p_value() > 0.05, "drift hides it without pairing");
    }

    #[test]
    fn the_interval_is_a_t_interval_of_the_mean_log_ratio() {
        // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, se 0.0577; t(2, 95%) = 4.303.
        let pairs: Vec<(f64, f64)> = [0.1f64, 0.2, 0.3].iter().map(|d| (1.0, d.exp())).collect();
        let ratio = LogRatio::paired(&pairs).unwrap();
        let (low, high) = ratio.interval(0.05);
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((low.ln() - (0.2 - half)).abs() < 1e-3, "{low}");
        assert!((high.ln() - (0.2 + half)).abs() < 1e-3, "{high}");
        assert_eq!(ratio.df, 2.0);
    }

    fn rounds(values: &[f64]) -> BTreeMap<u32, f64> {
        values.iter().enumerate().map(|(i, v)| (i as u32, *v)).collect()
    }

    #[test]
    fn with_two_members_the_shared_spread_is_the_pairs_own() {
        let (a, b) = (rounds(&[100.0, 130.0, 80.0, 120.0]), rounds(&[110.0, 150.0, 85.0, 125.0]));
        let residual = Residual::additive(&[&a, &b]).unwrap();
        let pairs = crate::shared_rounds(&a, &b);
        let own = LogRatio::paired(&pairs).unwrap();
        let pooled = LogRatio::with_residual(&pairs, residual).unwrap();
        assert!((own.se - pooled.se).abs() < 1e-12, "{own:?} {pooled:?}");
        assert_eq!((pooled.df, pooled.mean), (own.df, own.mean));
    }

    #[test]
    fn the_additive_fit_leaves_what_member_and_round_do_not_explain() {
        // Member effects 1, 2, 4 and round effects 1, 1.5, 0.8 multiply exactly: no noise.
        let (m, r) = ([1.0, 2.0, 4.0], [1.0, 1.5, 0.8]);
        let members: Vec<BTreeMap<u32, f64>> =
            m.iter().map(|a| rounds(&r.iter().map(|b| a * b).collect::<Vec<_>>())).collect();
        let refs: Vec<&BTreeMap<u32, f64>> = members.iter().collect();
        let exact = Residual::additive(&refs).unwrap();
        assert!(exact.sd < 1e-12 && exact.df == 4.0, "{exact:?}");
        // One value off by e^0.3: the residual picks it up; a member missing a round leaves
        // that round out of the fit.
        let mut noisy = members.clone();
        *noisy[1].get_mut(&2).unwrap() *= 0.3f64.exp();
        noisy[2].remove(&0);
        let refs: Vec<&BTreeMap<u32, f64>> = noisy.iter().collect();
        let fit = Residual::additive(&refs).unwrap();
        assert_eq!(fit.df, 2.0, "three members, the two rounds all share");
        assert!(fit.sd > 0.05, "{fit:?}");
        assert!(Residual::additive(&refs[..1]).is_none());
    }

    #[test]
    fn too_few_or_empty_samples_give_no_comparison() {
        assert!(LogRatio::paired(&[(1.0, 2.0)]).is_none());
        assert!(LogRatio::paired(&[(1.0, 2.0), (0.0, 2.0)]).is_none());
        assert!(LogRatio::unpaired(&[1.0], &[1.0, 2.0]).is_none());
        let same = LogRatio::paired(&[(3.0, 3.0), (4.0, 4.0)]).unwrap();
        assert_eq!((same.ratio(), same.p_value()), (1.0, 1.0));
    }
}
