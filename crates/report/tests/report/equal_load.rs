//! The fixed-load phase on the page: every window under its rate, verdicts on p99, blocking
//! stacks against the async ones, variants.

use super::*;

/// The fixed-load table of `scenario`, as text.
fn equal_load_table(page: &str, scenario: &str) -> String {
    let from = format!("id=\"equal-load-{scenario}\"");
    let start = page.find(&from).unwrap_or_else(|| panic!("no {from}"));
    // The table, after the section's charts (whose legends name the stacks too).
    let table = start + page[start..].find("<table").unwrap();
    text_between(&page[table..], "<table", "</table>")
}

/// The row of `stack` in a table's text: from its name to the next stack's.
fn row<'t>(table: &'t str, stack: &str, stacks: &[&str]) -> &'t str {
    let start = table.find(stack).unwrap_or_else(|| panic!("no {stack} in {table}"));
    let rest = &table[start + stack.len()..];
    let end = stacks.iter().filter_map(|s| rest.find(s)).min().unwrap_or(rest.len());
    &table[start..start + stack.len() + end]
}

const STACKS: [&str; 5] = [
    "axum-serde-sqlx",
    "axum-serde-diesel",
    "actix-serde-diesel",
    "actix-simd-sqlx",
    "hyper-sonic-sqlx",
];

#[test]
fn every_equal_load_window_appears_under_its_rate() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    assert!(page.contains("4. Latency at equal load"));
    for stack in &run.stacks {
        assert_eq!(stack.equal_load.len(), 9, "3 scenarios × 3 rounds");
        for cell in &stack.equal_load {
            let id = format!("data-cell=\"{}:{}:70% of the slowest\"", stack.name, cell.scenario);
            assert!(page.contains(&id), "missing {id}");
        }
    }
    let section =
        text_between(&page, "id=\"equal-load-bookById\"", "id=\"equal-load-checkoutCreate\"");
    assert!(section.contains("70% of the slowest : 13407 requests/s"), "{section}");
    assert!(section.contains("requests/s offered to every stack, in 3 round(s)"), "{section}");
}

#[test]
fn a_clearly_lower_p99_at_equal_load_is_best_and_a_stack_that_could_not_carry_the_rate_is_not_ranked()
 {
    let mut run = fixture();
    // bookById's p99 at equal load, round by round: hyper-sonic-sqlx a third of the others';
    // axum-serde-diesel lower still, but saturated in one round.
    for (index, stack) in run.stacks.iter_mut().enumerate() {
        let name = stack.name.clone();
        for cell in stack.equal_load.iter_mut().filter(|c| c.scenario == "bookById") {
            let drift = 1.0 + 0.1 * f64::from(cell.round);
            let p99_us = match name.as_str() {
                "hyper-sonic-sqlx" => 1_000.0 * drift,
                "axum-serde-diesel" => 500.0 * drift,
                _ => (3_000.0 + 97.0 * index as f64) * drift,
            };
            cell.latency_ok_us.as_mut().unwrap().p99_us = p99_us as u64;
            if name == "axum-serde-diesel" && cell.round == 1 {
                cell.warnings
                    .push(Warning::from(WarningKind::Saturated { achieved_fraction: 0.62 }));
            }
            if name == "actix-serde-diesel" && cell.round == 2 {
                let kind = WarningKind::ClientLimited {
                    send_lag_p50_us: 40,
                    send_lag_p99_us: 2_500,
                    latency_p99_us: 3_000,
                };
                cell.warnings.push(Warning::from(kind));
            }
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let table = equal_load_table(&page, "bookById");
    assert!(row(&table, "hyper-sonic-sqlx", &STACKS).contains("best (lowest)"), "{table}");
    let saturated = row(&table, "axum-serde-diesel", &STACKS);
    assert!(saturated.contains("not ranked: saturated at this rate: only 62.0%"), "{saturated}");
    assert!(saturated.contains("(in 1 of 3 rounds)"), "{saturated}");
    for stack in ["axum-serde-sqlx", "actix-serde-diesel", "actix-simd-sqlx"] {
        // About three times the first's p99, the interval above 1.
        let row = row(&table, stack, &STACKS);
        assert!(row.contains("× [2.") || row.contains("× [3."), "{row}");
    }
    // A round whose client fell behind is left out; the others still compare (above).
    let limited = row(&table, "actix-serde-diesel", &STACKS);
    assert!(limited.contains("1 round(s) client-limited, left out"), "{limited}");
    let summary = bookstore_report::terminal::summary(std::slice::from_ref(&run));
    let line = summary
        .lines()
        .skip_while(|l| !l.starts_with("bookById"))
        .find(|l| l.contains("hyper-sonic-sqlx"))
        .unwrap();
    assert!(line.trim_end().ends_with("best"), "{summary}");
}

#[test]
fn each_blocking_stacks_equal_load_p99_is_compared_with_the_median_async_stacks() {
    let mut run = fixture();
    // bookById's p99 at equal load: the async stacks 1.0, 1.1 and 1.2 ms (the median is
    // actix-simd-sqlx's), axum-serde-diesel 1.3 times that, actix-serde-diesel 5 times;
    // every round drifts alike, with a little noise of each stack's own.
    for (index, stack) in run.stacks.iter_mut().enumerate() {
        let name = stack.name.clone();
        for cell in stack.equal_load.iter_mut().filter(|c| c.scenario == "bookById") {
            let noise = 1.0 + 0.02 * f64::from((cell.round + index as u32) % 3);
            let drift = (1.0 + 0.1 * f64::from(cell.round)) * noise;
            let p99_us = match name.as_str() {
                "axum-serde-sqlx" => 1_000.0,
                "actix-simd-sqlx" => 1_100.0,
                "hyper-sonic-sqlx" => 1_200.0,
                "axum-serde-diesel" => 1_430.0,
                _ => 5_500.0,
            } * drift;
            cell.latency_ok_us.as_mut().unwrap().p99_us = p99_us as u64;
        }
    }
    let page = render(std::slice::from_ref(&run)).unwrap();
    let note = text_between(&page, "data-blocking-tails=\"bookById:70% of the slowest\"", "</p>");
    assert!(
        note.contains("p99 ÷ that of actix-simd-sqlx, the async stack with the median p99"),
        "{note}"
    );
    let axum = &note[note.find("axum-serde-diesel").unwrap()..note.find(';').unwrap()];
    assert!(axum.contains("1.30× [") && axum.ends_with("(within 2×)"), "{note}");
    let actix = &note[note.find("actix-serde-diesel").unwrap()..];
    assert!(actix.contains("5.00× [") && actix.contains("not shown within 2×"), "{note}");
}

#[test]
fn a_variant_is_compared_with_its_stack_like_an_axis_at_saturation_and_at_equal_load() {
    let mut run = fixture();
    let mut variant = run.stacks.iter().find(|s| s.name == "actix-serde-diesel").unwrap().clone();
    variant.name = "actix-1w".into();
    variant.variant_of = Some("actix-serde-diesel".into());
    variant.args = vec!["--workers".into(), "1".into()];
    // Round by round: 0.8 of its stack's rate, 0.4 of its p99 at saturation and at equal
    // load, with a little noise of its own.
    for cell in variant.cells.iter_mut().chain(variant.equal_load.iter_mut()) {
        let noise = 1.0 + 0.02 * f64::from(cell.round % 2);
        cell.goodput_rps *= 0.8 * noise;
        cell.throughput_rps *= 0.8 * noise;
        cell.counts.ok = (cell.counts.ok as f64 * 0.8 * noise) as u64;
        let latency = cell.latency_ok_us.as_mut().unwrap();
        latency.p99_us = (latency.p99_us as f64 * 0.4 * noise) as u64;
    }
    run.stacks.push(variant);
    let page = render(std::slice::from_ref(&run)).unwrap();
    // Section 6's table, with the tails (the page's top has the rates alone).
    let detail = &page[page.find("id=\"axes\"").unwrap()..];
    let table = text_between(detail, "variant actix-1w: actix-serde-diesel → actix-1w", "</table>");
    assert!(
        table.contains("actix-1w is actix-serde-diesel run with --workers 1, in the same rounds."),
        "{table}"
    );
    assert!(table.contains("p99 at equal load, 70% of the slowest"), "{table}");
    let row = &table[table.find("bookById").unwrap()..table.find("checkoutCreate").unwrap()];
    // Two concurrencies, each a rate and a p99 at saturation, then the p99 at equal load:
    // judged by the family's shared spread (the fixture's tails are noisy), not called, its
    // interval wider than 2× — so no ratio, but what it would take.
    assert_eq!(row.matches("0.80").count(), 2, "rates: {row}");
    assert_eq!(row.matches("0.40").count(), 2, "p99s at saturation: {row}");
    assert!(row.contains("cannot compare at this length"), "the p99 at equal load: {row}");
}

/// The method section's "Tails at equal load" item, as text.
fn tails_line(page: &str) -> String {
    let method = text_between(page, "How verdicts are made", "Parity");
    let start = method.find("Tails at equal load").expect("a tails line");
    method[start..].split("A cell disqualified").next().unwrap().to_owned()
}

/// The number right after `after` in `text`.
fn number_after(text: &str, after: &str) -> f64 {
    let start = text.find(after).unwrap_or_else(|| panic!("no {after} in {text}")) + after.len();
    let digits: String =
        text[start..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    digits.parse().unwrap_or_else(|_| panic!("no number after {after} in {text}"))
}

#[test]
fn wide_tail_intervals_say_what_narrowing_them_to_twice_would_take() {
    let run = fixture();
    let page = render(std::slice::from_ref(&run)).unwrap();
    let tails = tails_line(&page);
    let width = number_after(&tails, "intervals ");
    assert!(width > 2.0, "the fixture's tails are noisy: {tails}");
    let noise = number_after(&tails, "families, noise ");
    let rounds = number_after(&tails, "would take about ");
    let window = run.settings.measurement.fixed_load_window().as_secs_f64();
    assert!(tails.contains(&format!("rounds of {window} s windows")), "{tails}");
    let seconds = number_after(&tails, "windows, ");
    assert!((seconds - rounds * window).abs() < 0.051, "{seconds} vs {rounds} × {window}");
    let here = number_after(&tails, "against ");
    assert!((here - 3.0 * window).abs() < 0.051, "three rounds here: {tails}");
    // Those rounds would give a 2× interval at the strictest level of a family of the five
    // stacks (10 pairs), and one round fewer would not (up to the two digits of the noise
    // shown).
    let z = bookstore_stats::t_critical(f64::INFINITY, 0.05 / 10.0);
    let interval = |n: f64, sd: f64| (2.0 * z * sd * (2.0 / n).sqrt()).exp();
    assert!(interval(rounds, noise - 0.005) <= 2.0, "{tails}");
    assert!(interval(rounds - 1.0, noise + 0.005) > 2.0, "{tails}");
    assert!(tails.contains("a question about tails is a run of its own"), "{tails}");

    // Tails alike in every round (each stack a fixed share of the first's, one percent of
    // noise) leave intervals narrower than 2×, and nothing to add.
    let mut quiet = run.clone();
    for (index, stack) in quiet.stacks.iter_mut().enumerate() {
        for cell in &mut stack.equal_load {
            let wobble = [1.0, 1.01, 0.99][cell.round as usize % 3];
            let p99_us = 2_000.0 * (1.0 + 0.2 * index as f64) * wobble;
            cell.latency_ok_us.as_mut().unwrap().p99_us = p99_us as u64;
        }
    }
    let page = render(std::slice::from_ref(&quiet)).unwrap();
    let tails = tails_line(&page);
    assert!(number_after(&tails, "intervals ") < 2.0, "{tails}");
    assert!(!tails.contains("would take about"), "{tails}");
}
