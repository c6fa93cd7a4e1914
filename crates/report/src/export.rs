//! `loadgen report --format md|csv|json`: the page's verdicts as tables for READMEs, pull
//! requests and spreadsheets. Every format is rendered from one list of [`Row`]s, built from
//! the same families as the page, so an export cannot disagree with it.

use std::fmt::Write;

use serde::Serialize;

use super::dataset::{CellWindows, Dataset, Metric, Target};
use super::verdicts::{Family, Member};
use bookstore_record::latency_label;
use bookstore_record::results::RunResults;
use bookstore_stats::{Comparison, Summary, digits};

/// One stack in one table cell of the page: a scenario at a concurrency (saturation) or at
/// an offered rate (equal load). Units are in the field names; `None` is written empty.
#[allow(missing_docs)] // the rest named for what they hold; crates/record/RESULTS.md, "Exports"
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub scenario: String,
    /// `saturation` (ranked by `rate_metric`, higher is better), `equal_load` (ranked by
    /// the p99, lower is better), `capacity` (by the capacity at an objective, higher is
    /// better) or `memory_per_connection`.
    pub load: &'static str,
    /// Connections at saturation.
    pub concurrency: Option<u32>,
    /// The equal-load rate as the run named it (`70%`, `5000/s`).
    pub equal_load_rate: Option<String>,
    /// Requests per second offered at equal load (median over the rounds).
    pub offered_rps_median: Option<f64>,
    pub stack: String,
    /// Complete windows measured.
    pub rounds: usize,
    /// `goodput`, `answered` (201 or 409: `checkoutSoldOut`) or `throughput`.
    pub rate_metric: &'static str,
    /// The `rate_metric` rate, median over the rounds (`_min`, `_max`: their range).
    pub rate_rps_median: Option<f64>,
    pub rate_rps_min: Option<f64>,
    pub rate_rps_max: Option<f64>,
    /// Latency of the ranked answers, median over the rounds; likewise the p99 and p99.9.
    pub p50_us_median: Option<f64>,
    pub p99_us_median: Option<f64>,
    pub p999_us_median: Option<f64>,
    /// This stack's ranked value ÷ the first's (a twin's: ÷ its own stack's); `_low`,
    /// `_high`: the interval of the verdict method.
    pub vs_first_ratio: Option<f64>,
    pub vs_first_low: Option<f64>,
    pub vs_first_high: Option<f64>,
    /// `best` (first, called different from every other), `lead` (first, or not
    /// distinguishable from it), `behind` (called different from the first), `not_ranked`, `disqualified`, `twin`
    /// (`--twin`: compared with its own stack alone), or empty (no complete window).
    pub standing: &'static str,
    /// Why the cell is disqualified or not ranked.
    pub reason: Option<String>,
    /// Idle connections held open to the party through its windows (`--idle-connections`).
    pub idle_connections: Option<u64>,
    /// The server's peak RSS in the window, median over the rounds.
    pub server_peak_rss_bytes_median: Option<f64>,
    /// A `memory_per_connection` row: the stack's KiB per idle connection (`_low`, `_high`:
    /// Student's 95% interval over the rounds), as the page's idle-connections section.
    pub memory_per_connection_kib: Option<f64>,
    pub memory_per_connection_kib_low: Option<f64>,
    pub memory_per_connection_kib_high: Option<f64>,
    /// A `capacity` row (`--slo`): the objective, its quantile (0.99 for p99) and bound, and
    /// the party's capacity at it, median over the rounds whose ladder bracketed it (`_min`,
    /// `_max`: their range); empty where it did not (`reason` says which bound it showed).
    /// Its `vs_first_*` compare capacities, higher is better.
    pub objective_quantile: Option<f64>,
    pub objective_bound_us: Option<u64>,
    pub capacity_rps_median: Option<f64>,
    pub capacity_rps_min: Option<f64>,
    pub capacity_rps_max: Option<f64>,
    /// An `axis_effect`, `axis_interaction` or `binary_check` row (a grid of composed stacks):
    /// the axis (`framework`, `serializer`, `access style`, `access library`, `access`;
    /// `interaction`; `binary`), its `stack` the contrast (`sonic-rs ÷ serde_json`, or the
    /// composed stack against its preset), its `vs_first_*` the ratio and interval, its
    /// `standing` the verdict (`higher`, `lower`, `not_distinguishable`).
    pub axis: Option<&'static str>,
    /// CPU time per request answered, µs, of the server, PostgreSQL and the client: the
    /// geometric mean over the rounds (`_low`, `_high`: Student's 95% interval on the logs,
    /// never narrower than a clock tick of the least busy window).
    pub server_cpu_us: Option<f64>,
    pub server_cpu_us_low: Option<f64>,
    pub server_cpu_us_high: Option<f64>,
    pub postgres_cpu_us: Option<f64>,
    pub postgres_cpu_us_low: Option<f64>,
    pub postgres_cpu_us_high: Option<f64>,
    pub client_cpu_us: Option<f64>,
    pub client_cpu_us_low: Option<f64>,
    pub client_cpu_us_high: Option<f64>,
}

impl Row {
    /// A row of `stack` with nothing measured yet.
    fn blank(scenario: &str, load: &'static str, stack: String) -> Self {
        Self {
            scenario: scenario.to_owned(),
            load,
            concurrency: None,
            equal_load_rate: None,
            offered_rps_median: None,
            stack,
            rounds: 0,
            rate_metric: "",
            rate_rps_median: None,
            rate_rps_min: None,
            rate_rps_max: None,
            p50_us_median: None,
            p99_us_median: None,
            p999_us_median: None,
            vs_first_ratio: None,
            vs_first_low: None,
            vs_first_high: None,
            standing: "",
            reason: None,
            idle_connections: None,
            server_peak_rss_bytes_median: None,
            memory_per_connection_kib: None,
            memory_per_connection_kib_low: None,
            memory_per_connection_kib_high: None,
            objective_quantile: None,
            objective_bound_us: None,
            capacity_rps_median: None,
            capacity_rps_min: None,
            capacity_rps_max: None,
            axis: None,
            server_cpu_us: None,
            server_cpu_us_low: None,
            server_cpu_us_high: None,
            postgres_cpu_us: None,
            postgres_cpu_us_low: None,
            postgres_cpu_us_high: None,
            client_cpu_us: None,
            client_cpu_us_low: None,
            client_cpu_us_high: None,
        }
    }

    /// A row of a judged contrast of the grid (`load` `axis_effect`, `axis_interaction`,
    /// `binary`).
    fn contrast(
        scenario: &str,
        concurrency: u32,
        load: &'static str,
        axis: &'static str,
        label: String,
        comparison: Option<&Comparison>,
    ) -> Self {
        Self {
            concurrency: Some(concurrency),
            rounds: comparison.map_or(0, |c| c.n),
            vs_first_ratio: comparison.map(|c| c.ratio),
            vs_first_low: comparison.map(|c| c.low),
            vs_first_high: comparison.map(|c| c.high),
            standing: comparison.map_or("", |c| c.verdict.name()),
            axis: Some(axis),
            ..Self::blank(scenario, load, label)
        }
    }
}

/// The rows of `runs`: per scenario, saturation by concurrency, then equal load by rate.
pub fn rows(runs: &[RunResults]) -> Vec<Row> {
    let dataset = Dataset::new(runs);
    let mut rows = Vec::new();
    let idle = |stack: &str| {
        dataset.runs.iter().flat_map(|r| &r.stacks).find(|s| s.name == stack)?.idle_connections
    };
    for scenario in &dataset.scenarios {
        let metric = Metric::for_scenario(scenario);
        for &concurrency in &dataset.concurrency {
            let family = Family::rates(&dataset, scenario, concurrency);
            for (index, standing, vs_first) in standings(&family) {
                let member = &family.members[index];
                let target = Target::Stack(member.name.clone());
                let cells = dataset.cell(&target, scenario, concurrency);
                rows.push(Row {
                    load: "saturation",
                    concurrency: Some(concurrency),
                    idle_connections: idle(&member.name),
                    ..row(scenario, metric, member, cells, standing, vs_first)
                });
            }
        }
        for rate in &dataset.equal_load_rates {
            let family = Family::equal_load_p99(&dataset, scenario, rate);
            for (index, standing, vs_first) in standings(&family) {
                let member = &family.members[index];
                let cells = dataset.equal_load_cell(&member.name, scenario, rate);
                rows.push(Row {
                    load: "equal_load",
                    equal_load_rate: Some(rate.clone()),
                    offered_rps_median: Summary::median_of(
                        cells
                            .by_round(|c| c.open_loop.as_ref().map(|o| o.offered_rps))
                            .into_values(),
                    ),
                    // The ranked p99: client-limited windows left out, as on the page.
                    p99_us_median: member.summary.map(|s| s.median),
                    idle_connections: idle(&member.name),
                    ..row(scenario, metric, member, cells, standing, vs_first)
                });
            }
        }
    }
    for capacity in super::capacity::families(&dataset) {
        let family = &capacity.family;
        for (index, standing, vs_first) in standings(family) {
            let member = &family.members[index];
            let summary = member.not_ranked.is_none().then_some(member.summary).flatten();
            rows.push(Row {
                rounds: capacity
                    .parties
                    .iter()
                    .find(|p| p.party == member.name)
                    .map_or(0, |p| p.rounds.len()),
                objective_quantile: Some(capacity.objective.quantile),
                objective_bound_us: Some(capacity.objective.bound_us),
                capacity_rps_median: summary.map(|s| s.median),
                capacity_rps_min: summary.map(|s| s.min),
                capacity_rps_max: summary.map(|s| s.max),
                vs_first_ratio: vs_first.map(|c| c.ratio),
                vs_first_low: vs_first.map(|c| c.low),
                vs_first_high: vs_first.map(|c| c.high),
                standing,
                reason: member.disqualified.clone().or_else(|| member.not_ranked.clone()),
                idle_connections: idle(&member.name),
                ..Row::blank(&capacity.scenario, "capacity", member.name.clone())
            });
        }
    }
    if let Some(study) = super::factorial::study(&dataset) {
        for table in &study.tables {
            let (scenario, c) = (table.scenario.as_str(), table.concurrency);
            for effect in &table.effects {
                let label = effect.label.clone();
                let judged = effect.comparison.as_ref();
                rows.push(Row::contrast(scenario, c, "axis_effect", effect.axis, label, judged));
            }
            if let Some((words, comparison, _, _)) = &table.interaction {
                let (label, judged) = (words.clone(), Some(comparison));
                rows.push(Row::contrast(
                    scenario,
                    c,
                    "axis_interaction",
                    "interaction",
                    label,
                    judged,
                ));
            }
        }
        // The same effects on the server's CPU per request (above 1: the level costs more).
        let cpu = super::factorial::Measure::Cpu(super::cpu::Component::Server);
        for table in super::factorial::study_of(&dataset, cpu).map_or(Vec::new(), |s| s.tables) {
            let (scenario, c) = (table.scenario.as_str(), table.concurrency);
            for effect in &table.effects {
                let (label, judged) = (effect.label.clone(), effect.comparison.as_ref());
                rows.push(Row::contrast(
                    scenario,
                    c,
                    "axis_effect_cpu",
                    effect.axis,
                    label,
                    judged,
                ));
            }
        }
        for check in &study.binary_checks {
            let label = format!("{} ÷ {}", check.composed, check.preset);
            let (scenario, c) = (check.scenario.as_str(), check.concurrency);
            let judged = check.comparison.as_ref();
            rows.push(Row::contrast(scenario, c, "binary_check", "binary", label, judged));
        }
    }
    for (stack, estimate, rounds) in super::connections::slopes(&dataset) {
        rows.push(Row {
            rounds,
            memory_per_connection_kib: estimate.map(|e| e.mean / 1024.0),
            memory_per_connection_kib_low: estimate.map(|e| e.low / 1024.0),
            memory_per_connection_kib_high: estimate.map(|e| e.high / 1024.0),
            ..Row::blank("", "memory_per_connection", stack)
        });
    }
    rows
}

/// What every row holds of `member`'s windows `cells`; the caller sets how it was loaded.
fn row(
    scenario: &str,
    metric: Metric,
    member: &Member,
    cells: &CellWindows<'_>,
    standing: &'static str,
    vs_first: Option<Comparison>,
) -> Row {
    let latency = |pick: fn(&bookstore_record::latency::LatencySummary) -> u64| {
        Summary::median_of(
            cells.by_round(|c| c.ranked_latency().map(|l| pick(&l) as f64)).into_values(),
        )
    };
    let rate =
        Summary::of(&cells.by_round(|c| Some(metric.of(c))).into_values().collect::<Vec<_>>());
    use super::cpu::{Component, Cost};
    let [server, postgres, client] = Component::ALL.map(|c| Cost::of(cells, c));
    let (us, low, high) = (
        |c: Option<Cost>| c.map(|c| c.us),
        |c: Option<Cost>| c.map(|c| c.low_us),
        |c: Option<Cost>| c.map(|c| c.high_us),
    );
    Row {
        server_cpu_us: us(server),
        server_cpu_us_low: low(server),
        server_cpu_us_high: high(server),
        postgres_cpu_us: us(postgres),
        postgres_cpu_us_low: low(postgres),
        postgres_cpu_us_high: high(postgres),
        client_cpu_us: us(client),
        client_cpu_us_low: low(client),
        client_cpu_us_high: high(client),
        rounds: cells.samples().count(),
        rate_metric: metric.name(),
        rate_rps_median: rate.map(|s| s.median),
        rate_rps_min: rate.map(|s| s.min),
        rate_rps_max: rate.map(|s| s.max),
        p50_us_median: latency(|l| l.p50_us),
        p99_us_median: latency(|l| l.p99_us),
        p999_us_median: latency(|l| l.p999_us),
        vs_first_ratio: vs_first.map(|c| c.ratio),
        vs_first_low: vs_first.map(|c| c.low),
        vs_first_high: vs_first.map(|c| c.high),
        standing,
        reason: member.disqualified.clone().or_else(|| member.not_ranked.clone()),
        server_peak_rss_bytes_median: Summary::median_of(
            cells.by_round(|c| c.server_peak_rss_bytes.map(|b| b as f64)).into_values(),
        ),
        ..Row::blank(scenario, "", member.name.clone())
    }
}

/// Each member of `family` in ranking order (then the unranked), with its standing and its
/// comparison against the first.
fn standings(family: &Family) -> Vec<(usize, &'static str, Option<Comparison>)> {
    let ranking = family.ranking();
    let first = ranking.order.first().map(|&i| family.members[i].name.clone());
    let mut out: Vec<(usize, &'static str, Option<Comparison>)> = ranking
        .order
        .iter()
        .enumerate()
        .map(|(place, &i)| {
            let standing = match (place, ranking.leaders.contains(&i)) {
                (0, _) if ranking.best => "best",
                (_, true) => "lead",
                _ => "behind",
            };
            let name = &family.members[i].name;
            let vs_first =
                first.as_deref().filter(|f| f != name).and_then(|f| family.compare(f, name));
            (i, standing, vs_first)
        })
        .collect();
    for (i, member) in family.members.iter().enumerate() {
        if ranking.order.contains(&i) {
            continue;
        }
        let standing = if member.disqualified.is_some() {
            "disqualified"
        } else if member.not_ranked.is_some() {
            "not_ranked"
        } else if member.twin_of.is_some() {
            "twin"
        } else {
            ""
        };
        // A twin's comparison is against its own stack, the one it is judged with.
        let against = member.twin_of.as_deref().and_then(|of| family.compare(of, &member.name));
        out.push((i, standing, against));
    }
    out
}

/// The rows as CSV (RFC 4180): a header line of the field names, then one line per row.
pub fn csv(rows: &[Row]) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

/// The rows as a JSON document (`schema` names it, `rows` as in the CSV).
pub fn json(rows: &[Row]) -> anyhow::Result<String> {
    let document = serde_json::json!({ "schema": EXPORT_SCHEMA, "rows": rows });
    Ok(serde_json::to_string_pretty(&document)? + "\n")
}

/// The name of [`json`]'s document.
pub const EXPORT_SCHEMA: &str = "bookstore-bench/report-rows/1";

/// The rounds the run's families got: "3 rounds per cell", or "3–12 rounds per family" in
/// a sequential run whose open families got more.
fn family_rounds(dataset: &Dataset<'_>) -> String {
    let mut rounds: Vec<usize> = Vec::new();
    for scenario in &dataset.scenarios {
        for &concurrency in &dataset.concurrency {
            rounds.extend(Family::rates(dataset, scenario, concurrency).power().map(|p| p.rounds));
        }
    }
    match (rounds.iter().min(), rounds.iter().max()) {
        (Some(low), Some(high)) if low < high => format!("{low}–{high} rounds per family"),
        _ => format!("{} rounds per cell", dataset.rounds()),
    }
}

/// The verdicts as Markdown: per concurrency, a table of the rates (scenarios × stacks), per
/// equal-load rate, a table of the p99s, and per latency objective, one of the capacities; the first of each row in bold with its value,
/// the others as their ratio to it with the interval.
pub fn markdown(runs: &[RunResults]) -> String {
    let rows = rows(runs);
    let dataset = Dataset::new(runs);
    let mut out = String::new();
    let ids: Vec<&str> = runs.iter().map(|r| r.run.id.as_str()).collect();
    let _ = writeln!(
        out,
        "Run {} ({}). The first of each row in bold: **best** when the method calls it different from every other stack, **lead** when not; the others as their value ÷ the first's with the interval of the verdict method, \"≈\" where it is not distinguishable from the first.",
        ids.join(", "),
        family_rounds(&dataset)
    );
    let mut objectives: Vec<(f64, u64)> = Vec::new();
    for row in &rows {
        if let (Some(q), Some(bound)) = (row.objective_quantile, row.objective_bound_us)
            && !objectives.contains(&(q, bound))
        {
            objectives.push((q, bound));
        }
    }
    let tables = dataset
        .concurrency
        .iter()
        .map(|c| (format!("Rate at saturation, c = {c} (req/s)"), Some(*c), None, None))
        .chain(dataset.equal_load_rates.iter().map(|r| {
            let title = format!("p99 at equal load, {r}");
            (title, None, Some(r.clone()), None)
        }))
        .chain(objectives.iter().map(|&(quantile, bound_us)| {
            let label = bookstore_record::objective::Objective { quantile, bound_us }.label();
            (format!("Capacity at {label} (req/s)"), None, None, Some((quantile, bound_us)))
        }));
    for (title, concurrency, rate, objective) in tables {
        let _ = writeln!(out, "\n**{title}**\n");
        let _ = writeln!(out, "| scenario | {} |", dataset.stacks.join(" | "));
        let _ = writeln!(out, "|---|{}", "---|".repeat(dataset.stacks.len()));
        for scenario in &dataset.scenarios {
            let cells: Vec<String> = dataset
                .stacks
                .iter()
                .map(|stack| {
                    rows.iter()
                        .find(|r| {
                            &r.scenario == scenario
                                && &r.stack == stack
                                && r.concurrency == concurrency
                                && r.equal_load_rate == rate
                                && r.objective_quantile.zip(r.objective_bound_us) == objective
                        })
                        .map_or("–".to_owned(), markdown_cell)
                })
                .collect();
            let _ = writeln!(out, "| `{scenario}` | {} |", cells.join(" | "));
        }
    }
    out.push_str(&markdown_axes(&rows));
    out.push_str(&markdown_binary_check(&rows));
    out
}

/// The grid's effects as Markdown, one table per concurrency: a row per axis contrast, a
/// column per scenario, each cell the ratio with its interval (`≈` where not
/// distinguishable from 1), and the largest interaction. Empty without a grid.
pub fn markdown_axes(rows: &[Row]) -> String {
    let mut out = axes_table(rows, "axis_effect", "rate ratio, level ÷ baseline");
    out += &axes_table(
        rows,
        "axis_effect_cpu",
        "in the server's CPU per request: µs ratio, level ÷ baseline, above 1 costs more",
    );
    out
}

/// The axis table of the rows of `effect` (with the largest interaction, for rates).
fn axes_table(rows: &[Row], effect: &str, what: &str) -> String {
    let mut out = String::new();
    let interaction = if effect == "axis_effect" { "axis_interaction" } else { "" };
    let effects: Vec<&Row> =
        rows.iter().filter(|r| r.load == effect || r.load == interaction).collect();
    let mut concurrencies: Vec<u32> = effects.iter().filter_map(|r| r.concurrency).collect();
    concurrencies.sort_unstable();
    concurrencies.dedup();
    for c in concurrencies {
        let at: Vec<&&Row> = effects.iter().filter(|r| r.concurrency == Some(c)).collect();
        let mut scenarios: Vec<&str> = Vec::new();
        let mut contrasts: Vec<(&str, &str)> = Vec::new();
        for row in &at {
            if !scenarios.contains(&row.scenario.as_str()) {
                scenarios.push(&row.scenario);
            }
            let key = (row.axis.unwrap_or(""), row.stack.as_str());
            if row.load == effect && !contrasts.contains(&key) {
                contrasts.push(key);
            }
        }
        let _ = writeln!(out, "\n**What each axis costs, c = {c}** ({what})\n");
        let header: Vec<String> = scenarios.iter().map(|s| format!("`{s}`")).collect();
        let _ = writeln!(out, "| axis | level ÷ baseline | {} |", header.join(" | "));
        let _ = writeln!(out, "|---|---|{}", "---|".repeat(scenarios.len()));
        let cell = |row: Option<&&&Row>| row.map_or("–".to_owned(), |r| contrast_cell(r));
        for (axis, label) in &contrasts {
            let cells: Vec<String> = scenarios
                .iter()
                .map(|s| {
                    cell(
                        at.iter()
                            .find(|r| r.load == effect && r.scenario == *s && r.stack == *label),
                    )
                })
                .collect();
            let _ = writeln!(out, "| {axis} | {label} | {} |", cells.join(" | "));
        }
        if !interaction.is_empty() {
            let interactions: Vec<String> = scenarios
                .iter()
                .map(|s| {
                    at.iter()
                        .find(|r| r.load == interaction && r.scenario == *s)
                        .map_or("–".to_owned(), |r| format!("{}: {}", r.stack, contrast_cell(r)))
                })
                .collect();
            let _ = writeln!(out, "| largest interaction | | {} |", interactions.join(" | "));
        }
    }
    out
}

/// The binary check as Markdown: each composed triple's rate ÷ its preset's. Empty without
/// one.
fn markdown_binary_check(rows: &[Row]) -> String {
    let mut out = String::new();
    let checks: Vec<&Row> = rows.iter().filter(|r| r.load == "binary_check").collect();
    if !checks.is_empty() {
        let _ = writeln!(
            out,
            "\n**Binary check** (each composed triple's rate ÷ its preset's: the same code in another binary)\n"
        );
        let _ = writeln!(out, "| scenario | c | composed ÷ preset | ratio |\n|---|---|---|---|");
        for row in checks {
            let c = row.concurrency.map_or(String::new(), |c| c.to_string());
            let _ = writeln!(
                out,
                "| `{}` | {c} | {} | {} |",
                row.scenario,
                row.stack,
                contrast_cell(row)
            );
        }
    }
    out
}

/// A judged contrast as a Markdown cell: "0.87× [0.82–0.93]", "≈ 1.01× [0.97–1.05]".
pub(crate) fn contrast_cell(row: &Row) -> String {
    match (row.vs_first_ratio, row.vs_first_low, row.vs_first_high) {
        (Some(ratio), Some(low), Some(high)) => {
            let interval = format!("{}× [{}–{}]", digits(ratio), digits(low), digits(high));
            if row.standing == "not_distinguishable" { format!("≈ {interval}") } else { interval }
        }
        _ => "–".to_owned(),
    }
}

/// Whether an equal-load row's comparison is a tail too wide to show as a ratio
/// ([`crate::text::tail_too_wide`]).
pub(crate) fn tail_too_wide(row: &Row) -> bool {
    match (row.load, row.vs_first_low, row.vs_first_high) {
        ("equal_load", Some(low), Some(high)) => {
            // A twin's standing is "twin" whatever its verdict: called when its interval
            // leaves out 1.
            let called = matches!(row.standing, "higher" | "lower" | "behind")
                || (row.standing == "twin" && !(low <= 1.0 && 1.0 <= high));
            crate::text::tail_too_wide(called, low, high)
        }
        _ => false,
    }
}

/// One stack's cell of a Markdown table.
fn markdown_cell(row: &Row) -> String {
    let value = match row.load {
        "saturation" => row.rate_rps_median.map(|v| format!("{v:.0}")),
        "capacity" => row.capacity_rps_median.map(|v| format!("{v:.0}")),
        _ => row.p99_us_median.map(latency_label),
    };
    let comparison = match (row.vs_first_ratio, row.vs_first_low, row.vs_first_high) {
        (Some(ratio), Some(low), Some(high)) => Some((ratio, low, high)),
        _ => None,
    };
    match (row.standing, value, comparison) {
        ("best" | "lead", Some(value), None) => format!("**{value}** {}", row.standing),
        (_, Some(value), Some(_)) if tail_too_wide(row) => {
            format!("{value}, {}", crate::text::CANNOT_COMPARE)
        }
        (standing, _, Some((ratio, low, high))) => {
            let interval = format!("{}× [{}–{}]", digits(ratio), digits(low), digits(high));
            // A twin's standing is "twin" whatever its verdict: not distinguishable from
            // its stack when its interval holds 1.
            let twin_alike = standing == "twin" && low <= 1.0 && 1.0 <= high;
            if standing == "lead" || twin_alike { format!("≈ {interval}") } else { interval }
        }
        ("disqualified", _, _) => "disqualified".to_owned(),
        // A capacity's bound, in its own words up to its rounds: "objective not met at ≥ …".
        ("not_ranked", _, _) if row.load == "capacity" => row
            .reason
            .as_deref()
            .and_then(|r| r.split(" (").next())
            .unwrap_or("not ranked")
            .to_owned(),
        ("not_ranked", _, _) => "not ranked".to_owned(),
        (_, Some(value), None) => value,
        (_, None, None) => "–".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(scenario: &str, concurrency: u32, ratio: f64) -> Row {
        let comparison = Comparison {
            ratio,
            low: ratio * 0.9,
            high: ratio * 1.1,
            level: 0.95,
            p_value: 0.5,
            n: 8,
            verdict: bookstore_stats::Verdict::NotDistinguishable,
        };
        let label = "sonic-rs ÷ serde_json".to_owned();
        Row::contrast(scenario, concurrency, "axis_effect", "serializer", label, Some(&comparison))
    }

    #[test]
    fn the_axis_table_has_one_table_per_concurrency_whatever_the_rows_order() {
        // Rows come scenario by scenario, each at both concurrencies.
        let rows = [effect("bookById", 128, 1.0), effect("bookById", 256, 1.1)]
            .into_iter()
            .chain([effect("largeJson", 128, 0.9), effect("largeJson", 256, 0.8)])
            .collect::<Vec<_>>();
        let text = markdown_axes(&rows);
        assert_eq!(text.matches("**What each axis costs").count(), 2, "{text}");
        let at_256 = text.split("c = 256").nth(1).unwrap();
        assert!(at_256.contains("| serializer | sonic-rs ÷ serde_json | ≈ 1.10× [0.990–1.21] | ≈ 0.800× [0.720–0.880] |"), "{text}");
    }

    #[test]
    fn a_twins_cell_is_marked_alike_when_its_interval_holds_one_and_its_tail_when_called() {
        let twin = |load: &'static str, low: f64, high: f64| Row {
            standing: "twin",
            vs_first_ratio: Some((low * high).sqrt()),
            vs_first_low: Some(low),
            vs_first_high: Some(high),
            rate_rps_median: Some(100.0),
            p99_us_median: Some(5_000.0),
            ..Row::blank("bookById", load, "axum-serde-sqlx.twin".to_owned())
        };
        assert!(markdown_cell(&twin("saturation", 0.98, 1.09)).starts_with("≈ "));
        assert!(!markdown_cell(&twin("saturation", 1.02, 1.09)).starts_with("≈ "));
        // A called twin's tail keeps its ratio however wide; one not called and wider than
        // 2× is not shown as a ratio.
        assert!(!tail_too_wide(&twin("equal_load", 0.123, 0.894)));
        assert!(tail_too_wide(&twin("equal_load", 0.5, 3.0)));
        assert!(markdown_cell(&twin("equal_load", 0.5, 3.0)).contains("cannot compare"));
    }
}
