//! The fixed-load phase: after a scenario's closed-loop rounds, every stack is offered the
//! same rate in an open loop, in rotating rounds like the closed loop's, and its latency is
//! timed from when each request was due.
//!
//! The closed loop's latencies are those of saturation: each connection sends its next
//! request when the last is answered, so latency mostly restates throughput (Little's law)
//! and a stall holds back the requests that would have seen it (coordinated omission). At a
//! rate below every stack's capacity, the question a team choosing a stack asks — "at this
//! load, whose p99 is lower?" — has an answer. By default the rate is a share of the
//! *slowest* qualified stack's goodput at the lowest concurrency, measured moments before,
//! so that every stack can carry it.

use crate::suite::Rate;
use crate::suite::plan::Offer;
use crate::suite::state::Suite;
use bookstore_client::scenario::Scenario;
use bookstore_record::metric::Metric;
use bookstore_record::results::StackStatus;

impl Suite<'_> {
    /// The rates `scenario` is offered: `--rates` as given, a share turned into requests per
    /// second by the slowest stack's goodput (a share with no stack to take it from is
    /// skipped, and said).
    pub(crate) fn offers(&mut self, scenario: Scenario) -> Vec<Offer> {
        let shares = self.options.equal_load_rates().iter().any(|r| matches!(r, Rate::Share(_)));
        let slowest = if shares { self.slowest_goodput(scenario) } else { None };
        let mut offers = Vec::new();
        for &rate in self.options.equal_load_rates() {
            match (rate, slowest) {
                (Rate::PerSecond(rate_rps), _) => offers.push(Offer { rate_rps, fraction: None }),
                (Rate::Share(fraction), Some(slowest)) => {
                    offers.push(Offer { rate_rps: fraction * slowest, fraction: Some(fraction) })
                }
                (Rate::Share(fraction), None) => {
                    self.progress.note(&format!(
                        "{scenario}: no stack qualified at c = {} in the closed loop, so {:.0}% of the slowest is no rate: the equal-load windows of this share are skipped",
                        self.lowest_concurrency(),
                        fraction * 100.0
                    ));
                    let windows =
                        self.running.prepared.len() as u64 * u64::from(self.options.total_rounds());
                    self.progress.skipped(windows);
                }
            }
        }
        offers
    }

    fn lowest_concurrency(&self) -> u32 {
        self.options.measurement.concurrency.iter().copied().min().unwrap_or(0)
    }

    /// The lowest of the stacks' median goodput (expected answers, for the sold-out
    /// scenario) over the rounds of `scenario` at the lowest concurrency, counting only
    /// windows not disqualified; `None` when no stack has one.
    fn slowest_goodput(&self, scenario: Scenario) -> Option<f64> {
        let concurrency = self.lowest_concurrency();
        let metric = Metric::for_scenario(scenario.name());
        self.running
            .prepared
            .iter()
            .filter_map(|prepared| {
                let stack = &self.ledger.results.stacks[prepared.index];
                if stack.status != StackStatus::Measured {
                    return None;
                }
                let rates: Vec<f64> = stack
                    .cells
                    .iter()
                    .filter(|c| c.scenario == scenario.name() && c.concurrency == concurrency)
                    .filter(|c| bookstore_record::warnings::disqualification(c).is_none())
                    .map(|c| metric.of(c))
                    .collect();
                bookstore_stats::Summary::of(&rates).map(|s| s.median)
            })
            .filter(|median| *median > 0.0)
            .min_by(f64::total_cmp)
    }
}
