//! What each command does with its flags: the crates that do the work, called in order.

use bookstore_record::results::StackStatus;
use std::path::PathBuf;
use std::time::Duration;

use bookstore_client::engine::{self, LoadPlan};

use crate::args::*;

pub(crate) fn suite(args: SuiteArgs) -> anyhow::Result<u8> {
    let mut database_url = args.database_url;
    let targets = if let Some(from) = &args.compose {
        let from = bookstore_runner::suite::ComposeFrom::parse(from).map_err(anyhow::Error::msg)?;
        database_url.get_or_insert_with(|| from.database_url().to_owned());
        Some(from.targets().map_err(anyhow::Error::msg)?)
    } else if args.targets.is_empty() {
        None
    } else {
        Some(bookstore_runner::suite::parse_targets(&args.targets).map_err(anyhow::Error::msg)?)
    };
    if targets.is_some() && database_url.is_none() {
        anyhow::bail!(
            "--targets needs --database-url: the database the running stacks use (the seed is restored there before write scenarios, and audited after)"
        );
    }
    let stacks = if let Some(targets) = &targets {
        targets.iter().map(|(stack, _)| *stack).collect()
    } else {
        chosen_stacks(&args.stacks)?
    };
    let mut taken: Vec<String> =
        bookstore_registry::stacks::names().into_iter().map(str::to_owned).collect();
    let mut variants = Vec::new();
    for spec in &args.variants {
        let variant =
            bookstore_runner::suite::Variant::parse(spec, &taken).map_err(anyhow::Error::msg)?;
        taken.push(variant.label.clone());
        variants.push(variant);
    }
    let started_here = targets.is_none() && args.compose.is_none() && args.shard.is_none();
    let default_twin = !args.no_twin && !args.quick;
    let twin = twin_of(args.twin.as_deref(), default_twin, started_here, &stacks, &variants)?;
    if let Some(stack) = twin {
        let twin = bookstore_runner::suite::Variant::twin(*stack);
        if taken.contains(&twin.label) {
            anyhow::bail!("--twin: {} is already a variant", twin.label);
        }
        taken.push(twin.label.clone());
        variants.push(twin);
    }
    let latencies = args.db_latency.iter().copied().filter(|l| !l.is_zero());
    add_per_stack("--db-latency", latencies, &stacks, &mut taken, &mut variants, |stack, l| {
        bookstore_runner::suite::Variant::with_db_latency(stack, l)
    })?;
    let counts = args.idle_connections.iter().copied().filter(|n| *n > 0);
    add_per_stack("--idle-connections", counts, &stacks, &mut taken, &mut variants, |stack, n| {
        bookstore_runner::suite::Variant::with_idle_connections(stack, n)
    })?;
    if let Some(most) = variants.iter().filter_map(|v| v.idle_connections).max() {
        // The client holds them and the server accepts them: each needs a descriptor per
        // connection beside its load's and its pool's.
        let limit = bookstore_client::idle::raise_open_files_limit().map_err(anyhow::Error::msg)?;
        let needed = most + IDLE_SPARE_DESCRIPTORS;
        if limit < needed {
            anyhow::bail!(
                "--idle-connections {most}: the open-files limit is {limit}, and holding them takes about {needed}; raise it (ulimit -Hn, or LimitNOFILE for a service) or ask for fewer"
            );
        }
    }
    let scenarios = if args.scenarios.is_empty() {
        bookstore_client::scenario::Scenario::ALL.to_vec()
    } else {
        args.scenarios
            .iter()
            .map(|name| bookstore_client::scenario::Scenario::parse(name))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?
    };
    let mut measurement = if args.quick { args.measurement.quick() } else { args.measurement };
    if args.shard.is_some() {
        // Shards keep one schedule planned before they start: a fixed design.
        measurement.max_rounds = 0;
    }
    measurement.check().map_err(anyhow::Error::msg)?;
    if measurement.tail_question.is_some() && (args.no_equal_load || args.shard.is_some()) {
        anyhow::bail!(
            "--tail-question asks its question of the fixed-load rounds: not with --no-equal-load or --shard"
        );
    }
    let id = bookstore_record::environment::file_stamp();
    let shard = match (&args.shard, args.start_at) {
        (Some(spec), Some(start_at)) => Some(
            bookstore_runner::suite::ShardPlan::parse(spec, start_at)
                .map_err(anyhow::Error::msg)?,
        ),
        _ => None,
    };
    let id = match shard {
        Some(shard) => format!("{id}-shard{}of{}", shard.index, shard.count),
        None if measurement.tail_question.is_some() => format!("{id}-tail-question"),
        None => id,
    };
    let output = match (&args.resume, args.output) {
        (Some(journal), _) => bookstore_runner::suite::resumed_output(journal)?,
        (None, Some(output)) => output,
        (None, None) => PathBuf::from(format!("summary/results/{id}.json.zst")),
    };
    let options = bookstore_runner::suite::SuiteOptions {
        build: bookstore_record::build_identity!(),
        stacks,
        variants,
        scenarios,
        measurement,
        tuning: args.servers.tuning(),
        client_workers: args.servers.client_workers(),
        validate_every: args.validate_every,
        bin_dir: args.servers.bin_dir,
        workspace: std::env::current_dir()?,
        output: output.clone(),
        database_url,
        db_provider: args.db_provider,
        running: targets.map(|t| t.into_iter().map(|(_, addr)| addr).collect()),
        shard,
        ceilings: !args.no_ceilings,
        db_ceiling_at_concurrency: args.db_ceiling_at_concurrency,
        rates: bookstore_record::results::Rate::for_suite(
            args.rates,
            args.no_equal_load,
            args.quick,
            !args.slo.is_empty(),
        ),
        objectives: args.slo,
        arrivals: if args.poisson { engine::Arrivals::Poisson } else { engine::Arrivals::Constant },
        placement: args.cpus,
        resume: args.resume,
        command_line: std::env::args().collect(),
    };
    let started = std::time::Instant::now();
    let stop = bookstore_runner::console::signal::stop_on_signal(
        "loadgen",
        "stopping after this cell's drain; results so far are kept",
    );
    let results = match unless_refused(bookstore_runner::suite::run(&options, stop))? {
        Ok(results) => results,
        Err(code) => return Ok(code),
    };
    report(std::slice::from_ref(&output), &args.report)?;
    eprint!("{}", bookstore_report::terminal::summary(std::slice::from_ref(&results)));
    let measured = results.stacks.iter().filter(|s| s.status == StackStatus::Measured).count();
    let problems = bookstore_record::outcome::problems(&results);
    for problem in &problems {
        eprintln!("loadgen: {}", problem.line());
    }
    eprintln!(
        "loadgen: {} in {:.0} s: {measured} of {} stacks measured; results {}, summary {}",
        results.run.status,
        started.elapsed().as_secs_f64(),
        results.stacks.len(),
        output.display(),
        args.report.display()
    );
    Ok(bookstore_record::outcome::exit_code(&problems))
}

pub(crate) fn faults(args: FaultsArgs) -> anyhow::Result<u8> {
    use bookstore_report::reliability as report;
    use bookstore_runner::faults::{Fault, FaultsOptions};
    if !args.from.is_empty() {
        let documents = args
            .from
            .iter()
            .map(|path| {
                let mut document = bookstore_record::faults::FaultsResults::read(path)?;
                bookstore_runner::faults::soak::judge_all(&mut document);
                Ok(document)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let text = match args.format {
            FaultsFormat::Html => report::render(&documents)?,
            FaultsFormat::Md => report::markdown(&documents),
        };
        // Markdown goes to standard output unless a file is named.
        let output = match (args.format, args.report.as_os_str() == DEFAULT_RELIABILITY_PAGE) {
            (FaultsFormat::Md, true) => PathBuf::from("-"),
            _ => args.report.clone(),
        };
        bookstore_runner::console::write_output(&output, &text)?;
        return Ok(0);
    }
    let stacks = chosen_stacks(&args.stacks)?;
    let fault_list = match (args.faults.is_empty(), args.load.soak.is_some()) {
        (true, true) => Vec::new(),
        (true, false) => Fault::ALL.to_vec(),
        (false, _) => args
            .faults
            .iter()
            .map(|name| Fault::parse(name))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?,
    };
    let kind = if fault_list.is_empty() { "soak" } else { "faults" };
    let output = match &args.resume {
        Some(journal) => bookstore_runner::faults::resumed_output(journal)?,
        None => args.output.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "summary/results/{kind}-{}.json.zst",
                bookstore_record::environment::file_stamp()
            ))
        }),
    };
    let options = FaultsOptions {
        build: bookstore_record::build_identity!(),
        stacks,
        faults: fault_list,
        load: args.load.clone(),
        client_workers: args.servers.client_workers(),
        tuning: args.servers.tuning(),
        bin_dir: args.servers.bin_dir.clone(),
        workspace: std::env::current_dir()?,
        output: output.clone(),
        command_line: std::env::args().collect(),
        front: None,
        resume: args.resume.clone(),
    };
    for stack in &options.stacks {
        let binary = options.bin_dir.join(stack.binary);
        if !binary.is_file() {
            anyhow::bail!(
                "{} is not built: run `cargo build --release -p {}` (or give --bin-dir)",
                binary.display(),
                stack.binary
            );
        }
    }
    let stop = bookstore_runner::console::signal::stop_on_signal(
        "loadgen",
        "stopping after this stack; results so far are kept",
    );
    let results = match unless_refused(bookstore_runner::faults::run(&options, stop))? {
        Ok(results) => results,
        Err(code) => return Ok(code),
    };
    let page = report::render(std::slice::from_ref(&results))?;
    bookstore_runner::console::write_output(&args.report, &page)?;
    eprint!("{}", report::markdown(std::slice::from_ref(&results)));
    let troubled = results.stacks.iter().any(|s| {
        s.failure.is_some()
            || s.faults.iter().any(|f| !f.survived)
            || s.soak.as_ref().is_some_and(|soak| {
                !soak.flags.is_empty() || soak.failures > 0 || !soak.audit.passed
            })
    });
    eprintln!(
        "loadgen: faults {} in {:.0} s; results {}, page {}",
        results.run.status,
        results.run.wall_seconds.unwrap_or(0.0),
        output.display(),
        args.report.display()
    );
    Ok(if results.run.status == bookstore_record::RunStatus::Interrupted {
        bookstore_record::outcome::EXIT_INTERRUPTED
    } else if troubled {
        EXIT_FAULT_NOT_SURVIVED
    } else {
        0
    })
}

/// Exit status of `loadgen faults` when a fault was not survived, a stack failed, or a
/// soak was flagged.
pub(crate) const EXIT_FAULT_NOT_SURVIVED: u8 = 6;

pub(crate) fn merge(args: &MergeArgs) -> anyhow::Result<()> {
    let parts = read_all(&args.shards)?;
    let id = args.output.file_stem().and_then(|s| s.to_str()).unwrap_or("merged");
    let merged = bookstore_record::merge::merge(parts, id).map_err(anyhow::Error::msg)?;
    merged
        .write(&args.output)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.output.display()))?;
    if let Some(page) = &args.report {
        report(std::slice::from_ref(&args.output), page)?;
    }
    eprintln!("loadgen: {} shards merged into {}", merged.shards.len(), args.output.display());
    Ok(())
}

/// The suite results of `paths`: results files, or the journals of runs killed or still
/// running (what they measured in whole rounds so far).
pub(crate) fn read_all(
    paths: &[PathBuf],
) -> anyhow::Result<Vec<bookstore_record::results::RunResults>> {
    use bookstore_record::results::RunResults;
    paths
        .iter()
        .map(|path| match path.extension().is_some_and(|e| e == "journal") {
            true => RunResults::from_journal(path).map(|(results, _)| results),
            false => RunResults::read(path),
        })
        .collect()
}

pub(crate) fn compare(args: &CompareArgs) -> anyhow::Result<u8> {
    let (base, new) = (read_all(&args.base)?, read_all(&args.new)?);
    let changes = bookstore_report::compare::compare(&base, &new);
    anyhow::ensure!(!changes.is_empty(), "the two sides have no cell in common");
    let pairs = bookstore_report::compare::pair_verdicts(&base, &new);
    print!("{}", bookstore_report::compare::table(&changes));
    println!();
    print!("{}", bookstore_report::compare::pairs_table(&pairs));
    if let Some(output) = &args.output {
        let page = bookstore_report::compare::render(&base, &new, &changes, &pairs)?;
        std::fs::write(output, page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))?;
    }
    let Some(percent) = args.fail_on_regression else { return Ok(0) };
    let regressions: Vec<_> =
        changes.iter().filter(|c| c.regressed_by_more_than(percent)).collect();
    for change in &regressions {
        eprintln!(
            "loadgen: regression: {} · {} · c = {}: {}",
            change.target,
            change.scenario,
            change.concurrency,
            change.comparison.map(|c| c.text()).unwrap_or_default()
        );
    }
    Ok(if regressions.is_empty() { 0 } else { bookstore_report::compare::EXIT_REGRESSION })
}

pub(crate) fn report(results: &[PathBuf], output: &std::path::Path) -> anyhow::Result<()> {
    let page = bookstore_report::render(&read_all(results)?)?;
    bookstore_runner::console::write_output(output, &page)
}

/// `loadgen report`: the page or an export of `args.results`.
pub(crate) fn export(args: &ReportArgs) -> anyhow::Result<()> {
    let text = args.format.render(&read_all(&args.results)?)?;
    let output = match &args.output {
        Some(path) => path.clone(),
        None if args.format.is_page() => PathBuf::from(DEFAULT_PAGE),
        None => PathBuf::from("-"),
    };
    bookstore_runner::console::write_output(&output, &text)
}

pub(crate) fn http(args: HttpArgs) -> anyhow::Result<u8> {
    use bookstore_runner::http::{HttpRun, RequestSpec, Target};
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        anyhow::bail!("--rate {rate}: expected a positive number of requests per second");
    }
    let target = match &args.scenario {
        None => {
            let body = match (&args.data, &args.body_file) {
                (Some(data), _) => Some(data.clone().into_bytes()),
                (None, Some(path)) => Some(
                    std::fs::read(path)
                        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?,
                ),
                (None, None) => None,
            };
            Target::Request(RequestSpec {
                method: args.method.clone(),
                headers: args.headers.clone(),
                body,
            })
        }
        Some(name) => Target::Scenario(
            bookstore_client::scenario::Scenario::parse(name).map_err(anyhow::Error::msg)?,
        ),
    };
    // `-n`: every request counted, none before the window, as oha and wrk do.
    let (warmup, duration) = match args.requests {
        Some(_) => (Duration::ZERO, args.duration.unwrap_or(HTTP_COUNTED_WINDOW_MAX)),
        None if !args.slo.is_empty() => {
            (args.warmup, args.duration.unwrap_or(bookstore_runner::http::capacity::DEFAULT_STEP))
        }
        None => (args.warmup, args.duration.unwrap_or(HTTP_WINDOW)),
    };
    let url = args.url.clone().or(args.url_flag.clone()).expect("clap requires one");
    let stop = bookstore_runner::console::signal::stop_on_signal(
        "loadgen",
        "ending the window now and printing what was measured",
    );
    let plan = LoadPlan {
        connections: args.connections.max(1),
        workers: args.workers.max(1),
        warmup,
        duration,
        request_timeout: args.timeout,
        rate_rps: args.rate,
        arrivals: if args.poisson { engine::Arrivals::Poisson } else { engine::Arrivals::Constant },
        stop,
        live: None,
        settle: None,
        requests: args.requests,
    };
    bookstore_runner::http::run(&HttpRun {
        url,
        target,
        plan,
        validate_every: args.validate_every,
        slo: args.slo,
        repeat: args.repeat,
        max_rate_rps: args.max_rate,
        json: args.json,
    })
}

/// Descriptors beyond the idle connections themselves: the measured load's connections
/// (at most the suite's 256), the pool's, the logs and the runtime's own.
const IDLE_SPARE_DESCRIPTORS: u64 = 1024;

/// The stack measured again as its twin: `asked` (`--twin`), else the first of `stacks`
/// where a `default` twin is wanted (neither `--no-twin` nor `--quick`, whose five minutes
/// hold no sixth party), the suite starts the stacks (`started_here`) and no variant is a
/// twin already.
fn twin_of<'s>(
    asked: Option<&str>,
    default: bool,
    started_here: bool,
    stacks: &'s [bookstore_registry::stacks::StackInfo],
    variants: &[bookstore_runner::suite::Variant],
) -> anyhow::Result<Option<&'s bookstore_registry::stacks::StackInfo>> {
    if let Some(name) = asked {
        let stack = stacks.iter().find(|s| s.identity.service == name);
        return stack.map(Some).ok_or_else(|| {
            anyhow::anyhow!("--twin {name}: not among the stacks measured (--stacks)")
        });
    }
    let default = default && started_here && !variants.iter().any(|v| v.is_twin());
    Ok(stacks.first().filter(|_| default))
}

/// One variant of every stack for each distinct value of a per-stack flag (`--db-latency`,
/// `--idle-connections`), in order of value; a label already taken is refused by `flag`'s
/// name.
fn add_per_stack<T: Ord + Copy>(
    flag: &str,
    values: impl Iterator<Item = T>,
    stacks: &[bookstore_registry::stacks::StackInfo],
    taken: &mut Vec<String>,
    variants: &mut Vec<bookstore_runner::suite::Variant>,
    variant: impl Fn(bookstore_registry::stacks::StackInfo, T) -> bookstore_runner::suite::Variant,
) -> anyhow::Result<()> {
    let mut values: Vec<T> = values.collect();
    values.sort_unstable();
    values.dedup();
    for value in values {
        for stack in stacks {
            let variant = variant(*stack, value);
            if taken.contains(&variant.label) {
                anyhow::bail!("{flag}: {} is already a stack or variant", variant.label);
            }
            taken.push(variant.label.clone());
            variants.push(variant);
        }
    }
    Ok(())
}

/// `loadgen compact`: each file written again compressed, its size before and after said.
pub(crate) fn compact(files: &[PathBuf], replace: bool) -> anyhow::Result<()> {
    for file in files {
        let before = std::fs::metadata(file)?.len();
        // Read before writing: a `.json.zst` is written again in its own place.
        let original: serde_json::Value =
            serde_json::from_slice(&bookstore_record::document::read_bytes(file)?)?;
        let written = bookstore_record::results::compact(file)?;
        let after = std::fs::metadata(&written)?.len();
        // It must read back as the document it was.
        let again: serde_json::Value =
            serde_json::from_slice(&bookstore_record::document::read_bytes(&written)?)?;
        anyhow::ensure!(
            original["schema"] == again["schema"] && original["run"] == again["run"],
            "{} did not read back as {}",
            written.display(),
            file.display()
        );
        if replace && written != *file {
            std::fs::remove_file(file)?;
        }
        println!(
            "{}: {:.2} MB → {} {:.2} MB",
            file.display(),
            before as f64 / 1e6,
            written.display(),
            after as f64 / 1e6
        );
    }
    Ok(())
}

/// `loadgen ab`: the sides, the request and the settings typed, the question run, the
/// answer printed; 3 with --fail-on-regression when B is called slower (or, with --slo,
/// its capacity lower) by more than it.
pub(crate) fn ab(args: AbArgs) -> anyhow::Result<u8> {
    use bookstore_runner::ab::{AbOptions, CapacityOptions, Harness, Side};
    use bookstore_runner::http::{RequestSpec, Target};
    let a = Side::parse(&args.a).map_err(|e| anyhow::anyhow!("A: {e}"))?;
    let b = match &args.b {
        Some(b) => Side::parse(b).map_err(|e| anyhow::anyhow!("B: {e}"))?,
        None => a.clone(),
    };
    let (request, path) = match &args.path {
        Some(path) => (
            Target::Request(RequestSpec {
                method: args.method.clone(),
                headers: args.headers.clone(),
                body: args.data.clone().map(String::into_bytes),
            }),
            path.clone(),
        ),
        None => {
            let name = args.scenario.as_deref().unwrap_or("bookById");
            let scenario =
                bookstore_client::scenario::Scenario::parse(name).map_err(anyhow::Error::msg)?;
            (Target::Scenario(scenario), String::new())
        }
    };
    let output = match &args.resume {
        Some(journal) => bookstore_runner::ab::resumed_output(journal)?,
        None => args.output.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "summary/results/ab-{}.json.zst",
                bookstore_record::environment::file_stamp()
            ))
        }),
    };
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let stop = bookstore_runner::console::signal::stop_on_signal(
        "loadgen",
        "stopping after this window; the answer so far is kept",
    );
    let harness = Harness {
        tuning: args.servers.tuning(),
        bin_dir: args.servers.bin_dir.clone(),
        client_workers: args.servers.client_workers(),
        validate_every: args.validate_every,
        database_url: args.database_url.clone(),
        db_provider: args.db_provider,
        output: output.clone(),
        workspace: std::env::current_dir()?,
        command_line: std::env::args().collect(),
        build: bookstore_record::build_identity!(),
        stop,
    };
    let settings = &args.settings;
    let (page, lower, interrupted) = match args.slo {
        Some(objective) => {
            let mut sides = vec![a, b];
            for (index, also) in args.also.iter().enumerate() {
                let side =
                    Side::parse(also).map_err(|e| anyhow::anyhow!("--also {}: {e}", index + 1))?;
                sides.push(side);
            }
            let options = CapacityOptions {
                parties: labelled(sides, !args.also.is_empty()),
                request,
                path,
                settings: bookstore_record::capacity::CapacitySettings {
                    objective,
                    concurrency: settings.concurrency,
                    warmup: settings.warmup,
                    duration: settings.duration,
                    precision: settings.precision,
                    budget: settings.budget,
                    request_timeout: settings.request_timeout,
                    max_rate_rps: args.max_rate,
                },
                harness,
                resume: args.resume.clone(),
            };
            let results = match unless_refused(bookstore_runner::ab::capacity(&options))? {
                Ok(results) => results,
                Err(code) => return Ok(code),
            };
            print!("{}", bookstore_report::capacity_question::text(&results));
            let page =
                args.report.as_ref().map(|_| bookstore_report::capacity_question::html(&results));
            let answer = results.answers.first();
            let lower = answer.filter(|a| a.answer.verdict == "lower").map(|a| a.answer.ratio);
            (page, lower, results.ended_by == "interrupted")
        }
        None => {
            let options = AbOptions {
                sides: [a, b],
                request,
                path,
                settings: settings.clone(),
                harness,
                resume: args.resume.clone(),
            };
            let results = match unless_refused(bookstore_runner::ab::run(&options))? {
                Ok(results) => results,
                Err(code) => return Ok(code),
            };
            print!("{}", bookstore_report::ab::text(&results));
            let page = args.report.as_ref().map(|_| bookstore_report::ab::html(&results));
            let rate = results.rate.as_ref();
            let lower = rate.filter(|r| r.verdict == "lower").map(|r| r.ratio);
            (page, lower, results.ended_by == "interrupted")
        }
    };
    println!("results: {}", output.display());
    if let (Some(path), Some(page)) = (&args.report, page) {
        bookstore_runner::console::write_output(path, &page?)?;
        println!("page: {}", path.display());
    }
    if interrupted {
        return Ok(bookstore_record::outcome::EXIT_INTERRUPTED);
    }
    let regressed = |pct: f64| lower.is_some_and(|ratio| ratio < 1.0 - pct / 100.0);
    Ok(if args.fail_on_regression.is_some_and(regressed) { 3 } else { 0 })
}

/// A run's outcome, or, for a resume refused (the journal is of another run), its one line
/// said and exit status 2.
fn unless_refused<T>(outcome: anyhow::Result<T>) -> anyhow::Result<Result<T, u8>> {
    match outcome {
        Err(error) if error.downcast_ref::<bookstore_runner::suite::ResumeRefused>().is_some() => {
            eprintln!("loadgen: {error}");
            Ok(Err(2))
        }
        outcome => outcome.map(Ok),
    }
}

/// The parties of a capacity question, labelled: A, B, … — or, `by_name`, each by its
/// stack's name (a command by its letter), a name met again its twin (`name.twin`).
fn labelled(
    sides: Vec<bookstore_runner::ab::Side>,
    by_name: bool,
) -> Vec<(String, bookstore_runner::ab::Side)> {
    let mut labels: Vec<String> = Vec::new();
    for (index, side) in sides.iter().enumerate() {
        let letter = char::from(b'A' + index as u8).to_string();
        let mut label = match side {
            bookstore_runner::ab::Side::Stack(stack) if by_name => {
                stack.identity.service.to_owned()
            }
            _ => letter,
        };
        while labels.contains(&label) {
            label.push_str(".twin");
        }
        labels.push(label);
    }
    labels.into_iter().zip(sides).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bookstore_registry::stacks::{AXUM_SERDE_DIESEL, HYPER_SONIC_SQLX};
    use bookstore_runner::suite::Variant;

    #[test]
    fn a_run_has_a_twin_of_its_first_stack_unless_told_otherwise() {
        let stacks = [HYPER_SONIC_SQLX, AXUM_SERDE_DIESEL];
        let name =
            |twin: Option<&bookstore_registry::stacks::StackInfo>| twin.map(|s| s.identity.service);
        let twin = |asked, default, here, variants: &[Variant]| {
            name(twin_of(asked, default, here, &stacks, variants).unwrap())
        };
        assert_eq!(twin(None, true, true, &[]), Some("hyper-sonic-sqlx"), "the first stack");
        assert_eq!(twin(Some("axum-serde-diesel"), true, true, &[]), Some("axum-serde-diesel"));
        assert_eq!(twin(None, false, true, &[]), None, "--no-twin, or --quick");
        assert_eq!(
            twin(Some("axum-serde-diesel"), false, true, &[]),
            Some("axum-serde-diesel"),
            "--quick --twin"
        );
        assert_eq!(twin(None, true, false, &[]), None, "stacks someone else started");
        let already = Variant::parse("again=axum-serde-diesel", &[]).unwrap();
        assert_eq!(twin(None, true, true, &[already]), None, "a variant is a twin already");
        let flagged = Variant::parse("w1=axum-serde-diesel --workers 1", &[]).unwrap();
        assert_eq!(twin(None, true, true, &[flagged]), Some("hyper-sonic-sqlx"));
        let error = twin_of(Some("actix-simd-sqlx"), true, true, &stacks, &[]).unwrap_err();
        assert!(error.to_string().contains("not among the stacks measured"), "{error}");
    }
}
