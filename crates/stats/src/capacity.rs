//! Capacity at a latency objective ("how many requests per second with p99 ≤ 10 ms?"): which
//! rate a ladder of windows reports ([`estimate`]), and where a ladder puts its next window
//! ([`Ladder`]). `loadgen http --slo`, `loadgen ab --slo`, the capacity study and the suite's
//! pages all read a capacity through these two; docs/method.md, "Capacity at an objective",
//! says why they are as they are.
//!
//! - **A rung** is one window at a constant offered rate, read as its *excess*: the log of the
//!   objective's percentile over the bound (≤ 0 where the window met the objective), or
//!   [`FELL`] where it fell behind (too few answers in time, too many errors): above the
//!   bound by an amount nobody measured.
//! - **The estimate is a fitted crossing.** The rungs' excesses, made non-decreasing in the
//!   rate (a higher rate is never easier), by pooling adjacent rungs that break the order
//!   into their median (isotonic regression under absolute loss), crossed with the bound by
//!   interpolation in log–log between the two fitted rungs either side of it. The last rung
//!   met throws away how far under the bound it was (an error of up to a rung's step); the
//!   first rung missed lets one window decide. A stall — one window's percentile several
//!   times its neighbours' (2.7% of the kept capacity studies' windows near the knee were
//!   more than e¹ above their rung's median) — is pooled with its neighbours by their median,
//!   which it does not move: on ladders simulated with the measured scatter it moved the
//!   estimate by less than the first miss did (the test below and
//!   `tests/method/capacity.rs`).
//! - **A ladder climbs from below its centre** (the capacity expected: the last estimates, or
//!   the closed loop's rate at first; moved by a [`dither`] of a step from ladder to ladder)
//!   by [`LadderDesign::step`] until two rungs in a row miss, stepping down by [`LadderDesign::down`] when even its lowest rung misses; it ends
//!   at the ceiling given (the capacity is then above it, not a number) or at the floor (the
//!   objective is then not met at all).

use serde::{Deserialize, Serialize};

/// The spread of ln capacity between two processes of one binary, each keeping a capacity
/// of its own: the nine twin comparisons of the first capacity studies, one process per
/// party for the whole study, gave log ratios spread by about 0.20
/// (`2713e02:summary/results/2026-12-04T21-10-38Z-capacity-study.json`,
/// `…2026-12-06T01-38-18Z-capacity-study.json`), thirteen times a rate's
/// ([`crate::PROCESS_SD`]). A comparison that starts each party once (the suite's `--slo`)
/// is widened by it; one that restarts them (`loadgen ab --slo`, the capacity study)
/// measures it instead.
pub const PROCESS_SD: f64 = 0.20;

/// The excess of a window that fell behind: above the bound by an unknown amount.
pub const FELL: f64 = f64::INFINITY;

/// One window of a ladder, as the estimate reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rung {
    /// The rate offered, requests per second.
    pub rate_rps: f64,
    /// ln(the objective's percentile ÷ its bound): at most 0 where the window met the
    /// objective; [`FELL`] where it fell behind.
    pub excess: f64,
}

impl Rung {
    /// Whether the window met the objective.
    pub fn met(&self) -> bool {
        self.excess <= 0.0
    }
}

/// What a ladder shows of a capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "found", rename_all = "snake_case", deny_unknown_fields)]
pub enum Capacity {
    /// The fitted crossing, between two rungs.
    Between {
        /// The estimate, requests per second.
        rate_rps: f64,
        /// The rung below the crossing (its fitted excess at most 0).
        met_rps: f64,
        /// The rung above it.
        missed_rps: f64,
    },
    /// Not met even at the lowest rate: the capacity is below it.
    NotMet {
        /// Requests per second.
        lowest_rps: f64,
    },
    /// Met up to the highest rate: the capacity is at least that, not a number.
    Above {
        /// Requests per second.
        highest_rps: f64,
    },
}

impl Capacity {
    /// The estimate, when the ladder brackets one.
    pub fn rate_rps(self) -> Option<f64> {
        match self {
            Self::Between { rate_rps, .. } => Some(rate_rps),
            _ => None,
        }
    }
}

/// The capacity `rungs` show (in any order; `None` without a rung).
pub fn estimate(rungs: &[Rung]) -> Option<Capacity> {
    let mut sorted = rungs.to_vec();
    sorted.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let fitted = monotone(&sorted.iter().map(|r| r.excess).collect::<Vec<_>>());
    let first_over = fitted.iter().position(|&f| f > 0.0);
    match first_over {
        None => Some(Capacity::Above { highest_rps: sorted.last()?.rate_rps }),
        Some(0) => Some(Capacity::NotMet { lowest_rps: sorted[0].rate_rps }),
        Some(i) => {
            let (below, above) = (sorted[i - 1].rate_rps, sorted[i].rate_rps);
            let (low, high) = (fitted[i - 1], fitted[i]);
            // A fitted rung that fell behind says only that the crossing is below it: the
            // middle, in log, between it and the rung met below.
            let share = if high.is_finite() { (0.0 - low) / (high - low) } else { 0.5 };
            let rate_rps = (below.ln() + share.clamp(0.0, 1.0) * (above.ln() - below.ln())).exp();
            Some(Capacity::Between { rate_rps, met_rps: below, missed_rps: above })
        }
    }
}

/// `values` made non-decreasing with the least total absolute change: pool adjacent
/// violators, each pool at its median (the mean of its two middle values, [`FELL`] when
/// either is).
fn monotone(values: &[f64]) -> Vec<f64> {
    let median = |pool: &[f64]| {
        let mut sorted = pool.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
    };
    let mut pools: Vec<(Vec<f64>, f64)> = Vec::new();
    for &value in values {
        pools.push((vec![value], value));
        while pools.len() > 1 && pools[pools.len() - 2].1 > pools[pools.len() - 1].1 {
            let (last, _) = pools.pop().expect("two pools");
            let previous = pools.last_mut().expect("two pools");
            previous.0.extend(last);
            previous.1 = median(&previous.0);
        }
    }
    pools.into_iter().flat_map(|(members, level)| vec![level; members.len()]).collect()
}

/// How a ladder is laid around its centre.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderDesign {
    /// The first rung, as a share of the centre.
    pub first: f64,
    /// Each rung above the last, as a factor: about a third of the spread between
    /// processes (0.14 in log, the kept capacity studies' twins), so that a ladder's few
    /// rungs bracket any process's crossing.
    pub step: f64,
    /// Each rung below the lowest when even that missed, as a divisor.
    pub down: f64,
    /// Rungs in a row that miss at the top before the ladder ends.
    pub misses: usize,
    /// The most rungs one ladder takes.
    pub max_rungs: usize,
    /// The lowest rate offered, requests per second: below it the objective is "not met".
    pub min_rps: f64,
    /// The highest: met there, the capacity is "above" it.
    pub max_rps: f64,
}

impl LadderDesign {
    /// The design every capacity uses, up to `max_rps`.
    pub fn up_to(max_rps: f64) -> Self {
        Self {
            first: 0.8,
            step: 1.1,
            down: 1.25,
            misses: 2,
            max_rungs: 16,
            min_rps: MIN_RATE_RPS,
            max_rps,
        }
    }
}

/// The lowest rate a ladder offers, requests per second.
pub const MIN_RATE_RPS: f64 = 1.0;

/// One ladder, rung by rung: ask [`Ladder::next_rate`] where to measure, [`Ladder::record`]
/// what the window was, until it says to stop.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    design: LadderDesign,
    centre_rps: f64,
    rungs: Vec<Rung>,
}

/// The dither of ladder `index`, a share of a step in [0, 1): the golden ratio's multiples,
/// so that successive ladders' rungs fall evenly between the grid's. Without it every
/// ladder of a party puts its rungs at the same rates: where the percentile jumps at a knee
/// between two rungs, each ladder then errs alike, and no number of them averages it —
/// two responders of known cost, 2.0 ms against 2.2 ms a request, came out 0.900
/// [0.893–0.907] where alternated single searches gave 0.911.
pub fn dither(index: usize) -> f64 {
    (index as f64 * 0.618_033_988_749_895).fract()
}

impl Ladder {
    /// A ladder around `centre_rps`, the capacity expected.
    pub fn new(design: LadderDesign, centre_rps: f64) -> Self {
        Self { design, centre_rps, rungs: Vec::new() }
    }

    /// A ladder around `centre_rps` whose rungs are moved up by `offset` of a step (see
    /// [`dither`]).
    pub fn dithered(design: LadderDesign, centre_rps: f64, offset: f64) -> Self {
        Self::new(design, centre_rps * design.step.powf(offset.clamp(0.0, 1.0)))
    }

    /// The rate of the next window, or `None` when the ladder is done.
    pub fn next_rate(&self) -> Option<f64> {
        let d = &self.design;
        if self.rungs.len() >= d.max_rungs {
            return None;
        }
        if self.rungs.is_empty() {
            return Some((self.centre_rps * d.first).clamp(d.min_rps, d.max_rps));
        }
        let highest = self.rungs.iter().map(|r| r.rate_rps).fold(f64::MIN, f64::max);
        let lowest = self.rungs.iter().map(|r| r.rate_rps).fold(f64::MAX, f64::min);
        let up = (highest < d.max_rps).then(|| (highest * d.step).min(d.max_rps));
        match estimate(&self.rungs)? {
            Capacity::NotMet { .. } => {
                (lowest > d.min_rps).then(|| (lowest / d.down).max(d.min_rps))
            }
            Capacity::Above { .. } => up,
            Capacity::Between { .. } => {
                let mut by_rate = self.rungs.clone();
                by_rate.sort_by(|a, b| b.rate_rps.total_cmp(&a.rate_rps));
                let missed_at_top = by_rate.iter().take_while(|r| !r.met()).count();
                if missed_at_top >= d.misses { None } else { up }
            }
        }
    }

    /// The window just measured.
    pub fn record(&mut self, rung: Rung) {
        self.rungs.push(rung);
    }

    /// The windows so far, in the order measured.
    pub fn rungs(&self) -> &[Rung] {
        &self.rungs
    }

    /// What they show.
    pub fn capacity(&self) -> Option<Capacity> {
        estimate(&self.rungs)
    }
}

/// One ladder of each party, their windows interleaved: at each step every party whose
/// ladder is not done measures its next rung (`measure(party, rate)`), in an order rotated
/// by one from step to step and by `round` from round to round — for two parties A B, B A,
/// A B …, then B A, A B … — so that a drift of the machine falls on every party alike.
pub fn climb<E>(
    ladders: &mut [Ladder],
    round: usize,
    mut measure: impl FnMut(usize, f64) -> Result<Rung, E>,
) -> Result<(), E> {
    let parties: Vec<usize> = (0..ladders.len()).collect();
    for step in 0.. {
        let mut measured = false;
        for party in crate::rotated_by(&parties, step + round) {
            if let Some(rate) = ladders[party].next_rate() {
                let rung = measure(party, rate)?;
                ladders[party].record(rung);
                measured = true;
            }
        }
        if !measured {
            break;
        }
    }
    Ok(())
}

/// The centre of the next ladder from the capacities found so far: their median, robust to
/// the one process that stalled.
pub fn centre_of(found_rps: &[f64]) -> Option<f64> {
    crate::Summary::of(found_rps).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(rate_rps: f64, excess: f64) -> Rung {
        Rung { rate_rps, excess }
    }

    #[test]
    fn the_estimate_is_where_the_fitted_excess_crosses_the_bound_in_log_log() {
        // Excess −1 at 1,000/s and +1 at 4,000/s: the crossing half-way in log, 2,000/s.
        let found = estimate(&[rung(4_000.0, 1.0), rung(1_000.0, -1.0)]).unwrap();
        let Capacity::Between { rate_rps, met_rps, missed_rps } = found else {
            panic!("{found:?}")
        };
        assert!((rate_rps - 2_000.0).abs() < 1e-6, "{found:?}");
        assert_eq!((met_rps, missed_rps), (1_000.0, 4_000.0));
        // A rung that fell behind: the middle in log between it and the rung met below.
        let fell = estimate(&[rung(1_000.0, -0.5), rung(4_000.0, FELL)]).unwrap();
        assert!((fell.rate_rps().unwrap() - 2_000.0).abs() < 1e-6, "{fell:?}");
        assert_eq!(
            estimate(&[rung(10.0, 0.2), rung(20.0, FELL)]),
            Some(Capacity::NotMet { lowest_rps: 10.0 })
        );
        assert_eq!(estimate(&[rung(10.0, -0.2)]), Some(Capacity::Above { highest_rps: 10.0 }));
        assert_eq!(estimate(&[]), None);
    }

    #[test]
    fn one_stall_between_met_rungs_is_pooled_by_the_median_and_does_not_end_the_ladder() {
        // Met, met, a stall (e^1.5 over the bound), met, then two misses: the crossing is
        // between 1,060 and 1,170, where the rungs say, not below the stall at 970.
        let rungs = [
            rung(800.0, -1.0),
            rung(880.0, -0.6),
            rung(970.0, 1.5),
            rung(1_060.0, -0.2),
            rung(1_060.0 * 1.1, -0.1),
            rung(1_280.0, 0.5),
            rung(1_410.0, FELL),
        ];
        let rate = estimate(&rungs).unwrap().rate_rps().unwrap();
        assert!((1_060.0..1_410.0).contains(&rate), "{rate}");
        // The first miss would have put it below the stall.
        let first_miss = rungs.iter().position(|r| !r.met()).unwrap();
        assert!(rungs[first_miss].rate_rps < 1_000.0);
    }

    #[test]
    fn a_ladder_climbs_until_two_misses_steps_down_below_a_miss_and_stops_at_its_ends() {
        // A server that meets the objective up to 1,000/s: excess grows 4 per unit of log rate.
        let server = |rate: f64| Rung { rate_rps: rate, excess: 4.0 * (rate / 1_000.0).ln() };
        let run = |centre: f64, max_rps: f64| {
            let mut ladder = Ladder::new(LadderDesign::up_to(max_rps), centre);
            while let Some(rate) = ladder.next_rate() {
                ladder.record(server(rate));
            }
            ladder
        };
        let near = run(1_000.0, 1e9);
        assert_eq!(near.rungs().len(), 5, "800, 880, 968, 1,065, 1,171: {:?}", near.rungs());
        assert!((near.capacity().unwrap().rate_rps().unwrap() - 1_000.0).abs() < 1.0);
        // Centred five times too high: it steps down until a rung meets, then climbs.
        let high = run(5_000.0, 1e9);
        let rate = high.capacity().unwrap().rate_rps().unwrap();
        assert!((rate - 1_000.0).abs() < 1.0, "{rate}: {:?}", high.rungs());
        assert!(high.rungs().len() <= LadderDesign::up_to(1e9).max_rungs);
        // Met at the ceiling: above it, not a number.
        assert_eq!(run(500.0, 700.0).capacity(), Some(Capacity::Above { highest_rps: 700.0 }));
        // Never met: down to the floor, then not met.
        let never = |rate: f64| Rung { rate_rps: rate, excess: 1.0 };
        let mut ladder = Ladder::new(LadderDesign::up_to(1e9), 10.0);
        while let Some(rate) = ladder.next_rate() {
            ladder.record(never(rate));
        }
        assert_eq!(ladder.capacity(), Some(Capacity::NotMet { lowest_rps: MIN_RATE_RPS }));
    }

    #[test]
    fn two_ladders_climb_interleaved_in_mirrored_order_each_until_its_own_end() {
        let design = LadderDesign::up_to(1e9);
        let mut ladders = [Ladder::new(design, 1_000.0), Ladder::new(design, 2_000.0)];
        let mut order = Vec::new();
        climb(&mut ladders, 1, |party, rate| {
            order.push(party);
            let capacity = [1_000.0, 1_500.0][party];
            Ok::<_, ()>(Rung { rate_rps: rate, excess: 4.0 * (rate / capacity).ln() })
        })
        .unwrap();
        // Round 1 starts with B; the order turns at every step; B's ladder, centred too high,
        // is done after three rungs (1,600, 1,760 missed; 1,280 met) and A goes on alone.
        assert_eq!(order[..6], [1, 0, 0, 1, 1, 0]);
        assert!(order[6..].iter().all(|&p| p == 0), "{order:?}");
        for (ladder, truth) in ladders.iter().zip([1_000.0, 1_500.0]) {
            assert!((ladder.capacity().unwrap().rate_rps().unwrap() - truth).abs() < 1.0);
        }
    }

    #[test]
    fn the_next_centre_is_the_median_of_the_capacities_found() {
        assert_eq!(centre_of(&[900.0, 1_000.0, 5_000.0]), Some(1_000.0));
        assert_eq!(centre_of(&[]), None);
    }
}
