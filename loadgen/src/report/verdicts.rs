//! Every verdict the pages show, drawn one way (`bookstore-stats`): the stacks of one
//! scenario × concurrency table are one family, their pairs compared on the ratio of their
//! rates round by round, Benjamini–Hochberg within the family, intervals at the matching
//! level. The headline, the tables, the axis analysis and `loadgen compare` all read their
//! verdicts from here, so they cannot disagree.

use std::collections::BTreeMap;

use bookstore_stats::{Comparison, FALSE_DISCOVERY_RATE, LogRatio, Summary, Verdict, family};

use super::dataset::{Dataset, Metric, RoundKey, Target};
use crate::results::Cell;

/// One stack of a family.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) name: String,
    /// Why its cell is disqualified: it is then in no comparison.
    pub(crate) disqualified: Option<String>,
    /// Its value per round.
    pub(crate) samples: BTreeMap<RoundKey, f64>,
    /// Median and range over the rounds.
    pub(crate) summary: Option<Summary>,
}

impl Member {
    /// Whether it takes part in comparisons.
    pub(crate) fn qualified(&self) -> bool {
        self.disqualified.is_none() && !self.samples.is_empty()
    }

    /// The mean of the logs of its samples (the order of a ranking).
    fn log_mean(&self) -> f64 {
        let logs: Vec<f64> = self.samples.values().filter(|v| **v > 0.0).map(|v| v.ln()).collect();
        if logs.is_empty() {
            f64::NEG_INFINITY
        } else {
            logs.iter().sum::<f64>() / logs.len() as f64
        }
    }
}

/// `(a, b)` of the rounds both were measured in.
fn paired(a: &BTreeMap<RoundKey, f64>, b: &BTreeMap<RoundKey, f64>) -> Vec<(f64, f64)> {
    a.iter().filter_map(|(key, x)| Some((*x, *b.get(key)?))).collect()
}

/// The comparison of A against B from that of B against A.
pub(crate) fn flipped(c: Comparison) -> Comparison {
    let verdict = match c.verdict {
        Verdict::Higher => Verdict::Lower,
        Verdict::Lower => Verdict::Higher,
        Verdict::NotDistinguishable => Verdict::NotDistinguishable,
    };
    Comparison { ratio: 1.0 / c.ratio, low: 1.0 / c.high, high: 1.0 / c.low, verdict, ..c }
}

/// The stacks of one scenario × concurrency, and every pair among the qualified ones.
#[derive(Debug)]
pub(crate) struct Family {
    pub(crate) members: Vec<Member>,
    /// `(i, j)` with `i < j`: `j` against `i`.
    pairs: BTreeMap<(usize, usize), Comparison>,
}

/// Who leads a family.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranking {
    /// Qualified members, highest first (by the geometric mean of their rounds).
    pub(crate) order: Vec<usize>,
    /// The first, and every member the method cannot tell apart from it.
    pub(crate) leaders: Vec<usize>,
    /// The first is distinguishable from every other qualified member: it may be called best.
    pub(crate) best: bool,
}

impl Family {
    /// The family of a metric `value` of each window (`None`: no value in that window).
    fn of(
        dataset: &Dataset<'_>,
        scenario: &str,
        concurrency: u32,
        value: impl Fn(&Cell) -> Option<f64>,
    ) -> Self {
        let members: Vec<Member> = dataset
            .stacks
            .iter()
            .filter_map(|stack| {
                let cell = dataset.cell(&Target::Stack(stack.clone()), scenario, concurrency);
                if cell.is_empty() {
                    return None;
                }
                let samples = cell.by_round(&value);
                let summary = Summary::of(&samples.values().copied().collect::<Vec<_>>());
                Some(Member {
                    name: stack.clone(),
                    disqualified: cell.disqualified(),
                    samples,
                    summary,
                })
            })
            .collect();
        let mut keys = Vec::new();
        let mut tests = Vec::new();
        for i in 0..members.len() {
            for j in i + 1..members.len() {
                if members[i].qualified() && members[j].qualified() {
                    keys.push((i, j));
                    tests.push(LogRatio::paired(&paired(&members[i].samples, &members[j].samples)));
                }
            }
        }
        let pairs = keys
            .into_iter()
            .zip(family(&tests, FALSE_DISCOVERY_RATE))
            .filter_map(|(key, comparison)| Some((key, comparison?)))
            .collect();
        Self { members, pairs }
    }

    /// The family of the scenario's rate.
    pub(crate) fn rates(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        let metric = Metric::for_scenario(scenario);
        Self::of(dataset, scenario, concurrency, |cell| Some(metric.of(cell)))
    }

    /// The family of the p99 latency at saturation (of the answers the scenario is ranked
    /// by): lower is better, so "higher" is slower here.
    pub(crate) fn p99(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        let metric = Metric::for_scenario(scenario);
        Self::of(dataset, scenario, concurrency, |cell| {
            let latency = match metric {
                Metric::Answered => cell.latency_rejected_us.or(cell.latency_ok_us),
                _ => cell.latency_ok_us,
            };
            latency.map(|l| l.p99_us as f64)
        })
    }

    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }

    /// `b` against `a`, when both are qualified and share at least two rounds.
    pub(crate) fn compare(&self, a: &str, b: &str) -> Option<Comparison> {
        let (i, j) = (self.index(a)?, self.index(b)?);
        if i < j {
            self.pairs.get(&(i, j)).copied()
        } else {
            self.pairs.get(&(j, i)).copied().map(flipped)
        }
    }

    /// The ranking by the geometric mean of the rounds, and whether the first is best.
    pub(crate) fn ranking(&self) -> Ranking {
        let mut order: Vec<usize> =
            (0..self.members.len()).filter(|&i| self.members[i].qualified()).collect();
        order.sort_by(|&a, &b| self.members[b].log_mean().total_cmp(&self.members[a].log_mean()));
        let Some(&top) = order.first() else {
            return Ranking { order, leaders: Vec::new(), best: false };
        };
        let top_name = &self.members[top].name;
        let beaten = |other: usize| {
            self.compare(&self.members[other].name, top_name)
                .is_some_and(|c| c.verdict == Verdict::Higher)
        };
        let leaders: Vec<usize> =
            order.iter().copied().filter(|&i| i == top || !beaten(i)).collect();
        let best = order.len() > 1 && leaders.len() == 1;
        Ranking { order, leaders, best }
    }

    /// Pairs called different, and pairs compared.
    pub(crate) fn calls(&self) -> (usize, usize) {
        (self.pairs.values().filter(|c| c.differs()).count(), self.pairs.len())
    }

    /// Every compared pair: (a, b, b against a).
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &str, &Comparison)> {
        self.pairs
            .iter()
            .map(|((i, j), c)| (self.members[*i].name.as_str(), self.members[*j].name.as_str(), c))
    }

    /// The spread across rounds of each compared pair's log ratio (the noise the verdicts
    /// had to see through).
    pub(crate) fn log_ratio_spreads(&self) -> Vec<f64> {
        self.pairs
            .keys()
            .filter_map(|(i, j)| {
                let logs: Vec<f64> = paired(&self.members[*i].samples, &self.members[*j].samples)
                    .into_iter()
                    .filter(|(a, b)| *a > 0.0 && *b > 0.0)
                    .map(|(a, b)| (b / a).ln())
                    .collect();
                (logs.len() >= 2).then(|| {
                    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                    (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64)
                        .sqrt()
                })
            })
            .collect()
    }
}

/// Each stack's rate as a share of its scenario's ceiling measured in the same rounds: one
/// family per scenario × concurrency (one comparison per stack).
#[derive(Debug)]
pub(crate) struct CeilingShares {
    /// Stack → stack ÷ ceiling.
    pub(crate) shares: BTreeMap<String, Comparison>,
}

impl CeilingShares {
    pub(crate) fn of(dataset: &Dataset<'_>, scenario: &str, concurrency: u32) -> Self {
        let metric = Metric::for_scenario(scenario);
        let ceiling = dataset.cell(&Dataset::ceiling_of(scenario), scenario, concurrency);
        let reference = ceiling.by_round(|cell| Some(metric.of(cell)));
        let mut names = Vec::new();
        let mut tests = Vec::new();
        if ceiling.disqualified().is_none() {
            for stack in &dataset.stacks {
                let cell = dataset.cell(&Target::Stack(stack.clone()), scenario, concurrency);
                if cell.is_empty() || cell.disqualified().is_some() {
                    continue;
                }
                let own = cell.by_round(|cell| Some(metric.of(cell)));
                names.push(stack.clone());
                tests.push(LogRatio::paired(&paired(&reference, &own)));
            }
        }
        let shares = names
            .into_iter()
            .zip(family(&tests, FALSE_DISCOVERY_RATE))
            .filter_map(|(name, c)| Some((name, c?)))
            .collect();
        Self { shares }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_comparison_is_the_same_statement_the_other_way_round() {
        let c = Comparison {
            ratio: 1.25,
            low: 1.1,
            high: 1.4,
            level: 0.99,
            p_value: 0.001,
            n: 5,
            verdict: Verdict::Higher,
        };
        let f = flipped(c);
        assert_eq!(f.verdict, Verdict::Lower);
        assert!((f.ratio - 0.8).abs() < 1e-12 && f.low < f.ratio && f.ratio < f.high);
        assert_eq!(flipped(f), c);
    }
}
