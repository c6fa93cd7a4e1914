//! Section 6c, for a run that measured a grid of composed stacks (`loadgen study factorial`:
//! every framework × serializer × access triple in the same rounds): what each axis costs
//! on its own, and whether the presets run as their triples do.
//!
//! Per scenario and concurrency, the additive model on log rate gives each axis level's
//! effect against its baseline — the first framework and serializer the grid holds, in the
//! registry's order (axum, serde_json in the full grid); access split into its style (diesel-async ÷ diesel: one library,
//! blocking → async), its library (sqlx ÷ diesel-async: both async) and both at once (sqlx
//! ÷ diesel) — each a contrast of the grid's cells compared round by round by the verdict
//! method (`bookstore_stats::factorial`), the effects of a table one family. The two-way
//! interactions (every level pair against the baselines) are a family of their own; the
//! largest by its estimate is shown with its interval.
//!
//! The binary check: a preset and the composed stack of the same triple run the same
//! code, linked into another binary (Mytkowicz et al. 2009: code layout alone can move a
//! benchmark). Each preset measured beside its triple is compared with it, the presets of a
//! table one family.

use std::collections::BTreeMap;

use bookstore_registry::stacks::{
    self, ACCESSES, Axis, FRAMEWORKS, Kind, Layout, SERIALIZERS, StackInfo,
};
use bookstore_stats::factorial::{
    Cell, Grid, Interaction, judge_effects_within, judge_interactions,
};
use bookstore_stats::{Comparison, Samples, judge};
use serde::Serialize;

use super::dataset::{Dataset, Metric, RoundKey, Target};
use crate::charts::{self, Forest, ForestValue};
use crate::text::ComparisonText;

/// The grid a run measured: the levels of each factor its composed stacks hold, in the
/// registry's order, and the stack at each cell.
#[derive(Debug)]
struct GridCells {
    levels: [Vec<&'static str>; 3],
    /// What the second factor is.
    second: Second,
    cells: BTreeMap<Cell, StackInfo>,
    /// Stacks of the grid's levels that were not measured.
    missing: Vec<String>,
}

/// The grid's second factor: the serializer, or in a run of the layout study (its parties
/// in two runtime layouts, one serializer) the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Second {
    Serializer,
    Layout,
}

impl Second {
    /// The factor's name, and a count of its levels in words.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Second::Serializer => ("serializer", "serializers"),
            Second::Layout => ("layout", "layouts"),
        }
    }

    /// A stack's level of this factor.
    fn of(self, stack: &StackInfo) -> &'static str {
        match self {
            Second::Serializer => stack.tags.serializer,
            Second::Layout => stack.layout.name(),
        }
    }
}

/// The registry's levels of `axis`, in order.
fn registry_levels(axis: Axis) -> Vec<&'static str> {
    match axis {
        Axis::Framework => FRAMEWORKS.iter().map(|f| f.tag).collect(),
        Axis::Serializer => SERIALIZERS.to_vec(),
        Axis::Access => ACCESSES.iter().map(|a| a.tag).collect(),
    }
}

/// The composed stacks among the run's parties, laid out as a grid; `None` without two (a
/// run may still hold a preset beside its triple: the binary check needs no grid). A run
/// whose composed stacks hold two layouts is a grid of framework × layout × access, if they
/// hold one serializer.
fn grid_cells(dataset: &Dataset<'_>) -> Option<GridCells> {
    let composed: Vec<StackInfo> = dataset
        .stacks
        .iter()
        .filter_map(|name| stacks::find(name).ok())
        .filter(|s| s.kind == Kind::Composed)
        .collect();
    if composed.len() < 2 {
        return None;
    }
    let present = |all: Vec<&'static str>, of: &dyn Fn(&StackInfo) -> &'static str| {
        all.into_iter().filter(|level| composed.iter().any(|s| of(s) == *level)).collect::<Vec<_>>()
    };
    let layouts = present(Layout::ALL.iter().map(|l| l.name()).collect(), &|s| s.layout.name());
    let serializers = present(registry_levels(Axis::Serializer), &|s| s.tags.serializer);
    let second = if layouts.len() > 1 { Second::Layout } else { Second::Serializer };
    let levels = [
        present(registry_levels(Axis::Framework), &|s| s.tags.framework),
        match second {
            Second::Serializer => serializers.clone(),
            Second::Layout => layouts,
        },
        present(registry_levels(Axis::Access), &|s| s.tags.access),
    ];
    let mut cells = BTreeMap::new();
    let mut missing = Vec::new();
    if second == Second::Layout && serializers.len() > 1 {
        missing.push(format!(
            "one serializer in a grid of layouts (this run holds {})",
            serializers.join(", ")
        ));
    }
    for (f, framework) in levels[0].iter().enumerate() {
        for (s, level) in levels[1].iter().enumerate() {
            for (a, access) in levels[2].iter().enumerate() {
                let found = composed.iter().find(|c| {
                    c.tags.framework == *framework
                        && c.tags.access == *access
                        && second.of(c) == *level
                });
                match found {
                    Some(stack) => {
                        cells.insert([f, s, a], *stack);
                    }
                    None => missing.push(format!("{framework}+{level}+{access}")),
                }
            }
        }
    }
    Some(GridCells { levels, second, cells, missing })
}

/// A contrast the section shows: `(axis index, level, baseline)` with its words, over the
/// whole grid or within one level of another factor.
#[derive(Debug, Clone)]
struct Contrast {
    factor: usize,
    level: usize,
    baseline: usize,
    /// Among the cells at this level of that factor only.
    within: Option<(usize, usize)>,
    /// `framework`, `serializer`, `layout`, `access style`, `access library`, `access`, …
    axis: &'static str,
    /// `sonic-rs ÷ serde_json`, `actix-web ÷ axum, per-core`.
    label: String,
}

/// The effects of a grid with these `levels` (its second factor `second`): each factor's
/// main effects, the access split into what each step changes, and in a grid of layouts
/// each framework's effect within each layout and each layout's within each framework.
fn contrasts(levels: &[Vec<&'static str>; 3], second: Second) -> Vec<Contrast> {
    let mut out = Vec::new();
    let main = |factor: usize, level: usize, axis: &'static str| Contrast {
        factor,
        level,
        baseline: 0,
        within: None,
        axis,
        label: format!("{} ÷ {}", levels[factor][level], levels[factor][0]),
    };
    for (factor, axis) in [(0, "framework"), (1, second.words().0)] {
        out.extend((1..levels[factor].len()).map(|level| main(factor, level, axis)));
    }
    let access = &levels[2];
    let at = |tag: &str| access.iter().position(|a| *a == tag);
    let named = [
        ("diesel-async", "diesel", "access style"),
        ("sqlx", "diesel-async", "access library"),
        ("sqlx", "diesel", "access"),
        ("diesel-async", "tokio-postgres", "query builder"),
        ("sqlx", "tokio-postgres", "driver"),
        ("diesel", "tokio-postgres", "access"),
    ];
    for (changed, base, axis) in named {
        if let (Some(level), Some(baseline)) = (at(changed), at(base)) {
            let label = format!("{changed} ÷ {base}");
            out.push(Contrast { factor: 2, level, baseline, within: None, axis, label });
        }
    }
    if second == Second::Layout {
        for (factor, other, axis) in
            [(0, 1, "framework within a layout"), (1, 0, "layout within a framework")]
        {
            for at in 0..levels[other].len() {
                for level in 1..levels[factor].len() {
                    let label = format!(
                        "{} ÷ {}, {}",
                        levels[factor][level], levels[factor][0], levels[other][at]
                    );
                    out.push(Contrast {
                        factor,
                        level,
                        baseline: 0,
                        within: Some((other, at)),
                        axis,
                        label,
                    });
                }
            }
        }
    }
    out
}

/// Every two-way interaction contrast of a grid with these `levels`, each level pair against
/// the baselines (the first framework and serializer; diesel for access where measured),
/// with its words.
fn interactions(levels: &[Vec<&'static str>; 3]) -> Vec<(Interaction, String)> {
    let baseline = |factor: usize| match factor {
        2 => levels[2].iter().position(|a| *a == "diesel").unwrap_or(0),
        _ => 0,
    };
    let mut out = Vec::new();
    for (f1, f2) in [(0, 1), (0, 2), (1, 2)] {
        let (b1, b2) = (baseline(f1), baseline(f2));
        for l1 in (0..levels[f1].len()).filter(|l| *l != b1) {
            for l2 in (0..levels[f2].len()).filter(|l| *l != b2) {
                let words = format!(
                    "{} ÷ {} with {} against with {}",
                    levels[f1][l1], levels[f1][b1], levels[f2][l2], levels[f2][b2]
                );
                out.push((((f1, l1, b1), (f2, l2, b2)), words));
            }
        }
    }
    out
}

/// One scenario × concurrency of the study.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) scenario: String,
    pub(crate) concurrency: u32,
    /// Rounds every cell of the grid shares.
    pub(crate) rounds: usize,
    /// The main effects, in the order of [`contrasts`]; `None` where the grid lacks rounds.
    pub(crate) effects: Vec<Effect>,
    /// The largest interaction by its estimate (of those called different, when any is), and
    /// how many of how many were called.
    pub(crate) interaction: Option<(String, Comparison, usize, usize)>,
    /// Why the table has no effects: a cell disqualified, or too few shared rounds.
    pub(crate) missing: Option<String>,
}

/// One main effect of a table.
#[derive(Debug)]
pub(crate) struct Effect {
    pub(crate) axis: &'static str,
    pub(crate) label: String,
    pub(crate) comparison: Option<Comparison>,
}

/// One preset against its composed triple.
#[derive(Debug)]
pub(crate) struct BinaryCheck {
    pub(crate) scenario: String,
    pub(crate) concurrency: u32,
    pub(crate) preset: String,
    pub(crate) composed: String,
    /// The composed stack's rate ÷ the preset's, the presets of the table one family.
    pub(crate) comparison: Option<Comparison>,
}

/// The study's findings, for the page, the exports and the terminal.
#[derive(Debug)]
pub(crate) struct Study {
    pub(crate) levels: [Vec<&'static str>; 3],
    /// The second factor's name and its plural: serializer, or layout.
    pub(crate) second: (&'static str, &'static str),
    pub(crate) cells: usize,
    pub(crate) missing: Vec<String>,
    pub(crate) tables: Vec<Table>,
    pub(crate) binary_checks: Vec<BinaryCheck>,
}

/// What the grid's effects are effects on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    /// Each scenario's ranked rate.
    Rate,
    /// A component's CPU per request.
    Cpu(crate::cpu::Component),
}

/// The study of a run whose parties hold composed stacks, on their rates; `None` where
/// they do not.
pub(crate) fn study(dataset: &Dataset<'_>) -> Option<Study> {
    study_of(dataset, Measure::Rate)
}

/// [`study`] of the effects on `measure`.
pub(crate) fn study_of(dataset: &Dataset<'_>, measure: Measure) -> Option<Study> {
    let grid = grid_cells(dataset);
    let mut tables = Vec::new();
    let mut checks = Vec::new();
    for scenario in &dataset.scenarios {
        let rate = Metric::for_scenario(scenario);
        let metric = move |c: &bookstore_record::results::Cell| match measure {
            Measure::Rate => Some(rate.of(c)),
            Measure::Cpu(component) => component.per_request_us(c).filter(|&us| us > 0.0),
        };
        for &concurrency in &dataset.concurrency {
            let windows =
                |name: &str| dataset.cell(&Target::Stack(name.to_owned()), scenario, concurrency);
            if let Some(grid) = grid.as_ref().filter(|g| g.missing.is_empty()) {
                tables.push(table(grid, scenario, concurrency, |name| {
                    let cell = windows(name);
                    match cell.disqualified() {
                        Some(reason) => Err(format!("{name} disqualified: {reason}")),
                        None => Ok(cell.by_round(metric)),
                    }
                }));
            }
            checks.extend(binary_checks(dataset, scenario, concurrency, |name| {
                let cell = windows(name);
                cell.disqualified().is_none().then(|| cell.by_round(metric))
            }));
        }
    }
    if grid.is_none() && checks.is_empty() {
        return None;
    }
    let second = grid.as_ref().map_or(Second::Serializer, |g| g.second).words();
    let (levels, cells, missing) =
        grid.map_or_else(Default::default, |g| (g.levels, g.cells.len(), g.missing));
    Some(Study { levels, second, cells, missing, tables, binary_checks: checks })
}

/// The effects of one scenario × concurrency from each cell's `rates` by round (or why a
/// cell has none).
fn table(
    design: &GridCells,
    scenario: &str,
    concurrency: u32,
    rates: impl Fn(&str) -> Result<BTreeMap<RoundKey, f64>, String>,
) -> Table {
    let contrasts = contrasts(&design.levels, design.second);
    let mut table = Table {
        scenario: scenario.to_owned(),
        concurrency,
        rounds: 0,
        effects: contrasts
            .iter()
            .map(|c| Effect { axis: c.axis, label: c.label.clone(), comparison: None })
            .collect(),
        interaction: None,
        missing: None,
    };
    let mut by_cell = BTreeMap::new();
    for (cell, stack) in &design.cells {
        match rates(stack.identity.service) {
            Ok(by_round) if !by_round.is_empty() => {
                by_cell.insert(*cell, by_round);
            }
            Ok(_) => {
                table.missing = Some(format!("{} not measured", stack.identity.service));
                return table;
            }
            Err(reason) => {
                table.missing = Some(reason);
                return table;
            }
        }
    }
    let sizes = [0, 1, 2].map(|f| design.levels[f].len());
    let Some(grid) = Grid::new(sizes, &by_cell) else {
        table.missing = Some("fewer than two rounds shared by every cell".into());
        return table;
    };
    table.rounds = grid.rounds().len();
    let effects: Vec<(bookstore_stats::factorial::Effect, Option<(usize, usize)>)> =
        contrasts.iter().map(|c| ((c.factor, c.level, c.baseline), c.within)).collect();
    for (effect, comparison) in table.effects.iter_mut().zip(judge_effects_within(&grid, &effects))
    {
        effect.comparison = comparison;
    }
    let interactions = interactions(&design.levels);
    let pairings: Vec<Interaction> = interactions.iter().map(|(pairing, _)| *pairing).collect();
    let (judged, largest, called) = judge_interactions(&grid, &pairings);
    table.interaction =
        largest.and_then(|i| Some((interactions[i].1.clone(), judged[i]?, called, pairings.len())));
    table
}

/// Each preset measured beside the composed stack of its triple, compared with it.
fn binary_checks(
    dataset: &Dataset<'_>,
    scenario: &str,
    concurrency: u32,
    rates: impl Fn(&str) -> Option<BTreeMap<RoundKey, f64>>,
) -> Vec<BinaryCheck> {
    let pairs: Vec<(String, String)> = dataset
        .stacks
        .iter()
        .filter_map(|name| stacks::find(name).ok())
        .filter(|s| s.kind == Kind::Preset)
        .filter_map(|preset| {
            let composed = stacks::composed_of(preset.tags)?.identity.service;
            dataset
                .stacks
                .iter()
                .any(|s| s == composed)
                .then(|| (preset.identity.service.to_owned(), composed.to_owned()))
        })
        .collect();
    let samples: Vec<Vec<(f64, f64)>> = pairs
        .iter()
        .map(|(preset, composed)| match (rates(preset), rates(composed)) {
            (Some(a), Some(b)) => bookstore_stats::shared_rounds(&a, &b),
            _ => Vec::new(),
        })
        .collect();
    let judged = judge(
        &samples
            .iter()
            .map(|s| (!s.is_empty()).then_some(Samples::Processes(s)))
            .collect::<Vec<_>>(),
    );
    pairs
        .into_iter()
        .zip(judged)
        .map(|((preset, composed), comparison)| BinaryCheck {
            scenario: scenario.to_owned(),
            concurrency,
            preset,
            composed,
            comparison,
        })
        .collect()
}

/// The section as the page shows it.
#[derive(Debug, Serialize)]
pub(crate) struct Section {
    /// "3 frameworks (axum, …) × 3 serializers (…) × 3 accesses (…): 27 triples"; `None`
    /// when the run measured no grid, only presets beside their triples.
    grid: Option<String>,
    /// Triples of the grid not measured: then no effects.
    missing: Vec<String>,
    tables: Vec<TableView>,
    /// Each preset against its triple, per table.
    binary_checks: Vec<BinaryView>,
    /// "0 of 10 called different (…)".
    binary_summary: Option<String>,
}

#[derive(Debug, Serialize)]
struct TableView {
    scenario: String,
    concurrency: u32,
    rounds: usize,
    effects: Vec<EffectView>,
    /// "hyper ÷ axum with sqlx against with diesel: 1.12× [1.02–1.23]; 1 of 12 called".
    interaction: Option<String>,
    missing: Option<String>,
}

#[derive(Debug, Serialize)]
struct EffectView {
    axis: &'static str,
    label: String,
    comparison: Option<ComparisonText>,
    /// The same, short ("≈ 1.04× [0.91–1.19]"), and drawn.
    compact: Option<String>,
    forest: Option<Forest>,
}

#[derive(Debug, Serialize)]
struct BinaryView {
    scenario: String,
    concurrency: u32,
    preset: String,
    composed: String,
    comparison: Option<ComparisonText>,
}

/// The section, when the run measured composed stacks.
pub(crate) fn section(dataset: &Dataset<'_>) -> Option<Section> {
    let study = study(dataset)?;
    let counted = |list: &[&str], one: &str, many: &str| {
        let n = list.len();
        format!("{n} {} ({})", if n == 1 { one } else { many }, list.join(", "))
    };
    let grid = (study.cells > 0 || !study.missing.is_empty()).then(|| {
        format!(
            "{} × {} × {}: {} stacks",
            counted(&study.levels[0], "framework", "frameworks"),
            counted(&study.levels[1], study.second.0, study.second.1),
            counted(&study.levels[2], "access", "accesses"),
            study.cells + study.missing.len()
        )
    });
    let tables = study
        .tables
        .iter()
        .map(|t| TableView {
            scenario: t.scenario.clone(),
            concurrency: t.concurrency,
            rounds: t.rounds,
            effects: t
                .effects
                .iter()
                .map(|e| EffectView {
                    axis: e.axis,
                    label: e.label.clone(),
                    compact: e.comparison.as_ref().map(Comparison::compact),
                    forest: e.comparison.as_ref().map(|c| {
                        let value = ForestValue {
                            ratio: c.ratio,
                            low: c.low,
                            high: c.high,
                            called: c.differs(),
                            colour: charts::series_colour(0),
                            title: format!("{}: {}", e.label, c.text()),
                        };
                        charts::forest(&[value], None)
                    }),
                    comparison: e.comparison.map(ComparisonText::from),
                })
                .collect(),
            interaction: t.interaction.as_ref().map(|(words, c, called, of)| {
                format!("{words}: {}; {called} of {of} interactions called different", c.text())
            }),
            missing: t.missing.clone(),
        })
        .collect();
    let judged: Vec<&Comparison> =
        study.binary_checks.iter().filter_map(|l| l.comparison.as_ref()).collect();
    let binary_summary = (!judged.is_empty()).then(|| {
        let called = judged.iter().filter(|c| c.differs()).count();
        format!(
            "{called} of {} comparisons of a preset with its triple composed called different (each scenario's presets one family at q = {}%: with no effect of the binary, a family calls any at most one time in twenty)",
            judged.len(),
            crate::text::percent(bookstore_stats::FALSE_DISCOVERY_RATE)
        )
    });
    let binary_checks = study
        .binary_checks
        .iter()
        .map(|l| BinaryView {
            scenario: l.scenario.clone(),
            concurrency: l.concurrency,
            preset: l.preset.clone(),
            composed: l.composed.clone(),
            comparison: l.comparison.map(ComparisonText::from),
        })
        .collect();
    Some(Section { grid, missing: study.missing, tables, binary_checks, binary_summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_grid_has_ten_effects_with_access_split_into_what_each_step_changes() {
        let levels = Axis::ALL.map(registry_levels);
        let labels: Vec<(&str, String)> =
            contrasts(&levels, Second::Serializer).into_iter().map(|c| (c.axis, c.label)).collect();
        let want = [
            ("framework", "actix-web ÷ axum"),
            ("framework", "hyper ÷ axum"),
            ("serializer", "simd-json ÷ serde_json"),
            ("serializer", "sonic-rs ÷ serde_json"),
            ("access style", "diesel-async ÷ diesel"),
            ("access library", "sqlx ÷ diesel-async"),
            ("access", "sqlx ÷ diesel"),
            ("query builder", "diesel-async ÷ tokio-postgres"),
            ("driver", "sqlx ÷ tokio-postgres"),
            ("access", "diesel ÷ tokio-postgres"),
        ];
        assert_eq!(labels, want.map(|(a, l)| (a, l.to_owned())));
        // The contrasts bookstore-stats' simulated grids calibrate (tests/method/factorial.rs).
        let indices: Vec<(usize, usize, usize)> = contrasts(&levels, Second::Serializer)
            .into_iter()
            .map(|c| (c.factor, c.level, c.baseline))
            .collect();
        assert_eq!(
            indices[..7],
            [(0, 1, 0), (0, 2, 0), (1, 1, 0), (1, 2, 0), (2, 2, 1), (2, 0, 2), (2, 0, 1)]
        );
        // Every level but the baseline of one axis with every such level of another:
        // 2 × 2 + 2 × 3 + 2 × 3.
        let interactions = interactions(&levels);
        assert_eq!(interactions.len(), 16);
        assert!(
            interactions.iter().any(|(_, w)| w == "hyper ÷ axum with sqlx against with diesel")
        );
    }

    #[test]
    fn a_grid_of_layouts_adds_each_framework_within_each_layout_and_each_layout_within_each_framework()
     {
        let levels = [
            vec!["axum", "actix-web", "hyper"],
            vec!["framework", "per-core"],
            vec!["sqlx", "diesel", "diesel-async", "tokio-postgres"],
        ];
        let contrasts = contrasts(&levels, Second::Layout);
        let labels: Vec<&str> = contrasts.iter().map(|c| c.label.as_str()).collect();
        for want in [
            "per-core ÷ framework",
            "actix-web ÷ axum, framework",
            "actix-web ÷ axum, per-core",
            "hyper ÷ axum, per-core",
            "per-core ÷ framework, axum",
            "per-core ÷ framework, actix-web",
            "per-core ÷ framework, hyper",
            "sqlx ÷ tokio-postgres",
        ] {
            assert!(labels.contains(&want), "{want} in {labels:?}");
        }
        assert_eq!(contrasts.len(), 2 + 1 + 6 + 4 + 3);
        let within = contrasts.iter().find(|c| c.label == "actix-web ÷ axum, per-core").unwrap();
        assert_eq!((within.factor, within.level, within.within), (0, 1, Some((1, 1))));
    }

    #[test]
    fn a_grid_of_two_accesses_shows_the_one_contrast_between_them() {
        let levels = [vec!["axum", "hyper"], vec!["serde_json"], vec!["diesel", "diesel-async"]];
        let labels: Vec<String> =
            contrasts(&levels, Second::Serializer).into_iter().map(|c| c.label).collect();
        assert_eq!(labels, ["hyper ÷ axum", "diesel-async ÷ diesel"]);
        assert_eq!(interactions(&levels).len(), 1);
    }
}
