//! The one way a verdict is drawn: every page and tool (the suite's summary, `loadgen
//! compare`, dbbench) hands its family of comparisons to [`judge`], so none of them can
//! pick another test, level or correction.

use crate::{Comparison, FALSE_DISCOVERY_RATE, LogRatio, PROCESS_SD, Residual};

/// What one comparison of B against A is drawn from.
#[derive(Debug, Clone, Copy)]
pub enum Samples<'a> {
    /// `(a, b)` measured side by side, one pair per round: the per-round log ratio cancels
    /// the machine's drift.
    Paired(&'a [(f64, f64)]),
    /// Measured side by side as [`Samples::Paired`], by two processes (two stacks, or a
    /// stack and its twin): the interval widened by the spread between processes
    /// ([`crate::PROCESS_SD`]), which the rounds of one run cannot see.
    Processes(&'a [(f64, f64)]),
    /// Measured side by side as [`Samples::Paired`], each side the mean log of several
    /// processes (a factor's effect over a grid of stacks): the interval widened by the
    /// share of the spread between processes that the contrast's weights leave,
    /// `process_sd`.
    Contrast {
        /// `(a, b)` per round.
        pairs: &'a [(f64, f64)],
        /// The contrast's spread between processes.
        process_sd: f64,
    },
    /// Measured side by side as [`Samples::Paired`], the spread taken from the family's
    /// members together ([`Residual::additive`]): for a statistic whose per-round noise is
    /// large and the same for every member (a short window's p99), where a pair's own few
    /// rounds leave a t-interval with one or two degrees of freedom.
    Pooled {
        /// `(a, b)` per shared round.
        pairs: &'a [(f64, f64)],
        /// The family's shared spread.
        residual: Residual,
    },
    /// Measured side by side by two processes as [`Samples::Processes`], the rounds' spread
    /// taken from the family's members together ([`Residual::additive`], where their noise
    /// is alike: [`Residual::alike`]) and widened by the spread between processes: a rate's
    /// family, whose pairs' own few rounds leave their intervals few degrees of freedom.
    PooledProcesses {
        /// `(a, b)` per shared round.
        pairs: &'a [(f64, f64)],
        /// The family's shared spread.
        residual: Residual,
    },
    /// Two runs of one target (`loadgen compare`): Welch's t as [`Samples::Unpaired`], its
    /// variance widened by the spread between processes ([`crate::PROCESS_SD`]), since each
    /// run started its own.
    Runs {
        /// The first run's values.
        a: &'a [f64],
        /// The second run's values.
        b: &'a [f64],
    },
    /// Two independent sets of values (two runs, or configurations measured at different
    /// times): Welch's t on the logs of each side.
    Unpaired {
        /// A's values.
        a: &'a [f64],
        /// B's values.
        b: &'a [f64],
    },
}

impl Samples<'_> {
    pub(crate) fn log_ratio(&self) -> Option<LogRatio> {
        match *self {
            Samples::Paired(pairs) => LogRatio::paired(pairs),
            Samples::Processes(pairs) => Some(LogRatio::paired(pairs)?.widened_by(PROCESS_SD)),
            Samples::Contrast { pairs, process_sd } => {
                Some(LogRatio::paired(pairs)?.widened_by(process_sd))
            }
            Samples::Pooled { pairs, residual } => LogRatio::with_residual(pairs, residual),
            Samples::PooledProcesses { pairs, residual } => {
                Some(LogRatio::with_residual(pairs, residual)?.widened_by(PROCESS_SD))
            }
            Samples::Unpaired { a, b } => LogRatio::unpaired(a, b),
            Samples::Runs { a, b } => Some(LogRatio::unpaired(a, b)?.widened_by(PROCESS_SD)),
        }
    }
}

/// Judges `comparisons` as one family at [`FALSE_DISCOVERY_RATE`]: each present one with
/// enough samples gets its [`Comparison`] (ratio, interval at the family's level, verdict);
/// an absent one, or one with too few samples or a value that is not positive, stays
/// `None`. A family is what a reader sees as one table.
pub fn judge(comparisons: &[Option<Samples<'_>>]) -> Vec<Option<Comparison>> {
    crate::judge_at(comparisons, FALSE_DISCOVERY_RATE)
}

/// Judges one comparison alone (a family of one).
pub fn judge_one(samples: Samples<'_>) -> Option<Comparison> {
    judge(&[Some(samples)]).pop().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    #[test]
    fn paired_rounds_cancel_a_drift_that_unpaired_samples_keep() {
        // B is 10% above A in every round; the machine drifts by ±30% between rounds.
        let a = [100.0, 130.0, 75.0, 110.0, 90.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let pairs: Vec<(f64, f64)> = a.iter().copied().zip(b.iter().copied()).collect();
        let paired = judge_one(Samples::Paired(&pairs)).unwrap();
        assert_eq!(paired.verdict, Verdict::Higher);
        assert!((paired.ratio - 1.1).abs() < 1e-9);
        let unpaired = judge_one(Samples::Unpaired { a: &a, b: &b }).unwrap();
        assert_eq!(unpaired.verdict, Verdict::NotDistinguishable);
    }

    #[test]
    fn a_comparison_without_samples_stays_empty_and_does_not_count() {
        let pairs = [(1.0, 2.0), (1.1, 2.1), (0.9, 1.9)];
        let judged = judge(&[None, Some(Samples::Paired(&pairs)), Some(Samples::Paired(&[]))]);
        assert!(judged[0].is_none() && judged[2].is_none());
        // One present test: its level is 95%, as a family of one.
        assert!((judged[1].unwrap().level - 0.95).abs() < 1e-12);
    }
}
