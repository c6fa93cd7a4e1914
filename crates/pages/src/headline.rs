//! Section 1: per scenario and concurrency, who leads and how the others compare.

use serde::Serialize;

use super::dataset::{Dataset, Metric};
use super::verdicts::Family;
use super::{Chip, ComparisonText, rate_text};

#[derive(Debug, Serialize)]
pub(crate) struct HeadlineRow {
    scenario: String,
    concurrency: u32,
    metric: String,
    /// The first of the ranking, and every stack not distinguishable from it.
    leaders: Vec<Chip>,
    /// The first is distinguishable from every other stack: it is the best.
    best: bool,
    /// The first's rate.
    leader_value: String,
    others: Vec<HeadlineEntry>,
    disqualified: Vec<Disqualified>,
}

#[derive(Debug, Serialize)]
pub(crate) struct HeadlineEntry {
    #[serde(flatten)]
    chip: Chip,
    /// Its rate against the first's.
    against_first: Option<ComparisonText>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Disqualified {
    #[serde(flatten)]
    chip: Chip,
    reason: String,
}

pub(crate) fn rows(dataset: &Dataset<'_>) -> Vec<HeadlineRow> {
    let mut rows = Vec::new();
    for scenario in &dataset.scenarios {
        let metric = Metric::for_scenario(scenario);
        for &concurrency in &dataset.concurrency {
            let family = Family::rates(dataset, scenario, concurrency);
            if family.members.is_empty() {
                continue;
            }
            let ranking = family.ranking();
            let disqualified = family
                .members
                .iter()
                .filter_map(|m| {
                    Some(Disqualified {
                        chip: Chip::of(dataset, &m.name),
                        reason: m.disqualified.clone()?,
                    })
                })
                .collect();
            let Some(&first) = ranking.order.first() else {
                rows.push(HeadlineRow {
                    scenario: scenario.clone(),
                    concurrency,
                    metric: metric.label().into(),
                    leaders: Vec::new(),
                    best: false,
                    leader_value: String::new(),
                    others: Vec::new(),
                    disqualified,
                });
                continue;
            };
            let first_name = &family.members[first].name;
            let entry = |index: usize| {
                let name = &family.members[index].name;
                HeadlineEntry {
                    chip: Chip::of(dataset, name),
                    against_first: family.compare(first_name, name).map(ComparisonText::from),
                }
            };
            rows.push(HeadlineRow {
                scenario: scenario.clone(),
                concurrency,
                metric: metric.label().into(),
                leaders: ranking
                    .leaders
                    .iter()
                    .map(|&i| Chip::of(dataset, &family.members[i].name))
                    .collect(),
                best: ranking.best,
                leader_value: family.members[first]
                    .summary
                    .as_ref()
                    .map_or(String::new(), rate_text),
                others: ranking.order.iter().skip(1).map(|&i| entry(i)).collect(),
                disqualified,
            });
        }
    }
    rows
}
