//! Rounds where they are needed: a group-sequential design whose looks are set before the
//! run, so that a family may stop early on its data and its verdicts still keep their
//! promise.
//!
//! A family is judged at a few pre-set round counts (its looks). At look `k` it is judged
//! as always — Benjamini–Hochberg, intervals at the matching level — but at `q_k`, its
//! share of [`FALSE_DISCOVERY_RATE`] (Σ `q_k` = `q`, a linear spending of `q` over the
//! rounds: `q_k = q · (n_k − n_{k−1}) / n_K`). Whatever decides when a family stops — its
//! own data, the time left — the chance that a family with no true difference shows a call
//! at the look it stopped at is at most the chance that it shows one at any of its looks,
//! which is at most Σ `q_k` = `q` (Bonferroni over the looks; Jennison & Turnbull 2000,
//! ch. 7, call it conservative, which the simulated tests in `tests/method` measure). A
//! family stops when none of its pairs is [`Standing::Open`].

use crate::{Comparison, FALSE_DISCOVERY_RATE, LogRatio, Samples, family, t_critical};

/// The looks of a design: at how many rounds a family is judged, and at which share of
/// `q` each.
#[derive(Debug, Clone, PartialEq)]
pub struct Looks {
    rounds: Vec<usize>,
    q: Vec<f64>,
}

/// Where a pair stands at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Called different: more rounds would not change what it says.
    Called,
    /// Not called, and not likely to be by the last look: the difference seen, with the
    /// spread seen and the last look's rounds, would not be called there even at the most
    /// lenient level a pair of the family can get (`q_K`) — its conditional power on the
    /// current trend is below one half.
    Futile,
    /// Not called yet, and could be with more rounds.
    Open,
}

impl Looks {
    /// One look after `rounds` rounds, at the whole of `q`: the fixed design.
    pub fn fixed(rounds: usize) -> Self {
        Self { rounds: vec![rounds], q: vec![FALSE_DISCOVERY_RATE] }
    }

    /// Looks from `first` rounds to `last`, each about 1.5 times the one before (at least
    /// two rounds later), `q` spent in proportion to the rounds each look adds. `last` at
    /// or below `first`: [`Looks::fixed`] at `first`.
    pub fn planned(first: usize, last: usize) -> Self {
        if last <= first {
            return Self::fixed(first);
        }
        let mut rounds = vec![first];
        while let Some(&previous) = rounds.last().filter(|&&r| r < last) {
            let next = (previous + 2).max((previous * 3).div_ceil(2));
            rounds.push(next.min(last));
        }
        let q = rounds
            .iter()
            .scan(0, |before, &n| {
                let added = n - *before;
                *before = n;
                Some(FALSE_DISCOVERY_RATE * added as f64 / last as f64)
            })
            .collect();
        Self { rounds, q }
    }

    /// The round counts of the looks, in order.
    pub fn rounds(&self) -> &[usize] {
        &self.rounds
    }

    /// Each look's share of `q`, in the looks' order.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// Whether a family may be judged before its last look.
    pub fn sequential(&self) -> bool {
        self.rounds.len() > 1
    }

    /// The look a family of `rounds` rounds is judged at: the first at or after them (a run
    /// cut short between two looks is judged at the later one's level), or the last.
    fn look(&self, rounds: usize) -> usize {
        self.rounds.iter().position(|&n| n >= rounds).unwrap_or(self.rounds.len() - 1)
    }

    /// The `q` a family measured over `rounds` rounds is judged at.
    pub fn q_at(&self, rounds: usize) -> f64 {
        self.q[self.look(rounds)]
    }

    /// The round count of the next look after `rounds`, if there is one.
    pub fn next(&self, rounds: usize) -> Option<usize> {
        self.rounds.iter().copied().find(|&n| n > rounds)
    }

    /// Where the pair of `samples`, judged as `comparison` at `rounds`, stands.
    pub fn standing(&self, samples: &[(f64, f64)], comparison: &Comparison) -> Standing {
        if comparison.differs() {
            return Standing::Called;
        }
        let last = *self.rounds.last().expect("at least one look");
        let Some(test) = LogRatio::paired(samples).filter(|_| samples.len() < last) else {
            return Standing::Futile;
        };
        let sd = test.se * (test.n as f64).sqrt();
        let needed = t_critical((last - 1) as f64, *self.q.last().expect("a look")) * sd
            / (last as f64).sqrt();
        if test.mean.abs() < needed { Standing::Futile } else { Standing::Open }
    }
}

/// Judges `comparisons` as one family at false-discovery rate `q` (a look's share, from
/// [`Looks::q_at`]); otherwise as [`crate::judge`].
pub fn judge_at(comparisons: &[Option<Samples<'_>>], q: f64) -> Vec<Option<Comparison>> {
    let tests: Vec<Option<LogRatio>> =
        comparisons.iter().map(|c| c.as_ref().and_then(Samples::log_ratio)).collect();
    family(&tests, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_grow_by_half_and_spend_q_by_the_rounds_they_add() {
        let looks = Looks::planned(3, 12);
        assert_eq!(looks.rounds(), [3, 5, 8, 12]);
        let spent: f64 = looks.q().iter().sum();
        assert!((spent - FALSE_DISCOVERY_RATE).abs() < 1e-12, "{spent}");
        assert!((looks.q()[0] - FALSE_DISCOVERY_RATE * 3.0 / 12.0).abs() < 1e-12);
        assert!((looks.q()[3] - FALSE_DISCOVERY_RATE * 4.0 / 12.0).abs() < 1e-12);
        assert_eq!(Looks::planned(5, 6).rounds(), [5, 6]);
        assert_eq!(Looks::planned(5, 5), Looks::fixed(5));
        assert!(!Looks::fixed(5).sequential() && looks.sequential());
    }

    #[test]
    fn a_family_is_judged_at_the_look_it_reached_or_the_next() {
        let looks = Looks::planned(3, 12);
        assert_eq!(looks.q_at(3), looks.q()[0]);
        assert_eq!(looks.q_at(4), looks.q()[1], "cut short between two looks: the later");
        assert_eq!(looks.q_at(12), looks.q()[3]);
        assert_eq!(looks.q_at(20), looks.q()[3]);
        assert_eq!((looks.next(3), looks.next(6), looks.next(12)), (Some(5), Some(8), None));
        assert_eq!(Looks::fixed(5).q_at(5), FALSE_DISCOVERY_RATE);
    }

    #[test]
    fn a_pair_is_open_while_more_rounds_could_call_it() {
        let looks = Looks::planned(3, 12);
        let pairs = |ratios: &[f64]| ratios.iter().map(|r| (1.0, *r)).collect::<Vec<_>>();
        let judged = |samples: &[(f64, f64)]| {
            judge_at(&[Some(Samples::Paired(samples))], looks.q_at(samples.len()))[0].unwrap()
        };
        // 10% apart, spread 0.05: not called at 3 rounds, but 12 would call it.
        let close = pairs(&[1.05, 1.15, 1.10]);
        assert_eq!(looks.standing(&close, &judged(&close)), Standing::Open);
        // Alike to a tenth of the spread: no number of rounds left would call it.
        let alike = pairs(&[1.1, 0.9, 1.0]);
        assert_eq!(looks.standing(&alike, &judged(&alike)), Standing::Futile);
        // Twice as fast every round: called.
        let far = pairs(&[2.0, 2.1, 1.9]);
        assert_eq!(looks.standing(&far, &judged(&far)), Standing::Called);
        // At the last look nothing is open.
        let last: Vec<(f64, f64)> = close.iter().cycle().take(12).copied().collect();
        let spread_wide: Vec<(f64, f64)> = last
            .iter()
            .enumerate()
            .map(|(i, (a, b))| (*a, b * if i % 2 == 0 { 1.5 } else { 0.7 }))
            .collect();
        assert_eq!(looks.standing(&spread_wide, &judged(&spread_wide)), Standing::Futile);
    }
}
