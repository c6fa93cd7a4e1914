//! Rounds where they are needed: a group-sequential design whose looks are set before the
//! run, so that a family may stop early and its verdicts still keep their promise.
//!
//! A family's pairs are two processes each (two stacks), judged as
//! [`Samples::Processes`].
//!
//! A family is looked at after a few pre-set round counts. At an interim look (every look
//! but the last) its pairs are judged at a strict level, [`INTERIM_SHARE`] of
//! [`FALSE_DISCOVERY_RATE`] split over the interim looks (Haybittle 1971, Peto et al. 1976:
//! a strict interim boundary keeps nearly all of `q` for the end); each pair is then
//! [`Standing::Called`], [`Standing::Futile`] or [`Standing::Open`]. A family with an open
//! pair may get more rounds; one without stops: **judged at the interim level** when one of
//! its pairs was called there, **at the final level** (the rest of `q`) otherwise — a family
//! whose pairs are all futile calls none at either. A family that stops with a pair still
//! open (the budget ran out, or the last look) is judged at the final level.
//!
//! Why that keeps the promise: when no pair of a family differs, it shows a call only if
//! some interim look called a pair at the interim level (at most the interim share, summed
//! over the looks: Bonferroni), or it was judged at the final level at the round count it
//! stopped at and called a pair there. A family reaches the final level only by running
//! out of budget or looks, which is decided by the time and the other families, not by its
//! own rounds (a futile family, which stops on its own data, calls nothing): at most the
//! final share. Together, at most `q`. The simulated tests in `tests/method` measure it.

use crate::{Comparison, FALSE_DISCOVERY_RATE, LogRatio, PROCESS_SD, Samples, family, t_critical};

/// The share of `q` the interim looks spend together: strict enough that an interim call
/// is one no later round would reverse, small enough to leave the final look nearly all of
/// `q`.
pub const INTERIM_SHARE: f64 = 0.1;

/// The most fixed-load rounds a tail question runs per scenario: its last look. At the
/// per-window scatter the kept runs show (about 0.5 on ln p99 at 0.5 s windows), 2× takes
/// 24–48 rounds for two stacks and a twin (`tests/method/tails.rs`); past this the budget,
/// not the looks, ends it.
pub const TAIL_LAST_LOOK: usize = 96;

/// The looks of a design: after how many rounds a family is looked at.
#[derive(Debug, Clone, PartialEq)]
pub struct Looks {
    rounds: Vec<usize>,
}

/// Where a pair stands at an interim look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Called different at the interim level: more rounds would not change what it says.
    Called,
    /// Not called, and not likely to be by the last look: the difference seen, with the
    /// spread seen and the last look's rounds, would not be called there even at the most
    /// lenient level a pair of the family can get (the final share of `q`) — its conditional
    /// power on the current trend is below one half.
    Futile,
    /// Not called yet, and could be with more rounds.
    Open,
}

impl Looks {
    /// One look after `rounds` rounds, at the whole of `q`: the fixed design.
    pub fn fixed(rounds: usize) -> Self {
        Self { rounds: vec![rounds] }
    }

    /// Looks from `first` rounds to `last`, each about 1.5 times the one before (at least
    /// two rounds later). `last` at or below `first`: [`Looks::fixed`] at `first`.
    pub fn planned(first: usize, last: usize) -> Self {
        if last <= first {
            return Self::fixed(first);
        }
        let mut rounds = vec![first];
        while let Some(&previous) = rounds.last().filter(|&&r| r < last) {
            let next = (previous + 2).max((previous * 3).div_ceil(2));
            rounds.push(next.min(last));
        }
        Self { rounds }
    }

    /// Looks from `first` rounds, each twice the one before, the last at or past `last`:
    /// few looks, for a design that judges every look at its share of `q`
    /// ([`Looks::every_look_q`]), where each look costs the others level.
    pub fn doubling(first: usize, last: usize) -> Self {
        let mut rounds = vec![first.max(2)];
        while let Some(&previous) = rounds.last().filter(|&&r| r < last) {
            rounds.push(previous * 2);
        }
        Self { rounds }
    }

    /// A tail question's looks (`loadgen suite --tail-question`): [`Looks::doubling`] from
    /// `first` to [`TAIL_LAST_LOOK`].
    pub fn tail(first: usize) -> Self {
        Self::doubling(first, TAIL_LAST_LOOK)
    }

    /// The round counts of the looks, in order.
    pub fn rounds(&self) -> &[usize] {
        &self.rounds
    }

    /// Whether a family may stop before its last look.
    pub fn sequential(&self) -> bool {
        self.rounds.len() > 1
    }

    /// The level each interim look judges at (0 for a fixed design, which has none).
    pub fn interim_q(&self) -> f64 {
        let interim = self.rounds.len() - 1;
        if interim == 0 { 0.0 } else { FALSE_DISCOVERY_RATE * INTERIM_SHARE / interim as f64 }
    }

    /// The level a family is judged at when it stops without an interim call: what the
    /// interim looks left of `q`.
    pub fn final_q(&self) -> f64 {
        FALSE_DISCOVERY_RATE - self.interim_q() * (self.rounds.len() - 1) as f64
    }

    /// The level every look judges at when a family may stop at any look on anything its
    /// data say — a tail question stops once its intervals are narrow enough, and how
    /// narrow they are depends on the data: `q` split evenly over the looks (Bonferroni),
    /// so that all of them hold together.
    pub fn every_look_q(&self) -> f64 {
        FALSE_DISCOVERY_RATE / self.rounds.len() as f64
    }

    /// The round count of the next look after `rounds`, if there is one.
    pub fn next(&self, rounds: usize) -> Option<usize> {
        self.rounds.iter().copied().find(|&n| n > rounds)
    }

    /// Where each pair of a family (`pairs`: each its `(a, b)` per round) stands, if the
    /// family's rounds are short of the last look: `None` at or after it, where nothing is
    /// open. A pair without two rounds is futile (nothing to judge).
    pub fn standings(&self, pairs: &[&[(f64, f64)]]) -> Option<Vec<Standing>> {
        let last = *self.rounds.last().expect("at least one look");
        let rounds = pairs.iter().map(|p| p.len()).max().unwrap_or(0);
        if rounds >= last || !self.sequential() {
            return None;
        }
        let comparisons: Vec<Option<Samples<'_>>> =
            pairs.iter().map(|p| Some(Samples::Processes(p))).collect();
        let judged = judge_at(&comparisons, self.interim_q());
        let needed_t = t_critical((last - 1) as f64, self.final_q());
        let standings = pairs
            .iter()
            .zip(judged)
            .map(|(pair, comparison)| {
                let (Some(comparison), Some(test)) = (comparison, LogRatio::paired(pair)) else {
                    return Standing::Futile;
                };
                if comparison.differs() {
                    return Standing::Called;
                }
                // The error the last look would have: the rounds' part shrinks with them,
                // the part between processes does not.
                let per_round = test.se.powi(2) * test.n as f64;
                let last_se = (per_round / last as f64 + PROCESS_SD.powi(2)).sqrt();
                if test.mean.abs() < needed_t * last_se { Standing::Futile } else { Standing::Open }
            })
            .collect();
        Some(standings)
    }

    /// The pairs of a family that more rounds could still call.
    pub fn open(&self, pairs: &[&[(f64, f64)]]) -> usize {
        self.standings(pairs).map_or(0, |s| s.iter().filter(|s| **s == Standing::Open).count())
    }

    /// The level a family with these `pairs` is judged at: the interim level if it stopped
    /// at an interim look on a call (no pair open, one called), the final level otherwise
    /// (the whole of `q` for a fixed design).
    pub fn level(&self, pairs: &[&[(f64, f64)]]) -> f64 {
        match self.standings(pairs) {
            Some(standings)
                if !standings.contains(&Standing::Open)
                    && standings.contains(&Standing::Called) =>
            {
                self.interim_q()
            }
            _ => self.final_q(),
        }
    }
}

/// Judges `comparisons` as one family at false-discovery rate `q` (a family's level, from
/// [`Looks::level`]); otherwise as [`crate::judge`].
pub fn judge_at(comparisons: &[Option<Samples<'_>>], q: f64) -> Vec<Option<Comparison>> {
    let tests: Vec<Option<LogRatio>> =
        comparisons.iter().map(|c| c.as_ref().and_then(Samples::log_ratio)).collect();
    family(&tests, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(ratios: &[f64]) -> Vec<(f64, f64)> {
        ratios.iter().map(|r| (1.0, *r)).collect()
    }

    #[test]
    fn looks_grow_by_half_and_the_interim_ones_spend_a_tenth_of_q() {
        let looks = Looks::planned(3, 12);
        assert_eq!(looks.rounds(), [3, 5, 8, 12]);
        let spent = looks.interim_q() * 3.0 + looks.final_q();
        assert!((spent - FALSE_DISCOVERY_RATE).abs() < 1e-12, "{spent}");
        assert!((looks.final_q() - 0.045).abs() < 1e-12);
        assert_eq!(Looks::planned(5, 6).rounds(), [5, 6]);
        assert_eq!(Looks::planned(5, 5), Looks::fixed(5));
        let fixed = Looks::fixed(5);
        assert!(!fixed.sequential() && looks.sequential());
        assert_eq!((fixed.interim_q(), fixed.final_q()), (0.0, FALSE_DISCOVERY_RATE));
        assert_eq!((looks.next(3), looks.next(6), looks.next(12)), (Some(5), Some(8), None));
    }

    #[test]
    fn a_tail_questions_looks_double_to_the_last_and_share_q_evenly() {
        let looks = Looks::tail(3);
        assert_eq!(looks.rounds(), [3, 6, 12, 24, 48, 96]);
        assert!((looks.every_look_q() - FALSE_DISCOVERY_RATE / 6.0).abs() < 1e-12);
        assert_eq!(Looks::doubling(4, 40).rounds(), [4, 8, 16, 32, 64]);
    }

    #[test]
    fn a_pair_is_open_while_more_rounds_could_call_it() {
        let looks = Looks::planned(3, 12);
        // 10% apart, spread 0.05: not called in 3 rounds, but 12 would call it.
        let close = pairs(&[1.05, 1.15, 1.10]);
        // Alike to a tenth of the spread: no number of rounds left would call it.
        let alike = pairs(&[1.1, 0.9, 1.0]);
        // Twice as fast every round, within a percent: called even at the interim level.
        let far = pairs(&[2.0, 2.01, 1.99]);
        let standings = looks.standings(&[&close, &alike, &far]).unwrap();
        assert_eq!(standings, [Standing::Open, Standing::Futile, Standing::Called]);
        assert_eq!(looks.open(&[&close, &alike, &far]), 1);
        // At the last look nothing is open, and a fixed design has no interim look.
        let twelve: Vec<(f64, f64)> = close.iter().cycle().take(12).copied().collect();
        assert!(looks.standings(&[&twelve]).is_none());
        assert_eq!(Looks::fixed(3).open(&[&close]), 0);
    }

    #[test]
    fn a_family_that_stopped_on_a_call_is_judged_at_the_interim_level_any_other_at_the_final() {
        let looks = Looks::planned(3, 12);
        let (alike, far) = (pairs(&[1.1, 0.9, 1.0]), pairs(&[2.0, 2.01, 1.99]));
        let close = pairs(&[1.05, 1.15, 1.10]);
        assert_eq!(looks.level(&[&alike, &far]), looks.interim_q(), "settled on a call");
        assert_eq!(looks.level(&[&alike, &alike]), looks.final_q(), "all futile");
        assert_eq!(looks.level(&[&close, &far]), looks.final_q(), "stopped while open");
        let twelve: Vec<(f64, f64)> = far.iter().cycle().take(12).copied().collect();
        assert_eq!(looks.level(&[&twelve]), looks.final_q(), "the last look");
        assert_eq!(Looks::fixed(3).level(&[&far]), FALSE_DISCOVERY_RATE);
    }
}
