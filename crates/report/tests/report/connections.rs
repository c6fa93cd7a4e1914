//! Idle connections (`--idle-connections`): each stack's memory per connection from the
//! peak RSS of its `.idle<N>` variants, compared by the verdict method, and the load beside
//! them against the stack's own.

use super::{fixture, text_between};
use bookstore_record::results::{IdleHeld, RunResults};
use bookstore_record::warnings::WarningKind;
use bookstore_report::render;

const MIB: f64 = 1_048_576.0;

/// `fixture()` with `stack` at 1,000 and 10,000 idle connections costing it `kib` KiB
/// each, round by round a little off, as a server's RSS is.
fn with_idle(run: &mut RunResults, stack: &str, kib: f64) {
    let base = run.stacks.iter_mut().find(|s| s.name == stack).unwrap();
    for cell in &mut base.cells {
        cell.server_peak_rss_bytes = Some((20.0 * MIB) as u64);
    }
    let base = base.clone();
    for count in [1_000u64, 10_000] {
        let mut variant = base.clone();
        variant.name = format!("{stack}.idle{count}");
        variant.variant_of = Some(stack.into());
        variant.idle_connections = Some(count);
        for cell in &mut variant.cells {
            let noise = [1.01, 0.99, 1.005][cell.round as usize % 3];
            let rss = 20.0 * MIB + count as f64 * kib * 1024.0 * noise;
            cell.server_peak_rss_bytes = Some(rss as u64);
            cell.idle = Some(IdleHeld {
                asked: count,
                held: count,
                refused: 0,
                dropped: 0,
                pings: count,
                opening_seconds: 0.4,
                server_rss_bytes: Some(rss as u64),
                server_threads: Some(3),
                server_fds: Some(count + 40),
            });
        }
        run.stacks.push(variant);
    }
}

fn section(page: &str) -> String {
    text_between(page, "id=\"connections\"", "id=\"integrity\"").replace("&#x27;", "'")
}

#[test]
fn each_stacks_memory_per_idle_connection_is_its_rss_slope_and_the_stacks_are_compared() {
    let mut run = fixture();
    with_idle(&mut run, "axum-serde-sqlx", 8.0);
    with_idle(&mut run, "actix-simd-sqlx", 2.0);
    let page = render(&[run]).unwrap();
    let section = section(&page);
    // One slope per round, within a percent or two of what each connection cost.
    let kib = |stack: &str| -> f64 {
        let row = section.split(&format!("{stack} 0, 1000, 10000 ")).nth(1).unwrap();
        row.split(' ').next().unwrap().parse().unwrap()
    };
    assert!((kib("axum-serde-sqlx") - 8.0).abs() < 0.2, "{section}");
    assert!((kib("actix-simd-sqlx") - 2.0).abs() < 0.1, "{section}");
    // Each round's own slope beside the interval, as many as the rounds counted.
    let row = section.split("axum-serde-sqlx 0, 1000, 10000 ").nth(1).unwrap();
    let tokens: Vec<&str> = row.split("] ").nth(1).unwrap().split_whitespace().collect();
    let per_round = 1 + tokens.iter().take_while(|t| t.ends_with(',')).count();
    let rounds: usize = tokens[per_round].parse().unwrap();
    assert!(rounds > 1 && per_round == rounds, "{row}");
    for value in &tokens[..per_round] {
        let value: f64 = value.trim_end_matches(',').parse().unwrap();
        assert!((value - 8.0).abs() < 0.5, "{row}");
    }
    assert!(
        section.contains("actix-simd-sqlx's memory per connection ÷ axum-serde-sqlx's: 0.25")
            || section.contains("axum-serde-sqlx's memory per connection ÷ actix-simd-sqlx's: 4"),
        "4× apart, called: {section}"
    );
    assert!(section.contains("axum-serde-sqlx.idle10000 10000 of 10000"), "{section}");
}

#[test]
fn a_party_that_dropped_idle_connections_is_disqualified_where_its_load_is_shown() {
    let mut run = fixture();
    with_idle(&mut run, "axum-serde-sqlx", 8.0);
    let party = run.stacks.iter_mut().find(|s| s.name == "axum-serde-sqlx.idle10000").unwrap();
    let windows = party.cells.len();
    for cell in &mut party.cells {
        let held = cell.idle.as_mut().unwrap();
        held.dropped = 12;
        let kind = WarningKind::IdleNotHeld { asked: held.asked, refused: 0, dropped: 12 };
        cell.warnings.push(kind.into());
    }
    let page = render(&[run]).unwrap();
    let section = section(&page);
    let over = format!("0 refused, {} dropped over {windows} windows", 12 * windows);
    assert!(section.contains(&over), "{section}");
    assert!(
        section.contains("axum-serde-sqlx.idle10000 10000 disqualified: of 10000 idle connections, the server refused 0 and dropped 12"),
        "{section}"
    );
}

#[test]
fn the_exports_carry_each_stacks_memory_per_connection_and_each_partys_idle_count() {
    let mut run = fixture();
    with_idle(&mut run, "axum-serde-sqlx", 8.0);
    let rows = bookstore_report::export::rows(&[run]);
    let memory: Vec<_> = rows.iter().filter(|r| r.load == "memory_per_connection").collect();
    assert_eq!(memory.len(), 1, "one stack has idle variants");
    let kib = memory[0].memory_per_connection_kib.unwrap();
    assert!((kib - 8.0).abs() < 0.2, "{kib}");
    assert!(memory[0].memory_per_connection_kib_low.unwrap() <= kib);
    let idle: Vec<_> = rows.iter().filter(|r| r.stack == "axum-serde-sqlx.idle10000").collect();
    assert!(!idle.is_empty() && idle.iter().all(|r| r.idle_connections == Some(10_000)));
    let csv = bookstore_report::export::csv(&rows).unwrap();
    assert!(csv.lines().next().unwrap().contains("memory_per_connection_kib"), "{csv}");
}
