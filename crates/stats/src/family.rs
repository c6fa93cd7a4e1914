//! A family of comparisons judged together: Benjamini–Hochberg at [`FALSE_DISCOVERY_RATE`],
//! every interval at the level that matches the procedure's calls.

use serde::Serialize;

use crate::LogRatio;

/// `q` of the Benjamini–Hochberg procedure: among the pairs called different, the expected
/// share that are not is at most this; when no pair differs, it bounds the chance of any
/// call at all.
pub const FALSE_DISCOVERY_RATE: f64 = 0.05;

/// What a comparison of B against A can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B's rate is higher: the whole interval lies above 1.
    Higher,
    /// B's rate is lower: the whole interval lies below 1.
    Lower,
    /// The interval holds 1: the data cannot tell them apart.
    NotDistinguishable,
}

impl Verdict {
    /// As the results and exports write it: `higher`, `lower`, `not_distinguishable`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::NotDistinguishable => "not_distinguishable",
        }
    }

    /// What an interval of B ÷ A from `low` to `high` says: higher or lower only when it
    /// lies wholly on one side of 1.
    pub fn of_interval(low: f64, high: f64) -> Self {
        if low > 1.0 {
            Verdict::Higher
        } else if high < 1.0 {
            Verdict::Lower
        } else {
            Verdict::NotDistinguishable
        }
    }
}

/// One judged comparison of B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// Estimated `b / a`.
    pub ratio: f64,
    /// The interval's ends, at `level`.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// The interval's confidence level (e.g. 0.995 for one call in a family of ten).
    pub level: f64,
    /// The unadjusted two-sided p-value.
    pub p_value: f64,
    /// Samples behind it (rounds).
    pub n: usize,
    /// What the interval says.
    pub verdict: Verdict,
}

impl Comparison {
    /// "1.23× [1.10–1.37]", or "not distinguishable (1.04× [0.91–1.19], n = 5)".
    pub fn text(&self) -> String {
        let interval =
            format!("{}× [{}–{}]", digits(self.ratio), digits(self.low), digits(self.high));
        match self.verdict {
            Verdict::NotDistinguishable => {
                format!("not distinguishable ({interval}, n = {})", self.n)
            }
            _ => interval,
        }
    }

    /// "1.23× [1.10–1.37]", or "≈ 1.04× [0.91–1.19]" where not distinguishable: the
    /// Markdown tables' and the page's top's short form.
    pub fn compact(&self) -> String {
        let interval =
            format!("{}× [{}–{}]", digits(self.ratio), digits(self.low), digits(self.high));
        if self.differs() { interval } else { format!("≈ {interval}") }
    }

    /// Whether B is called different from A.
    pub fn differs(&self) -> bool {
        self.verdict != Verdict::NotDistinguishable
    }
}

/// A ratio with three significant digits (0.987, 1.23, 12.3), as [`Comparison::text`]
/// writes it.
pub fn digits(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// Judges `tests` as one family at false-discovery rate `q`: each present test gets its
/// comparison, absent ones (too few samples) stay `None`. With `R` of the `m` present
/// tests called different by Benjamini–Hochberg, every interval is at level `1 − max(R, 1)·q/m`:
/// a called pair's p-value is at most `R·q/m`, so its interval excludes 1; any other's
/// exceeds `(R+1)·q/m`, so its interval holds 1. The verdict is read off the interval.
pub(crate) fn family(tests: &[Option<LogRatio>], q: f64) -> Vec<Option<Comparison>> {
    let mut present: Vec<(usize, f64)> =
        tests.iter().enumerate().filter_map(|(i, t)| Some((i, t.as_ref()?.p_value()))).collect();
    let m = present.len();
    present.sort_by(|a, b| a.1.total_cmp(&b.1));
    let called = present
        .iter()
        .enumerate()
        .filter(|(rank, (_, p))| *p <= (rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank + 1)
        .max()
        .unwrap_or(0);
    let alpha = called.max(1) as f64 * q / m.max(1) as f64;
    tests
        .iter()
        .map(|test| {
            let test = test.as_ref()?;
            let (low, high) = test.interval(alpha);
            let verdict = Verdict::of_interval(low, high);
            Some(Comparison {
                ratio: test.ratio(),
                low,
                high,
                level: 1.0 - alpha,
                p_value: test.p_value(),
                n: test.n,
                verdict,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(mean: f64, se: f64) -> Option<LogRatio> {
        Some(LogRatio { n: 5, mean, se, df: 4.0 })
    }

    #[test]
    fn verdicts_and_intervals_never_disagree() {
        // A spread of effects, some at the edge of significance.
        let tests: Vec<Option<LogRatio>> = (0..40)
            .map(|i| test(-0.4 + i as f64 * 0.02, 0.05 + (i % 7) as f64 * 0.01))
            .chain([None])
            .collect();
        let judged = family(&tests, FALSE_DISCOVERY_RATE);
        assert_eq!(judged.len(), 41);
        assert!(judged[40].is_none());
        let p_values: Vec<f64> = judged.iter().flatten().map(|c| c.p_value).collect();
        let called: Vec<bool> = judged.iter().flatten().map(Comparison::differs).collect();
        assert!(called.iter().any(|c| *c) && called.iter().any(|c| !*c));
        // Every call has a smaller p-value than every non-call (a step-up procedure).
        let largest_called =
            p_values.iter().zip(&called).filter(|(_, c)| **c).map(|(p, _)| *p).fold(0.0, f64::max);
        let smallest_not =
            p_values.iter().zip(&called).filter(|(_, c)| !**c).map(|(p, _)| *p).fold(1.0, f64::min);
        assert!(largest_called < smallest_not);
        for c in judged.iter().flatten() {
            assert_eq!(c.differs(), c.low > 1.0 || c.high < 1.0, "{c:?}");
            assert!(c.low <= c.ratio && c.ratio <= c.high);
            assert_eq!(c.level, judged[0].unwrap().level, "one level per family");
        }
    }

    #[test]
    fn benjamini_hochberg_steps_up() {
        // m = 4, q = 0.05: thresholds 0.0125, 0.025, 0.0375, 0.05. p-values (two-sided, df
        // infinite) 0.001, 0.03, 0.035, 0.2: the third passes its threshold, so the first
        // three are called, though the second alone would fail its own.
        let z = |p: f64| crate::t_critical(f64::INFINITY, p);
        let tests: Vec<Option<LogRatio>> = [0.001, 0.03, 0.035, 0.2]
            .iter()
            .map(|&p| Some(LogRatio { n: 100, mean: z(p), se: 1.0, df: f64::INFINITY }))
            .collect();
        let judged = family(&tests, 0.05);
        let called: Vec<bool> = judged.iter().flatten().map(Comparison::differs).collect();
        assert_eq!(called, [true, true, true, false]);
        assert!((judged[0].unwrap().level - (1.0 - 3.0 * 0.05 / 4.0)).abs() < 1e-12);
    }

    #[test]
    fn with_no_call_the_level_is_bonferronis() {
        let judged = family(&[test(0.01, 0.1), test(-0.02, 0.1)], 0.05);
        for c in judged.iter().flatten() {
            assert_eq!(c.verdict, Verdict::NotDistinguishable);
            assert!((c.level - 0.975).abs() < 1e-12);
        }
    }

    #[test]
    fn text_says_what_a_reader_needs() {
        let judged = family(&[test(0.2, 0.01), test(0.0, 0.1)], 0.05);
        let faster = judged[0].unwrap().text();
        assert!(faster.starts_with("1.22× [1.") && faster.ends_with(']'), "{faster}");
        let same = judged[1].unwrap().text();
        assert!(same.starts_with("not distinguishable (1.00× [0.") && same.ends_with("n = 5)"));
        assert_eq!(judged[0].unwrap().verdict, Verdict::Higher);
        let slower = family(&[test(-0.2, 0.01)], 0.05)[0].unwrap();
        assert_eq!(slower.verdict, Verdict::Lower);
    }
}
