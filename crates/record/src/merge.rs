//! `loadgen merge`: the results of N shards (`loadgen suite --shard K/N`), one client per
//! host that loaded the same stacks together, as one run.
//!
//! Exact where the parts allow: counts and rates are summed, latency histograms merged
//! (so percentiles are those of every request, not an average of percentiles), requests in
//! flight summed, the write audit judged again on every shard's acknowledgements. What
//! belongs to a host stays per host: each shard's client CPU, connections, window start and
//! lateness in the cell's `shards`. Per-second p99 values cannot be combined and are left
//! out of the merged timeline.

use std::collections::BTreeMap;

use crate::results::{
    Audit, Cell, Counts, LatencySummary, RunResults, SqlStats, StackResults, StackStatus,
    TimelineSecond, decode_histogram, encode_histogram,
};
use crate::warnings::{self, Warning, WarningKind};

/// The shards of one run, merged. Refuses parts that are not all N shards of the same run
/// (same settings, same start time, every K once).
pub fn merge(mut parts: Vec<RunResults>, id: &str) -> Result<RunResults, String> {
    check_parts(&mut parts)?;
    let first = &parts[0];
    let mut merged = first.clone();
    merged.run.id = id.to_owned();
    merged.run.started_at =
        parts.iter().map(|p| p.run.started_at.clone()).min().unwrap_or_default();
    merged.run.finished_at = parts
        .iter()
        .map(|p| p.run.finished_at.clone())
        .collect::<Option<Vec<_>>>()
        .and_then(|ends| ends.into_iter().max());
    merged.run.status =
        parts.iter().map(|p| p.run.status).min().unwrap_or(crate::RunStatus::Complete);
    merged.shards = parts.iter().flat_map(|p| p.shards.clone()).collect();
    merged.warnings = Vec::new();
    for part in &parts {
        for warning in &part.warnings {
            if !matches!(warning.kind, WarningKind::ShardOnly { .. })
                && !merged.warnings.contains(warning)
            {
                merged.warnings.push(warning.clone());
            }
        }
    }
    merged.stacks = first
        .stacks
        .iter()
        .map(|stack| merge_stack(&parts, &stack.name))
        .collect::<Result<_, _>>()?;
    Ok(merged)
}

/// Sorts the parts by shard and checks they are one run's N shards.
fn check_parts(parts: &mut [RunResults]) -> Result<(), String> {
    let shard_of = |part: &RunResults| match part.shards.as_slice() {
        [shard] => Ok(shard.clone()),
        [] => Err(format!("{} is not a shard's results (no --shard)", part.run.id)),
        _ => Err(format!("{} is already merged", part.run.id)),
    };
    for part in parts.iter() {
        shard_of(part)?;
    }
    parts.sort_by_key(|part| part.shards[0].index);
    let first = shard_of(parts.first().ok_or("nothing to merge")?)?;
    let indexes: Vec<u32> = parts.iter().map(|p| p.shards[0].index).collect();
    if indexes != (1..=first.count).collect::<Vec<_>>() {
        return Err(format!("expected shards 1 to {} once each, got {indexes:?}", first.count));
    }
    for part in &parts[1..] {
        let shard = &part.shards[0];
        if shard.count != first.count || shard.start_at_unix_seconds != first.start_at_unix_seconds
        {
            return Err(format!(
                "{} is shard {}/{} starting at {}, {} is shard 1/{} starting at {}: not the same run",
                part.run.id,
                shard.index,
                shard.count,
                shard.start_at_unix_seconds,
                parts[0].run.id,
                first.count,
                first.start_at_unix_seconds
            ));
        }
        let (a, b) = (&parts[0].settings, &part.settings);
        let shared = |s: &'_ crate::results::Settings| {
            let m = &s.measurement;
            (s.stacks.clone(), s.scenarios.clone(), m.concurrency.clone(), m.rounds, m.repeat)
        };
        if shared(a) != shared(b)
            || a.measurement.warmup != b.measurement.warmup
            || a.measurement.duration != b.measurement.duration
        {
            return Err(format!(
                "{} and {} ran different settings (stacks, scenarios, concurrency, warm-up, window, rounds or repeat)",
                parts[0].run.id, part.run.id
            ));
        }
    }
    Ok(())
}

fn merge_stack(parts: &[RunResults], name: &str) -> Result<StackResults, String> {
    let entries: Vec<(u32, &StackResults)> = parts
        .iter()
        .map(|part| {
            let index = part.shards[0].index;
            part.stacks
                .iter()
                .find(|s| s.name == name)
                .map(|s| (index, s))
                .ok_or_else(|| format!("shard {index} has no results for {name}"))
        })
        .collect::<Result<_, _>>()?;
    let mut merged = entries[0].1.clone();
    merged.status = entries.iter().map(|(_, s)| s.status).min().unwrap_or(StackStatus::Measured);
    let failures: Vec<String> = entries
        .iter()
        .filter_map(|(k, s)| s.failure.as_ref().map(|f| format!("shard {k}: {f}")))
        .collect();
    merged.failure = (!failures.is_empty()).then(|| failures.join("; "));
    for validation in &mut merged.validation {
        let all = entries.iter().flat_map(|(_, s)| &s.validation);
        let same: Vec<_> = all.filter(|v| v.scenario == validation.scenario).collect();
        validation.passed = same.len() == entries.len() && same.iter().all(|v| v.passed);
        validation.problem = same.iter().find_map(|v| v.problem.clone());
    }
    // Only cells every shard measured are whole; a shard that stopped early leaves the
    // rest of the run to the others, which is not the load asked for.
    merged.cells = Vec::new();
    let mut partial = 0;
    for cell in &entries[0].1.cells {
        let key = (&cell.scenario, cell.concurrency, cell.round);
        let same: Vec<&Cell> = entries
            .iter()
            .filter_map(|(_, s)| {
                s.cells.iter().find(|c| (&c.scenario, c.concurrency, c.round) == key)
            })
            .collect();
        if same.len() == entries.len() {
            merged.cells.push(merge_cell(&same)?);
        } else {
            partial += 1;
        }
    }
    if partial > 0 {
        let note = format!("{partial} cell(s) not measured by every shard were left out");
        merged.failure = Some(match merged.failure {
            Some(failure) => format!("{failure}; {note}"),
            None => note,
        });
    }
    Ok(merged)
}

fn add_counts(into: &mut Counts, other: &Counts) {
    into.ok += other.ok;
    into.rejected += other.rejected;
    into.errors += other.errors;
    for (kind, n) in &other.errors_by_kind {
        *into.errors_by_kind.entry(kind.clone()).or_default() += n;
    }
    for (status, n) in &other.responses_by_status {
        *into.responses_by_status.entry(status.clone()).or_default() += n;
    }
}

/// The histograms (as stored) merged, stored, and summarized.
fn merge_histograms<'a>(
    encoded: impl Iterator<Item = &'a str>,
) -> Result<(String, Option<LatencySummary>), String> {
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    for text in encoded {
        let histogram = decode_histogram(text)?;
        match &mut merged {
            Some(into) => into.add(&histogram).map_err(|e| format!("merging histograms: {e}"))?,
            None => merged = Some(histogram),
        }
    }
    Ok(merged.map_or((String::new(), None), |h| (encode_histogram(&h), LatencySummary::of(&h))))
}

/// One cell from the same cell of every shard (shard 1 first: it holds the database's
/// side, statements and audit).
pub fn merge_cell(parts: &[&Cell]) -> Result<Cell, String> {
    let mut merged = parts[0].clone();
    for part in &parts[1..] {
        add_counts(&mut merged.counts, &part.counts);
        add_counts(&mut merged.warmup_counts, &part.warmup_counts);
        add_counts(&mut merged.drained_counts, &part.drained_counts);
        merged.unanswered += part.unanswered;
        merged.throughput_rps += part.throughput_rps;
        merged.goodput_rps += part.goodput_rps;
        merged.mean_in_flight += part.mean_in_flight;
        merged.cpu_seconds.client += part.cpu_seconds.client;
        merged.window_seconds = merged.window_seconds.max(part.window_seconds);
        merged.stopped_early |= part.stopped_early;
        merged.shards.extend(part.shards.iter().cloned());
    }
    (merged.histogram_ok, merged.latency_ok_us) =
        merge_histograms(parts.iter().map(|c| c.histogram_ok.as_str()))?;
    (merged.histogram_rejected, merged.latency_rejected_us) =
        merge_histograms(parts.iter().map(|c| c.histogram_rejected.as_str()))?;
    let mut seconds: BTreeMap<u32, TimelineSecond> = BTreeMap::new();
    for second in parts.iter().flat_map(|c| &c.timeline) {
        let into = seconds.entry(second.second).or_insert(TimelineSecond {
            second: second.second,
            ok: 0,
            rejected: 0,
            errors: 0,
            p99_ok_us: None,
        });
        into.ok += second.ok;
        into.rejected += second.rejected;
        into.errors += second.errors;
    }
    merged.timeline = seconds.into_values().collect();
    merged.problems = parts
        .iter()
        .flat_map(|c| {
            let shard = c.shards.first().map_or(0, |s| s.shard);
            c.problems.iter().map(move |p| format!("shard {shard}: {p}"))
        })
        .take(10)
        .collect();
    let requests: u64 = parts.iter().map(|c| c.requests_total()).sum();
    merged.sql = parts[0].sql.clone().map(|sql| SqlStats {
        statements_per_request: if requests > 0 {
            sql.statements as f64 / requests as f64
        } else {
            0.0
        },
        requests,
        ..sql
    });
    let acknowledged: u64 =
        parts.iter().map(|c| c.warmup_counts.ok + c.counts.ok + c.drained_counts.ok).sum();
    merged.audit = parts[0].audit.clone().map(|audit| {
        let mut failures = audit.failures.clone();
        failures.extend(bookstore_domain::audit::unacknowledged(audit.checkout_rows, acknowledged));
        Audit {
            passed: failures.is_empty(),
            acknowledged_checkouts: acknowledged,
            failures,
            ..audit
        }
    });
    merged.warnings = merged_warnings(parts, &merged);
    Ok(merged)
}

/// What the whole load deserves, plus each host's own client CPU warnings (of its own
/// machine: the server is elsewhere).
fn merged_warnings(parts: &[&Cell], merged: &Cell) -> Vec<Warning> {
    let mut found: Vec<Warning> = parts
        .iter()
        .flat_map(|c| &c.warnings)
        .filter(|w| {
            matches!(
                w.kind,
                WarningKind::ClientCpuHigh { .. } | WarningKind::ClientOverFairShare { .. }
            )
        })
        .cloned()
        .collect();
    found.extend(crate::warnings::load_warnings(merged, merged.concurrency));
    let starts = merged.shards.iter().map(|s| s.window_started_unix_seconds);
    let spread_seconds = starts.clone().fold(f64::MIN, f64::max) - starts.fold(f64::MAX, f64::min);
    if merged.shards.len() > 1
        && spread_seconds > warnings::SHARD_LATE_FRACTION * merged.window_seconds
    {
        found.push(Warning::from(WarningKind::ShardsOutOfStep { spread_seconds }));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::results::{
        Environment, LoadMode, Measurement, RunInfo, SCHEMA, SCHEMA_VERSION, Settings, ShardInfo,
        ShardPart, Validation,
    };
    use bookstore_client::engine::LoadReport;
    use hdrhistogram::Histogram;

    /// Shard `index` of `count`'s cell: successes with `latencies_us`, `rejected` refusals,
    /// `acknowledged` of which in the warm-up and drain.
    fn cell(index: u32, latencies_us: &[u64], rejected: u64, extra_ok: u64) -> Cell {
        let mut report = LoadReport::new(std::time::Duration::from_secs(2));
        for &latency in latencies_us {
            report.latency_ok_us.record(latency).unwrap();
        }
        report.measure.ok = latencies_us.len() as u64;
        report.measure.rejected = rejected;
        report.measure.by_status.insert(201, latencies_us.len() as u64);
        report.warmup.ok = extra_ok;
        let mut cell = Cell::from_report("checkoutCreate", 8, 0, LoadMode::Closed, &report);
        cell.timeline = vec![TimelineSecond {
            second: 0,
            ok: latencies_us.len() as u64,
            rejected,
            errors: 0,
            p99_ok_us: Some(7),
        }];
        cell.mean_in_flight = 3.9;
        cell.cpu_seconds.client = 0.5 * f64::from(index);
        cell.shards = vec![ShardPart {
            shard: index,
            connections: 4,
            window_started_unix_seconds: 1_000.0 + 0.01 * f64::from(index),
            late_seconds: 0.0,
            throughput_rps: cell.throughput_rps,
            goodput_rps: cell.goodput_rps,
            client_cpu_seconds: cell.cpu_seconds.client,
        }];
        cell
    }

    fn shard(index: u32, count: u32, cell: Cell) -> RunResults {
        RunResults {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo {
                id: format!("run-shard{index}of{count}"),
                started_at: format!("2026-11-30T10:00:0{index}Z"),
                finished_at: Some(format!("2026-11-30T10:05:0{index}Z")),
                status: crate::RunStatus::Complete,
                failure: None,
                command_line: vec![],
                wall_seconds: None,
                resumed_at: vec![],
            },
            shards: vec![ShardInfo {
                index,
                count,
                start_at_unix_seconds: 1_000,
                hostname: Some(format!("host{index}")),
                cpu_model: None,
                cpu_count: 2,
                run_id: format!("run-shard{index}of{count}"),
            }],
            environment: Environment::default(),
            settings: Settings {
                stacks: vec!["axum-serde-sqlx".into()],
                scenarios: vec!["checkoutCreate".into()],
                measurement: Measurement {
                    concurrency: vec![8],
                    warmup: Duration::from_secs(1),
                    duration: Duration::from_secs(2),
                    fixed_load_duration: None,
                    rounds: 1,
                    max_rounds: 0,
                    budget: None,
                    repeat: 1,
                    request_timeout: Duration::from_secs(10),
                    durable: false,
                    schedule: crate::results::Schedule::Grouped,
                    tail_question: None,
                },
                warmup_max_seconds: None,
                window_max_seconds: None,
                pool_max: 32,
                server_workers: 2,
                blocking_threads: 32,
                client_workers: 2,
                database: "existing".into(),
                parity: vec![],
                rates: vec![],
                arrivals: None,
                cpu_placement: vec![],
                objectives: vec![],
            },
            ceilings: Default::default(),
            stacks: vec![StackResults {
                name: "axum-serde-sqlx".into(),
                status: StackStatus::Measured,
                failure: None,
                ready_ms: None,
                address: Some("10.0.0.5:8081".into()),
                variant_of: None,
                args: vec![],
                db_latency_us: None,
                idle_connections: None,
                launch: Vec::new(),
                validation: vec![Validation {
                    scenario: "checkoutCreate".into(),
                    passed: true,
                    problem: None,
                }],
                cells: vec![cell],
                equal_load: vec![],
            }],
            warnings: vec![Warning::from(WarningKind::ShardOnly { index, count })],
            db_relay_calibration: vec![],
        }
    }

    /// Shard 1 read the database: 7 checkout rows, 21 statements; the audit's stored
    /// checks held.
    fn with_database_side(mut cell: Cell) -> Cell {
        cell.sql = Some(SqlStats {
            statements_per_request: 1.0,
            statements: 21,
            requests: cell.requests_total(),
            top_statements: vec![],
            commits: 7,
            rollbacks: 0,
            shared_blocks_hit: 40,
            shared_blocks_read: 0,
            temp_blocks_written: 0,
            deadlocks: Some(0),
        });
        cell.audit = Some(Audit {
            passed: true,
            checkout_rows: 7,
            acknowledged_checkouts: cell.counts.ok + cell.warmup_counts.ok,
            negative_stock_books: 0,
            stock_mismatches: 0,
            unjustified_refusals: 0,
            failures: vec![],
        });
        cell
    }

    #[test]
    fn two_shards_merge_into_their_sum_with_exact_percentiles() {
        let first: Vec<u64> = (1..=3).map(|i| i * 100).collect();
        let second: Vec<u64> = vec![5_000, 6_000, 7_000, 8_000];
        let a = shard(1, 2, with_database_side(cell(1, &first, 2, 0)));
        let b = shard(2, 2, cell(2, &second, 1, 0));
        // Given in any order.
        let merged = merge(vec![b.clone(), a.clone()], "merged").unwrap();

        let (ca, cb, m) =
            (&a.stacks[0].cells[0], &b.stacks[0].cells[0], &merged.stacks[0].cells[0]);
        assert_eq!(m.counts.ok, ca.counts.ok + cb.counts.ok);
        assert_eq!(m.counts.rejected, 3);
        assert_eq!(m.counts.responses_by_status["201"], 7);
        assert_eq!(m.throughput_rps, ca.throughput_rps + cb.throughput_rps);
        assert_eq!(m.goodput_rps, ca.goodput_rps + cb.goodput_rps);
        assert!((m.mean_in_flight - 7.8).abs() < 1e-9);
        assert_eq!(m.timeline[0].ok, 7);
        assert_eq!(m.timeline[0].p99_ok_us, None, "per-second percentiles do not combine");

        // The percentiles of every request, as if one client had recorded them all.
        let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &latency in first.iter().chain(&second) {
            all.record(latency).unwrap();
        }
        assert_eq!(m.latency_ok_us, LatencySummary::of(&all));
        assert_eq!(decode_histogram(&m.histogram_ok).unwrap().len(), 7);

        // CPU stays per host; the sum is the whole client side.
        assert_eq!(m.shards.iter().map(|s| s.shard).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(m.shards[1].client_cpu_seconds, 1.0);
        assert_eq!(m.cpu_seconds.client, 1.5);

        // Every shard's requests and acknowledgements, shard 1's database side.
        let sql = m.sql.as_ref().unwrap();
        assert_eq!(sql.requests, ca.requests_total() + cb.requests_total());
        assert_eq!(sql.statements_per_request, 21.0 / 10.0);
        let audit = m.audit.as_ref().unwrap();
        assert_eq!(audit.acknowledged_checkouts, 7);
        assert!(audit.passed, "{:?}", audit.failures);

        assert_eq!(merged.shards.len(), 2);
        assert_eq!(merged.run.started_at, "2026-11-30T10:00:01Z");
        assert_eq!(merged.run.finished_at.as_deref(), Some("2026-11-30T10:05:02Z"));
        assert!(merged.warnings.is_empty(), "the shard_only warnings go: {:?}", merged.warnings);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn the_merged_audit_catches_rows_no_shard_acknowledged() {
        // 7 rows in the database, 3 + 3 acknowledged: one checkout lost its answer.
        let a = shard(1, 2, with_database_side(cell(1, &[100, 200, 300], 0, 0)));
        let b = shard(2, 2, cell(2, &[100, 200], 0, 1));
        let merged = merge(vec![a, b], "merged").unwrap();
        let cell = &merged.stacks[0].cells[0];
        let audit = cell.audit.as_ref().unwrap();
        assert!(!audit.passed);
        assert_eq!(
            audit.failures,
            ["7 checkout rows but 6 successful checkouts acknowledged to the client"]
        );
        assert!(cell.warnings.iter().any(|w| matches!(w.kind, WarningKind::AuditFailed { .. })));
    }

    #[test]
    fn windows_that_did_not_coincide_are_flagged() {
        let mut late = cell(2, &[100], 0, 0);
        late.shards[0].window_started_unix_seconds += 0.5; // a quarter of the 2 s window
        let merged =
            merge(vec![shard(1, 2, cell(1, &[100], 0, 0)), shard(2, 2, late)], "m").unwrap();
        let warnings = &merged.stacks[0].cells[0].warnings;
        assert!(
            warnings.iter().any(|w| matches!(w.kind, WarningKind::ShardsOutOfStep { .. })),
            "{warnings:?}"
        );
    }

    #[test]
    fn only_all_shards_of_one_run_are_merged() {
        let one = || shard(1, 2, cell(1, &[100], 0, 0));
        let two = || shard(2, 2, cell(2, &[100], 0, 0));
        let refused = |parts: Vec<RunResults>| merge(parts, "m").unwrap_err();

        assert!(refused(vec![one()]).contains("expected shards 1 to 2"));
        assert!(refused(vec![one(), one()]).contains("got [1, 1]"));
        let mut other_start = two();
        other_start.shards[0].start_at_unix_seconds += 60;
        assert!(refused(vec![one(), other_start]).contains("not the same run"));
        let mut other_window = two();
        other_window.settings.measurement.duration = Duration::from_secs(3);
        assert!(refused(vec![one(), other_window]).contains("different settings"));
        let mut unsharded = two();
        unsharded.shards.clear();
        assert!(refused(vec![one(), unsharded]).contains("no --shard"));
        let merged = merge(vec![one(), two()], "m").unwrap();
        assert!(refused(vec![merged, two()]).contains("already merged"));
    }

    #[test]
    fn a_cell_one_shard_missed_is_left_out_and_said() {
        let mut short = two_cells(2);
        short.stacks[0].cells.pop();
        let merged = merge(vec![two_cells(1), short], "m").unwrap();
        assert_eq!(merged.stacks[0].cells.len(), 1);
        assert!(
            merged.stacks[0].failure.as_deref().unwrap().contains("1 cell(s) not measured"),
            "{:?}",
            merged.stacks[0].failure
        );
    }

    fn two_cells(index: u32) -> RunResults {
        let mut run = shard(index, 2, cell(index, &[100], 0, 0));
        let mut second = cell(index, &[200], 0, 0);
        second.round = 1;
        run.stacks[0].cells.push(second);
        run
    }
}
