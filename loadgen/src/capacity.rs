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

use bookstore_record::results::Cell;

/// The share of the requests due in a window that must be answered in time.
pub const IN_TIME_SHARE: f64 = 0.99;
/// The most of them that may fail.
pub const ERROR_SHARE_MAX: f64 = 0.01;
/// How much higher each rung of the climb is than the last.
pub const CLIMB: f64 = 1.5;
/// The search ends when the highest rate met and the lowest missed are this close (their
/// ratio less one).
pub const PRECISION: f64 = 0.05;
/// The most windows one search takes.
pub const MAX_STEPS: usize = 16;
/// The lowest rate tried: below it a URL is "not met".
pub const MIN_RATE_RPS: f64 = 1.0;

/// A latency objective: the `quantile` of the successes within `bound` (`p99=10ms`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Objective {
    /// 0.99 for `p99`.
    pub quantile: f64,
    /// The bound, µs.
    #[serde(rename = "bound_us")]
    pub bound_us: u64,
}

impl Objective {
    /// `pNN=DURATION`, e.g. `p99=10ms`, `p50=2ms`, `p99.9=50ms`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let invalid = || format!("--slo {spec:?}: expected pNN=DURATION, e.g. p99=10ms");
        let (percentile, bound) = spec.split_once('=').ok_or_else(invalid)?;
        let percentile: f64 = percentile
            .trim()
            .strip_prefix('p')
            .ok_or_else(invalid)?
            .parse()
            .map_err(|_| invalid())?;
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(format!("--slo {spec:?}: the percentile must be above 0 and below 100"));
        }
        let bound =
            humantime::parse_duration(bound.trim()).map_err(|e| format!("--slo {spec:?}: {e}"))?;
        if bound.is_zero() {
            return Err(format!("--slo {spec:?}: the bound must be above zero"));
        }
        Ok(Self { quantile: percentile / 100.0, bound_us: bound.as_micros() as u64 })
    }

    /// "p99 ≤ 10 ms".
    pub fn label(&self) -> String {
        format!(
            "{} ≤ {}",
            self.percentile(),
            bookstore_document::latency_label(self.bound_us as f64)
        )
    }

    /// "p99", "p99.9".
    pub fn percentile(&self) -> String {
        format!("p{}", (self.quantile * 1000.0).round() / 10.0)
    }
}

/// One window of a search.
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
    /// Why it did not, when it did not.
    pub missed_because: Option<String>,
}

impl Step {
    /// `cell`, a window at `rate_rps`, judged against `objective`.
    pub fn judge(cell: &Cell, rate_rps: f64, objective: Objective) -> anyhow::Result<Self> {
        let latency = crate::http::ranked_histogram(cell)?;
        let (due, in_time_share) =
            cell.open_loop.as_ref().map_or((0, 0.0), |o| (o.due, o.achieved_fraction));
        let error_share = if due > 0 { cell.counts.errors as f64 / due as f64 } else { 0.0 };
        let p50_us = latency.as_ref().map(|h| h.value_at_quantile(0.5));
        let at_objective_us = latency.as_ref().map(|h| h.value_at_quantile(objective.quantile));
        let missed_because = if let Some(limited) = bookstore_record::warnings::client_limited(cell)
        {
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
                    bookstore_document::latency_label(us as f64)
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
            missed_because,
        })
    }
}

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
    fn objectives_are_read_as_written_and_nonsense_is_refused() {
        let objective = Objective::parse("p99=10ms").unwrap();
        assert_eq!((objective.quantile, objective.bound_us), (0.99, 10_000));
        let tail = Objective::parse("p99.9=50ms").unwrap();
        assert!((tail.quantile - 0.999).abs() < 1e-12);
        assert_eq!(tail.percentile(), "p99.9");
        assert!(objective.label().starts_with("p99 ≤ "));
        for bad in ["99=10ms", "p99", "p100=1ms", "p99=0ms", "p99=soon"] {
            assert!(Objective::parse(bad).is_err(), "{bad}");
        }
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
    }
}
