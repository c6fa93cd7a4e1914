//! Several things measured side by side in rounds, every pair compared as one family: who
//! leads, and whether it may be called best.

use std::collections::BTreeMap;

use crate::{Comparison, FALSE_DISCOVERY_RATE, LogRatio, Residual, Verdict, family};

/// The comparison of A against B from that of B against A.
pub fn flipped(c: Comparison) -> Comparison {
    let verdict = match c.verdict {
        Verdict::Higher => Verdict::Lower,
        Verdict::Lower => Verdict::Higher,
        Verdict::NotDistinguishable => Verdict::NotDistinguishable,
    };
    Comparison { ratio: 1.0 / c.ratio, low: 1.0 / c.high, high: 1.0 / c.low, verdict, ..c }
}

/// Members measured in rounds (a member's samples keyed by its round), each pair of them
/// compared round by round, all pairs one family.
#[derive(Debug, Clone)]
pub struct Group {
    names: Vec<String>,
    log_means: Vec<f64>,
    /// `(i, j)` with `i < j`: `j` against `i`.
    pairs: BTreeMap<(usize, usize), Comparison>,
    spreads: Vec<f64>,
    /// The members' shared spread its intervals were drawn from, if pooled.
    residual: Option<Residual>,
}

/// Which way is better: a rate is better higher, a latency lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// The highest leads.
    Higher,
    /// The lowest leads.
    Lower,
}

/// Who leads a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Members, the better first (by the geometric mean of their rounds).
    pub order: Vec<usize>,
    /// The first, and every member the method cannot tell apart from it.
    pub leaders: Vec<usize>,
    /// The first is distinguishable from every other member: it may be called best.
    pub best: bool,
}

/// `(a, b)` of the rounds both were measured in.
pub fn shared_rounds<K: Ord>(a: &BTreeMap<K, f64>, b: &BTreeMap<K, f64>) -> Vec<(f64, f64)> {
    a.iter().filter_map(|(key, x)| Some((*x, *b.get(key)?))).collect()
}

/// Every pair (i < j) of `members`, each as [`shared_rounds`]: what a family's pairs are
/// judged on, in [`Group`]'s order.
pub fn every_pair<K: Ord>(members: &[&BTreeMap<K, f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut pairs = Vec::new();
    for (i, a) in members.iter().enumerate() {
        pairs.extend(members[i + 1..].iter().map(|b| shared_rounds(a, b)));
    }
    pairs
}

impl Group {
    /// The group of `members`, each a name and its value per round.
    pub fn paired<K: Ord>(members: &[(String, BTreeMap<K, f64>)]) -> Self {
        Self::paired_at(members, FALSE_DISCOVERY_RATE)
    }

    /// The group of `members` judged at false-discovery rate `q` (a family's level in a
    /// sequential design, [`crate::Looks::level`]).
    pub fn paired_at<K: Ord>(members: &[(String, BTreeMap<K, f64>)], q: f64) -> Self {
        Self::judged(members, q, LogRatio::paired)
    }

    /// The group of `members`, each one process (a stack), judged at `q`: every pair's
    /// interval from its own rounds widened by the spread between processes
    /// ([`crate::Samples::Processes`]).
    pub fn between_processes_at<K: Ord>(members: &[(String, BTreeMap<K, f64>)], q: f64) -> Self {
        Self::judged(members, q, |pairs| crate::Samples::Processes(pairs).log_ratio())
    }

    /// [`Group::between_processes_at`] with a spread between processes of its own,
    /// `process_sd` (a capacity's, [`crate::capacity::PROCESS_SD`], rather than a rate's).
    pub fn between_processes_by<K: Ord>(
        members: &[(String, BTreeMap<K, f64>)],
        q: f64,
        process_sd: f64,
    ) -> Self {
        Self::judged(members, q, |pairs| crate::Samples::Contrast { pairs, process_sd }.log_ratio())
    }

    /// The group of `members`, each one process, judged at `q`: where their noise around
    /// the additive fit is alike ([`Residual::alike`] at `q`), every pair's interval from the
    /// spread they share widened by the spread between processes
    /// ([`crate::Samples::PooledProcesses`]); else as [`Group::between_processes_at`].
    pub fn pooled_between_processes_at<K: Ord>(
        members: &[(String, BTreeMap<K, f64>)],
        q: f64,
    ) -> Self {
        let samples: Vec<&BTreeMap<K, f64>> = members.iter().map(|(_, s)| s).collect();
        let alike = members.len() >= 3 && Residual::alike(&samples, q) == Some(true);
        match Residual::additive(&samples).filter(|_| alike) {
            Some(residual) => Self {
                residual: Some(residual),
                ..Self::judged(members, q, |p| {
                    Some(LogRatio::with_residual(p, residual)?.widened_by(crate::PROCESS_SD))
                })
            },
            None => Self::between_processes_at(members, q),
        }
    }

    /// The group of `members` judged at `q`, every pair's interval from the spread the
    /// members share ([`Residual::additive`]) where there is one, else from its own rounds.
    pub fn pooled_at<K: Ord>(members: &[(String, BTreeMap<K, f64>)], q: f64) -> Self {
        let samples: Vec<&BTreeMap<K, f64>> = members.iter().map(|(_, s)| s).collect();
        match Residual::additive(&samples) {
            Some(residual) => Self {
                residual: Some(residual),
                ..Self::judged(members, q, |p| LogRatio::with_residual(p, residual))
            },
            None => Self::paired_at(members, q),
        }
    }

    fn judged<K: Ord>(
        members: &[(String, BTreeMap<K, f64>)],
        q: f64,
        test: impl Fn(&[(f64, f64)]) -> Option<LogRatio>,
    ) -> Self {
        let mut keys = Vec::new();
        let mut tests = Vec::new();
        let mut spreads = Vec::new();
        for i in 0..members.len() {
            for j in i + 1..members.len() {
                let pairs = shared_rounds(&members[i].1, &members[j].1);
                keys.push((i, j));
                tests.push(test(&pairs));
                let logs: Vec<f64> = pairs
                    .iter()
                    .filter(|(a, b)| *a > 0.0 && *b > 0.0)
                    .map(|(a, b)| (b / a).ln())
                    .collect();
                if logs.len() >= 2 {
                    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                    let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>()
                        / (logs.len() - 1) as f64;
                    spreads.push(variance.sqrt());
                }
            }
        }
        let pairs = keys
            .into_iter()
            .zip(family(&tests, q))
            .filter_map(|(key, comparison)| Some((key, comparison?)))
            .collect();
        let log_means = members
            .iter()
            .map(|(_, samples)| {
                let logs: Vec<f64> =
                    samples.values().filter(|v| **v > 0.0).map(|v| v.ln()).collect();
                if logs.is_empty() {
                    f64::NEG_INFINITY
                } else {
                    logs.iter().sum::<f64>() / logs.len() as f64
                }
            })
            .collect();
        let names = members.iter().map(|(name, _)| name.clone()).collect();
        Self { names, log_means, pairs, spreads, residual: None }
    }

    /// The members' names, in the order given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// `b` against `a`, when both share at least two rounds.
    pub fn compare(&self, a: &str, b: &str) -> Option<Comparison> {
        let (i, j) = (self.index(a)?, self.index(b)?);
        if i < j {
            self.pairs.get(&(i, j)).copied()
        } else {
            self.pairs.get(&(j, i)).copied().map(flipped)
        }
    }

    /// The ranking by the geometric mean of the rounds, highest first, and whether the
    /// first is best.
    pub fn ranking(&self) -> Ranking {
        self.ranking_by(Better::Higher)
    }

    /// The ranking by the geometric mean of the rounds, the `better` end first, and whether
    /// the first is best: distinguishable from every other member, the right way.
    pub fn ranking_by(&self, better: Better) -> Ranking {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|&a, &b| match better {
            Better::Higher => self.log_means[b].total_cmp(&self.log_means[a]),
            Better::Lower => self.log_means[a].total_cmp(&self.log_means[b]),
        });
        let Some(&top) = order.first() else {
            return Ranking { order, leaders: Vec::new(), best: false };
        };
        // The first against `other`, as the better way says it when it is clear.
        let towards_better = match better {
            Better::Higher => Verdict::Higher,
            Better::Lower => Verdict::Lower,
        };
        let beaten = |other: usize| {
            self.compare(&self.names[other], &self.names[top])
                .is_some_and(|c| c.verdict == towards_better)
        };
        let leaders: Vec<usize> =
            order.iter().copied().filter(|&i| i == top || !beaten(i)).collect();
        let best = order.len() > 1 && leaders.len() == 1;
        Ranking { order, leaders, best }
    }

    /// Pairs called different, and pairs compared.
    pub fn calls(&self) -> (usize, usize) {
        (self.pairs.values().filter(|c| c.differs()).count(), self.pairs.len())
    }

    /// Every compared pair: (a, b, b against a).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str, &Comparison)> {
        self.pairs.iter().map(|((i, j), c)| (self.names[*i].as_str(), self.names[*j].as_str(), c))
    }

    /// The shared spread its intervals were drawn from ([`Group::pooled_at`]), `None` when
    /// each pair's came from its own rounds.
    pub fn residual(&self) -> Option<Residual> {
        self.residual
    }

    /// The spread across rounds of each pair's log ratio: the noise the verdicts had to see
    /// through.
    pub fn log_ratio_spreads(&self) -> &[f64] {
        &self.spreads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, values: &[f64]) -> (String, BTreeMap<u32, f64>) {
        (name.to_owned(), values.iter().enumerate().map(|(i, v)| (i as u32, *v)).collect())
    }

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
        let back = flipped(f);
        assert!((back.ratio - c.ratio).abs() < 1e-12 && back.verdict == c.verdict);
    }

    #[test]
    fn a_clear_leader_is_best_and_close_ones_share_the_lead() {
        // A drifts, B is 2× A every round, C within a few percent of B either way.
        let a = [100.0, 130.0, 90.0, 110.0, 120.0];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let c: Vec<f64> =
            b.iter().zip([1.03, 0.97, 1.02, 0.99, 1.01]).map(|(x, f)| x * f).collect();
        let group = Group::paired(&[member("a", &a), member("b", &b)]);
        let ranking = group.ranking();
        assert_eq!((ranking.order.clone(), ranking.best), (vec![1, 0], true));
        assert_eq!(group.compare("a", "b").unwrap().verdict, Verdict::Higher);
        assert_eq!(group.compare("b", "a").unwrap().verdict, Verdict::Lower);

        let group = Group::paired(&[member("a", &a), member("b", &b), member("c", &c)]);
        let ranking = group.ranking();
        assert!(!ranking.best);
        assert_eq!(ranking.leaders.len(), 2, "{ranking:?}");
        assert!(!ranking.leaders.contains(&0));
        assert_eq!(group.calls(), (2, 3));
        assert_eq!(group.log_ratio_spreads().len(), 3);
    }

    #[test]
    fn a_latency_ranks_lowest_first() {
        // B takes twice A's time every round: A leads, and is best.
        let a = [100.0, 130.0, 90.0, 110.0, 120.0];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let group = Group::paired(&[member("b", &b), member("a", &a)]);
        let lowest = group.ranking_by(Better::Lower);
        assert_eq!((lowest.order, lowest.leaders, lowest.best), (vec![1, 0], vec![1], true));
        assert_eq!(group.ranking().order, [0, 1], "the highest first by default");
        // Within a few percent either way: no single lowest.
        let c: Vec<f64> =
            a.iter().zip([1.03, 0.97, 1.02, 0.99, 1.01]).map(|(x, f)| x * f).collect();
        let group = Group::paired(&[member("a", &a), member("b", &b), member("c", &c)]);
        let lowest = group.ranking_by(Better::Lower);
        assert!(!lowest.best);
        assert_eq!(lowest.leaders.len(), 2, "{lowest:?}");
        assert!(!lowest.leaders.contains(&1), "b is clearly slower");
    }

    #[test]
    fn members_without_shared_rounds_are_not_compared() {
        let group = Group::paired(&[member("a", &[1.0]), member("b", &[2.0])]);
        assert!(group.compare("a", "b").is_none());
        assert!(!group.ranking().best, "one round proves nothing");
    }
}
