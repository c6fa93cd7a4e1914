//! A `loadgen ab` question as text or as a page: the answer first, then what it was drawn
//! from.

use std::fmt::Write;

use bookstore_record::ab::{AbAnswer, AbResults};
use serde::Serialize;

/// The page of one question (`loadgen ab --report FILE`): the answer, how it was measured,
/// and every round.
pub fn html(results: &AbResults) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct Round {
        index: usize,
        block: u32,
        order: String,
        a: String,
        b: String,
        ratio: String,
        a_latency: String,
        b_latency: String,
    }
    let lines: Vec<String> = text(results).lines().map(str::to_owned).collect();
    // The text's first lines name the parties and the load; its answers follow.
    let percentile = format!("p{}:", results.settings.percentile);
    let answers: Vec<&String> = lines
        .iter()
        .skip(3)
        .filter(|l| l.starts_with("rate:") || l.starts_with(&percentile))
        .collect();
    let both = |v: [f64; 2]| format!("{:.0}, {:.0}", v[0], v[1]);
    let latency = |v: Option<[u64; 2]>| v.map_or(String::new(), |v| format!("{}, {}", v[0], v[1]));
    let rounds: Vec<Round> = results
        .rounds
        .iter()
        .enumerate()
        .map(|(index, r)| {
            let ratio = ((r.b_rps[0] / r.a_rps[0]).ln() + (r.b_rps[1] / r.a_rps[1]).ln()) / 2.0;
            Round {
                index: index + 1,
                block: r.block,
                order: r.order.clone(),
                a: both(r.a_rps),
                b: both(r.b_rps),
                ratio: format!("{:.3}", ratio.exp()),
                a_latency: latency(r.a_latency_us),
                b_latency: latency(r.b_latency_us),
            }
        })
        .collect();
    #[derive(Serialize)]
    struct Page {
        title: String,
        answer: String,
        latency: Option<String>,
        a: String,
        b: String,
        request: String,
        load: String,
        method: Vec<String>,
        with_latency: bool,
        percentile: String,
        rounds: Vec<Round>,
    }
    let [a, b] = &results.parties;
    let page = Page {
        title: format!("B ÷ A at {}", results.request),
        answer: answers
            .first()
            .map_or("no answer: fewer than two rounds were measured".to_owned(), |l| (*l).clone()),
        latency: answers.get(1).map(|l| (*l).clone()),
        a: format!("{} ({})", a.what, a.kind),
        b: format!("{} ({})", b.what, b.kind),
        request: results.request.clone(),
        load: load(results),
        method: lines.iter().skip(3).filter(|l| !answers.contains(l)).cloned().collect(),
        with_latency: results.settings.rate.is_some(),
        percentile: format!("p{}", results.settings.percentile),
        rounds,
    };
    let environment =
        crate::page::page_environment("ab.html", include_str!("../templates/ab.html"))?;
    Ok(environment.get_template("ab.html")?.render(minijinja::value::Serde(&page))?)
}

fn load(results: &AbResults) -> String {
    match results.settings.rate {
        Some(rate) => format!(
            "{rate:.0} requests/s offered, at most {} connections",
            results.settings.concurrency
        ),
        None => format!("{} connections, closed loop", results.settings.concurrency),
    }
}

/// The lines `loadgen ab` ends with (and `loadgen report` prints for an ab file).
pub fn text(results: &AbResults) -> String {
    let mut out = String::new();
    let [a, b] = &results.parties;
    let _ = writeln!(out, "A: {} ({})", a.what, a.kind);
    let _ = writeln!(out, "B: {} ({})", b.what, b.kind);
    let _ = writeln!(out, "{}, {}", results.request, load(results));
    let answer = |name: &str, answer: &Option<AbAnswer>, out: &mut String| {
        if let Some(answer) = answer {
            let _ = writeln!(
                out,
                "{name}: {} (B ÷ A {} [{}–{}]; each look's interval at {:.1}%, all looks together {:.0}%)",
                answer.words,
                digits(answer.ratio),
                digits(answer.low),
                digits(answer.high),
                answer.level * 100.0,
                bookstore_record::ab::CONFIDENCE * 100.0
            );
        }
    };
    answer("rate", &results.rate, &mut out);
    let percentile = format!("p{}", results.settings.percentile);
    match &results.latency {
        // Too wide to mean anything, and not called: no ratio, but what it would take.
        Some(latency)
            if latency.verdict == bookstore_stats::Verdict::NotDistinguishable.name()
                && latency.high / latency.low > results.settings.tail_precision =>
        {
            let _ = writeln!(
                out,
                "{percentile}: cannot compare at this length: the interval spans {}× (wider than the {}× asked); a longer --budget or longer windows (--duration) narrow it",
                digits(latency.high / latency.low),
                results.settings.tail_precision
            );
        }
        latency => answer(&percentile, latency, &mut out),
    }
    if let Some(rate) = &results.rate {
        let processes = match rate.process_sd {
            Some(sd) => format!(
                "{} processes per side ({} rounds each); the spread between processes measured: {sd:.3}",
                results.processes, results.settings.rounds_per_process
            ),
            None => format!(
                "one process per side; the spread between processes assumed: {} (the twins')",
                bookstore_stats::PROCESS_SD
            ),
        };
        let _ = writeln!(
            out,
            "{} rounds of ABBA/BAAB windows, {processes}; one round's spread {:.3}",
            rate.rounds, rate.round_sd
        );
    }
    if let Some([effect, se]) = results.order_effect {
        let _ = writeln!(
            out,
            "drift the mirrored order cancelled: {:+.2}% per window (± {:.2}%)",
            effect * 100.0,
            se * 100.0
        );
    }
    let precision = results.settings.precision * 100.0;
    let ended = match results.ended_by.as_str() {
        "precision" => format!("ended: the interval within ±{precision:.1}%, as asked"),
        "budget" => format!(
            "ended: the budget ({:.0} s) was spent before ±{precision:.1}% was reached",
            results.settings.budget.as_secs_f64()
        ),
        "looks" => "ended: the last planned look".to_owned(),
        other => format!("ended: {other}"),
    };
    let _ = writeln!(out, "{ended}, after {:.0} s", results.run.wall_seconds.unwrap_or_default());
    for note in &results.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// Three significant digits, as the verdicts write ratios.
fn digits(value: f64) -> String {
    bookstore_stats::digits(value)
}
