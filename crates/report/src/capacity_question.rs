//! A capacity question (`loadgen ab --slo`, `loadgen study capacity`) as text or as a page:
//! the answers first, then each party's capacity, the ladders drawn (offered rate against
//! the objective's percentile, one line per process), and every block.

use std::fmt::Write;

use bookstore_record::capacity::CapacityResults;
use bookstore_record::ladder::Capacity;
use serde::Serialize;

use crate::charts::{self, RateCurve};

/// An interval of a ratio not called and wider than this (upper ÷ lower) is not shown as a
/// ratio: it says nothing a reader could act on.
const WIDEST_SHOWN: f64 = 1.5;

/// One answer in a line: called, or not distinguishable with what the data allows, or — when
/// the interval is too wide to mean anything — what it would take.
fn answer_line(results: &CapacityResults, index: usize) -> String {
    let answer = &results.answers[index].answer;
    let called = answer.verdict != bookstore_stats::Verdict::NotDistinguishable.name();
    let width = answer.high / answer.low;
    if !called && width > WIDEST_SHOWN {
        // The half width falls as 1/√blocks: the blocks a ±10% interval would take.
        let half = width.ln() / 2.0;
        let needed = (answer.blocks as f64 * (half / 1.1f64.ln()).powi(2)).ceil();
        let per_block = results.run.wall_seconds.unwrap_or_default() / answer.blocks.max(1) as f64;
        return format!(
            "{}: cannot compare at this length: the interval spans {}× after {} blocks; about {needed:.0} blocks ({:.0} min at this pace) would bring it to ±10%",
            results.answers[index].label,
            digits(width),
            answer.blocks,
            needed * per_block / 60.0
        );
    }
    format!(
        "{} ({} ÷ {} {} [{}–{}]; each look's interval at {:.2}%, all looks and parties together {:.0}%)",
        answer.words,
        results.answers[index].label,
        results.label(0),
        digits(answer.ratio),
        digits(answer.low),
        digits(answer.high),
        answer.level * 100.0,
        bookstore_record::ab::CONFIDENCE * 100.0
    )
}

/// The lines `loadgen ab --slo` ends with.
pub fn text(results: &CapacityResults) -> String {
    let mut out = String::new();
    for party in &results.parties {
        let _ = writeln!(out, "{}: {} ({})", party.label, party.what, party.kind);
    }
    let objective = results.settings.objective.label();
    let _ = writeln!(
        out,
        "{}, open loop of at most {} connections, capacity at {objective}",
        results.request, results.settings.concurrency
    );
    for index in 0..results.answers.len() {
        let _ = writeln!(out, "{}", answer_line(results, index));
    }
    for capacity in &results.capacities {
        let _ = writeln!(
            out,
            "{}: {:.0} req/s [{:.0}–{:.0}] at {objective} ({:.0}%, over {} blocks; a block's spread {:.3} in log)",
            capacity.label,
            capacity.rate_rps,
            capacity.low_rps,
            capacity.high_rps,
            capacity.level * 100.0,
            capacity.blocks,
            capacity.block_sd
        );
    }
    let _ = writeln!(out, "{}", method(results).join("; "));
    let _ = writeln!(
        out,
        "{}, after {:.0} s",
        ended(results),
        results.run.wall_seconds.unwrap_or_default()
    );
    for note in &results.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

fn method(results: &CapacityResults) -> Vec<String> {
    let windows: usize =
        results.blocks.iter().flat_map(|b| b.ladders.iter().map(|l| l.steps.len())).sum();
    let ladders = results.blocks.len() * results.parties.len();
    let mut lines = vec![format!(
        "{} blocks, each a fresh process of every party on a fresh database and one rate ladder of each ({:.1} windows a ladder on average, the parties' windows interleaved)",
        results.blocks.len(),
        windows as f64 / ladders.max(1) as f64
    )];
    if let Some(answer) = results.answers.first()
        && let Some(sd) = answer.answer.process_sd
    {
        lines.push(format!(
            "a block's spread of ln({} ÷ {}): {sd:.3}, processes and ladders together",
            answer.label,
            results.label(0)
        ));
    }
    lines.push(format!(
        "a ladder's capacity is the fitted crossing of its windows' {} with {} (docs/method.md, \"Capacity at an objective\")",
        results.settings.objective.percentile(),
        bookstore_record::latency_label(results.settings.objective.bound_us as f64)
    ));
    lines
}

fn ended(results: &CapacityResults) -> String {
    let precision = results.settings.precision * 100.0;
    match results.ended_by.as_str() {
        "precision" => format!("ended: every interval within ±{precision:.1}%, as asked"),
        "budget" => format!(
            "ended: the budget ({:.0} s) was spent before ±{precision:.1}% was reached",
            results.settings.budget.as_secs_f64()
        ),
        "looks" => "ended: the last planned look".to_owned(),
        other => format!("ended: {other}"),
    }
}

/// The page of one capacity question (`loadgen ab --slo --report FILE`, the capacity
/// study's page).
pub fn html(results: &CapacityResults) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct PartyRow {
        label: String,
        colour: String,
        what: String,
        capacity: String,
    }
    #[derive(Serialize)]
    struct BlockRow {
        block: u32,
        cells: Vec<String>,
    }
    #[derive(Serialize)]
    struct Page {
        title: String,
        answers: Vec<String>,
        parties: Vec<PartyRow>,
        request: String,
        objective: String,
        chart: charts::LineChart,
        method: Vec<String>,
        ended: String,
        labels: Vec<String>,
        blocks: Vec<BlockRow>,
        notes: Vec<String>,
    }
    let objective = results.settings.objective;
    let capacity_of = |label: &str| results.capacities.iter().find(|c| c.label == label);
    let parties = results
        .parties
        .iter()
        .enumerate()
        .map(|(i, p)| PartyRow {
            label: p.label.clone(),
            colour: charts::series_colour(i),
            what: format!("{} ({})", p.what, p.kind),
            capacity: capacity_of(&p.label).map_or("–".into(), |c| {
                format!("{:.0} req/s [{:.0}–{:.0}]", c.rate_rps, c.low_rps, c.high_rps)
            }),
        })
        .collect();
    // One line per process: each block's ladder of each party, by rate.
    let mut curves = Vec::new();
    for block in &results.blocks {
        for (i, ladder) in block.ladders.iter().enumerate() {
            let mut points: Vec<(f64, u64, u64)> = ladder
                .steps
                .iter()
                .filter_map(|s| Some((s.rate_rps, s.p50_us?, s.at_objective_us?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            curves.push(RateCurve {
                colour: charts::series_colour(i),
                label: format!("{} block {}", results.label(i), block.block + 1),
                points,
                capacity_rps: None,
            });
        }
    }
    // Each party's capacity over the blocks, a dot on the objective's line.
    let marks = results.parties.iter().enumerate().map(|(i, p)| RateCurve {
        colour: charts::series_colour(i),
        label: p.label.clone(),
        points: Vec::new(),
        capacity_rps: capacity_of(&p.label).map(|c| c.rate_rps),
    });
    let curves: Vec<RateCurve> = curves.into_iter().chain(marks).collect();
    let mut chart = charts::capacity_chart(
        &format!(
            "{}: {} by offered rate, one line per process",
            results.request,
            objective.percentile()
        ),
        &objective.percentile(),
        objective.bound_us,
        &curves,
        false,
    );
    chart.series.retain(|s| !s.points.is_empty());
    let rate = |c: Option<Capacity>| match c {
        Some(Capacity::Between { rate_rps, .. }) => format!("{rate_rps:.0}"),
        Some(Capacity::NotMet { lowest_rps }) => format!("< {lowest_rps:.0}"),
        Some(Capacity::Above { highest_rps }) => format!("> {highest_rps:.0}"),
        None => "–".into(),
    };
    let blocks = results
        .blocks
        .iter()
        .map(|b| BlockRow {
            block: b.block + 1,
            cells: b
                .ladders
                .iter()
                .map(|l| {
                    format!(
                        "{} ({} windows from {:.0})",
                        rate(l.capacity),
                        l.steps.len(),
                        l.centre_rps * 0.8
                    )
                })
                .collect(),
        })
        .collect();
    let page = Page {
        title: format!("Capacity at {} · {}", objective.label(), results.request),
        answers: (0..results.answers.len()).map(|i| answer_line(results, i)).collect(),
        parties,
        request: results.request.clone(),
        objective: objective.label(),
        chart,
        method: method(results),
        ended: ended(results),
        labels: results.parties.iter().map(|p| p.label.clone()).collect(),
        blocks,
        notes: results.notes.clone(),
    };
    let environment = crate::page::page_environment(
        "capacity_question.html",
        include_str!("../templates/capacity_question.html"),
    )?;
    Ok(environment
        .get_template("capacity_question.html")?
        .render(minijinja::value::Serde(&page))?)
}

/// Three significant digits, as the verdicts write ratios.
fn digits(value: f64) -> String {
    bookstore_stats::digits(value)
}
