//! Section 1: per scenario and concurrency, who leads and how the others compare.

use crate::charts::{self, Forest, ForestValue};
use serde::Serialize;

use super::dataset::{Dataset, Metric};
use super::verdicts::Family;
use crate::text::{Chip, ComparisonText, rate_text};

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
    /// The others ÷ the first drawn as a forest, the family's detectable band shaded.
    forest: Option<Forest>,
    /// "5 rounds, sees 12%": what the family spent and the smallest difference it calls
    /// four times in five.
    power: Option<String>,
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
                    forest: None,
                    power: None,
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
            let forest_values: Vec<ForestValue> = ranking
                .order
                .iter()
                .skip(1)
                .filter_map(|&i| {
                    let name = &family.members[i].name;
                    let c = family.compare(first_name, name)?;
                    Some(ForestValue {
                        ratio: c.ratio,
                        low: c.low,
                        high: c.high,
                        called: c.differs(),
                        colour: crate::text::colour(dataset, name),
                        title: format!("{name} ÷ {first_name}: {}", c.text()),
                    })
                })
                .collect();
            let power = family.power();
            let forest = (!forest_values.is_empty())
                .then(|| charts::forest(&forest_values, power.and_then(|p| p.detectable)));
            let power = power.map(|p| {
                let sees = p.detectable.map_or("sees no difference".to_owned(), |d| {
                    format!("sees {:.0}%", (d - 1.0) * 100.0)
                });
                let pooled = if p.pooled.is_some() { ", spread pooled" } else { "" };
                format!("{} rounds, {sees}{pooled}", p.rounds)
            });
            rows.push(HeadlineRow {
                forest,
                power,
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
