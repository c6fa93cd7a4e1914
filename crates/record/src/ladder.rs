//! A ladder of windows at constant offered rates, judged against a latency objective
//! ([`crate::objective`]), and the capacity it shows ([`bookstore_stats::capacity`], the one
//! estimate every capacity of the workspace is read by).
//!
//! A window the client itself limited (its send lag: the `client_limited` warning) is left
//! out, neither met nor missed; a saturated or disqualified one never meets an objective,
//! and says by how much it missed only where its percentile was the reason.

use serde::Serialize;

pub use bookstore_stats::capacity::Capacity;
use bookstore_stats::capacity::{FELL, Rung, estimate};

use crate::objective::{ERROR_SHARE_MAX, IN_TIME_SHARE, Objective};
use crate::results::Cell;

/// One window at a constant offered rate, judged against an objective.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Offered, requests per second.
    pub rate_rps: f64,
    /// Requests due in the window.
    pub due: u64,
    /// The share of them answered by the window's end and its grace.
    pub in_time_share: f64,
    /// Their errors, as a share of those due.
    pub error_share: f64,
    /// The successes' median, µs, timed from when each was due.
    pub p50_us: Option<u64>,
    /// Their latency at the objective's percentile, µs.
    pub at_objective_us: Option<u64>,
    /// The window met the objective.
    pub met: bool,
    /// The client limited the window: it neither met nor missed.
    pub left_out: bool,
    /// It fell behind (too few answers in time, too many errors, none to time, or
    /// disqualified): above the bound by an amount its percentile does not say.
    #[serde(default)]
    pub fell_behind: bool,
    /// Why it did not meet it, when it did not.
    pub missed_because: Option<String>,
}

impl Step {
    /// `cell`, an open-loop window at `rate_rps`, judged against `objective`; a disqualified
    /// window (its answers broke the contract, its audit failed, …) never meets one.
    pub fn judge(cell: &Cell, rate_rps: f64, objective: Objective) -> Result<Self, String> {
        let latency = cell.ranked_histogram()?;
        let (due, in_time_share) =
            cell.open_loop.as_ref().map_or((0, 0.0), |o| (o.due, o.achieved_fraction));
        let error_share = if due > 0 { cell.counts.errors as f64 / due as f64 } else { 0.0 };
        let p50_us = latency.as_ref().map(|h| h.value_at_quantile(0.5));
        let at_objective_us = latency.as_ref().map(|h| h.value_at_quantile(objective.quantile));
        let limited = crate::warnings::client_limited(cell);
        let disqualified = crate::warnings::disqualification(cell);
        let mut fell_behind = true;
        let missed_because = if let Some(gate) = disqualified {
            Some(format!("disqualified: {}", gate.message))
        } else if let Some(limited) = &limited {
            Some(format!("left out: {}", limited.message))
        } else if due == 0 {
            Some("nothing was due in the window".into())
        } else if in_time_share < IN_TIME_SHARE {
            Some(format!(
                "{:.1}% of the requests due were answered in time (at least {:.0}% needed): saturated",
                in_time_share * 100.0,
                IN_TIME_SHARE * 100.0
            ))
        } else if error_share > ERROR_SHARE_MAX {
            Some(format!("{:.1}% of the requests due failed", error_share * 100.0))
        } else {
            fell_behind = at_objective_us.is_none();
            match at_objective_us {
                None => Some("no success to time".into()),
                Some(us) if us > objective.bound_us => Some(format!(
                    "{} was {}",
                    objective.percentile(),
                    crate::latency_label(us as f64)
                )),
                Some(_) => None,
            }
        };
        let met = missed_because.is_none();
        Ok(Self {
            rate_rps,
            due,
            in_time_share,
            error_share,
            p50_us,
            at_objective_us,
            met,
            left_out: limited.is_some() && disqualified.is_none(),
            fell_behind: fell_behind && !met,
            missed_because,
        })
    }

    /// The window as the estimate reads it (`None` when left out): the log of its
    /// percentile over `objective`'s bound, or [`FELL`].
    pub fn rung(&self, objective: Objective) -> Option<Rung> {
        if self.left_out {
            return None;
        }
        let excess = match self.at_objective_us {
            _ if self.fell_behind => FELL,
            Some(us) => (us.max(1) as f64 / objective.bound_us as f64).ln(),
            None => FELL,
        };
        // A window met is at most at the bound, one missed above it, whatever rounding did.
        let excess = if self.met { excess.min(0.0) } else { excess.max(f64::MIN_POSITIVE) };
        Some(Rung { rate_rps: self.rate_rps, excess })
    }
}

/// The capacity a ladder of windows shows under `objective`: the estimate of
/// [`bookstore_stats::capacity`] over the windows not left out.
pub fn ladder_capacity(steps: &[Step], objective: Objective) -> Option<Capacity> {
    let rungs: Vec<Rung> = steps.iter().filter_map(|s| s.rung(objective)).collect();
    estimate(&rungs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rate_rps: f64, p99_us: u64, bound_us: u64) -> Step {
        Step {
            rate_rps,
            due: rate_rps as u64,
            in_time_share: 1.0,
            error_share: 0.0,
            p50_us: Some(p99_us / 4),
            at_objective_us: Some(p99_us),
            met: p99_us <= bound_us,
            left_out: false,
            fell_behind: false,
            missed_because: (p99_us > bound_us).then(|| "p99 was high".into()),
        }
    }

    #[test]
    fn the_capacity_is_where_the_percentile_crosses_the_bound_between_met_and_missed() {
        let objective = Objective::parse("p99=10ms").unwrap();
        // p99 = 1 ms at 1,000/s and 100 ms at 10,000/s: the log–log line crosses 10 ms
        // half-way, at √(1,000 × 10,000) ≈ 3,162/s.
        let ladder = [
            step(100.0, 500, 10_000),
            step(1_000.0, 1_000, 10_000),
            step(10_000.0, 100_000, 10_000),
        ];
        let found = ladder_capacity(&ladder, objective).unwrap();
        let rate = found.rate_rps().unwrap();
        assert!((rate - 3_162.3).abs() < 1.0, "{found:?}");
        // One window met past a miss is pooled with that miss (their median is over the
        // bound); left-out windows are skipped.
        let mut bumpy = ladder.to_vec();
        bumpy.insert(2, step(5_000.0, 20_000, 10_000));
        bumpy.push(step(20_000.0, 9_000, 10_000));
        let mut limited = step(2_000.0, 1, 10_000);
        limited.left_out = true;
        bumpy.push(limited);
        let Capacity::Between { met_rps, missed_rps, .. } =
            ladder_capacity(&bumpy, objective).unwrap()
        else {
            panic!("bracketed")
        };
        assert_eq!((met_rps, missed_rps), (1_000.0, 5_000.0));
        // Missed at the lowest: below it; met everywhere: at least the highest.
        assert_eq!(
            ladder_capacity(&ladder[2..], objective),
            Some(Capacity::NotMet { lowest_rps: 10_000.0 })
        );
        assert_eq!(
            ladder_capacity(&ladder[..2], objective),
            Some(Capacity::Above { highest_rps: 1_000.0 })
        );
        // A window that fell behind with its percentile still in bound says only that the
        // crossing is below it: the middle, in log, between it and the rung met.
        let mut saturated = step(10_000.0, 8_000, 10_000);
        (saturated.met, saturated.fell_behind) = (false, true);
        let found = ladder_capacity(&[ladder[1].clone(), saturated], objective).unwrap();
        assert!((found.rate_rps().unwrap() - 3_162.3).abs() < 1.0, "{found:?}");
        assert_eq!(ladder_capacity(&[], objective), None);
    }
}
