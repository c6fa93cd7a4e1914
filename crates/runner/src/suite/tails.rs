//! A tail question (`--tail-question WIDTH`): one scenario's fixed-load rounds go on, look
//! by look ([`bookstore_record::results::Measurement::tail_looks`]), until every p99
//! comparison the page will show has an interval within the width asked
//! ([`bookstore_stats::widest_interval`], every look at its share of `q`), or the looks or
//! the scenario's share of the budget run out.
//!
//! A window's p99 at a fixed load scatters by about half its log around the family's fit,
//! white in window time (docs/method.md, "Latency at equal load"): a default run's three
//! rounds leave p99 intervals tens of times wide, and only more windows narrow them.

use std::collections::BTreeMap;
use std::time::Instant;

use bookstore_client::scenario::Scenario;
use bookstore_record::results::{Rate, RunResults, StackResults, StackStatus};
use bookstore_record::warnings::{carried, disqualification, saturation};

use crate::suite::plan::{self, Offer};
use crate::suite::state::Suite;

impl Suite<'_> {
    /// With a tail question, more fixed-load rounds of `scenario` at `offer` (`cap`
    /// connections at most) until its p99 intervals are as narrow as asked; a round is
    /// taken to cost `per_round` seconds until one is timed here. Without one, nothing.
    pub(crate) fn ask_tails(
        &mut self,
        scenario: Scenario,
        cap: u32,
        offer: Offer,
        mut per_round: f64,
        turn: &mut usize,
    ) -> anyhow::Result<()> {
        let measurement = &self.options.measurement;
        let (Some(width), Some(looks)) = (measurement.tail_question, measurement.tail_looks())
        else {
            return Ok(());
        };
        let q = looks.every_look_q();
        let rate = offer.fraction.map_or(Rate::PerSecond(offer.rate_rps), Rate::Share);
        let mut reached = self.options.total_rounds();
        let mut allowance = self.allowance(scenario);
        loop {
            let widest = widest_p99_interval(&self.ledger.results, scenario, rate, q);
            let said = widest.map_or("no interval yet".to_owned(), |w| format!("widest {w:.2}×"));
            if widest.is_some_and(|w| w <= width) {
                self.progress.note(&format!(
                    "{scenario} at {}: every p99 interval within {width}× after {reached} rounds ({said})",
                    rate.label()
                ));
                return Ok(());
            }
            let Some(next) = looks.next(reached as usize).map(|n| n as u32) else {
                self.progress.note(&format!(
                    "{scenario} at {}: the last look ({reached} rounds) left the p99 intervals wider than {width}× ({said})",
                    rate.label()
                ));
                return Ok(());
            };
            let cost = per_round * f64::from(next - reached);
            if cost > allowance {
                self.progress.note(&format!(
                    "{scenario} at {}: the budget ended the tail question after {reached} rounds ({said}; the next look, {next} rounds, needs {cost:.0} s more)",
                    rate.label()
                ));
                return Ok(());
            }
            let stacks = self.running.prepared.len();
            let schedule = measurement.schedule;
            let block =
                plan::offered_block(scenario, stacks, cap, offer, reached..next, schedule, turn);
            self.progress.added(block.len() as u64);
            let started = Instant::now();
            self.run_block(&block)?;
            let spent = started.elapsed().as_secs_f64();
            allowance -= spent;
            per_round = spent / f64::from(next - reached);
            reached = next;
            if self.stopped() {
                return Ok(());
            }
        }
    }
}

/// The widest p99 interval at `rate` of `scenario` in `results`, judged as the page judges
/// them (at `q`): every two measured stacks that carried the rate
/// ([`bookstore_record::warnings::carried`]), and each twin against its stack. `None` while
/// some comparison has no interval.
fn widest_p99_interval(
    results: &RunResults,
    scenario: Scenario,
    rate: Rate,
    q: f64,
) -> Option<f64> {
    let label = rate.label();
    let p99s = |stack: &StackResults| -> Option<BTreeMap<u32, f64>> {
        let cells: Vec<_> = stack
            .equal_load
            .iter()
            .filter(|c| c.scenario == scenario.name())
            .filter(|c| c.equal_load_rate().map(Rate::label).as_deref() == Some(label.as_str()))
            .collect();
        let saturated = cells.iter().filter(|c| saturation(c).is_some()).count();
        let carried =
            carried(saturated, cells.len()) && cells.iter().all(|c| disqualification(c).is_none());
        (stack.status == StackStatus::Measured && !cells.is_empty() && carried)
            .then(|| cells.iter().filter_map(|c| Some((c.round, c.fixed_load_p99_us()?))).collect())
    };
    let ranked: Vec<(String, BTreeMap<u32, f64>)> = results
        .stacks
        .iter()
        .filter(|s| !s.is_twin())
        .filter_map(|s| Some((s.name.clone(), p99s(s)?)))
        .collect();
    let twins: Vec<(usize, BTreeMap<u32, f64>)> = results
        .stacks
        .iter()
        .filter(|s| s.is_twin())
        .filter_map(|twin| {
            let of = twin.variant_of.as_deref()?;
            Some((ranked.iter().position(|(name, _)| name == of)?, p99s(twin)?))
        })
        .collect();
    bookstore_stats::widest_interval(&ranked, &twins, q)
}
