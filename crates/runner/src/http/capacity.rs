//! `loadgen http URL --slo p99=10ms`: the capacity of one URL under a latency objective —
//! the highest constant offered rate at which, in a window, at least [`IN_TIME_SHARE`] of
//! the requests due are answered (by the window's end and its grace), no more than
//! [`ERROR_SHARE_MAX`] of them fail, and the objective's percentile of the successes,
//! timed from when each was due, stays within its bound.
//!
//! The ladder and the rate it reports are the workspace's one way to read a capacity
//! ([`bookstore_stats::capacity`]), on the engine's open loop (no coordinated omission). A
//! window the client itself limited (its send lag: the suite's `client_limited` warning)
//! ends the ladder: above it the client, not the server, would be measured (`loadgen ab
//! --slo`, which restarts the server, measures such a rung again instead). A URL that
//! misses at the lowest rate is "not met even at R req/s", one met at the highest "above
//! R req/s", never a number that was not measured.
//!
//! The searches of one URL (`--repeat`) are of one process: their interval holds the
//! ladder's own scatter, not the spread between two processes of the server, which for a
//! capacity is large (`loadgen ab --slo` restarts its sides for that).

use std::time::Duration;

use serde::Serialize;

use bookstore_stats::capacity::{Ladder, LadderDesign, dither};

pub use bookstore_record::ladder::{Capacity, Step};
pub use bookstore_record::objective::{ERROR_SHARE_MAX, IN_TIME_SHARE, Objective};

/// The highest rate a ladder offers unless told (`--max-rate`): this many times the closed
/// loop's rate. An open loop that the closed loop's concurrency could not serve is past the
/// server's capacity at any objective; twice leaves room for a closed loop that was itself
/// short of connections.
pub const MAX_RATE_FACTOR: f64 = 2.0;

/// One ladder: its windows and what they show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Search {
    /// Every window, in the order run.
    pub steps: Vec<Step>,
    /// What they show; `None` when every window was left out.
    pub capacity: Option<Capacity>,
}

/// Ladder `index` (its rungs moved by [`bookstore_stats::capacity::dither`]) under
/// `objective` around `centre_rps` up to `max_rps`, `step_at(rate)` running and judging one
/// window at `rate`.
pub fn search(
    index: usize,
    centre_rps: f64,
    max_rps: f64,
    objective: Objective,
    mut step_at: impl FnMut(f64) -> anyhow::Result<Step>,
) -> anyhow::Result<Search> {
    let design = LadderDesign::up_to(max_rps);
    let mut ladder = Ladder::dithered(design, centre_rps, dither(index));
    let mut steps = Vec::new();
    while let Some(rate) = ladder.next_rate() {
        let step = step_at(rate)?;
        let rung = step.rung(objective);
        steps.push(step);
        match rung {
            Some(rung) => ladder.record(rung),
            None => break,
        }
    }
    Ok(Search { steps, capacity: ladder.capacity() })
}

/// `capacity` in one line: the estimate, or the bound a ladder that did not bracket one
/// showed and what to do about it.
pub fn said(capacity: Option<Capacity>, objective: Objective) -> String {
    let label = objective.label();
    match capacity {
        Some(Capacity::Between { rate_rps, .. }) => {
            format!("capacity at {label}: {rate_rps:.0} req/s")
        }
        Some(Capacity::NotMet { lowest_rps }) => {
            format!("{label} was not met even at {lowest_rps:.0} req/s")
        }
        Some(Capacity::Above { highest_rps }) => {
            format!("capacity at {label} above {highest_rps:.0} req/s: raise --max-rate")
        }
        None => format!("capacity at {label}: every window was limited by the client"),
    }
}

/// The capacities of repeated searches, when every one bracketed one: their geometric mean
/// and Student's 95% interval over their logarithms (`None` below two).
pub fn interval(searches: &[Search]) -> Option<(f64, f64, f64)> {
    let logs: Option<Vec<f64>> =
        searches.iter().map(|s| Some(s.capacity?.rate_rps()?.ln())).collect();
    let estimate = bookstore_stats::Estimate::of(&logs?, 0.05)?;
    Some((estimate.mean.exp(), estimate.low.exp(), estimate.high.exp()))
}

/// The capacity the searches found together, as the JSON's top level gives it: with two
/// or more, [`interval`]'s geometric mean and its ends; with one that bracketed one, its
/// estimate and no interval; `None` where a search did not.
pub fn found(searches: &[Search]) -> Option<(f64, Option<(f64, f64)>)> {
    if let [only] = searches {
        return Some((only.capacity?.rate_rps()?, None));
    }
    interval(searches).map(|(mean, low, high)| (mean, Some((low, high))))
}

/// The window length a search step takes by default: shorter than `loadgen http`'s 3 s, as
/// a search runs several of them.
pub const DEFAULT_STEP: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that meets the objective up to `capacity` requests/s, its p99 climbing
    /// steeply past it (a knee).
    fn model(capacity: f64) -> impl FnMut(f64) -> anyhow::Result<Step> {
        move |rate| {
            let p99_us = (10_000.0 * (rate / capacity).powi(4)) as u64;
            let met = p99_us <= 10_000;
            Ok(Step {
                rate_rps: rate,
                due: rate as u64,
                in_time_share: 1.0,
                error_share: 0.0,
                p50_us: Some(100),
                at_objective_us: Some(p99_us),
                met,
                left_out: false,
                fell_behind: false,
                missed_because: (!met).then(|| "p99 was high".into()),
            })
        }
    }

    fn p99() -> Objective {
        Objective::parse("p99=10ms").unwrap()
    }

    #[test]
    fn the_ladder_brackets_the_capacity_from_a_centre_below_or_above_it() {
        for centre in [200.0, 480.0, 3_000.0] {
            let found = search(0, centre, 1e6, p99(), model(480.0)).unwrap();
            let Some(Capacity::Between { rate_rps, met_rps, missed_rps }) = found.capacity else {
                panic!("{found:?}")
            };
            assert!(met_rps <= 480.0 && missed_rps > 480.0, "{found:?}");
            assert!((rate_rps / 480.0 - 1.0).abs() < 0.01, "{rate_rps}");
            assert!(found.steps.len() <= 16);
        }
    }

    #[test]
    fn an_objective_missed_at_every_rate_or_met_at_the_top_says_so_in_one_line() {
        let never = search(0, 10.0, 1e6, p99(), model(0.5)).unwrap();
        assert!(
            matches!(never.capacity, Some(Capacity::NotMet { lowest_rps }) if lowest_rps <= 1.0)
        );
        assert!(never.steps.iter().all(|s| !s.met));
        assert_eq!(said(never.capacity, p99()), "p99 ≤ 10 ms was not met even at 1 req/s");
        let above = search(0, 100.0, 150.0, p99(), model(480.0)).unwrap();
        assert_eq!(above.capacity, Some(Capacity::Above { highest_rps: 150.0 }));
        assert_eq!(
            said(above.capacity, p99()),
            "capacity at p99 ≤ 10 ms above 150 req/s: raise --max-rate"
        );
    }

    #[test]
    fn repeated_searches_give_a_geometric_mean_with_an_interval() {
        let searches: Vec<Search> = [470.0, 480.0, 490.0]
            .into_iter()
            .enumerate()
            .map(|(i, c)| search(i, 300.0, 1e6, p99(), model(c)).unwrap())
            .collect();
        let (mean, low, high) = interval(&searches).unwrap();
        assert!(
            low < mean && mean < high && (460.0..500.0).contains(&mean),
            "{mean} [{low}–{high}]"
        );
        let not_met = vec![search(0, 10.0, 1e6, p99(), model(0.5)).unwrap(), searches[0].clone()];
        assert!(interval(&not_met).is_none(), "no capacity where one search did not bracket it");
        assert_eq!(found(&searches).map(|(rate, _)| rate), Some(mean));
        let one = &searches[..1];
        assert_eq!(found(one), Some((one[0].capacity.unwrap().rate_rps().unwrap(), None)));
    }
}
