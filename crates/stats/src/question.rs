//! One question, answered as precisely as asked: is B faster than A, and by how much?
//!
//! `loadgen ab` measures two parties in rounds. A round is ABBA (or BAAB): two pairs of
//! windows in mirrored order, so that a drift linear in time falls on both sides alike and
//! cancels in the round's mean log ratio ([`order_effect`] measures what is left of it).
//! Where the run starts the parties itself, each side's process is replaced every few
//! rounds: a **block** is the rounds one pair of processes measured.
//!
//! - **The estimate.** `ln(B / A)` is the mean of the blocks' means; its standard error is
//!   the spread of the block means ÷ √blocks, with blocks − 1 degrees of freedom. The
//!   spread between processes — each process's own lead or lag for as long as it runs
//!   ([`crate::PROCESS_SD`]) — is then part of what is measured, and shrinks with more
//!   blocks instead of flooring the answer. [`Answer::process_sd`] says how large it was in
//!   this run (the block means' spread beyond what their rounds explain).
//! - **One process per side** (a URL someone else started): the rounds are the samples and
//!   [`crate::PROCESS_SD`] is added to their variance, as the suite does. No number of rounds
//!   then makes the answer finer than that floor (about ±2.9% at 95%).
//! - **Stopping on the data.** The question is looked at after block (or round) counts
//!   planned before the run, each about 1.5 times the one before. At every look the
//!   interval is drawn at level 1 − α/K, K the number of looks planned (Bonferroni over the
//!   looks): all K intervals hold the truth together with probability at least 1 − α, so the
//!   one of whichever look the run stops at — because it was as narrow as asked, or the
//!   budget was spent, or the looks ran out — keeps the promise. The tests in
//!   `tests/method/question.rs` measure it on simulated twins.

use crate::student::t_critical;
use crate::{PROCESS_SD, Verdict};

/// How a question is looked at: after which counts of blocks (or rounds) and at which
/// level, and how narrow an interval ends it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionPlan {
    looks: Vec<usize>,
    alpha: f64,
    precision: f64,
}

impl QuestionPlan {
    /// Looks from `first` to `last` units (blocks, or rounds with one process per side),
    /// each about 1.5 times the one before; all of them together at level `1 − alpha`;
    /// ended early once the interval of B ÷ A is within ±`precision` (0.02: ±2%).
    pub fn new(first: usize, last: usize, alpha: f64, precision: f64) -> Self {
        let first = first.max(2);
        let mut looks = vec![first];
        while let Some(&previous) = looks.last().filter(|&&n| n < last) {
            looks.push((previous + 1).max((previous * 3).div_ceil(2)).min(last));
        }
        Self { looks, alpha, precision }
    }

    /// The unit counts of the looks, in order.
    pub fn looks(&self) -> &[usize] {
        &self.looks
    }

    /// The level each look's interval is drawn at: 1 − α / looks.
    pub fn level(&self) -> f64 {
        1.0 - self.alpha / self.looks.len() as f64
    }

    /// The precision that ends the question: ±this share.
    pub fn precision(&self) -> f64 {
        self.precision
    }

    /// Whether `units` is a look.
    pub fn is_look(&self, units: usize) -> bool {
        self.looks.contains(&units)
    }

    /// The last look.
    pub fn last(&self) -> usize {
        *self.looks.last().expect("at least one look")
    }

    /// The answer `samples` give at this plan's level; `None` with fewer than two units.
    pub fn answer(&self, samples: &Samples<'_>) -> Option<Answer> {
        let alpha = 1.0 - self.level();
        match *samples {
            Samples::Blocks(blocks) => blocks_answer(blocks, alpha),
            Samples::Rounds(rounds) => rounds_answer(rounds, alpha),
        }
    }

    /// Whether `answer` is as narrow as asked: its interval within ±precision of its ratio.
    pub fn precise(&self, answer: &Answer) -> bool {
        answer.half_width() <= (1.0 + self.precision).ln()
    }

    /// Whether the question ends at `units` (a look, or not), and why: its answer `precise`
    /// enough, the last look reached, or the next look not paid for by what is left of
    /// `budget_seconds` at the pace so far (`spent_seconds` for these units). The budget is
    /// read at the looks only, so that every answer a question ends with is a look's.
    pub fn end(
        &self,
        units: usize,
        precise: bool,
        spent_seconds: f64,
        budget_seconds: f64,
    ) -> Option<End> {
        if !self.is_look(units) {
            return None;
        }
        if precise {
            return Some(End::Precision);
        }
        if units >= self.last() {
            return Some(End::Looks);
        }
        let next = self.looks.iter().copied().find(|&n| n > units).unwrap_or(units);
        let per_unit = spent_seconds / units as f64;
        (per_unit * (next - units) as f64 > budget_seconds - spent_seconds).then_some(End::Budget)
    }
}

/// Why a question ended at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Its interval was as narrow as asked.
    Precision,
    /// The last planned look.
    Looks,
    /// The next look would not fit in the budget.
    Budget,
}

impl End {
    /// As the results file says it: `precision`, `looks`, `budget`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Precision => "precision",
            Self::Looks => "looks",
            Self::Budget => "budget",
        }
    }
}

/// What a question's answer is drawn from: each value one round's `ln(B / A)` (the mean of
/// its two mirrored pairs).
#[derive(Debug, Clone, Copy)]
pub enum Samples<'a> {
    /// The rounds of each pair of processes, a block each, processes replaced between them.
    Blocks(&'a [Vec<f64>]),
    /// The rounds of one process per side.
    Rounds(&'a [f64]),
}

/// B ÷ A with its interval, and what it was drawn from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    /// Estimated B ÷ A.
    pub ratio: f64,
    /// The interval's ends.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
    /// The interval's confidence level (the plan's, every look's together).
    pub level: f64,
    /// Blocks (pairs of processes) behind it; 1 with one process per side.
    pub blocks: usize,
    /// Rounds behind it.
    pub rounds: usize,
    /// Degrees of freedom of its t statistic.
    pub df: f64,
    /// The spread between two processes this run measured (sd of a block's mean log ratio
    /// beyond its rounds' own noise); `None` with one process per side, where
    /// [`crate::PROCESS_SD`] is assumed instead.
    pub process_sd: Option<f64>,
    /// The spread of one round's log ratio.
    pub round_sd: f64,
    /// What the interval says: B higher, lower, or not distinguishable from A.
    pub verdict: Verdict,
}

impl Answer {
    /// The interval's half width on the log scale (its wider side).
    pub fn half_width(&self) -> f64 {
        (self.high / self.ratio).ln().max((self.ratio / self.low).ln())
    }

    /// The answer in words, B's value against A's: "B is 4.1% [2.6–5.7%] faster", or "not
    /// distinguishable: the data allows −1.2% to +1.8%". `higher_is_better`: a rate (more
    /// is faster); otherwise a latency (less is faster).
    pub fn words(&self, higher_is_better: bool) -> String {
        let (higher, lower) =
            if higher_is_better { ("faster", "slower") } else { ("slower", "faster") };
        self.words_of("B", higher, lower)
    }

    /// The answer in words about `subject`, B's value: "{subject} is 8.1% [5.0–11.0%]
    /// {lower}" (or {higher}), or "not distinguishable: the data allows …".
    pub fn words_of(&self, subject: &str, higher: &str, lower: &str) -> String {
        let percent = |ratio: f64| (ratio - 1.0) * 100.0;
        let signed = |ratio: f64| {
            let p = percent(ratio);
            let sign = if p < 0.0 { '−' } else { '+' };
            format!("{sign}{:.1}%", p.abs())
        };
        match self.verdict {
            Verdict::NotDistinguishable => format!(
                "not distinguishable: the data allows {} to {}",
                signed(self.low),
                signed(self.high)
            ),
            verdict => {
                let more = verdict == Verdict::Higher;
                let word = if more { higher } else { lower };
                // "4.1% [2.6–5.7%]" for more, "3.0% [1.2–4.8%]" less: the share B differs by.
                let (value, near, far) = if more {
                    (percent(self.ratio), percent(self.low), percent(self.high))
                } else {
                    (-percent(self.ratio), -percent(self.high), -percent(self.low))
                };
                format!("{subject} is {value:.1}% [{near:.1}–{far:.1}%] {word}")
            }
        }
    }
}

/// The answer from blocks: the mean of their means, the spread of those means.
fn blocks_answer(blocks: &[Vec<f64>], alpha: f64) -> Option<Answer> {
    let blocks: Vec<&Vec<f64>> = blocks.iter().filter(|b| !b.is_empty()).collect();
    let rounds: usize = blocks.iter().map(|b| b.len()).sum();
    if blocks.len() < 2 {
        return None;
    }
    let means: Vec<f64> = blocks.iter().map(|b| b.iter().sum::<f64>() / b.len() as f64).collect();
    let (mean, between) = mean_and_variance(&means);
    let n = means.len() as f64;
    // The rounds' own noise within blocks (pooled), and what of the blocks' spread it
    // explains: the rest is the processes' (method of moments, never below zero).
    let (within_ss, within_df) = blocks.iter().fold((0.0, 0usize), |(ss, df), block| {
        let m = block.iter().sum::<f64>() / block.len() as f64;
        (ss + block.iter().map(|v| (v - m).powi(2)).sum::<f64>(), df + block.len() - 1)
    });
    let within = if within_df > 0 { within_ss / within_df as f64 } else { 0.0 };
    let per_block = rounds as f64 / n;
    let process_sd = (between - within / per_block).max(0.0).sqrt();
    let se = (between / n).sqrt();
    Some(finish(mean, se, n - 1.0, alpha, blocks.len(), rounds, Some(process_sd), within.sqrt()))
}

/// The answer from one process per side: the rounds, widened by the spread between
/// processes the twins measured.
fn rounds_answer(rounds: &[f64], alpha: f64) -> Option<Answer> {
    if rounds.len() < 2 {
        return None;
    }
    let (mean, variance) = mean_and_variance(rounds);
    let n = rounds.len() as f64;
    let se = (variance / n + PROCESS_SD.powi(2)).sqrt();
    Some(finish(mean, se, n - 1.0, alpha, 1, rounds.len(), None, variance.sqrt()))
}

#[allow(clippy::too_many_arguments)] // one answer's fields, named where they are built
fn finish(
    mean: f64,
    se: f64,
    df: f64,
    alpha: f64,
    blocks: usize,
    rounds: usize,
    process_sd: Option<f64>,
    round_sd: f64,
) -> Answer {
    let half = t_critical(df, alpha) * se;
    let (low, high) = ((mean - half).exp(), (mean + half).exp());
    let verdict = Verdict::of_interval(low, high);
    Answer {
        ratio: mean.exp(),
        low,
        high,
        level: 1.0 - alpha,
        blocks,
        rounds,
        df,
        process_sd,
        round_sd,
        verdict,
    }
}

fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, variance)
}

/// What the mirrored order left of the machine's drift: from each round's `ln(B / A)` with A
/// measured first and with B measured first, half their mean difference and its standard
/// error. Near zero: the order did not matter; far from it: a drift within the round that
/// the mirrored order cancelled (and an AB-only order would have put on one side).
pub fn order_effect(rounds: &[(f64, f64)]) -> Option<(f64, f64)> {
    if rounds.len() < 2 {
        return None;
    }
    let differences: Vec<f64> =
        rounds.iter().map(|(a_first, b_first)| (a_first - b_first) / 2.0).collect();
    let (mean, variance) = mean_and_variance(&differences);
    Some((mean, (variance / differences.len() as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_grow_by_half_and_end_at_the_last_and_share_alpha_between_them() {
        let plan = QuestionPlan::new(3, 40, 0.05, 0.02);
        assert_eq!(plan.looks(), [3, 5, 8, 12, 18, 27, 40]);
        assert!((plan.level() - (1.0 - 0.05 / 7.0)).abs() < 1e-12);
        assert!(plan.is_look(12) && !plan.is_look(13));
        assert_eq!(QuestionPlan::new(4, 4, 0.05, 0.02).looks(), [4]);
    }

    #[test]
    fn blocks_carry_the_spread_between_processes_in_their_means() {
        // Every round of a block alike, the blocks 2% apart: no round noise, all of the
        // spread is the processes'.
        let blocks: Vec<Vec<f64>> =
            [0.01, -0.01, 0.01, -0.01].iter().map(|&m| vec![m; 4]).collect();
        let answer = QuestionPlan::new(2, 4, 0.05, 0.02).answer(&Samples::Blocks(&blocks)).unwrap();
        assert!((answer.ratio - 1.0).abs() < 1e-12);
        assert!((answer.process_sd.unwrap() - 0.011547).abs() < 1e-5, "{answer:?}");
        assert_eq!((answer.blocks, answer.rounds, answer.df), (4, 16, 3.0));
        assert_eq!(answer.verdict, Verdict::NotDistinguishable);
    }

    #[test]
    fn one_process_per_side_cannot_be_finer_than_the_spread_between_processes() {
        let rounds = vec![0.0; 1000];
        let rounds: Vec<f64> = rounds
            .iter()
            .enumerate()
            .map(|(i, _)| if i % 2 == 0 { 0.001 } else { -0.001 })
            .collect();
        let answer =
            QuestionPlan::new(2, 1000, 0.05, 0.02).answer(&Samples::Rounds(&rounds)).unwrap();
        assert!(answer.half_width() > 1.9 * PROCESS_SD, "{answer:?}");
        assert_eq!(answer.process_sd, None);
    }

    #[test]
    fn the_words_say_faster_or_slower_by_the_share_and_not_distinguishable_by_the_bounds() {
        let answer = |ratio: f64, low: f64, high: f64, verdict| Answer {
            ratio,
            low,
            high,
            level: 0.99,
            blocks: 10,
            rounds: 40,
            df: 9.0,
            process_sd: Some(0.01),
            round_sd: 0.05,
            verdict,
        };
        assert_eq!(
            answer(1.041, 1.026, 1.057, Verdict::Higher).words(true),
            "B is 4.1% [2.6–5.7%] faster"
        );
        assert_eq!(
            answer(0.96, 0.94, 0.98, Verdict::Lower).words(true),
            "B is 4.0% [2.0–6.0%] slower"
        );
        assert_eq!(
            answer(0.96, 0.94, 0.98, Verdict::Lower).words(false),
            "B is 4.0% [2.0–6.0%] faster"
        );
        assert_eq!(
            answer(1.003, 0.988, 1.018, Verdict::NotDistinguishable).words(true),
            "not distinguishable: the data allows −1.2% to +1.8%"
        );
    }

    #[test]
    fn the_order_effect_is_half_the_difference_of_the_two_orders() {
        let rounds = [(0.03, -0.01), (0.02, 0.0), (0.04, 0.0)];
        let (effect, se) = order_effect(&rounds).unwrap();
        assert!((effect - 0.0166667).abs() < 1e-6 && se > 0.0);
    }

    #[test]
    fn an_interval_within_the_precision_ends_the_question() {
        let plan = QuestionPlan::new(3, 30, 0.05, 0.02);
        let tight: Vec<Vec<f64>> = (0..6).map(|i| vec![0.05 + 0.001 * (i % 2) as f64; 4]).collect();
        let answer = plan.answer(&Samples::Blocks(&tight)).unwrap();
        assert!(plan.precise(&answer) && answer.verdict == Verdict::Higher, "{answer:?}");
        let loose: Vec<Vec<f64>> = (0..3).map(|i| vec![0.1 * (i as f64 - 1.0); 4]).collect();
        assert!(!plan.precise(&plan.answer(&Samples::Blocks(&loose)).unwrap()));
    }
}
