//! Rounds where they are needed: after the rounds every cell gets, the families of a
//! scenario with a pair still open get more, look by look (`bookstore_stats::Looks`), within
//! the scenario's share of what `--budget` leaves. A family that settles stops on its own;
//! one still open stops when the budget or the looks run out, in the order planned, never
//! by its data — which is what lets the pages judge it at the final level
//! (`Looks::level`; docs/method.md).

use std::collections::BTreeMap;
use std::time::Instant;

use bookstore_client::scenario::Scenario;
use bookstore_record::metric::Metric;
use bookstore_record::results::{RunResults, StackStatus};
use bookstore_record::warnings::disqualification;
use bookstore_stats::Looks;

use crate::suite::ledger::Spent;
use crate::suite::plan::Window;
use crate::suite::plan::{self, PlannedWindow};
use crate::suite::state::Suite;

/// The rates by round of the family of `scenario` at `concurrency`: its ranked parties
/// (stacks and variants that are not twins, measured, without a disqualified window), as
/// the pages rank them.
fn family_rates(
    results: &RunResults,
    scenario: Scenario,
    concurrency: u32,
) -> Vec<BTreeMap<u32, f64>> {
    let metric = Metric::for_scenario(scenario.name());
    results
        .stacks
        .iter()
        .filter(|stack| stack.status == StackStatus::Measured && !stack.is_twin())
        .filter_map(|stack| {
            let cells: Vec<_> = stack
                .cells
                .iter()
                .filter(|c| c.scenario == scenario.name() && c.concurrency == concurrency)
                .collect();
            if cells.is_empty() || cells.iter().any(|c| disqualification(c).is_some()) {
                return None;
            }
            Some(
                cells
                    .iter()
                    .filter(|c| !c.stopped_early)
                    .map(|c| (c.round, metric.of(c)))
                    .collect(),
            )
        })
        .collect()
}

/// The pairs of a family (its `members`' rates by round) that more rounds could still call.
fn open_pairs(members: &[BTreeMap<u32, f64>], looks: &Looks) -> usize {
    let samples = bookstore_stats::every_pair(&members.iter().collect::<Vec<_>>());
    let slices: Vec<&[(f64, f64)]> = samples.iter().map(Vec::as_slice).collect();
    looks.open(&slices)
}

impl Suite<'_> {
    /// Runs `block`'s windows in order, until the run is stopped, counting their time.
    pub(crate) fn run_block(&mut self, block: &[PlannedWindow]) -> anyhow::Result<()> {
        for (index, window) in block.iter().enumerate() {
            if self.stopped() {
                return Ok(());
            }
            let key = window.key();
            // A resumed run's window the journal holds is given back, not measured again:
            // what it added, and the time it took, as the plan's later choices read them.
            let seconds = match self.ledger.replay.remove(&key) {
                Some((seconds, placed)) => {
                    self.ledger.results.place(placed)?;
                    self.progress.skipped(1);
                    seconds
                }
                None => {
                    let started = Instant::now();
                    let mark = self.ledger.results.mark();
                    self.run_window(window)?;
                    let seconds = started.elapsed().as_secs_f64();
                    let placed = self.ledger.results.since(&mark);
                    self.ledger.journal_window(&key, seconds, &placed)?;
                    seconds
                }
            };
            self.ledger.spent.windows += 1;
            self.ledger.spent.seconds += seconds;
            if block.get(index + 1).is_none_or(|next| !next.same_round(window)) {
                self.ledger.round_end()?;
            }
        }
        Ok(())
    }

    /// More rounds for `scenario`'s open families (`groups`, one round's windows as the
    /// closed block ran them), look by look, within the scenario's share of the budget:
    /// what is left of it, less what the windows still owed will take (this scenario's
    /// fixed-load rounds, the later scenarios' rounds), split evenly over this scenario and
    /// the later ones. `block` is what this scenario's closed block cost, by which its
    /// further rounds are estimated.
    pub(crate) fn extend(
        &mut self,
        scenario: Scenario,
        groups: &[Vec<Window>],
        block: Spent,
        turn: &mut usize,
    ) -> anyhow::Result<()> {
        let looks = self.options.measurement.looks();
        let (Some(per_window), true) = (block.per_window(), looks.sequential()) else {
            return Ok(());
        };
        let mut allowance = self.allowance(scenario);
        let mut reached = vec![self.options.total_rounds(); groups.len()];
        loop {
            // The open groups, in the order planned (not by their data: the budget must stop
            // a family whatever its rounds say, for its final level to hold), with the
            // rounds of their next look.
            let mut open: Vec<(usize, u32)> = Vec::new();
            for (g, group) in groups.iter().enumerate() {
                let pairs: usize = concurrencies(group)
                    .into_iter()
                    .map(|c| open_pairs(&family_rates(&self.ledger.results, scenario, c), &looks))
                    .sum();
                let next = looks.next(reached[g] as usize).map(|n| n as u32);
                if let (true, Some(next)) = (pairs > 0, next) {
                    open.push((g, next));
                }
            }
            // As many of them as the allowance pays for.
            let mut steps = Vec::new();
            let mut cost = 0.0;
            for (g, next) in open {
                let windows = groups[g].len() as f64 * f64::from(next - reached[g]);
                if cost + windows * per_window > allowance {
                    break;
                }
                cost += windows * per_window;
                steps.push((groups[g].as_slice(), reached[g], next));
            }
            if steps.is_empty() {
                return Ok(());
            }
            let schedule = self.options.measurement.schedule;
            let planned = plan::extension_block(scenario, &steps, schedule, turn);
            self.progress.added(planned.len() as u64);
            let started = Instant::now();
            self.run_block(&planned)?;
            allowance -= started.elapsed().as_secs_f64();
            for (group, _, next) in steps {
                let g = groups.iter().position(|w| w.as_slice() == group).expect("a group");
                reached[g] = next;
            }
            if self.stopped() {
                return Ok(());
            }
        }
    }

    /// `scenario`'s share of the budget for rounds past the first look (infinite without a
    /// budget).
    pub(crate) fn allowance(&self, scenario: Scenario) -> f64 {
        let Some(budget) = self.options.measurement.budget else { return f64::INFINITY };
        let per_window = self.ledger.spent.per_window().unwrap_or(0.0);
        let scenarios = &self.options.scenarios;
        let here = scenarios.iter().position(|&s| s == scenario).unwrap_or(0);
        let stacks = self.running.prepared.len() as u64;
        let rounds = u64::from(self.options.total_rounds());
        let equal_load = self.options.equal_load_rates().len() as u64 * stacks * rounds;
        let later: u64 = scenarios[here + 1..]
            .iter()
            .map(|&s| {
                self.options.round_windows(s, self.running.prepared.len()).len() as u64 * rounds
            })
            .sum();
        let owed = equal_load * (scenarios.len() - here) as u64 + later;
        let left = budget.as_secs_f64() - self.ledger.began.elapsed().as_secs_f64();
        share(left, owed, per_window, scenarios.len() - here)
    }
}

/// How much longer than the windows so far the windows owed are taken to be. The suite runs
/// its cheap scenarios first: in the run `2713e02:summary/results/2026-12-03-default-with-twin.json`
/// a stack's warm-up and window took 0.71–0.74 s in the first four scenarios, 0.81 s over
/// the run, 1.73 s in aggregateReport. Too little here starves the last scenarios; too much only
/// hands the last one what the others left.
const OWED_MARGIN: f64 = 1.5;

/// A scenario's share of `left` seconds: what the `owed` windows (at `per_window` seconds
/// and [`OWED_MARGIN`]) leave of it, split evenly over the `scenarios` still to run, this
/// one included. Negative when the windows owed alone overrun it: then no further round
/// runs.
fn share(left: f64, owed: u64, per_window: f64, scenarios: usize) -> f64 {
    (left - owed as f64 * per_window * OWED_MARGIN) / scenarios.max(1) as f64
}

/// The concurrencies whose families have windows in `group`.
fn concurrencies(group: &[Window]) -> Vec<u32> {
    let mut found: Vec<u32> = group
        .iter()
        .filter_map(|w| match w {
            Window::Stack(_, c) => Some(*c),
            _ => None,
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(rates: &[f64]) -> BTreeMap<u32, f64> {
        rates.iter().enumerate().map(|(round, rate)| (round as u32, *rate)).collect()
    }

    #[test]
    fn a_family_is_open_while_a_pair_could_still_be_called() {
        let looks = Looks::planned(3, 12);
        let base = member(&[100.0, 130.0, 90.0]);
        // 10% above, spread 0.05: not called in 3 rounds, could be in 12.
        let close = member(&[110.0, 150.0, 97.0]);
        // Twice as fast: called at once. Within a hair, noisily: futile.
        let double = member(&[200.0, 262.0, 178.0]);
        let same = member(&[108.0, 119.0, 92.0]);
        assert_eq!(open_pairs(&[base.clone(), close.clone()], &looks), 1);
        assert_eq!(open_pairs(&[base.clone(), double.clone()], &looks), 0);
        assert_eq!(open_pairs(&[base.clone(), same], &looks), 0);
        // Three members: base–close open, double–base called; double–close, 1.8× apart
        // but a little noisier, open too — two degrees of freedom and the spread between
        // processes (bookstore_stats::PROCESS_SD) leave it short of the strict interim level.
        assert_eq!(open_pairs(&[base.clone(), close, double], &looks), 2);
        // A fixed design has no look left to go to: nothing is open.
        let fixed = Looks::fixed(3);
        assert_eq!(open_pairs(&[base, member(&[110.0, 150.0, 97.0])], &fixed), 0);
        assert_eq!(open_pairs(&[], &looks), 0);
    }

    #[test]
    fn each_scenario_gets_an_even_share_of_what_the_windows_owed_leave() {
        // 300 s left, 100 windows owed at 1 s: what they leave, with the margin, over 3.
        assert_eq!(share(300.0, 100, 1.0, 3), (300.0 - 100.0 * OWED_MARGIN) / 3.0);
        assert!(share(100.0, 200, 0.75, 3) < 0.0, "owed alone overrun it");
        assert_eq!(share(10.0, 0, 1.0, 0), 10.0);
    }
}
