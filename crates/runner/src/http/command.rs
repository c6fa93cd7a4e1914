//! `loadgen http`, run: one window against one URL (or one scenario against one stack),
//! printed for a person and recorded as JSON; or, with objectives, the capacity search of
//! each.

use std::path::PathBuf;

use bookstore_client::engine::LoadPlan;
use bookstore_record::results::{HTTP_CELL_SCHEMA, SCHEMA_VERSION};

use crate::http::capacity::{self, Objective, Step};
use crate::http::measure::{Target, latency_table, measure};

/// Everything `loadgen http` is told, typed: what to load, how, and where the record goes.
pub struct HttpRun {
    /// The URL (for a scenario, the stack's base URL).
    pub url: String,
    /// One request, or one scenario's.
    pub target: Target,
    /// Connections, workers, phases, an offered rate, the stop flag.
    pub plan: LoadPlan,
    /// Fully validate one accepted response in this many per connection.
    pub validate_every: u64,
    /// `--slo`: search the capacity under each objective instead of one window.
    pub slo: Vec<Objective>,
    /// Ladders per objective.
    pub repeat: u32,
    /// `--max-rate`: the highest rate a ladder offers [default: twice the closed loop's].
    pub max_rate_rps: Option<f64>,
    /// Where the JSON record goes (`-`: standard output).
    pub json: Option<PathBuf>,
}

/// Runs `loadgen http`: one window, or a capacity search per objective; prints what a
/// person reads and writes the record. Returns the exit status.
pub fn run(run: &HttpRun) -> anyhow::Result<u8> {
    if !run.slo.is_empty() {
        return http_capacity(run);
    }
    let HttpRun { url, target, plan, .. } = run;
    let cell = measure(url, target, plan, run.validate_every)?;
    // With the JSON on standard output, the lines for people go to standard error.
    let json_to_stdout = run.json.as_deref() == Some(std::path::Path::new("-"));
    let say = |line: String| {
        if json_to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(format!(
        "{} connections, {:.2} s{}: {:.0} req/s ({:.0} ok/s), errors {}{}, in flight {:.1}, client CPU {:.2} s",
        plan.connections,
        cell.window_seconds,
        if cell.stopped_early { " (stopped early)" } else { "" },
        cell.throughput_rps,
        cell.goodput_rps,
        cell.counts.errors,
        if cell.unanswered > 0 {
            format!(", unanswered {}", cell.unanswered)
        } else {
            String::new()
        },
        cell.mean_in_flight,
        cell.cpu_seconds.client,
    ));
    if let Some(latency) = cell.ranked_histogram().map_err(anyhow::Error::msg)? {
        let from =
            if cell.open_loop.is_some() { "when each was due" } else { "when each was sent" };
        say(format!("latency of {} answers, timed from {from}:", latency.len()));
        for line in latency_table(&latency) {
            say(line);
        }
    }
    if let Some(open) = &cell.open_loop {
        let (lag_p50_us, lag_p99_us) = open.send_lag_us.map_or((0, 0), |l| (l.p50_us, l.p99_us));
        say(format!(
            "open loop, {} arrivals: {:.0} req/s offered, {} due in the window, answers {:.1}% of them; client send lag p50 {} µs, p99 {} µs; connections {} of at most {}{}",
            open.arrivals.name(),
            open.offered_rps,
            open.due,
            open.achieved_fraction * 100.0,
            lag_p50_us,
            lag_p99_us,
            open.connections_peak,
            open.connections_cap,
            if open.cap_hit { " (the cap was hit: requests waited in the client)" } else { "" }
        ));
    }
    if let Some(requests) = plan.requests
        && cell.counts.total() < requests
        && !cell.stopped_early
    {
        say(format!(
            "only {} of the {requests} requests were answered within {}: give -z more time",
            cell.counts.total(),
            humantime::format_duration(plan.duration)
        ));
    }
    for warning in &cell.warnings {
        say(format!("warning: {}", warning.message));
    }
    if let Some(path) = &run.json {
        let document = serde_json::json!({
            "schema": HTTP_CELL_SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "url": url,
            "throughput_rps": cell.throughput_rps,
            "goodput_rps": cell.goodput_rps,
            "latency_ok_us": cell.latency_ok_us,
            "client_cpu_seconds": cell.cpu_seconds.client,
            "client_workers": plan.workers,
            "cell": cell,
        });
        let bytes = serde_json::to_vec_pretty(&document)?;
        if json_to_stdout {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&bytes)?;
            stdout.write_all(b"\n")?;
        } else {
            std::fs::write(path, bytes)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    if plan.stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(bookstore_record::outcome::EXIT_INTERRUPTED);
    }
    let disqualified = bookstore_record::warnings::disqualification(&cell).is_some();
    Ok(if disqualified { bookstore_record::outcome::EXIT_DISQUALIFIED } else { 0 })
}

/// `loadgen http URL --slo …`: the capacity ladder of each objective, `--repeat` times,
/// each rung printed as it is measured.
fn http_capacity(run: &HttpRun) -> anyhow::Result<u8> {
    let HttpRun { url, target, plan, .. } = run;
    let json_to_stdout = run.json.as_deref() == Some(std::path::Path::new("-"));
    let say = |line: String| {
        if json_to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let label =
        |us: Option<u64>| us.map_or("–".into(), |us| bookstore_record::latency_label(us as f64));
    // The closed loop's rate centres the first ladder and sets its ceiling, unless both
    // are given.
    let closed_rps = match (plan.rate_rps, run.max_rate_rps) {
        (Some(_), Some(_)) => None,
        _ => {
            let probe = LoadPlan { rate_rps: None, ..plan.clone() };
            let cell = measure(url, target, &probe, run.validate_every)?;
            say(format!(
                "closed loop, {} connections: {:.0} ok/s; the ladder is laid around it",
                plan.connections, cell.goodput_rps
            ));
            Some(cell.goodput_rps)
        }
    };
    let centre_rps = plan.rate_rps.or(closed_rps).expect("one of the two");
    let max_rps = run
        .max_rate_rps
        .or(closed_rps.map(|rate| rate * capacity::MAX_RATE_FACTOR))
        .expect("one of the two");
    let interrupted = || plan.stop.load(std::sync::atomic::Ordering::Relaxed);
    let mut documents = Vec::new();
    for objective in &run.slo {
        let mut searches = Vec::new();
        for round in 1..=run.repeat {
            say(format!("{}, ladder {round} of {}:", objective.label(), run.repeat));
            say(format!(
                "{:>10} {:>8} {:>8} {:>9} {:>9}  verdict",
                "rate/s", "due", "in time", "p50", "at SLO"
            ));
            let index = round as usize - 1;
            let found = capacity::search(index, centre_rps, max_rps, *objective, |rate| {
                if interrupted() {
                    anyhow::bail!("interrupted");
                }
                let window = LoadPlan { rate_rps: Some(rate), ..plan.clone() };
                let cell = measure(url, target, &window, run.validate_every)?;
                let step = Step::judge(&cell, rate, *objective).map_err(anyhow::Error::msg)?;
                say(format!(
                    "{:>10.0} {:>8} {:>7.1}% {:>9} {:>9}  {}",
                    step.rate_rps,
                    step.due,
                    step.in_time_share * 100.0,
                    label(step.p50_us),
                    label(step.at_objective_us),
                    step.missed_because.as_deref().unwrap_or("met")
                ));
                Ok(step)
            });
            let found = match found {
                Ok(found) => found,
                Err(_) if interrupted() => return Ok(bookstore_record::outcome::EXIT_INTERRUPTED),
                Err(error) => return Err(error),
            };
            say(capacity::said(found.capacity, *objective));
            searches.push(found);
        }
        let interval = capacity::interval(&searches);
        if let Some((mean, low, high)) = interval {
            say(format!(
                "capacity at {} over {} ladders of one process: {mean:.0} req/s [{low:.0}–{high:.0}] (geometric mean, Student's 95% interval; the spread between processes is not in it)",
                objective.label(),
                searches.len()
            ));
        }
        documents.push(serde_json::json!({
            "objective": objective,
            "label": objective.label(),
            "searches": searches,
            "capacity_rps": capacity::found(&searches).map(|(rate, _)| rate),
            "capacity_low_rps": interval.map(|i| i.1),
            "capacity_high_rps": interval.map(|i| i.2),
        }));
    }
    if let Some(path) = &run.json {
        let document = serde_json::json!({
            "schema": HTTP_CAPACITY_SCHEMA,
            "schema_version": HTTP_CAPACITY_VERSION,
            "url": url,
            "step_seconds": plan.duration.as_secs_f64(),
            "connections_cap": plan.connections,
            "max_rate_rps": max_rps,
            "objectives": documents,
        });
        let text = serde_json::to_string_pretty(&document)? + "\n";
        crate::console::write_output(path, &text)?;
    }
    Ok(0)
}

/// Identifies the document `loadgen http --slo … --json` writes.
const HTTP_CAPACITY_SCHEMA: &str = "bookstore-bench/http-capacity";
/// Its version: 2 since a search is the shared ladder (`found`: `between`, `not_met` or
/// `above`; version 1's bisection said `met` or `not_met`).
const HTTP_CAPACITY_VERSION: u32 = 2;
