//! Section 7: how the run was measured and judged, on what.

use bookstore_record::results::Measurement;
use bookstore_stats::{FALSE_DISCOVERY_RATE, Summary};
use serde::Serialize;

use super::dataset::Dataset;
use super::verdicts::{
    Family, Spread, TwinCalls, detectable_ratio, equal_load_families, twin_calls, twin_tail_calls,
};

#[derive(Debug, Serialize)]
pub(crate) struct Method {
    settings: Vec<(String, String)>,
    verdicts: Verdicts,
    parity: Vec<String>,
    environment: Vec<(String, String)>,
    caveats: Vec<String>,
}

/// How the page's verdicts were drawn, with this run's own figures.
#[derive(Debug, Serialize)]
pub(crate) struct Verdicts {
    /// Rounds per cell.
    rounds: u32,
    /// The false-discovery rate, percent.
    fdr_percent: String,
    /// Pairs in a full family (every stack against every other).
    pairs_per_family: usize,
    /// The per-round spread of a pair's log ratio, median over every compared pair.
    noise: Option<String>,
    /// The smallest difference seen four times in five (at the strictest level of a family
    /// of the median rounds).
    detectable: Option<String>,
    /// The spread between two processes of one binary that every interval between stacks
    /// carries ([`bookstore_stats::PROCESS_SD`]).
    process_sd: String,
    /// The smallest difference no number of rounds passes, for it: what a family's
    /// strictest level calls four times in five with nothing but that spread left.
    process_floor: String,
    /// The sequential design and what it spent, as a sentence; `None` for a fixed design.
    looks: Option<String>,
    /// The median rounds of a family.
    family_rounds: usize,
    /// "18 of 24": the families whose rates were judged by their members' shared spread.
    pooled_families: String,
    /// Pairs called different, of pairs compared, over the page.
    called: usize,
    compared: usize,
    /// Each twin's calls against its own stack (`--twin`): pairs with nothing to find.
    twins: Vec<TwinCalls>,
    /// The share of twin cells expected to be called by chance, percent.
    twin_expected_percent: String,
    /// How the equal-load p99s were compared, with this run's figures; `None` without an
    /// equal-load phase.
    tails: Option<Tails>,
}

/// The equal-load p99 comparisons of a run: their shared spread, how wide their intervals
/// came out, and the twins' calls by the same method.
#[derive(Debug, Serialize)]
pub(crate) struct Tails {
    /// Families (scenario × rate) with a compared pair.
    families: usize,
    /// The per-member, per-round spread of log p99 around the families' additive fits,
    /// median over the families.
    residual_sd: String,
    /// Its degrees of freedom in the median family.
    residual_df: String,
    /// The median width (upper ÷ lower) of the pairs' intervals.
    median_width: String,
    /// The same from each pair's own rounds, as rates are judged.
    own_median_width: String,
    called: usize,
    compared: usize,
    twins: Vec<TwinCalls>,
    /// What intervals 2× wide would have taken at this noise, as a sentence; `None` where
    /// the median interval is already that narrow.
    two_fold: Option<String>,
    /// For a run that asked a tail question: its looks and level, and where each family
    /// ended, as a sentence.
    question: Option<String>,
}

fn tails(dataset: &Dataset<'_>) -> Option<Tails> {
    let families = equal_load_families(dataset);
    let (mut residuals, mut dfs, mut widths) = (Vec::new(), Vec::new(), Vec::new());
    let mut own_widths = Vec::new();
    let (mut called, mut compared) = (0, 0);
    for (scenario, rate, family) in &families {
        let own = Family::equal_load_p99_by(dataset, scenario, rate, Spread::Own);
        own_widths.extend(own.pairs().map(|(_, _, c)| c.high / c.low));
        if let Some(residual) = family.residual() {
            residuals.push(residual.sd);
            dfs.push(residual.df);
        }
        widths.extend(family.pairs().map(|(_, _, c)| c.high / c.low));
        let (c, n) = family.calls();
        called += c;
        compared += n;
    }
    let width = Summary::of(&widths)?.median;
    let own_width = Summary::of(&own_widths).map_or(f64::NAN, |s| s.median);
    let residual = Summary::of(&residuals).map(|s| s.median);
    let question = question(dataset, &families);
    // A tail question says where its own looks ended; what a default run's few rounds
    // would need is not its measure.
    let two_fold =
        residual.filter(|_| width > 2.0 && question.is_none()).and_then(|sd| two_fold(dataset, sd));
    Some(Tails {
        families: families.iter().filter(|(_, _, f)| f.pairs().next().is_some()).count(),
        residual_sd: residual.map_or("–".into(), |sd| format!("{sd:.2}")),
        residual_df: Summary::of(&dfs).map_or("–".into(), |s| format!("{:.0}", s.median)),
        median_width: format!("{}×", bookstore_stats::digits(width)),
        own_median_width: format!("{}×", bookstore_stats::digits(own_width)),
        called,
        compared,
        twins: twin_tail_calls(dataset),
        two_fold,
        question,
    })
}

/// A tail question's looks and level, and each family's rounds and widest interval, as a
/// sentence; `None` for a run that asked none.
fn question(dataset: &Dataset<'_>, families: &[(String, String, Family)]) -> Option<String> {
    let measurement = &dataset.runs.first()?.settings.measurement;
    let (width, looks) = (measurement.tail_question?, measurement.tail_looks()?);
    let rounds: Vec<String> = looks.rounds().iter().map(usize::to_string).collect();
    let ends: Vec<String> = families
        .iter()
        .map(|(scenario, _, family)| {
            let reached = family
                .members
                .iter()
                .filter_map(|m| m.summary.as_ref().map(|s| s.n))
                .max()
                .unwrap_or(0);
            let widest = family.pairs().map(|(_, _, c)| c.high / c.low).reduce(f64::max);
            let widest = widest.map_or("no interval".to_owned(), |w| {
                format!("widest {}×", bookstore_stats::digits(w))
            });
            format!("{scenario} {reached} rounds ({widest})")
        })
        .collect();
    Some(format!(
        "This run asked a tail question (`--tail-question {width}`): each scenario's fixed-load rounds were looked at after {} rounds, every look at q ÷ {} (so that all of them hold together at {}%), until every interval of the page was within {width}× or the budget ran out: {}.",
        rounds.join(", "),
        looks.rounds().len(),
        crate::text::percent(FALSE_DISCOVERY_RATE),
        ends.join("; ")
    ))
}

/// The rounds and fixed-load seconds per stack and scenario an equal-load interval 2× wide
/// at a family's strictest level would take, at the per-window spread `residual_sd`, as a
/// sentence. More rounds of these windows, not longer windows: the spread was measured white
/// in window time, so a longer window buys it no cheaper (docs/method.md, "Latency at equal
/// load", in docs/method.md).
fn two_fold(dataset: &Dataset<'_>, residual_sd: f64) -> Option<String> {
    let stacks = dataset.ranked_parties();
    let pairs = (stacks * stacks.saturating_sub(1) / 2).max(1);
    let rounds =
        bookstore_stats::rounds_for_width(residual_sd, FALSE_DISCOVERY_RATE / pairs as f64, 2.0)?;
    let window = dataset.runs[0].settings.measurement.fixed_load_window().as_secs_f64();
    let needed_seconds = rounds as f64 * window;
    let here_seconds = f64::from(dataset.rounds()) * window;
    Some(format!(
        "At that noise an interval 2× wide at a family's strictest level would take about {rounds} rounds of {window} s windows, {needed_seconds:.1} s of fixed load per stack and scenario against {here_seconds:.1} s in this run; the noise was measured white in window time, so longer windows buy it no cheaper: a question about tails is a run of its own (`loadgen suite --tail-question` for several stacks, `loadgen ab A B --rate R` for two, each running until its intervals are within 2×).",
    ))
}

pub(crate) fn samples_note(dataset: &Dataset<'_>) -> String {
    let rounds = dataset.rounds();
    if rounds > 1 {
        let least = if dataset.looks().sequential() { "at least " } else { "" };
        format!(
            "{least}{rounds} rounds per cell ({} run(s)): every target measured one window per round, side by side with the others; values are medians with the range over the rounds; comparisons are ratios with their interval (see Method).",
            dataset.runs.len()
        )
    } else {
        format!(
            "One round per cell: no comparison can have an interval, so no stack is called faster or slower than another. Run with --rounds {} (the default) for verdicts.",
            bookstore_record::results::DEFAULT_ROUNDS
        )
    }
}

/// The run's noise and what it could see, in one line for the page's top: pairs called of
/// compared, the rounds a family got, the difference a family could see, and the hour's
/// speed. The method section says how (section 8).
pub(crate) fn glance(dataset: &Dataset<'_>) -> String {
    let v = verdicts(dataset);
    let mut line = format!(
        "This run compared {} pairs of stacks and called {} of them different; its families got {} rounds (median)",
        v.compared, v.called, v.family_rounds
    );
    if let Some(detectable) = &v.detectable {
        line.push_str(&format!(
            " and could see a difference of {detectable} four times in five (the median family)"
        ));
    }
    let speeds: Vec<f64> = dataset.runs.iter().filter_map(|r| r.http_ceiling_rps()).collect();
    if let Some(speed) = Summary::median_of(speeds) {
        line.push_str(&format!(
            ". The hour's speed, its HTTP ceiling (a minimal responder measured in the same run): {} requests/s",
            crate::text::thousands(speed)
        ));
    }
    line.push_str(". Every interval is at 95% or stricter, widened for the pairs of its family (Benjamini–Hochberg at 5%); how the run measures and judges: section 8.");
    line
}

fn verdicts(dataset: &Dataset<'_>) -> Verdicts {
    let mut spreads = Vec::new();
    let (mut called, mut compared) = (0, 0);
    let mut rounds_spent = Vec::new();
    let (mut detectables, mut pooled, mut families) = (Vec::new(), 0, 0);
    for scenario in &dataset.scenarios {
        for &concurrency in &dataset.concurrency {
            let family = Family::rates(dataset, scenario, concurrency);
            spreads.extend_from_slice(family.log_ratio_spreads());
            if let Some(power) = family.power() {
                rounds_spent.push(power.rounds as f64);
                detectables.extend(power.detectable);
                families += 1;
                pooled += usize::from(power.pooled.is_some());
            }
            let (c, n) = family.calls();
            called += c;
            compared += n;
        }
    }
    let rounds = dataset.rounds();
    let stacks = dataset.ranked_parties();
    let pairs_per_family = stacks * stacks.saturating_sub(1) / 2;
    let noise = Summary::of(&spreads).map(|s| s.median);
    let spent = Summary::of(&rounds_spent);
    let family_rounds = spent.map_or(rounds as usize, |s| s.median.round() as usize);
    let looks = dataset.looks();
    // The median family's, each as its own spread and rounds give it.
    let detectable =
        Summary::median_of(detectables).map(|ratio| format!("{:.0}%", (ratio - 1.0) * 100.0));
    let looks = looks.sequential().then(|| looks_text(&looks, spent));
    Verdicts {
        rounds,
        fdr_percent: crate::text::percent(FALSE_DISCOVERY_RATE),
        pairs_per_family,
        noise: noise.map(|sd| format!("{sd:.3}")),
        detectable,
        process_sd: format!("{:.3}", bookstore_stats::PROCESS_SD),
        process_floor: process_floor(pairs_per_family),
        looks,
        family_rounds,
        pooled_families: format!("{pooled} of {families}"),
        called,
        compared,
        twins: twin_calls(dataset),
        twin_expected_percent: crate::text::percent(FALSE_DISCOVERY_RATE),
        tails: tails(dataset),
    }
}

/// The difference a family of `pairs` calls four times in five at its strictest level when
/// its rounds' noise is gone and only the spread between processes is left, as "6%".
fn process_floor(pairs: usize) -> String {
    let endless = 1_000_000;
    let q = FALSE_DISCOVERY_RATE;
    detectable_ratio(0.0, endless, Spread::Processes, pairs, q)
        .map_or("–".into(), |ratio| format!("{:.0}%", (ratio - 1.0) * 100.0))
}

/// The sequential design in a sentence, with the rounds its families got.
fn looks_text(looks: &bookstore_stats::Looks, spent: Option<Summary>) -> String {
    let later: Vec<String> = looks.rounds()[1..].iter().map(usize::to_string).collect();
    let spent = spent.map_or(String::new(), |s| {
        format!(" Families got {:.0}–{:.0} rounds (median {:.0}).", s.min, s.max, s.median)
    });
    format!(
        "After its first {} rounds a family is looked at again at {} rounds while one of its pairs is open and the run's budget allows. At each look before the last a pair is called at a strict level ({}% per look, {}% of q in all) or is futile (the difference seen would not be called by the last look) or open; a family with no pair open stops, and is judged at that strict level if a pair was called there. Every other family is judged at the rest of q, {}%: it stopped because the budget or the looks ran out, whatever its rounds said. So stopping early calls no more false differences than q.{spent}",
        looks.rounds()[0],
        later.join(", "),
        fine_percent(looks.interim_q()),
        crate::text::percent(bookstore_stats::INTERIM_SHARE),
        fine_percent(looks.final_q()),
    )
}

/// ", then up to 12 for the families still open (looks at 5, 8, 12), within a budget of
/// 840 s for the whole run"; nothing for a fixed design.
fn more_rounds(m: &Measurement) -> String {
    let looks = m.looks();
    if !looks.sequential() {
        return String::new();
    }
    let later: Vec<String> = looks.rounds()[1..].iter().map(usize::to_string).collect();
    let budget = m.budget.map_or(String::new(), |b| {
        format!(", within a budget of {:.0} s for the whole run", b.as_secs_f64())
    });
    format!(
        ", then up to {} for the families still open (looks at {}){budget}",
        m.max_rounds,
        later.join(", ")
    )
}

/// A level to two decimals of a percent ("0.17").
fn fine_percent(q: f64) -> String {
    format!("{:.2}", q * 100.0)
}

/// The results' names of the measurement settings the table above words itself.
const WORDED: [&str; 10] = [
    "concurrency",
    "warmup_seconds",
    "window_seconds",
    "fixed_load_window_seconds",
    "rounds",
    "max_rounds",
    "budget_seconds",
    "repeat",
    "request_timeout_ms",
    "durable_database",
];

/// Every measurement setting the table does not word, under its results name: a setting
/// added to [`Measurement`] is on the page without being written here.
fn unworded_settings(m: &Measurement) -> Vec<(String, String)> {
    match serde_json::to_value(m) {
        Ok(serde_json::Value::Object(fields)) => unworded(fields),
        _ => Vec::new(),
    }
}

fn unworded(fields: serde_json::Map<String, serde_json::Value>) -> Vec<(String, String)> {
    fields
        .into_iter()
        .filter(|(name, _)| !WORDED.contains(&name.as_str()))
        .map(|(name, value)| {
            let text = match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            (name, text)
        })
        .collect()
}

pub(crate) fn method(dataset: &Dataset<'_>) -> Method {
    let first = &dataset.runs[0];
    let s = &first.settings;
    let m = &s.measurement;
    let e = &first.environment;
    let phases = match (s.warmup_max_seconds, s.window_max_seconds) {
        (Some(warmup_max), Some(window_max)) => format!(
            "warm-up ≥ {} s until every connection has had an answer (≤ {warmup_max} s); window ≥ {} s until it holds one answer per connection (≤ {window_max} s)",
            m.warmup.as_secs_f64(),
            m.duration.as_secs_f64()
        ),
        _ => {
            format!(
                "{} s warm-up, {} s window (by the clock)",
                m.warmup.as_secs_f64(),
                m.duration.as_secs_f64()
            )
        }
    };
    // The fixed-load phase keeps to its clock, with half the warm-up (it only opens the
    // connections its rate needs) and a window of its own.
    let phases = if s.rates.is_empty() {
        phases
    } else {
        format!(
            "{phases}; fixed load: {} s warm-up, {} s window (by the clock)",
            m.warmup.as_secs_f64() / 2.0,
            m.fixed_load_window().as_secs_f64()
        )
    };
    let mut settings = vec![
        ("stacks".into(), s.stacks.join(", ")),
        ("scenarios".into(), s.scenarios.join(", ")),
        (
            "concurrency".into(),
            m.concurrency.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
        ),
        ("windows".into(), phases),
        (
            "rounds per cell".into(),
            format!(
                "{} run(s) × {} round(s) × {} repeat(s){}",
                dataset.runs.len(),
                m.rounds,
                m.repeat,
                more_rounds(m)
            ),
        ),
        ("pool".into(), format!("{} connections (min = max)", s.pool_max)),
        (
            "server workers / blocking threads".into(),
            format!("{} / {}", s.server_workers, s.blocking_threads),
        ),
        ("client workers".into(), s.client_workers.to_string()),
        ("request timeout".into(), format!("{} ms", m.request_timeout.as_millis())),
        (
            "database".into(),
            format!(
                "{} PostgreSQL, {}",
                s.database,
                if m.durable { "fsync on" } else { "fsync and synchronous commit off" }
            ),
        ),
        ("command".into(), first.run.command_line.join(" ")),
    ];
    settings.extend(unworded_settings(m));
    let environment = vec![
        ("CPU".into(), format!("{} × {}", e.cpu_count, e.cpu_model.clone().unwrap_or_default())),
        (
            "memory".into(),
            e.memory_bytes
                .map_or(String::new(), |b| format!("{:.1} GiB", b as f64 / 1_073_741_824.0)),
        ),
        ("kernel".into(), e.kernel.clone().unwrap_or_default()),
        ("PostgreSQL".into(), e.postgres_version.clone().unwrap_or_default()),
        (
            "PostgreSQL settings".into(),
            e.postgres_settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("rustc".into(), e.rustc.clone().unwrap_or_default()),
        ("release profile".into(), e.release_profile.clone()),
        ("RUSTFLAGS".into(), e.rustflags.clone().unwrap_or_default()),
        (
            "commit".into(),
            format!(
                "{}{}",
                e.git_commit.clone().unwrap_or_else(|| "unknown".into()),
                if e.git_dirty == Some(true) { " (with uncommitted changes)" } else { "" }
            ),
        ),
        ("load generator".into(), format!("loadgen {}", e.loadgen_version)),
    ];
    let elsewhere: Vec<String> = first
        .stacks
        .iter()
        .filter_map(|stack| Some(format!("{} at {}", stack.name, stack.address.as_ref()?)))
        .collect();
    let placement = if elsewhere.is_empty() {
        "Client, servers and PostgreSQL share one machine: every number includes their competition for its CPUs. The ceilings are measured the same way, in the same rounds.".to_owned()
    } else {
        format!(
            "The stacks were started by someone else ({}): their CPU and memory were not measured, and their own settings are whatever they were started with. The environment above is the client's{}.",
            elsewhere.join(", "),
            if first.shards.len() > 1 {
                " — shard 1's; each client host's CPU is in the clients row"
            } else {
                ""
            }
        )
    };
    if !first.shards.is_empty() {
        let hosts: Vec<String> = first
            .shards
            .iter()
            .map(|s| {
                format!(
                    "{} of {} on {} ({} × {})",
                    s.index,
                    s.count,
                    s.hostname.as_deref().unwrap_or("?"),
                    s.cpu_count,
                    s.cpu_model.as_deref().unwrap_or("?")
                )
            })
            .collect();
        settings.push(("clients (--shard)".into(), hosts.join(", ")));
    }
    let caveats = vec![
        placement,
        "Goodput counts expected successes only; throughput counts every response. Latency percentiles are of successes at saturation (a closed loop: every connection sends its next request when the last is answered), from HDR histograms merged over the rounds.".to_owned(),
        "The write scenarios run with the seed restored before each window; they measure the stacks with fsync off unless the run says otherwise, not the disk.".to_owned(),
    ];
    Method { settings, verdicts: verdicts(dataset), parity: s.parity.clone(), environment, caveats }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_setting_the_table_does_not_word_is_listed_under_its_name() {
        let mut fields = serde_json::Map::new();
        fields.insert("rounds".into(), 5.into());
        fields.insert("new_setting_ms".into(), 3.into());
        fields.insert("mode".into(), "fast".into());
        let rows = unworded(fields);
        assert_eq!(rows, [("mode".into(), "fast".into()), ("new_setting_ms".into(), "3".into())]);
    }

    #[test]
    fn every_worded_name_is_a_field_of_the_measurement() {
        let m = Measurement {
            concurrency: vec![1],
            warmup: std::time::Duration::ZERO,
            duration: std::time::Duration::ZERO,
            fixed_load_duration: None,
            rounds: 1,
            max_rounds: 0,
            budget: None,
            repeat: 1,
            request_timeout: std::time::Duration::ZERO,
            durable: false,
            schedule: bookstore_record::results::Schedule::Grouped,
            tail_question: None,
        };
        let serde_json::Value::Object(fields) = serde_json::to_value(&m).unwrap() else {
            panic!("an object")
        };
        for name in WORDED {
            assert!(fields.contains_key(name), "{name} is not a measurement field");
        }
    }
}
