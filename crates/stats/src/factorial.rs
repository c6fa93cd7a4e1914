//! A full factorial of three factors (framework × serializer × access, or framework ×
//! runtime layout × access), every cell measured
//! in the same rounds: the additive model's effects as ratios, and its two-way
//! interactions, each as a pair of values per round that [`crate::judge`] compares.
//!
//! With every cell in every round the design is balanced, so the least-squares fit of the
//! additive model `ln rate = round + framework + serializer + access` estimates a factor's
//! effect, level `l` against a baseline `b`, as the difference of the two levels' mean log
//! rates — here taken round by round: in round r, `ln B_r − ln A_r` where `A_r` and `B_r`
//! are the geometric means of the cells at `b` and at `l`. Each round then gives one value
//! of the contrast, its machine drift cancelled as in any pair of the suite, and the rounds
//! give its interval: the verdict method ([`crate::Samples::Contrast`]) applied to a contrast
//! of cells rather than to two cells. It needs no assumption that the model is right; an
//! effect is then the mean over the other factors' levels of the grid. Each cell is a stack,
//! one process with a lead or lag of its own ([`crate::PROCESS_SD`] between two): a mean of
//! `n` cells keeps 1/n of one's variance, so a main effect with `n` cells a side carries
//! `PROCESS_SD · √(1/n)`, an interaction over `n` cells per mean `PROCESS_SD · √(2/n)`.
//!
//! A two-way interaction is the difference of differences of the cell means over the
//! third factor: how much the ratio of level `l1` to `b1` of one factor changes between
//! level `b2` and `l2` of another. Zero when the two factors' effects add up on the log
//! scale.

use std::collections::BTreeMap;

use crate::{Comparison, PROCESS_SD, Samples, judge};

/// The number of factors.
pub const FACTORS: usize = 3;

/// A cell of the grid: one level index per factor.
pub type Cell = [usize; FACTORS];

/// The grid's cells with their values by round (keys of type `K`, as the suite's round
/// keys), the rounds restricted to those in which every cell has a positive value.
#[derive(Debug, Clone)]
pub struct Grid<K> {
    levels: [usize; FACTORS],
    /// Per cell, `ln value` in each shared round, in round order.
    logs: BTreeMap<Cell, Vec<f64>>,
    rounds: Vec<K>,
}

impl<K: Ord + Clone> Grid<K> {
    /// The grid of `cells`, or `None` unless they fill every combination of `levels`
    /// exactly once and share at least two rounds with positive values.
    pub fn new(levels: [usize; FACTORS], cells: &BTreeMap<Cell, BTreeMap<K, f64>>) -> Option<Self> {
        let expected: usize = levels.iter().product();
        if expected == 0
            || cells.len() != expected
            || cells.keys().any(|cell| cell.iter().zip(levels).any(|(&l, n)| l >= n))
        {
            return None;
        }
        let mut shared: Vec<K> = cells.values().next()?.keys().cloned().collect();
        shared.retain(|round| {
            cells.values().all(|by_round| by_round.get(round).is_some_and(|v| *v > 0.0))
        });
        if shared.len() < 2 {
            return None;
        }
        let logs = cells
            .iter()
            .map(|(cell, by_round)| (*cell, shared.iter().map(|r| by_round[r].ln()).collect()))
            .collect();
        Some(Self { levels, logs, rounds: shared })
    }

    /// The rounds every cell shares, in order.
    pub fn rounds(&self) -> &[K] {
        &self.rounds
    }

    /// The levels of each factor.
    pub fn levels(&self) -> [usize; FACTORS] {
        self.levels
    }

    /// Round by round, the mean log value of the cells `select` admits.
    fn mean_logs(&self, select: impl Fn(&Cell) -> bool) -> Vec<f64> {
        let chosen: Vec<&Vec<f64>> =
            self.logs.iter().filter(|(cell, _)| select(cell)).map(|(_, logs)| logs).collect();
        (0..self.rounds.len())
            .map(|r| chosen.iter().map(|logs| logs[r]).sum::<f64>() / chosen.len() as f64)
            .collect()
    }

    /// The main effect of `factor`, `level` against `baseline`: per round `(A_r, B_r)`,
    /// the geometric means of the cells at `baseline` and at `level`.
    pub fn main_effect(&self, factor: usize, level: usize, baseline: usize) -> Vec<(f64, f64)> {
        let at = |l: usize| self.mean_logs(|cell| cell[factor] == l);
        pairs(&at(baseline), &at(level))
    }

    /// The effect of `factor`, `level` against `baseline`, among the cells at one level
    /// of another factor only (`within`: that factor and its level) — a simple effect, such
    /// as a framework's within one runtime layout; with `None`, [`Self::main_effect`].
    pub fn effect_within(
        &self,
        (factor, level, baseline): Effect,
        within: Option<(usize, usize)>,
    ) -> Vec<(f64, f64)> {
        let Some((other, at)) = within else { return self.main_effect(factor, level, baseline) };
        let mean = |l: usize| self.mean_logs(|cell| cell[factor] == l && cell[other] == at);
        pairs(&mean(baseline), &mean(level))
    }

    /// The spread between processes of [`Self::effect_within`]: each side's mean of its
    /// cells, as [`Self::main_effect_process_sd`].
    pub fn effect_within_process_sd(&self, factor: usize, within: Option<(usize, usize)>) -> f64 {
        match within {
            Some((other, _)) => PROCESS_SD * (1.0 / self.cells_per_mean(&[factor, other])).sqrt(),
            None => self.main_effect_process_sd(factor),
        }
    }

    /// The cells that share one level of `factors` (the cells behind one mean of a
    /// contrast).
    fn cells_per_mean(&self, factors: &[usize]) -> f64 {
        let all: usize = self.levels.iter().product();
        let fixed: usize = factors.iter().map(|&f| self.levels[f]).product();
        (all / fixed.max(1)) as f64
    }

    /// The spread between processes of [`Self::main_effect`] of `factor`: each side's
    /// mean of its cells, each cell's process half of [`PROCESS_SD`]²'s variance.
    pub fn main_effect_process_sd(&self, factor: usize) -> f64 {
        PROCESS_SD * (1.0 / self.cells_per_mean(&[factor])).sqrt()
    }

    /// The spread between processes of [`Self::interaction`] of `f1` and `f2`: four means
    /// of cells, as [`Self::main_effect_process_sd`].
    pub fn interaction_process_sd(&self, f1: usize, f2: usize) -> f64 {
        PROCESS_SD * (2.0 / self.cells_per_mean(&[f1, f2])).sqrt()
    }

    /// The interaction of factors `f1` and `f2`: how much `f1`'s effect of `l1` against
    /// `b1` changes from `f2` at `b2` to `f2` at `l2` — per round `(A_r, B_r)` with
    /// `ln(B_r / A_r) = m(l1,l2) − m(b1,l2) − m(l1,b2) + m(b1,b2)`, `m` the mean log of the
    /// cells at those two levels.
    pub fn interaction(
        &self,
        (f1, l1, b1): (usize, usize, usize),
        (f2, l2, b2): (usize, usize, usize),
    ) -> Vec<(f64, f64)> {
        let m = |x: usize, y: usize| self.mean_logs(|cell| cell[f1] == x && cell[f2] == y);
        let (changed, base, across, along) = (m(l1, l2), m(b1, b2), m(b1, l2), m(l1, b2));
        let a: Vec<f64> = across.iter().zip(&along).map(|(x, y)| x + y).collect();
        let b: Vec<f64> = changed.iter().zip(&base).map(|(x, y)| x + y).collect();
        // Both sides shifted by the same amount per round: the ratio is what counts, and
        // values near the rates' own size keep `exp` far from overflow.
        let shift: Vec<f64> = a.iter().map(|x| x / 2.0).collect();
        pairs(
            &a.iter().zip(&shift).map(|(x, s)| x - s).collect::<Vec<_>>(),
            &b.iter().zip(&shift).map(|(x, s)| x - s).collect::<Vec<_>>(),
        )
    }
}

/// A main effect to estimate: `level` of `factor` against `baseline`.
pub type Effect = (usize, usize, usize);

/// A two-way interaction to estimate: `(factor, level, baseline)` of each of two factors.
pub type Interaction = ((usize, usize, usize), (usize, usize, usize));

/// The main `effects` of `grid`, judged as one family (the verdict method, round by round).
pub fn judge_effects<K: Ord + Clone>(
    grid: &Grid<K>,
    effects: &[Effect],
) -> Vec<Option<Comparison>> {
    let within: Vec<(Effect, Option<(usize, usize)>)> =
        effects.iter().map(|&e| (e, None)).collect();
    judge_effects_within(grid, &within)
}

/// `effects` of `grid`, each main (`None`) or within one level of another factor
/// ([`Grid::effect_within`]), judged as one family.
pub fn judge_effects_within<K: Ord + Clone>(
    grid: &Grid<K>,
    effects: &[(Effect, Option<(usize, usize)>)],
) -> Vec<Option<Comparison>> {
    let pairs: Vec<(Vec<(f64, f64)>, f64)> = effects
        .iter()
        .map(|&(effect, within)| {
            (grid.effect_within(effect, within), grid.effect_within_process_sd(effect.0, within))
        })
        .collect();
    judge(&contrasts(&pairs))
}

/// The `interactions` of `grid`, judged as one family of their own; with the index of the
/// one to show — the largest by its estimate among those called different, or among all
/// when none is — and how many were called.
pub fn judge_interactions<K: Ord + Clone>(
    grid: &Grid<K>,
    interactions: &[Interaction],
) -> (Vec<Option<Comparison>>, Option<usize>, usize) {
    let pairs: Vec<(Vec<(f64, f64)>, f64)> = interactions
        .iter()
        .map(|&(one, two)| (grid.interaction(one, two), grid.interaction_process_sd(one.0, two.0)))
        .collect();
    let judged = judge(&contrasts(&pairs));
    let called = judged.iter().flatten().filter(|c| c.differs()).count();
    let largest = judged
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, (*c)?)))
        .max_by(|(_, a), (_, b)| {
            (a.differs(), a.ratio.ln().abs())
                .partial_cmp(&(b.differs(), b.ratio.ln().abs()))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(i, _)| i);
    (judged, largest, called)
}

/// Each contrast's pairs with its spread between processes, as the samples judged.
fn contrasts(pairs: &[(Vec<(f64, f64)>, f64)]) -> Vec<Option<Samples<'_>>> {
    pairs
        .iter()
        .map(|(p, process_sd)| Some(Samples::Contrast { pairs: p, process_sd: *process_sd }))
        .collect()
}

fn pairs(a_logs: &[f64], b_logs: &[f64]) -> Vec<(f64, f64)> {
    a_logs.iter().zip(b_logs).map(|(a, b)| (a.exp(), b.exp())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×3×3 grid whose log rate is `effects` summed (plus a round drift), exactly.
    fn additive(rounds: usize, effects: [[f64; 3]; 3], interaction: f64) -> Grid<usize> {
        let mut cells = BTreeMap::new();
        for f in 0..3 {
            for s in 0..3 {
                for a in 0..3 {
                    let extra = if f == 1 && a == 2 { interaction } else { 0.0 };
                    let by_round = (0..rounds)
                        .map(|r| {
                            let drift = 0.2 * (r as f64).sin();
                            (
                                r,
                                (9.0 + drift
                                    + effects[0][f]
                                    + effects[1][s]
                                    + effects[2][a]
                                    + extra)
                                    .exp(),
                            )
                        })
                        .collect();
                    cells.insert([f, s, a], by_round);
                }
            }
        }
        Grid::new([3, 3, 3], &cells).unwrap()
    }

    fn log_ratios(pairs: &[(f64, f64)]) -> Vec<f64> {
        pairs.iter().map(|(a, b)| (b / a).ln()).collect()
    }

    #[test]
    fn a_contrast_of_more_cells_carries_less_of_the_spread_between_processes() {
        // 3×3×3: a main effect's side is the mean of 9 processes, an interaction's four
        // means of 3 each.
        let grid = additive(3, [[0.0; 3]; 3], 0.0);
        let main = grid.main_effect_process_sd(1);
        assert!((main - PROCESS_SD / 3.0).abs() < 1e-12, "{main}");
        let interaction = grid.interaction_process_sd(0, 2);
        assert!((interaction - PROCESS_SD * (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // Two single cells are two processes: the whole of it.
        let two = Grid::new(
            [2, 1, 1],
            &BTreeMap::from([
                ([0, 0, 0], BTreeMap::from([(0, 1.0), (1, 1.0)])),
                ([1, 0, 0], BTreeMap::from([(0, 1.0), (1, 1.0)])),
            ]),
        )
        .unwrap();
        assert!((two.main_effect_process_sd(0) - PROCESS_SD).abs() < 1e-12);
    }

    #[test]
    fn main_effects_are_the_factor_s_own_ratio_whatever_the_drift() {
        let grid = additive(4, [[0.0, 0.1, -0.2], [0.0, 0.05, 0.3], [0.0, -0.4, 0.02]], 0.0);
        for (factor, level, want) in [(0, 1, 0.1), (0, 2, -0.2), (1, 2, 0.3), (2, 1, -0.4)] {
            for d in log_ratios(&grid.main_effect(factor, level, 0)) {
                assert!((d - want).abs() < 1e-9, "factor {factor} level {level}: {d}");
            }
        }
        // Against another baseline: the difference of the two levels.
        for d in log_ratios(&grid.main_effect(2, 2, 1)) {
            assert!((d - 0.42).abs() < 1e-9);
        }
        // No interaction in an additive grid.
        for d in log_ratios(&grid.interaction((0, 1, 0), (2, 2, 0))) {
            assert!(d.abs() < 1e-9);
        }
    }

    #[test]
    fn an_interaction_shows_in_its_contrast_and_a_third_of_it_in_the_main_effect() {
        // Framework 1 with access 2 is 0.3 faster than the effects add up to.
        let grid = additive(3, [[0.0; 3]; 3], 0.3);
        for d in log_ratios(&grid.interaction((0, 1, 0), (2, 2, 0))) {
            assert!((d - 0.3).abs() < 1e-9, "{d}");
        }
        for d in log_ratios(&grid.interaction((0, 2, 0), (2, 2, 0))) {
            assert!(d.abs() < 1e-9, "{d}");
        }
        // The main effect of framework 1 averages over the three accesses.
        for d in log_ratios(&grid.main_effect(0, 1, 0)) {
            assert!((d - 0.1).abs() < 1e-9, "{d}");
        }
    }

    #[test]
    fn an_effect_within_one_level_of_another_factor_is_that_level_s_alone() {
        // Framework 1 with access 2 is 0.3 faster than the effects add up to: within
        // access 2 its effect is 0.1 + 0.3, within access 0 the main 0.1 alone.
        let grid = additive(3, [[0.0, 0.1, 0.0], [0.0; 3], [0.0; 3]], 0.3);
        for d in log_ratios(&grid.effect_within((0, 1, 0), Some((2, 2)))) {
            assert!((d - 0.4).abs() < 1e-9, "{d}");
        }
        for d in log_ratios(&grid.effect_within((0, 1, 0), Some((2, 0)))) {
            assert!((d - 0.1).abs() < 1e-9, "{d}");
        }
        assert_eq!(grid.effect_within((0, 1, 0), None), grid.main_effect(0, 1, 0));
        // A side of 3 cells (3 serializers at one access) instead of 9.
        let sd = grid.effect_within_process_sd(0, Some((2, 2)));
        assert!((sd - PROCESS_SD / 3f64.sqrt()).abs() < 1e-12, "{sd}");
    }

    #[test]
    fn the_interaction_shown_is_the_largest_called_not_the_largest_estimate() {
        // Framework 1 with access 2: +0.3 in every round (called). Framework 2 with
        // serializer 1: +2.0 in half the rounds, −1.0 in the others (a larger estimate, 0.5,
        // too scattered to call).
        let mut cells = BTreeMap::new();
        for f in 0..3 {
            for s in 0..3 {
                for a in 0..3 {
                    let by_round = (0..8)
                        .map(|r: usize| {
                            let wobble = 0.01 * ((r * 7 + f * 3 + s * 5 + a) % 5) as f64;
                            let steady = if f == 1 && a == 2 { 0.3 } else { 0.0 };
                            let swing = match (f, s, r % 2) {
                                (2, 1, 0) => 2.0,
                                (2, 1, _) => -1.0,
                                _ => 0.0,
                            };
                            (r, (9.0 + wobble + steady + swing).exp())
                        })
                        .collect();
                    cells.insert([f, s, a], by_round);
                }
            }
        }
        let grid = Grid::new([3, 3, 3], &cells).unwrap();
        let interactions = [((0, 1, 0), (2, 2, 0)), ((0, 2, 0), (1, 1, 0))];
        let (judged, largest, called) = judge_interactions(&grid, &interactions);
        let (steady, swing) = (judged[0].unwrap(), judged[1].unwrap());
        assert!(steady.differs() && !swing.differs(), "{steady:?} {swing:?}");
        assert!(swing.ratio.ln().abs() > steady.ratio.ln().abs());
        assert_eq!((largest, called), (Some(0), 1));
    }

    #[test]
    fn a_grid_with_a_cell_missing_or_fewer_than_two_shared_rounds_is_refused() {
        let cell = |rounds: &[usize]| rounds.iter().map(|&r| (r, 100.0)).collect();
        let mut cells: BTreeMap<Cell, BTreeMap<usize, f64>> = BTreeMap::new();
        for f in 0..2 {
            for s in 0..2 {
                for a in 0..2 {
                    cells.insert([f, s, a], cell(&[0, 1, 2]));
                }
            }
        }
        assert_eq!(Grid::new([2, 2, 2], &cells).unwrap().rounds(), [0, 1, 2]);
        assert!(Grid::new([2, 2, 3], &cells).is_none(), "a level with no cells");
        cells.insert([1, 1, 1], cell(&[2, 3]));
        assert!(Grid::new([2, 2, 2], &cells).is_none(), "one shared round");
        cells.insert([1, 1, 1], cell(&[1, 2]));
        assert_eq!(Grid::new([2, 2, 2], &cells).unwrap().rounds(), [1, 2]);
        cells.remove(&[0, 0, 0]);
        assert!(Grid::new([2, 2, 2], &cells).is_none());
    }
}
