//! Latency objectives (`--slo p99=10ms`): when a window at a constant offered rate meets
//! one, and the capacity a ladder of such windows shows — the highest rate at which at
//! least [`IN_TIME_SHARE`] of the requests due are answered (by the window's end and its
//! grace), no more than [`ERROR_SHARE_MAX`] of them fail, and the objective's percentile of
//! the successes, timed from when each was due, stays within its bound.
//!
//! How a window and a ladder of windows are judged against one: [`crate::ladder`].

use serde::{Deserialize, Serialize};

/// The share of the requests due in a window that must be answered in time.
pub const IN_TIME_SHARE: f64 = 0.99;
/// The most of them that may fail.
pub const ERROR_SHARE_MAX: f64 = 0.01;

/// A latency objective: the `quantile` of the successes within `bound_us` (`p99=10ms`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Objective {
    /// 0.99 for `p99`.
    pub quantile: f64,
    /// The bound, µs.
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
        let bound = crate::latency_label(self.bound_us as f64);
        format!("{} ≤ {bound}", self.percentile())
    }

    /// "p99", "p99.9".
    pub fn percentile(&self) -> String {
        format!("p{}", (self.quantile * 1000.0).round() / 10.0)
    }
}

/// An objective for every scenario, or for one (`bookById:p99=5ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopedObjective {
    /// The scenario it is for; absent: every scenario without one of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The objective.
    #[serde(flatten)]
    pub objective: Objective,
}

impl ScopedObjective {
    /// `p99=10ms` or `SCENARIO:p99=10ms`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        match spec.split_once(':') {
            Some((scenario, objective)) => {
                let scenario = bookstore_client::scenario::Scenario::parse(scenario.trim())
                    .map_err(|e| format!("--slo {spec:?}: {e}"))?;
                Ok(Self {
                    scenario: Some(scenario.name().to_owned()),
                    objective: Objective::parse(objective)?,
                })
            }
            None => Ok(Self { scenario: None, objective: Objective::parse(spec)? }),
        }
    }

    /// The objectives `scenario` is judged by: its own, or else those for every scenario.
    pub fn for_scenario(objectives: &[Self], scenario: &str) -> Vec<Objective> {
        let own: Vec<Objective> = objectives
            .iter()
            .filter(|o| o.scenario.as_deref() == Some(scenario))
            .map(|o| o.objective)
            .collect();
        if !own.is_empty() {
            return own;
        }
        objectives.iter().filter(|o| o.scenario.is_none()).map(|o| o.objective).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_scenario_of_its_own_replaces_the_objectives_for_every_scenario() {
        let objectives: Vec<ScopedObjective> = ["p99=10ms", "p50=2ms", "bookById:p99=5ms"]
            .iter()
            .map(|s| ScopedObjective::parse(s).unwrap())
            .collect();
        let bounds = |scenario| -> Vec<u64> {
            ScopedObjective::for_scenario(&objectives, scenario)
                .iter()
                .map(|o| o.bound_us)
                .collect()
        };
        assert_eq!(bounds("bookById"), [5_000]);
        assert_eq!(bounds("health"), [10_000, 2_000]);
        assert!(ScopedObjective::parse("noSuchScenario:p99=1ms").is_err());
    }
}
