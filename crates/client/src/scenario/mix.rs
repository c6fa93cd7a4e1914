//! Several scenarios loaded together: each virtual user keeps to one of them (user `i` to
//! scenario `i mod n`), so a mixed load holds the scenarios in the ratio of their users.
//! Used by `loadgen faults` (reads beside checkouts, the write path the audit checks).

use super::load::ScenarioLoad;
use super::table::Scenario;
use crate::engine::{Outcome, Picker, Response, Workload};

/// The scenarios' requests one after the other; a pick is an index into all of them.
#[derive(Debug)]
pub struct Mix {
    loads: Vec<ScenarioLoad>,
    /// Where each scenario's requests start.
    starts: Vec<usize>,
}

impl Mix {
    /// `scenarios` against `host`, in this order (at least one).
    pub fn new(scenarios: &[Scenario], host: &str) -> Self {
        assert!(!scenarios.is_empty(), "a mix of no scenario");
        let loads: Vec<ScenarioLoad> =
            scenarios.iter().map(|&s| ScenarioLoad::new(s, host)).collect();
        let starts = loads
            .iter()
            .scan(0, |next, load| {
                let start = *next;
                *next += load.len();
                Some(start)
            })
            .collect();
        Self { loads, starts }
    }

    /// The scenario of pick `pick` and the pick within it.
    pub fn locate(&self, pick: usize) -> (Scenario, usize) {
        let (load, own) = self.load(pick);
        (load.scenario, own)
    }

    fn load(&self, pick: usize) -> (&ScenarioLoad, usize) {
        let at = self.starts.partition_point(|&start| start <= pick) - 1;
        (&self.loads[at], pick - self.starts[at])
    }
}

impl Workload for Mix {
    fn request(&self, pick: usize) -> &[u8] {
        let (load, own) = self.load(pick);
        load.request(own)
    }

    fn picker(&self, index: usize, users: usize) -> Picker {
        let n = self.loads.len();
        let at = index % n;
        // The scenario's users are every n-th: its picker sees them as 0, 1, 2, …
        let own_users = users / n + usize::from(at < users % n);
        let inner = self.loads[at].picker(index / n, own_users.max(1));
        Picker::Shifted { inner: Box::new(inner), by: self.starts[at] }
    }

    fn classify(&self, pick: usize, response: &Response<'_>) -> Outcome {
        let (load, own) = self.load(pick);
        load.classify(own, response)
    }

    fn validate(&self, pick: usize, response: &Response<'_>) -> Result<(), String> {
        let (load, own) = self.load(pick);
        load.validate(own, response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_keeps_to_one_scenario_and_the_picks_find_their_requests() {
        let mix = Mix::new(&[Scenario::BookById, Scenario::CheckoutCreate], "h");
        for user in 0..6 {
            let mut picker = mix.picker(user, 6);
            let wanted = if user % 2 == 0 { Scenario::BookById } else { Scenario::CheckoutCreate };
            for _ in 0..50 {
                let pick = picker.pick();
                let (scenario, _) = mix.locate(pick);
                assert_eq!(scenario, wanted, "user {user}");
                let request = std::str::from_utf8(mix.request(pick)).unwrap();
                let method = if wanted == Scenario::BookById { "GET " } else { "POST " };
                assert!(request.starts_with(method), "{request}");
            }
        }
    }

    #[test]
    fn a_scenarios_users_cycle_over_its_requests_as_they_would_alone() {
        let mix = Mix::new(&[Scenario::BookById, Scenario::CheckoutCreate], "h");
        let alone = ScenarioLoad::new(Scenario::CheckoutCreate, "h");
        // Users 1 and 3 of 4 are the checkout scenario's users 0 and 1 of 2.
        let mut mixed = mix.picker(3, 4);
        let mut own = alone.picker(1, 2);
        for _ in 0..10 {
            let (_, pick) = mix.locate(mixed.pick());
            assert_eq!(pick, own.pick());
        }
    }
}
