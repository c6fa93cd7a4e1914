//! Which rate ranks the stacks of a scenario, and how it is read off a cell.

use bookstore_client::scenario::Scenario;

use crate::results::{Cell, TimelineSecond};

/// Which rate ranks the stacks of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Successes per second.
    Goodput,
    /// Successes and expected refusals per second: for `checkoutSoldOut`, where after ten
    /// sales every correct answer is a refusal.
    Answered,
    /// Every response per second.
    Throughput,
}

impl Metric {
    /// The rate that ranks `scenario`'s stacks.
    pub fn for_scenario(scenario: &str) -> Self {
        if scenario == Scenario::CheckoutSoldOut.name() {
            Metric::Answered
        } else {
            Metric::Goodput
        }
    }

    /// This rate of `cell`.
    pub fn of(self, cell: &Cell) -> f64 {
        match self {
            Metric::Goodput => cell.goodput_rps,
            Metric::Answered => {
                (cell.counts.ok + cell.counts.rejected) as f64 / cell.window_seconds
            }
            Metric::Throughput => cell.throughput_rps,
        }
    }

    /// As the exports name it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput",
            Metric::Answered => "answered",
            Metric::Throughput => "throughput",
        }
    }

    /// As the pages' axes name it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput (ok/s)",
            Metric::Answered => "expected answers/s (201 or 409)",
            Metric::Throughput => "responses/s",
        }
    }

    /// The per-second value of a timeline second.
    pub fn per_second(self, second: &TimelineSecond) -> f64 {
        match self {
            Metric::Goodput => second.ok as f64,
            Metric::Answered => (second.ok + second.rejected) as f64,
            Metric::Throughput => (second.ok + second.rejected + second.errors) as f64,
        }
    }
}
