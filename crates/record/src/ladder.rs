//! A ladder of windows at constant offered rates, judged against a latency objective
//! ([`crate::objective`]), and the capacity it shows.
//!
//! A window the client itself limited (its send lag: the `client_limited` warning) is left
//! out, neither met nor missed; a saturated one never meets an objective. `loadgen http
//! --slo` searches one URL with these judgements; the suite's pages read its rate ladders
//! (`--slo` with `--rates`) with them.

use serde::Serialize;

use crate::objective::{ERROR_SHARE_MAX, IN_TIME_SHARE, Objective};
use crate::results::Cell;

/// One window at a constant offered rate, judged against an objective.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Why it did not meet it, when it did not.
    pub missed_because: Option<String>,
}

impl Step {
    /// `cell`, an open-loop window at `rate_rps`, judged against `objective`.
    pub fn judge(cell: &Cell, rate_rps: f64, objective: Objective) -> Result<Self, String> {
        let latency = cell.ranked_histogram()?;
        let (due, in_time_share) =
            cell.open_loop.as_ref().map_or((0, 0.0), |o| (o.due, o.achieved_fraction));
        let error_share = if due > 0 { cell.counts.errors as f64 / due as f64 } else { 0.0 };
        let p50_us = latency.as_ref().map(|h| h.value_at_quantile(0.5));
        let at_objective_us = latency.as_ref().map(|h| h.value_at_quantile(objective.quantile));
        let limited = crate::warnings::client_limited(cell);
        let missed_because = if let Some(limited) = &limited {
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
        Ok(Self {
            rate_rps,
            due,
            in_time_share,
            error_share,
            p50_us,
            at_objective_us,
            met: missed_because.is_none(),
            left_out: limited.is_some(),
            missed_because,
        })
    }
}

/// What one ladder of windows (one party's rates in one round) shows of its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "found", rename_all = "snake_case")]
pub enum LadderCapacity {
    /// Met up to a rate and missed at the next: the capacity between them (see
    /// [`ladder_capacity`]).
    Between {
        /// The estimate, requests per second.
        rate_rps: f64,
        /// The highest rate met below the first miss.
        met_rps: f64,
        /// The first rate missed.
        missed_rps: f64,
    },
    /// Missed at the lowest rate judged: the capacity is below it.
    NotMet {
        /// Requests per second.
        lowest_rps: f64,
    },
    /// Met at every rate judged: the capacity is at least the highest.
    AboveLadder {
        /// Requests per second.
        highest_rps: f64,
    },
}

impl LadderCapacity {
    /// The estimate, when the ladder brackets it.
    pub fn rate_rps(self) -> Option<f64> {
        match self {
            Self::Between { rate_rps, .. } => Some(rate_rps),
            _ => None,
        }
    }
}

/// The capacity a ladder shows: from the lowest rate up, the first window that missed (a
/// window left out is skipped) and the highest met below it. Between the two, the rate at
/// which the objective's percentile reaches its bound on the line through their
/// percentiles in log–log (latency grows about as a power of the rate near a knee); where
/// that line does not cross the bound between them (the miss was a saturation or errors
/// with the percentile still in bound), the rate met. A miss above a later met window
/// still ends the ladder: a rate met only past a miss is not counted as capacity.
pub fn ladder_capacity(steps: &[Step], objective: Objective) -> Option<LadderCapacity> {
    let mut judged: Vec<&Step> = steps.iter().filter(|s| !s.left_out).collect();
    judged.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let first = *judged.first()?;
    let Some(miss) = judged.iter().position(|s| !s.met) else {
        return Some(LadderCapacity::AboveLadder { highest_rps: judged.last()?.rate_rps });
    };
    if miss == 0 {
        return Some(LadderCapacity::NotMet { lowest_rps: first.rate_rps });
    }
    let (met, missed) = (judged[miss - 1], judged[miss]);
    let bound = (objective.bound_us as f64).ln();
    let rate_rps = match (met.at_objective_us, missed.at_objective_us) {
        (Some(low), Some(high)) if high > objective.bound_us && low < high => {
            let (low, high) = ((low.max(1) as f64).ln(), (high as f64).ln());
            let share = ((bound - low) / (high - low)).clamp(0.0, 1.0);
            (met.rate_rps.ln() + share * (missed.rate_rps.ln() - met.rate_rps.ln())).exp()
        }
        _ => met.rate_rps,
    };
    Some(LadderCapacity::Between { rate_rps, met_rps: met.rate_rps, missed_rps: missed.rate_rps })
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
        // A met window past the first miss does not count; left-out windows are skipped.
        let mut bumpy = ladder.to_vec();
        bumpy.insert(2, step(5_000.0, 20_000, 10_000));
        bumpy.push(step(20_000.0, 9_000, 10_000));
        let mut limited = step(2_000.0, 1, 10_000);
        limited.left_out = true;
        bumpy.push(limited);
        let LadderCapacity::Between { met_rps, missed_rps, .. } =
            ladder_capacity(&bumpy, objective).unwrap()
        else {
            panic!("bracketed")
        };
        assert_eq!((met_rps, missed_rps), (1_000.0, 5_000.0));
        // Missed at the lowest: below it; met everywhere: at least the highest.
        assert_eq!(
            ladder_capacity(&ladder[2..], objective),
            Some(LadderCapacity::NotMet { lowest_rps: 10_000.0 })
        );
        assert_eq!(
            ladder_capacity(&ladder[..2], objective),
            Some(LadderCapacity::AboveLadder { highest_rps: 1_000.0 })
        );
        // A saturated miss with the percentile in bound: the rate met.
        let mut saturated = step(10_000.0, 8_000, 10_000);
        saturated.met = false;
        let found = ladder_capacity(&[ladder[1].clone(), saturated], objective).unwrap();
        assert_eq!(found.rate_rps(), Some(1_000.0));
        assert_eq!(ladder_capacity(&[], objective), None);
    }
}
