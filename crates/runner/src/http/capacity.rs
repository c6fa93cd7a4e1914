//! `loadgen http URL --slo p99=10ms`: the capacity of one URL under a latency objective —
//! the highest constant offered rate at which, in a window, at least [`IN_TIME_SHARE`] of
//! the requests due are answered (by the window's end and its grace), no more than
//! [`ERROR_SHARE_MAX`] of them fail, and the objective's percentile of the successes,
//! timed from when each was due, stays within its bound.
//!
//! The search is a rate ladder on the engine's open loop (no coordinated omission): from a
//! first rate it climbs by [`CLIMB`] until a window misses, or steps down by half until one
//! meets it, then bisects between the highest rate met and the lowest missed until they are
//! [`PRECISION`] apart. A window the client itself limited (its send lag: the suite's
//! `client_limited` warning) or in which the server fell behind never counts as meeting the
//! objective, and says why. The capacity is the highest rate met; a URL that misses at the
//! lowest rate tried is "not met at ≥ R/s", never a number that was not measured.

use std::time::Duration;

use serde::Serialize;

pub use bookstore_record::ladder::Step;
pub use bookstore_record::objective::{ERROR_SHARE_MAX, IN_TIME_SHARE, Objective};

/// How much higher each rung of the climb is than the last.
pub const CLIMB: f64 = 1.5;
/// The search ends when the highest rate met and the lowest missed are this close (their
/// ratio less one).
pub const PRECISION: f64 = 0.05;
/// The most windows one search takes.
pub const MAX_STEPS: usize = 16;
/// The lowest rate tried: below it a URL is "not met".
pub const MIN_RATE_RPS: f64 = 1.0;

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "found", rename_all = "snake_case")]
pub enum Capacity {
    /// The highest rate met; the lowest missed above it, if one was tried.
    Met {
        /// Requests per second.
        rate_rps: f64,
        /// The lowest rate above it that missed (`None`: none missed up to the last tried).
        missed_above_rps: Option<f64>,
    },
    /// Missed at every rate tried, the lowest this.
    NotMet {
        /// Requests per second.
        lowest_tried_rps: f64,
    },
}

/// One search: its ladder and what it found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Search {
    /// Every window, in the order run.
    pub steps: Vec<Step>,
    /// What they found.
    pub capacity: Capacity,
}

/// Searches from `first_rps`, `step_at(rate)` running and judging one window at `rate`.
pub fn search(
    first_rps: f64,
    mut step_at: impl FnMut(f64) -> anyhow::Result<Step>,
) -> anyhow::Result<Search> {
    let mut steps: Vec<Step> = Vec::new();
    let (mut met, mut missed): (Option<f64>, Option<f64>) = (None, None);
    let mut rate = first_rps.max(MIN_RATE_RPS);
    while steps.len() < MAX_STEPS {
        let step = step_at(rate)?;
        if step.met {
            met = Some(met.map_or(rate, |m: f64| m.max(rate)));
        } else {
            missed = Some(missed.map_or(rate, |m: f64| m.min(rate)));
        }
        steps.push(step);
        rate = match (met, missed) {
            (Some(low), Some(high)) if high / low - 1.0 <= PRECISION => break,
            (Some(low), Some(high)) => (low * high).sqrt(),
            (Some(low), None) => low * CLIMB,
            (None, Some(high)) if high / 2.0 < MIN_RATE_RPS => break,
            (None, Some(high)) => high / 2.0,
            (None, None) => unreachable!("a step was just judged"),
        };
    }
    let capacity = match met {
        Some(rate_rps) => Capacity::Met { rate_rps, missed_above_rps: missed },
        None => Capacity::NotMet { lowest_tried_rps: missed.unwrap_or(first_rps) },
    };
    Ok(Search { steps, capacity })
}

/// The capacities of repeated searches, when every one met the objective: their geometric
/// mean and Student's 95% interval over their logarithms (`None` below two).
pub fn interval(searches: &[Search]) -> Option<(f64, f64, f64)> {
    let logs: Option<Vec<f64>> = searches
        .iter()
        .map(|s| match s.capacity {
            Capacity::Met { rate_rps, .. } => Some(rate_rps.ln()),
            Capacity::NotMet { .. } => None,
        })
        .collect();
    let estimate = bookstore_stats::Estimate::of(&logs?, 0.05)?;
    Some((estimate.mean.exp(), estimate.low.exp(), estimate.high.exp()))
}

/// The capacity the searches found together, as the JSON's top level gives it: with two
/// or more, [`interval`]'s geometric mean and its ends; with one that met the objective,
/// its rate and no interval; `None` where a search did not meet it.
pub fn found(searches: &[Search]) -> Option<(f64, Option<(f64, f64)>)> {
    if let [only] = searches {
        return match only.capacity {
            Capacity::Met { rate_rps, .. } => Some((rate_rps, None)),
            Capacity::NotMet { .. } => None,
        };
    }
    interval(searches).map(|(mean, low, high)| (mean, Some((low, high))))
}

/// The window length a search step takes by default: shorter than `loadgen http`'s 3 s, as
/// a search runs a dozen of them.
pub const DEFAULT_STEP: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that meets the objective up to `capacity` requests/s and no further.
    fn model(capacity: f64) -> impl FnMut(f64) -> anyhow::Result<Step> {
        move |rate| {
            let met = rate <= capacity;
            Ok(Step {
                rate_rps: rate,
                due: rate as u64,
                in_time_share: if met { 1.0 } else { 0.5 },
                error_share: 0.0,
                p50_us: Some(100),
                at_objective_us: Some(if met { 1_000 } else { 50_000 }),
                met,
                left_out: false,
                missed_because: (!met).then(|| "saturated".into()),
            })
        }
    }

    #[test]
    fn the_search_brackets_then_bisects_to_within_its_precision_from_below_or_above() {
        for first in [100.0, 480.0, 5_000.0] {
            let found = search(first, model(480.0)).unwrap();
            let Capacity::Met { rate_rps, missed_above_rps } = found.capacity else {
                panic!("{found:?}")
            };
            let high = missed_above_rps.unwrap();
            assert!(rate_rps <= 480.0 && high > 480.0, "{rate_rps} {high}");
            assert!(high / rate_rps - 1.0 <= PRECISION, "{rate_rps} {high}");
            assert!(found.steps.len() <= MAX_STEPS);
        }
    }

    #[test]
    fn an_objective_missed_at_every_rate_is_not_met_at_the_lowest_tried() {
        let found = search(1_000.0, model(0.0)).unwrap();
        assert!(
            matches!(found.capacity, Capacity::NotMet { lowest_tried_rps } if lowest_tried_rps < 2.0)
        );
        assert!(found.steps.iter().all(|s| !s.met));
    }

    #[test]
    fn repeated_searches_give_a_geometric_mean_with_an_interval() {
        let searches: Vec<Search> =
            [470.0, 480.0, 490.0].into_iter().map(|c| search(300.0, model(c)).unwrap()).collect();
        let (mean, low, high) = interval(&searches).unwrap();
        assert!(
            low < mean && mean < high && (440.0..500.0).contains(&mean),
            "{mean} [{low}–{high}]"
        );
        let not_met = vec![search(10.0, model(0.0)).unwrap(), searches[0].clone()];
        assert!(interval(&not_met).is_none(), "no capacity where one search did not meet it");
        assert_eq!(found(&searches).map(|(rate, _)| rate), Some(mean));
    }

    #[test]
    fn one_search_gives_its_capacity_without_an_interval() {
        let one = [search(300.0, model(480.0)).unwrap()];
        let Capacity::Met { rate_rps, .. } = one[0].capacity else { panic!("{:?}", one[0]) };
        assert_eq!(found(&one), Some((rate_rps, None)));
        assert_eq!(found(&[search(10.0, model(0.0)).unwrap()]), None);
    }
}
