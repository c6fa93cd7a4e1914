//! `loadgen faults`: each stack under load while its database or its own process fails,
//! and what a client saw — the error window, the 503s, any other failure, the time to the
//! first success — with the write audit after each fault; and, with `--soak`, a long mixed
//! load watching the server's memory, descriptors and threads.
//!
//! Every stack gets a fresh clone of the seeded database on a throwaway cluster of its own
//! (the cluster is stopped by one of the faults) and is started as the suite starts it.
//! Before each fault the seed is restored; the load (closed loop, reads and checkouts on
//! alternate connections) runs a steady stretch, the fault is injected and lasts until it
//! is over, the load runs another steady stretch and stops. Then the stack's database work
//! drains (no transaction of its pool open in `pg_stat_activity`) and the audit reads the
//! checkouts: a request that timed out may still commit, and must not be judged before.
//!
//! Each stack's record goes to a journal beside the results as the stack ends, so a run
//! killed part way goes on with `--resume`, measuring the stacks the journal lacks.

pub mod audit;
pub mod record;
pub mod soak;

use bookstore_record::results::StackStatus;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bookstore_domain::store::redact_credentials;
use bookstore_registry::Tuning;
use bookstore_registry::stacks::StackInfo;

use crate::harness::database::BenchDatabase;
use crate::harness::server::ServerProcess;
use crate::suite::resume::{self, Opened, environment_differs, settings_differ};
use bookstore_client::engine::{self, Arrivals, LoadPlan};
use bookstore_client::scenario::{Mix, Scenario};
use bookstore_record::environment::now_rfc3339;
use bookstore_record::faults::{
    ErrorWindow, FaultLoad, FaultRecord, FaultSettings, FaultsResults, SCHEMA, SCHEMA_VERSION,
    SoakRecord, StackFaults,
};
use bookstore_record::journal::{self, Journal, Read};
use record::{Recorded, Recorder};

/// A fault injected into a stack's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `pg_terminate_backend` on every connection of the stack's pool, mid-transaction.
    TerminateBackends,
    /// PostgreSQL stopped (fast shutdown), kept down for the outage, started again.
    PostgresRestart,
    /// SIGTERM to the server; once it has exited, started again on the same port.
    ServerRestart,
}

impl Fault {
    /// Every fault, in the order a run injects them.
    pub const ALL: [Fault; 3] =
        [Fault::TerminateBackends, Fault::PostgresRestart, Fault::ServerRestart];

    /// As the command line and the results name it.
    pub fn name(self) -> &'static str {
        match self {
            Fault::TerminateBackends => "terminate-backends",
            Fault::PostgresRestart => "postgres-restart",
            Fault::ServerRestart => "server-restart",
        }
    }

    /// The fault named `name`.
    pub fn parse(name: &str) -> Result<Fault, String> {
        Fault::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
            format!("no fault {name:?}; the faults are {}", names.join(", "))
        })
    }

    /// Whether the server is meant to be up throughout (a refused connection is then a
    /// failure).
    fn server_stays_up(self) -> bool {
        self != Fault::ServerRestart
    }
}

/// The load around a fault: a read beside the write path the audit checks.
pub const FAULT_SCENARIOS: [Scenario; 2] = [Scenario::BookById, Scenario::CheckoutCreate];
/// The soak's load: reads, a search and checkouts.
pub const SOAK_SCENARIOS: [Scenario; 4] =
    [Scenario::BookById, Scenario::BookList, Scenario::BookSearch, Scenario::CheckoutCreate];
/// The longest the stack's database work may take to drain after the load before the
/// audit runs anyway (and fails).
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// Everything a faults run is told.
#[derive(Clone)]
pub struct FaultsOptions {
    /// What the measuring binary was built from (`bookstore_record::build_identity!()` in
    /// the binary's own package, whose build script records it).
    pub build: bookstore_record::environment::Build,
    /// Stacks, in order.
    pub stacks: Vec<StackInfo>,
    /// Faults, in order (none: only the soak).
    pub faults: Vec<Fault>,
    /// The load around each fault, and the soak: the command line's flags as they are,
    /// and the results' settings as they are.
    pub load: FaultLoad,
    /// Client threads.
    pub client_workers: usize,
    /// What every stack is started with (`--pool-max`, `--workers`, `--blocking-threads`
    /// of the blocking stacks).
    pub tuning: Tuning,
    /// Where the stacks' binaries are.
    pub bin_dir: PathBuf,
    /// The workspace (for the build settings in the environment).
    pub workspace: PathBuf,
    /// The results file.
    pub output: PathBuf,
    /// The command line, to record.
    pub command_line: Vec<String>,
    /// For tests: the address the load goes to instead of the server's (a proxy in front
    /// of it, given the server's address).
    pub front: Option<Arc<dyn Fn(SocketAddr) -> SocketAddr + Send + Sync>>,
    /// `--resume`: the journal of the run this one goes on with.
    pub resume: Option<PathBuf>,
}

/// What kind of run a faults run's journal is of.
const JOURNAL_KIND: &str = "faults";

/// A faults run's journal, read: its header and each whole stack's record.
type Journaled = Read<FaultsResults, StackFaults>;

/// Where the run of the faults journal at `path` writes its results.
pub fn resumed_output(path: &std::path::Path) -> anyhow::Result<PathBuf> {
    let read: Read<serde::de::IgnoredAny, serde::de::IgnoredAny> =
        journal::read(path, JOURNAL_KIND)?;
    Ok(read.output)
}

/// Runs every stack's faults (and soak), saving the results after each stack; `stop` ends
/// the run early (what was measured is kept).
pub fn run(options: &FaultsOptions, stop: Arc<AtomicBool>) -> anyhow::Result<FaultsResults> {
    if let Some(parent) = options.output.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let logs = bookstore_record::document::beside(&options.output, "logs");
    std::fs::create_dir_all(&logs)?;
    let started = Instant::now();
    let resumed: Option<Journaled> =
        options.resume.as_deref().map(|path| journal::read(path, JOURNAL_KIND)).transpose()?;
    let mut results: Option<(FaultsResults, Journal)> = None;
    for stack in &options.stacks {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let name = stack.identity.service;
        if resumed.as_ref().is_some_and(|read| read.windows.iter().any(|(key, ..)| key == name)) {
            eprintln!("{name}: taken from the journal");
            continue;
        }
        // A cluster per stack: a fault stops it, and no stack meets another's restart.
        let max_connections = options.tuning.pool_max + 20;
        let mut database = BenchDatabase::open(
            None,
            bookstore_fixture::Provider::Binaries,
            false,
            max_connections,
        )?;
        if results.is_none() {
            let document = new_results(options, &mut database);
            results = Some(open_journal(options, document)?);
        }
        let (document, journal) = results.as_mut().expect("set above");
        eprintln!("{name}: starting");
        let began = Instant::now();
        let mut entry = StackFaults {
            stack: name.to_owned(),
            status: StackStatus::Measured,
            failure: None,
            faults: Vec::new(),
            soak: None,
        };
        // What was measured before a failure is kept.
        if let Err(error) = measure_stack(options, stack, &mut database, &logs, &stop, &mut entry) {
            entry.status = StackStatus::Failed;
            entry.failure = Some(format!("{error:#}"));
        }
        print_stack(&entry);
        // A stack cut short by a stop is not journaled: a resume measures it again whole.
        if !stop.load(Ordering::Relaxed) {
            resume::append_whole(journal, name, began.elapsed().as_secs_f64(), &entry)?;
        }
        document.stacks.push(entry);
        document.write(&options.output)?;
    }
    let mut document = match (results, resumed) {
        (Some((document, _)), _) => document,
        // Every stack was in the journal: the results are what it holds.
        (None, Some(read)) => {
            let before = read.resumed_at.clone();
            let mut document = resumed_document(read);
            resume::resumed_at(&mut document.run, &before, &now_rfc3339());
            document
        }
        (None, None) => anyhow::bail!("no stack to run"),
    };
    document.run.finished_at = Some(now_rfc3339());
    document.run.status = bookstore_record::RunStatus::ended(stop.load(Ordering::Relaxed));
    document.run.wall_seconds = Some(started.elapsed().as_secs_f64());
    document.write(&options.output)?;
    Ok(document)
}

/// The run's journal, new; or, resuming, refused if it is of another build, machine or
/// setting, else reopened to go on, `document` becoming the journal's run and stacks.
fn open_journal(
    options: &FaultsOptions,
    document: FaultsResults,
) -> anyhow::Result<(FaultsResults, Journal)> {
    let differs = |header: &FaultsResults| {
        environment_differs(&header.environment, &document.environment)
            .or_else(|| settings_differ(&header.settings, &document.settings))
    };
    let opened: Opened<FaultsResults, StackFaults> = resume::open(
        JOURNAL_KIND,
        &options.output,
        &document,
        options.resume.as_deref(),
        differs,
        ("loadgen faults", "stacks"),
    )?;
    let document = match opened.resumed {
        Some((read, run)) => FaultsResults { run, ..resumed_document(read) },
        None => document,
    };
    Ok((document, opened.journal))
}

/// The results as the journal `read` holds them: its header and its stacks.
fn resumed_document(read: Journaled) -> FaultsResults {
    let stacks = read.windows.into_iter().map(|(_, _, stack)| stack).collect();
    FaultsResults { stacks, ..read.header }
}

fn new_results(options: &FaultsOptions, database: &mut BenchDatabase) -> FaultsResults {
    let environment = bookstore_record::environment::capture(
        options.build,
        &options.workspace,
        database.describe(),
    );
    let id = bookstore_record::document::stem(&options.output);
    let names = |scenarios: &[Scenario]| scenarios.iter().map(|s| s.name().to_owned()).collect();
    FaultsResults {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        run: bookstore_record::RunInfo::running(
            id,
            options.command_line.iter().map(|a| redact_credentials(a).into_owned()).collect(),
        ),
        environment,
        settings: FaultSettings {
            stacks: options.stacks.iter().map(|s| s.identity.service.to_owned()).collect(),
            faults: options.faults.iter().map(|f| f.name().to_owned()).collect(),
            scenarios: names(&FAULT_SCENARIOS),
            load: options.load.clone(),
            client_workers: options.client_workers,
            pool_max: options.tuning.pool_max,
            server_workers: options.tuning.workers,
            blocking_threads: options.tuning.blocking_threads,
            soak_scenarios: if options.load.soak.is_some() {
                names(&SOAK_SCENARIOS)
            } else {
                Vec::new()
            },
        },
        stacks: Vec::new(),
    }
}

/// One line per fault as it is measured.
fn print_stack(entry: &StackFaults) {
    if let Some(failure) = &entry.failure {
        eprintln!("{}: failed: {failure}", entry.stack);
    }
    for fault in &entry.faults {
        let window =
            fault.error_window.map_or("none".to_owned(), |w| format!("{:.2} s", w.seconds()));
        let recovery = fault.recovery_ms.map_or("never".to_owned(), |ms| format!("{ms:.0} ms"));
        eprintln!(
            "{}: {:<18} {} · errors for {window} · {} × 503 · {} failures · serving again after {recovery} · audit {}",
            entry.stack,
            fault.fault,
            if fault.survived { "survived" } else { "NOT SURVIVED" },
            fault.unavailable_503,
            fault.failures,
            if fault.audit.passed { "passed" } else { "FAILED" },
        );
    }
    if let Some(soak) = &entry.soak {
        eprintln!(
            "{}: soak {:.0} s · {} requests · {} failures · RSS growth {} · fd growth {} · audit {}",
            entry.stack,
            soak.seconds,
            soak.requests,
            soak.failures,
            soak.rss_growth_percent.map_or("not judged".into(), |g| format!("{g:+.1}%")),
            soak.fd_growth.map_or("not judged".into(), |g| format!("{g:+}")),
            if soak.audit.passed { "passed" } else { "FAILED" },
        );
    }
}

/// The stack started on its database, its faults one after the other, then its soak, each
/// added to `entry` as it is measured.
fn measure_stack(
    options: &FaultsOptions,
    stack: &StackInfo,
    database: &mut BenchDatabase,
    logs: &std::path::Path,
    stop: &AtomicBool,
    entry: &mut StackFaults,
) -> anyhow::Result<()> {
    let name = stack.identity.service;
    let db_name = format!("faults_{}", name.replace(|c: char| !c.is_alphanumeric(), "_"));
    let url = database.fresh(&db_name)?;
    let args = stack.args(&options.tuning);
    let binary = options.bin_dir.join(stack.binary);
    let log = logs.join(format!("{name}.log"));
    let mut server = ServerProcess::start(name, &binary, &args, &[("DATABASE_URL", &url)], log)
        .map_err(anyhow::Error::msg)?;
    server.wait_ready("/health/db").map_err(anyhow::Error::msg)?;
    let target = options.front.as_ref().map_or(server.addr(), |front| front(server.addr()));
    let mut stage = Stage { options, database, server, db_name, target };
    for &fault in &options.faults {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        entry.faults.push(stage.fault(fault)?);
        if let Some(exit) = stage.server.exited() {
            anyhow::bail!("the server is gone after {}: {exit}", fault.name());
        }
    }
    if let Some(length) = options.load.soak
        && !stop.load(Ordering::Relaxed)
    {
        entry.soak = Some(stage.soak(length, stop)?);
    }
    Ok(())
}

/// A stack running on its database, ready for the next fault.
struct Stage<'a> {
    options: &'a FaultsOptions,
    database: &'a mut BenchDatabase,
    server: ServerProcess,
    db_name: String,
    /// Where the load goes.
    target: SocketAddr,
}

/// A load running on its own thread, its requests recorded.
struct RunningLoad {
    origin: Instant,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<(), String>>,
    sink: Arc<Mutex<Recorded>>,
}

impl RunningLoad {
    fn start(
        options: &FaultsOptions,
        target: SocketAddr,
        scenarios: &[Scenario],
        longest: Duration,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let plan = LoadPlan {
            connections: options.load.connections as usize,
            workers: options.client_workers,
            warmup: Duration::ZERO,
            duration: longest,
            request_timeout: options.load.timeout,
            rate_rps: None,
            arrivals: Arrivals::Constant,
            stop: Arc::clone(&stop),
            live: None,
            settle: None,
            requests: None,
        };
        let mix = Arc::new(Mix::new(scenarios, &target.to_string()));
        let sink = Arc::new(Mutex::new(Recorded::default()));
        let origin = Instant::now();
        let thread = {
            let sink = Arc::clone(&sink);
            std::thread::spawn(move || {
                let factory = move |_| {
                    Recorder::new(
                        target,
                        Arc::clone(&mix),
                        VALIDATE_EVERY,
                        origin,
                        Arc::clone(&sink),
                    )
                };
                engine::run(&plan, factory, &mut ()).map(drop)
            })
        };
        Self { origin, stop, thread, sink }
    }

    fn now_us(&self) -> u64 {
        self.origin.elapsed().as_micros() as u64
    }

    /// Stops the load and waits for its requests in flight; what was recorded.
    fn finish(self) -> anyhow::Result<Recorded> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the load panicked"))?
            .map_err(anyhow::Error::msg)?;
        let recorded = std::mem::take(&mut *self.sink.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(recorded)
    }
}

/// Fully validate one accepted answer in this many per connection (as the suite does).
const VALIDATE_EVERY: u64 = 1000;
/// The longest a fault's load may run, whatever happens (a stuck restart included).
const LONGEST_FAULT_LOAD: Duration = Duration::from_secs(120);

impl Stage<'_> {
    /// One fault under load, from the restored seed to the audit.
    fn fault(&mut self, fault: Fault) -> anyhow::Result<FaultRecord> {
        self.server.wait_ready("/health/db").map_err(anyhow::Error::msg)?;
        self.database.restore(&self.db_name)?;
        let load =
            RunningLoad::start(self.options, self.target, &FAULT_SCENARIOS, LONGEST_FAULT_LOAD);
        std::thread::sleep(self.options.load.before);
        let injected_us = load.now_us();
        let detail = self.inject(fault);
        let ended_us = load.now_us();
        std::thread::sleep(self.options.load.after);
        let recorded = load.finish()?;
        let detail = detail?;
        let drain = self.drain()?;
        let tally = record::tally(&recorded.events, injected_us, ended_us, fault.server_stays_up());
        let (facts, stored) = self.database.checkouts(&self.db_name)?;
        let stored: Vec<u128> = stored.iter().filter_map(|id| record::parse_uuid(id)).collect();
        let audit =
            audit::judge(&recorded.acknowledged, &stored, tally.in_doubt_checkouts, &facts, drain);
        let seconds_from_injection = |us: u64| (us as f64 - injected_us as f64) / 1e6;
        let recovery_ms = tally.first_success_after_us.map(|us| (us - ended_us) as f64 / 1000.0);
        Ok(FaultRecord {
            fault: fault.name().into(),
            detail,
            injected_at_s: injected_us as f64 / 1e6,
            ended_at_s: ended_us as f64 / 1e6,
            requests: tally.requests,
            successes: tally.successes,
            unavailable_503: tally.unavailable,
            refused: tally.refused,
            failures: tally.failures,
            failure_examples: tally.failure_examples,
            error_window: tally.error_window_us.map(|(first, last)| ErrorWindow {
                first_s: seconds_from_injection(first),
                last_s: seconds_from_injection(last),
            }),
            errors_per_100ms: tally.errors_per_100ms,
            recovery_ms,
            survived: tally.failures == 0 && audit.passed && recovery_ms.is_some(),
            audit,
        })
    }

    /// Does `fault`, returning once it is over; what was done.
    fn inject(&mut self, fault: Fault) -> anyhow::Result<String> {
        match fault {
            Fault::TerminateBackends => {
                let ended = self.database.terminate_backends(&self.db_name)?;
                Ok(format!("{ended} backends terminated"))
            }
            Fault::PostgresRestart => {
                self.database.stop_postgres()?;
                std::thread::sleep(self.options.load.outage);
                self.database.resume_postgres()?;
                Ok(format!("PostgreSQL stopped for {} ms", self.options.load.outage.as_millis()))
            }
            Fault::ServerRestart => {
                let down = Instant::now();
                let exit = self.server.terminate();
                let stopping_ms = down.elapsed().as_millis();
                self.server.restart().map_err(anyhow::Error::msg)?;
                Ok(format!(
                    "the server took {stopping_ms} ms to stop after SIGTERM ({exit}) and was started again"
                ))
            }
        }
    }

    /// Waits until no connection of the stack's database is in a transaction or running a
    /// statement, up to [`DRAIN_LIMIT`].
    fn drain(&mut self) -> anyhow::Result<audit::Drain> {
        let started = Instant::now();
        loop {
            let busy = self.database.busy_backends(&self.db_name)?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            if busy == 0 {
                return Ok(audit::Drain { ms, timed_out: false });
            }
            if started.elapsed() > DRAIN_LIMIT {
                return Ok(audit::Drain { ms, timed_out: true });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The soak: `length` of the mixed load, the server's resources every second.
    fn soak(&mut self, length: Duration, stop: &AtomicBool) -> anyhow::Result<SoakRecord> {
        self.server.wait_ready("/health/db").map_err(anyhow::Error::msg)?;
        self.database.restore(&self.db_name)?;
        let load = RunningLoad::start(
            self.options,
            self.target,
            &SOAK_SCENARIOS,
            length + Duration::from_secs(60),
        );
        let sampling = Arc::new(AtomicBool::new(false));
        let sampler = soak::sample(self.server.pid(), load.origin, Arc::clone(&sampling));
        let end = load.origin + length;
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let seconds = load.origin.elapsed().as_secs_f64();
        sampling.store(true, Ordering::Relaxed);
        let recorded = load.finish()?;
        let samples = sampler.join().map_err(|_| anyhow::anyhow!("the sampler panicked"))?;
        let drain = self.drain()?;
        // Nothing went wrong on purpose: every answer but a success is a failure.
        let tally = record::tally(&recorded.events, 0, 0, true);
        let failures = tally.requests - tally.successes;
        let (facts, stored) = self.database.checkouts(&self.db_name)?;
        let stored: Vec<u128> = stored.iter().filter_map(|id| record::parse_uuid(id)).collect();
        let audit =
            audit::judge(&recorded.acknowledged, &stored, tally.in_doubt_checkouts, &facts, drain);
        let mut record = SoakRecord {
            seconds,
            requests: tally.requests,
            successes: tally.successes,
            failures,
            failure_examples: tally.failure_examples,
            p99_ms_per_10s: soak::p99_per_span(&recorded.events, seconds),
            samples,
            rss_growth_percent: None,
            rss_growth_late_percent: None,
            fd_growth: None,
            flags: Vec::new(),
            audit,
        };
        soak::judge(&mut record);
        Ok(record)
    }
}
