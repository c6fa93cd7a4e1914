//! `loadgen suite`: SPEC §5 end to end.
//!
//! One seeded template database; each stack gets a fresh clone, is started once with
//! identical flags and checked against the contract in every scenario (a stack that fails
//! is reported, not measured). Then the measurement, in rounds: one round per scenario and
//! repeat, in which every party — each stack, and the ceiling that bounds the scenario (the
//! client against the minimal responder, or the scenario's statements straight through the
//! sqlx store) — measures its cells at every concurrency, one party after the other, the
//! order rotating from round to round. This machine's speed drifts by tens of percent over
//! minutes; measuring stack by stack turned that drift into differences between stacks (the
//! first stack measured looked fastest), while rounds put the parties compared within a
//! minute of each other. A stack's process runs for its turn in a round and stops after it.
//! Restore before each write cell, audit after it; per cell also CPU seconds of the server,
//! of PostgreSQL and of the client over the window, the server's peak RSS, and SQL
//! statements per request. The results file is rewritten after every cell.

mod ceiling;
mod database;
mod probe;
mod server;
pub mod shard;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bookstore_app::cli::DbCalls;
use bookstore_app::stacks::StackInfo;
use bookstore_domain::store::redact_credentials;

use crate::engine::{self, LiveCounter, LoadPlan, LoadReport, WindowHooks};
use crate::procfs;
use crate::progress::Progress;
use crate::results::{
    Ceilings, Cell, CpuSeconds, LoadMode, RunInfo, RunResults, SCHEMA, SCHEMA_VERSION, Settings,
    ShardInfo, ShardPart, SqlStats, StackResults, Validation,
};
use crate::scenario::{self, Scenario};
use crate::warnings::{self, Warning, WarningKind};
use server::ServerProcess;
pub use shard::ShardPlan;

/// Everything a suite run is told.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Stacks to measure, in order.
    pub stacks: Vec<StackInfo>,
    /// Scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// Connections per cell.
    pub concurrency: Vec<u32>,
    /// Warm-up before each window.
    pub warmup: Duration,
    /// Each window.
    pub duration: Duration,
    /// Measurements per cell.
    pub repeat: u32,
    /// `--pool-max` of every stack (and the database ceiling's pool).
    pub pool_max: u32,
    /// `--workers` of every stack.
    pub server_workers: usize,
    /// `--blocking-threads` of the blocking stacks.
    pub blocking_threads: usize,
    /// Client threads.
    pub client_workers: usize,
    /// A request without an answer after this is an error.
    pub request_timeout: Duration,
    /// Fully validate one accepted response in this many per connection.
    pub validate_every: u64,
    /// Where the stacks' and the responder's binaries are.
    pub bin_dir: PathBuf,
    /// The workspace (for git and build settings in the environment).
    pub workspace: PathBuf,
    /// The results file to write.
    pub output: PathBuf,
    /// An existing server instead of a throwaway one.
    pub database_url: Option<String>,
    /// Where a throwaway server comes from (this machine's binaries, or a container).
    pub db_provider: bookstore_fixture::Provider,
    /// Stacks someone else started (`--targets`, `--compose`): each stack's address, in
    /// `stacks` order. The suite then starts none of them, restores and audits the database
    /// of `database_url` (the one they use), and cannot see their processes (no server CPU
    /// or memory: recorded as absent, not as zero).
    pub running: Option<Vec<std::net::SocketAddr>>,
    /// One of several clients on several hosts loading the `running` stacks together
    /// (`--shard K/N --start-at`): see [`shard`].
    pub shard: Option<ShardPlan>,
    /// fsync and synchronous commit on in the throwaway cluster.
    pub durable: bool,
    /// Measure the HTTP and database ceilings.
    pub ceilings: bool,
    /// The command line, for the record.
    pub command_line: Vec<String>,
}

/// The database of docker-compose.yml, as published on the host (`--compose`).
pub const COMPOSE_DATABASE_URL: &str = "postgres://bookstore:bookstore@127.0.0.1:55432/bookstore";

/// The five stacks as docker-compose.yml publishes them: 127.0.0.1 and their SPEC §1 ports.
pub fn compose_targets() -> Vec<(StackInfo, std::net::SocketAddr)> {
    bookstore_app::stacks::ALL
        .into_iter()
        .map(|stack| {
            (stack, std::net::SocketAddr::from(([127, 0, 0, 1], stack.identity.default_port)))
        })
        .collect()
}

/// `--targets`: `name=http://host:port` per stack, each stack at most once.
pub fn parse_targets(specs: &[String]) -> Result<Vec<(StackInfo, std::net::SocketAddr)>, String> {
    let mut targets: Vec<(StackInfo, std::net::SocketAddr)> = Vec::new();
    for spec in specs {
        let (name, address) = spec
            .split_once('=')
            .ok_or_else(|| format!("--targets {spec:?}: expected name=http://host:port"))?;
        let stack = bookstore_app::stacks::find(name.trim())?;
        let url = url::Url::parse(address.trim())
            .map_err(|e| format!("--targets {spec:?}: expected http://host:port ({e})"))?;
        if url.scheme() != "http" || !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err(format!("--targets {spec:?}: expected http://host:port, nothing after"));
        }
        let host = url.host_str().ok_or_else(|| format!("--targets {spec:?}: no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
            .map_err(|e| format!("--targets {spec:?}: cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("--targets {spec:?}: {host} has no address"))?;
        if targets.iter().any(|(s, _)| s.identity.service == stack.identity.service) {
            return Err(format!("--targets: {} is named twice", stack.identity.service));
        }
        targets.push((stack, addr));
    }
    Ok(targets)
}

/// The responder binary, the HTTP ceiling.
const RESPONDER: &str = "responder";

/// Connections the throwaway cluster allows beyond the pool: the suite's own, a stack
/// starting while the previous one's are closing.
const SPARE_CONNECTIONS: u32 = 40;

impl SuiteOptions {
    fn cells_per_stack(&self) -> u64 {
        (self.scenarios.len() * self.concurrency.len()) as u64 * u64::from(self.repeat)
    }

    fn total_cells(&self) -> u64 {
        let repeat = u64::from(self.repeat);
        let ceilings = if self.ceilings {
            // HTTP: per concurrency; database: once per scenario (see `db_ceiling`).
            self.concurrency.len() as u64 * repeat
                + self.scenarios.iter().filter(|s| s.uses_database()).count() as u64 * repeat
        } else {
            0
        };
        ceilings + self.stacks.len() as u64 * self.cells_per_stack()
    }

    /// A shard measures stacks someone else started, without ceilings, and has at least one
    /// connection in every cell.
    fn check_shard(&self) -> anyhow::Result<()> {
        let Some(shard) = self.shard else { return Ok(()) };
        if self.running.is_none() {
            anyhow::bail!(
                "--shard needs --targets or --compose: shards load stacks running elsewhere together"
            );
        }
        if self.ceilings {
            anyhow::bail!(
                "--shard needs --no-ceilings: a ceiling measured from one of several clients bounds nothing"
            );
        }
        if let Some(&c) = self.concurrency.iter().find(|&&c| c < shard.count) {
            anyhow::bail!(
                "--concurrency {c} is less than {} shards: each shard needs a connection",
                shard.count
            );
        }
        Ok(())
    }

    /// What a shard's slots are made of.
    fn slot_timing(&self) -> shard::SlotTiming {
        shard::SlotTiming {
            warmup: self.warmup,
            window: self.duration,
            request_timeout: self.request_timeout,
        }
    }

    /// Whether this run restores, resets and audits the database: always, except on shards
    /// other than the first.
    fn coordinates(&self) -> bool {
        self.shard.is_none_or(|shard| shard.coordinates())
    }

    /// Every binary the run needs exists, or an error saying how to build them.
    fn check_binaries(&self) -> anyhow::Result<()> {
        let mut needed: Vec<&str> = match self.running {
            Some(_) => Vec::new(),
            None => self.stacks.iter().map(|s| s.identity.service).collect(),
        };
        if self.ceilings {
            needed.push(RESPONDER);
        }
        let missing: Vec<&str> =
            needed.into_iter().filter(|name| !self.bin_dir.join(name).is_file()).collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "{} not found in {}: build them with `cargo build --release --bins` (or point --bin-dir at them)",
                missing.join(", "),
                self.bin_dir.display()
            );
        }
        Ok(())
    }

    fn plan(&self, concurrency: u32, stop: &Arc<AtomicBool>, live: &Arc<LiveCounter>) -> LoadPlan {
        LoadPlan {
            connections: concurrency as usize,
            workers: self.client_workers,
            warmup: self.warmup,
            duration: self.duration,
            request_timeout: self.request_timeout,
            rate_rps: None,
            stop: Arc::clone(stop),
            live: Some(Arc::clone(live)),
        }
    }
}

/// The parity rules of SPEC §1 as the stacks apply them (recorded with every run).
fn parity() -> Vec<String> {
    [
        "pool min = max = pool_max, every connection opened before the server reports ready",
        "no liveness check on checkout: sqlx test_before_acquire(false), r2d2 test_on_check_out(false)",
        "no idle timeout or maximum connection lifetime",
        "prepared statements cached per connection: sqlx 100, diesel all (fixed texts through CachedSql, never sql_query)",
        "one pooled connection per request; checkout runs one transaction on it",
        "the same release profile, system allocator and RUSTFLAGS for all five binaries",
        "identical flags for every stack: --pool-max, --workers, --blocking-threads (diesel stacks)",
    ]
    .map(str::to_owned)
    .to_vec()
}

use crate::environment::now_rfc3339;

/// Reads CPU counters at the window's edges.
struct CpuSampler {
    server_pid: Option<u32>,
    postgres_pid: Option<u32>,
    start: (Option<f64>, Option<f64>, f64),
    end: (Option<f64>, Option<f64>, f64),
    /// When the window opened, by the wall clock (shards compare theirs).
    window_started_unix_seconds: f64,
}

impl CpuSampler {
    fn new(server_pid: Option<u32>, postgres_pid: Option<u32>) -> Self {
        Self {
            server_pid,
            postgres_pid,
            start: (None, None, 0.0),
            end: (None, None, 0.0),
            window_started_unix_seconds: 0.0,
        }
    }

    fn read(&self) -> (Option<f64>, Option<f64>, f64) {
        (
            self.server_pid.and_then(procfs::cpu_seconds),
            self.postgres_pid.and_then(procfs::tree_cpu_seconds),
            procfs::own_cpu_seconds(),
        )
    }

    fn seconds(&self) -> CpuSeconds {
        let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        CpuSeconds {
            server: delta(self.start.0, self.end.0),
            postgres: delta(self.start.1, self.end.1),
            client: self.end.2 - self.start.2,
        }
    }
}

impl WindowHooks for CpuSampler {
    fn measure_started(&mut self) {
        self.start = self.read();
        self.window_started_unix_seconds = shard::unix_seconds(std::time::SystemTime::now());
    }
    fn measure_ended(&mut self) {
        self.end = self.read();
    }
}

/// A suite run in progress.
struct Suite<'a> {
    options: &'a SuiteOptions,
    database: database::BenchDatabase,
    results: RunResults,
    progress: Progress,
    stop: Arc<AtomicBool>,
    logs: PathBuf,
    /// The stacks that passed the contract check, in `--stacks` order.
    prepared: Vec<PreparedStack>,
    db_ceiling_url: Option<String>,
    started: std::time::Instant,
}

/// Runs the suite, writing `options.output` after every cell; returns the final results.
pub fn run(options: &SuiteOptions, stop: Arc<AtomicBool>) -> anyhow::Result<RunResults> {
    options.check_shard()?;
    options.check_binaries()?;
    let output_dir = options.output.parent().unwrap_or(Path::new(".")).to_owned();
    std::fs::create_dir_all(&output_dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output_dir.display()))?;
    let logs = options.output.with_extension("logs");
    std::fs::create_dir_all(&logs)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
    let max_connections = options.pool_max * 2 + SPARE_CONNECTIONS;
    let mut database = database::BenchDatabase::open(
        options.database_url.as_deref(),
        options.db_provider,
        options.durable,
        max_connections,
    )?;
    let environment = crate::environment::capture(&options.workspace, database.describe());
    let id = options.output.file_stem().and_then(|s| s.to_str()).unwrap_or("run").to_owned();
    let shards: Vec<ShardInfo> = options
        .shard
        .iter()
        .map(|shard| ShardInfo {
            index: shard.index,
            count: shard.count,
            start_at_unix_seconds: shard.start_at_unix_seconds,
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|name| name.trim().to_owned()),
            cpu_model: environment.cpu_model.clone(),
            cpu_count: environment.cpu_count,
            run_id: id.clone(),
        })
        .collect();
    let warnings = options
        .shard
        .iter()
        .map(|shard| {
            Warning::from(WarningKind::ShardOnly { index: shard.index, count: shard.count })
        })
        .collect();
    let results = RunResults {
        schema: SCHEMA.to_owned(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo {
            id,
            started_at: now_rfc3339(),
            finished_at: None,
            status: "running".into(),
            // `--database-url` may carry a password; results are shared.
            command_line: options
                .command_line
                .iter()
                .map(|arg| redact_credentials(arg).into_owned())
                .collect(),
            shards,
        },
        environment,
        settings: Settings {
            stacks: options.stacks.iter().map(|s| s.identity.service.to_owned()).collect(),
            scenarios: options.scenarios.iter().map(|s| s.name().to_owned()).collect(),
            concurrency: options.concurrency.clone(),
            warmup_seconds: options.warmup.as_secs_f64(),
            window_seconds: options.duration.as_secs_f64(),
            repeat: options.repeat,
            pool_max: options.pool_max,
            server_workers: options.server_workers,
            blocking_threads: options.blocking_threads,
            client_workers: options.client_workers,
            request_timeout_ms: options.request_timeout.as_millis() as u64,
            durable_database: options.durable,
            database: database.kind().to_owned(),
            parity: parity(),
        },
        ceilings: Ceilings::default(),
        stacks: Vec::new(),
        warnings,
    };
    let mut suite = Suite {
        options,
        database,
        results,
        progress: Progress::new(options.total_cells()),
        stop,
        logs,
        prepared: Vec::new(),
        db_ceiling_url: None,
        started: std::time::Instant::now(),
    };
    if !suite.database.statements_available() {
        suite.progress.note("pg_stat_statements is not available on this server: SQL statements per request are not measured");
    }
    suite.save()?;
    suite.prepare_stacks()?;
    suite.measure()?;
    suite.progress.finish();
    if options.duration.as_secs_f64() < warnings::SHORT_WINDOW_SECONDS {
        let window_seconds = options.duration.as_secs_f64();
        suite.results.warnings.push(Warning::from(WarningKind::WindowShort { window_seconds }));
    }
    suite.results.run.status = if suite.stopped() { "interrupted" } else { "complete" }.into();
    suite.results.run.finished_at = Some(now_rfc3339());
    suite.save()?;
    Ok(suite.results)
}

impl Suite<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn save(&self) -> anyhow::Result<()> {
        self.results
            .write(&self.options.output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.options.output.display()))
    }

    /// Gives every stack its database, starts it once, and checks it against the contract.
    fn prepare_stacks(&mut self) -> anyhow::Result<()> {
        if let Some(addresses) = self.options.running.clone() {
            return self.prepare_running(&addresses);
        }
        for stack in &self.options.stacks {
            if self.stopped() {
                break;
            }
            let name = stack.identity.service;
            let database = format!("bench_{}", name.replace('-', "_"));
            let url = self.database.fresh(&database)?;
            let mut args = vec![
                "--pool-max".to_owned(),
                self.options.pool_max.to_string(),
                "--workers".to_owned(),
                self.options.server_workers.to_string(),
            ];
            if stack.db_calls == DbCalls::Blocking {
                args.extend([
                    "--blocking-threads".to_owned(),
                    self.options.blocking_threads.to_string(),
                ]);
            }
            let index = self.add_stack(name, None);
            let prepared =
                PreparedStack { info: *stack, index, database, url, args, address: None };
            let (server, ready) = match self.start_stack(&prepared) {
                Ok(started) => started,
                Err(error) => {
                    self.stack_failed(index, "failed", format!("did not start: {error}"))?;
                    continue;
                }
            };
            self.results.stacks[index].ready_ms = Some(ready.as_millis() as u64);
            let passed = self.check_contract(index, server.addr(), "")?;
            drop(server);
            if !passed {
                continue;
            }
            self.progress
                .note(&format!("{name}: ready in {} ms, contract check passed", ready.as_millis()));
            self.prepared.push(prepared);
        }
        self.save()
    }

    /// The stacks someone else started: checked against the contract where they run, on
    /// their database restored to the seed first (the checks read seeded rows).
    fn prepare_running(&mut self, addresses: &[std::net::SocketAddr]) -> anyhow::Result<()> {
        let database = self.database.target_database()?.to_owned();
        for (stack, &address) in self.options.stacks.iter().zip(addresses) {
            if self.stopped() {
                break;
            }
            let name = stack.identity.service;
            let index = self.add_stack(name, Some(address));
            if let Err(why) = server::wait_answering(address, "/health/db") {
                self.stack_failed(index, "failed", format!("at {address}: {why}"))?;
                continue;
            }
            if self.options.coordinates() {
                self.database.restore(&database)?;
            }
            if !self.check_contract(index, address, &format!("at {address}: "))? {
                continue;
            }
            self.progress.note(&format!("{name} at {address}: contract check passed"));
            self.prepared.push(PreparedStack {
                info: *stack,
                index,
                database: database.clone(),
                url: String::new(),
                args: Vec::new(),
                address: Some(address),
            });
        }
        self.save()
    }

    /// A stack's entry in the results, `measured` until something says otherwise; its index.
    fn add_stack(&mut self, name: &str, address: Option<std::net::SocketAddr>) -> usize {
        self.results.stacks.push(StackResults {
            name: name.to_owned(),
            status: "measured".into(),
            failure: None,
            ready_ms: None,
            address: address.map(|a| a.to_string()),
            validation: Vec::new(),
            cells: Vec::new(),
        });
        self.results.stacks.len() - 1
    }

    /// The contract check of stack `index` at `addr`, recorded; a failing stack is marked
    /// `failed` (the reason prefixed with `context`). Whether it passed.
    fn check_contract(
        &mut self,
        index: usize,
        addr: std::net::SocketAddr,
        context: &str,
    ) -> anyhow::Result<bool> {
        let validation = validate_stack(addr, &self.options.scenarios);
        let failed: Vec<String> = validation
            .iter()
            .filter(|v| !v.passed)
            .map(|v| format!("{}: {}", v.scenario, v.problem.as_deref().unwrap_or("")))
            .collect();
        self.results.stacks[index].validation = validation;
        if failed.is_empty() {
            return Ok(true);
        }
        let why = format!("{context}does not meet the contract: {}", failed.join("; "));
        self.stack_failed(index, "failed", why)?;
        Ok(false)
    }

    fn start_stack(&self, stack: &PreparedStack) -> Result<(ServerProcess, Duration), String> {
        let name = stack.info.identity.service;
        let binary = self.options.bin_dir.join(name);
        // In the environment, not the arguments: those are visible to every user in `ps`.
        let env = [("DATABASE_URL", stack.url.as_str())];
        let log = self.logs.join(format!("{name}.log"));
        let mut server = ServerProcess::start(name, &binary, &stack.args, &env, log)?;
        let ready = server.wait_ready("/health/db")?;
        Ok((server, ready))
    }

    /// The rounds: per scenario and repeat, every party in turn, the order rotating.
    fn measure(&mut self) -> anyhow::Result<()> {
        if self.options.shard.is_some() {
            return self.measure_on_schedule();
        }
        let scenarios = self.options.scenarios.clone();
        // The HTTP ceiling (measured as `health`) bounds every scenario without database
        // access; it joins the first round of such a scenario.
        let http_round = scenarios.iter().position(|s| !s.uses_database());
        let mut round = 0;
        for (index, &scenario) in scenarios.iter().enumerate() {
            for repeat in 0..self.options.repeat {
                let mut parties = Vec::new();
                if self.options.ceilings {
                    if scenario.uses_database() {
                        parties.push(Party::DbCeiling);
                    } else if http_round == Some(index) {
                        parties.push(Party::HttpCeiling);
                    }
                }
                parties.extend((0..self.prepared.len()).map(Party::Stack));
                let len = parties.len();
                if len > 0 {
                    parties.rotate_left(round % len);
                }
                round += 1;
                for party in parties {
                    if self.stopped() {
                        return Ok(());
                    }
                    match party {
                        Party::HttpCeiling => self.http_ceiling(repeat)?,
                        Party::DbCeiling => self.db_ceiling(scenario, repeat)?,
                        Party::Stack(stack) => self.stack_turn(stack, scenario, repeat, None)?,
                    }
                }
            }
        }
        Ok(())
    }

    /// The rounds of a shard: like [`Self::measure`] without ceilings, each cell in its slot
    /// of the schedule every shard shares.
    fn measure_on_schedule(&mut self) -> anyhow::Result<()> {
        if let Some(shard) = self.options.shard {
            let ready_by = shard.setup_start(0, self.options.slot_timing());
            if let Ok(late) = std::time::SystemTime::now().duration_since(ready_by) {
                anyhow::bail!(
                    "shard {} of {} was ready {:.1} s after the first setup began ({:.1} s before --start-at): its stack checks could have written during the other shards' measurement; start again with a later --start-at",
                    shard.index,
                    shard.count,
                    late.as_secs_f64(),
                    shard::SETUP.as_secs_f64()
                );
            }
        }
        let stacks = self.options.stacks.len();
        let per_turn = self.options.concurrency.len();
        let mut round = 0;
        for scenario in self.options.scenarios.clone() {
            for repeat in 0..self.options.repeat {
                let mut order: Vec<usize> = (0..stacks).collect();
                order.rotate_left(round as usize % stacks.max(1));
                for stack in order {
                    if self.stopped() {
                        return Ok(());
                    }
                    // Stacks that failed here keep their slots (other shards may measure them).
                    let Some(prepared) = self.prepared.iter().position(|p| p.index == stack) else {
                        continue;
                    };
                    let slots = (0..per_turn)
                        .map(|c| shard::slot(round, stack, stacks, c, per_turn))
                        .collect::<Vec<_>>();
                    self.stack_turn(prepared, scenario, repeat, Some(&slots))?;
                }
                round += 1;
            }
        }
        Ok(())
    }

    fn http_ceiling(&mut self, repeat: u32) -> anyhow::Result<()> {
        let binary = self.options.bin_dir.join(RESPONDER);
        let args = vec!["--threads".to_owned(), self.options.server_workers.to_string()];
        let mut responder =
            ServerProcess::start(RESPONDER, &binary, &args, &[], self.logs.join("responder.log"))
                .map_err(anyhow::Error::msg)?;
        responder
            .wait_ready("/health")
            .map_err(|e| anyhow::anyhow!("the responder did not start: {e}"))?;
        for concurrency in self.options.concurrency.clone() {
            if self.stopped() {
                break;
            }
            let label = format!("ceiling http  health  c={concurrency}");
            let target =
                Target { addr: responder.addr(), pid: Some(responder.pid()), database: None };
            let cell =
                self.http_cell(&label, &target, Scenario::Health, concurrency, repeat, None)?;
            self.results.ceilings.http.push(cell);
            self.save()?;
        }
        Ok(())
    }

    fn db_ceiling(&mut self, scenario: Scenario, repeat: u32) -> anyhow::Result<()> {
        let name = DB_CEILING_DATABASE;
        let url = match &self.db_ceiling_url {
            Some(url) => url.clone(),
            None => {
                let url = self.database.fresh(name)?;
                self.db_ceiling_url = Some(url.clone());
                url
            }
        };
        // One client per pooled connection, whatever the stacks' concurrency: a stack can
        // never have more than `pool_max` statements in flight, and more clients than
        // connections would only measure the pool's queue (which made this "ceiling" lower
        // than the stacks it bounds: 183 vs 211 aggregate reports/s at 256 clients, 270 at 32).
        let concurrency = self.options.pool_max;
        let workers = self.options.client_workers.max(1).min(concurrency as usize);
        let per_thread_pool = concurrency.div_ceil(workers as u32);
        if scenario.writes() {
            self.database.restore(name)?;
        }
        let label = format!("ceiling db    {scenario}  c={concurrency}");
        let load = Arc::new(scenario.workload("ceiling"));
        let live = Arc::new(LiveCounter::new(workers));
        let plan = self.options.plan(concurrency, &self.stop, &live);
        let mut sampler = CpuSampler::new(None, self.database.postgres_pid());
        self.database.reset_statements();
        let ticker = self.progress.running(label.clone(), live);
        let started = self.started.elapsed().as_secs_f64();
        let report = engine::run(
            &plan,
            move |_| ceiling::StoreClient::new(&url, per_thread_pool, scenario, Arc::clone(&load)),
            &mut sampler,
        )
        .map_err(|e| anyhow::anyhow!("the database ceiling could not open its pool: {e}"))?;
        drop(ticker);
        let mut cell = self.finish_cell(
            &label,
            scenario,
            concurrency,
            repeat,
            &report,
            &sampler,
            None,
            Some(name),
        )?;
        cell.started_seconds = Some(started);
        self.results.ceilings.db.push(cell);
        self.save()
    }

    /// One stack's turn in a round: started, `scenario` at every concurrency, stopped. A
    /// shard's turn has a slot per concurrency.
    fn stack_turn(
        &mut self,
        prepared: usize,
        scenario: Scenario,
        repeat: u32,
        slots: Option<&[u64]>,
    ) -> anyhow::Result<()> {
        let stack = self.prepared[prepared].clone();
        if self.results.stacks[stack.index].status != "measured" {
            return Ok(()); // crashed in an earlier round
        }
        let name = stack.info.identity.service;
        if let Some(addr) = stack.address {
            return self.running_turn(&stack, addr, scenario, repeat, slots);
        }
        let mut server = match self.start_stack(&stack) {
            Ok((server, _)) => server,
            Err(error) => {
                return self.stack_failed(
                    stack.index,
                    "crashed",
                    format!("did not restart: {error}"),
                );
            }
        };
        for concurrency in self.options.concurrency.clone() {
            if self.stopped() {
                break;
            }
            if let Some(exit) = server.exited() {
                return self.stack_failed(stack.index, "crashed", exit);
            }
            let label = format!("{name}  {scenario}  c={concurrency}");
            let target = Target {
                addr: server.addr(),
                pid: Some(server.pid()),
                database: Some(&stack.database),
            };
            let mut cell = self.http_cell(&label, &target, scenario, concurrency, repeat, None)?;
            if let Some(exit) = server.exited() {
                cell.warnings
                    .push(Warning::from(WarningKind::ServerCrashed { detail: exit.clone() }));
                self.results.stacks[stack.index].cells.push(cell);
                return self.stack_failed(stack.index, "crashed", exit);
            }
            self.results.stacks[stack.index].cells.push(cell);
            self.save()?;
        }
        Ok(())
    }

    /// A turn of a stack someone else started: its cells, nothing started or stopped.
    fn running_turn(
        &mut self,
        stack: &PreparedStack,
        addr: std::net::SocketAddr,
        scenario: Scenario,
        repeat: u32,
        slots: Option<&[u64]>,
    ) -> anyhow::Result<()> {
        let name = stack.info.identity.service;
        for (index, concurrency) in self.options.concurrency.clone().into_iter().enumerate() {
            if self.stopped() {
                break;
            }
            let label = format!("{name}  {scenario}  c={concurrency}");
            let target = Target { addr, pid: None, database: Some(&stack.database) };
            let slot = slots.map(|slots| slots[index]);
            let cell = self.http_cell(&label, &target, scenario, concurrency, repeat, slot)?;
            self.results.stacks[stack.index].cells.push(cell);
            self.save()?;
        }
        Ok(())
    }

    /// Marks a stack `failed` (before measuring) or `crashed`, skipping its remaining cells.
    fn stack_failed(&mut self, index: usize, status: &str, why: String) -> anyhow::Result<()> {
        let stack = &mut self.results.stacks[index];
        self.progress.note(&format!("{}: {status}: {why}", stack.name));
        let measured = stack.cells.len() as u64;
        self.progress.skipped(self.options.cells_per_stack().saturating_sub(measured));
        stack.status = status.to_owned();
        stack.failure = Some(why);
        self.save()
    }

    /// One cell of HTTP load; a shard's in its `slot`, with its share of the connections.
    fn http_cell(
        &mut self,
        label: &str,
        target: &Target<'_>,
        scenario: Scenario,
        concurrency: u32,
        repeat: u32,
        slot: Option<u64>,
    ) -> anyhow::Result<Cell> {
        let coordinates = self.options.coordinates();
        let timing = self.options.slot_timing();
        let schedule = self.options.shard.zip(slot);
        if let (true, Some((shard, slot))) = (coordinates, schedule) {
            // Right before the slot: the other shards' previous cell has drained.
            shard::wait_until(shard.setup_start(slot, timing), &self.stop);
        }
        if let (true, true, Some(database)) = (coordinates, scenario.writes(), target.database) {
            self.database.restore(database)?;
        }
        let load = Arc::new(scenario.workload(&target.addr.to_string()));
        if let Some(pid) = target.pid {
            procfs::reset_peak_rss(pid);
        }
        if coordinates {
            self.database.reset_statements();
        }
        let connections = self.options.shard.map_or(concurrency, |s| s.connections(concurrency));
        let late = schedule
            .map(|(shard, slot)| shard::wait_until(shard.slot_start(slot, timing), &self.stop));
        let live = Arc::new(LiveCounter::new(self.options.client_workers));
        let plan = self.options.plan(connections, &self.stop, &live);
        let postgres = target.database.and(self.database.postgres_pid());
        let mut sampler = CpuSampler::new(target.pid, postgres);
        let ticker = self.progress.running(label.to_owned(), live);
        let started = self.started.elapsed().as_secs_f64();
        let report =
            engine::run_http(&plan, target.addr, load, self.options.validate_every, &mut sampler);
        drop(ticker);
        if let (true, Some((shard, slot))) = (coordinates, schedule) {
            // The other shards' drains, before reading what the database holds.
            shard::wait_until(shard.drained(slot, timing), &self.stop);
        }
        let mut cell = self.finish_cell(
            label,
            scenario,
            concurrency,
            repeat,
            &report,
            &sampler,
            target.pid,
            target.database.filter(|_| coordinates),
        )?;
        cell.started_seconds = Some(started);
        if let (Some((shard, _)), Some(late)) = (schedule, late) {
            cell.shards.push(ShardPart {
                shard: shard.index,
                connections,
                window_started_unix_seconds: sampler.window_started_unix_seconds,
                late_seconds: late.as_secs_f64(),
                throughput_rps: cell.throughput_rps,
                goodput_rps: cell.goodput_rps,
                client_cpu_seconds: cell.cpu_seconds.client,
            });
            cell.warnings = cell_warnings(&cell);
        }
        Ok(cell)
    }

    /// Adds what the server side shows to what the client measured.
    #[allow(clippy::too_many_arguments)]
    fn finish_cell(
        &mut self,
        label: &str,
        scenario: Scenario,
        concurrency: u32,
        repeat: u32,
        report: &LoadReport,
        sampler: &CpuSampler,
        server_pid: Option<u32>,
        database: Option<&str>,
    ) -> anyhow::Result<Cell> {
        let warmup = self.options.warmup.as_secs_f64();
        let mut cell = Cell::from_report(
            scenario.name(),
            concurrency,
            repeat,
            LoadMode::Closed,
            warmup,
            report,
        );
        cell.cpu_seconds = sampler.seconds();
        cell.server_peak_rss_bytes = server_pid.and_then(procfs::peak_rss_bytes);
        if let Some(database) = database {
            cell.sql = self.database.statements(database).map(|(statements, top_statements)| {
                let requests = cell.requests_total();
                SqlStats {
                    statements_per_request: if requests > 0 {
                        statements as f64 / requests as f64
                    } else {
                        0.0
                    },
                    statements,
                    requests,
                    top_statements,
                }
            });
            if scenario.writes() {
                let acknowledged = cell.warmup_counts.ok + cell.counts.ok + cell.drained_counts.ok;
                // A shard's acknowledgements are part of the whole: `loadgen merge` adds
                // them up and judges rows = acknowledged.
                let whole_load = self.options.shard.is_none();
                cell.audit =
                    Some(self.database.audit(database, scenario, acknowledged, whole_load)?);
            }
        }
        cell.warnings = cell_warnings(&cell);
        self.progress.finished(label, &cell);
        Ok(cell)
    }
}

/// A stack that passed the contract check, and how to start it again.
#[derive(Debug, Clone)]
struct PreparedStack {
    info: StackInfo,
    /// Its entry in `results.stacks`.
    index: usize,
    database: String,
    url: String,
    args: Vec<String>,
    /// Where it runs when someone else started it (`--targets`); `None`: the suite starts it.
    address: Option<std::net::SocketAddr>,
}

/// Who measures in a round.
#[derive(Debug, Clone, Copy)]
enum Party {
    HttpCeiling,
    DbCeiling,
    /// An index into the prepared stacks.
    Stack(usize),
}

/// The database the database ceiling runs on.
const DB_CEILING_DATABASE: &str = "bench_ceiling";

/// Where a cell's load goes.
struct Target<'a> {
    addr: std::net::SocketAddr,
    pid: Option<u32>,
    database: Option<&'a str>,
}

/// The contract check of every scenario before measuring: the first few requests of each,
/// sent one at a time and checked in full.
fn validate_stack(addr: std::net::SocketAddr, scenarios: &[Scenario]) -> Vec<Validation> {
    const PER_SCENARIO: usize = 3;
    scenarios
        .iter()
        .map(|&scenario| {
            let load = scenario.workload(&addr.to_string());
            let mut picker = engine::Workload::picker(&load, 0, 1);
            let problem = (0..PER_SCENARIO.min(load.len().max(1))).find_map(|_| {
                let pick = picker.pick();
                let response = match probe::exchange(
                    addr,
                    engine::Workload::request(&load, pick),
                    Duration::from_secs(10),
                ) {
                    Ok(response) => response,
                    Err(error) => return Some(error),
                };
                if response
                    .content_type
                    .as_deref()
                    .is_none_or(|ct| !ct.starts_with("application/json"))
                {
                    return Some(format!(
                        "Content-Type is {:?}, not application/json",
                        response.content_type
                    ));
                }
                scenario::validate_response(
                    scenario,
                    load.book_id(pick),
                    response.status,
                    &response.body,
                )
                .err()
            });
            Validation { scenario: scenario.name().to_owned(), passed: problem.is_none(), problem }
        })
        .collect()
}

/// The warnings a cell measured by this client deserves.
pub fn cell_warnings(cell: &Cell) -> Vec<Warning> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let used_fraction = cell.cpu_seconds.client / cell.window_seconds / cpus;
    let mut found = Vec::new();
    if used_fraction > warnings::CLIENT_CPU_LIMIT {
        found.push(Warning::from(WarningKind::ClientCpuHigh { used_fraction }));
    }
    // A shard held its own share of the connections.
    let connections = match cell.shards.as_slice() {
        [own] => own.connections,
        _ => cell.concurrency,
    };
    found.extend(load_warnings(cell, connections));
    if let Some(part) = cell.shards.first()
        && part.late_seconds > warnings::SHARD_LATE_FRACTION * cell.window_seconds
    {
        found.push(Warning::from(WarningKind::ShardLate { late_seconds: part.late_seconds }));
    }
    found
}

/// The warnings about what a cell's load and answers were, whoever measured it (one
/// client, or several merged), against the `connections` that were to be in flight.
pub fn load_warnings(cell: &Cell, connections: u32) -> Vec<Warning> {
    let mut found = Vec::new();
    let total = cell.counts.total();
    if total > 0 {
        let error_fraction = cell.counts.errors as f64 / total as f64;
        if error_fraction > warnings::ERROR_RATE_LIMIT {
            found.push(WarningKind::ErrorRateHigh { error_fraction });
        }
    }
    if cell.mean_in_flight < warnings::IN_FLIGHT_FLOOR * f64::from(connections) {
        found.push(WarningKind::InFlightLow {
            mean_in_flight: cell.mean_in_flight,
            concurrency: connections,
        });
    }
    if let Some(audit) = &cell.audit
        && !audit.passed
    {
        found.push(WarningKind::AuditFailed { failures: audit.failures.clone() });
    }
    if !cell.problems.is_empty() {
        found.push(WarningKind::InvalidResponses { problems: cell.problems.clone() });
    }
    if cell.stopped_early {
        found.push(WarningKind::StoppedEarly);
    }
    found.into_iter().map(Warning::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn targets_name_a_stack_and_an_http_address_each() {
        let targets = parse_targets(&specs(&[
            "axum-serde-sqlx=http://127.0.0.1:18081",
            "hyper-sonic-sqlx=http://localhost:18085/",
        ]))
        .unwrap();
        assert_eq!(targets.len(), 2);
        assert_eq!(targets[0].0.identity.service, "axum-serde-sqlx");
        assert_eq!(targets[0].1, "127.0.0.1:18081".parse().unwrap());
        assert_eq!(targets[1].0.identity.service, "hyper-sonic-sqlx");
        assert_eq!(targets[1].1.port(), 18085);
    }

    #[test]
    fn a_wrong_target_is_refused_with_a_reason() {
        for (spec, expected) in [
            ("axum-serde-sqlx", "expected name=http://host:port"),
            ("spring-mvc=http://127.0.0.1:8081", "unknown stack"),
            ("axum-serde-sqlx=https://127.0.0.1:8081", "expected http://host:port"),
            ("axum-serde-sqlx=http://127.0.0.1:8081/api", "expected http://host:port"),
            ("axum-serde-sqlx=127.0.0.1:8081", "expected http://host:port"),
        ] {
            let error = parse_targets(&specs(&[spec])).unwrap_err();
            assert!(error.contains(expected), "{spec}: {error}");
        }
        let twice =
            specs(&["axum-serde-sqlx=http://127.0.0.1:1", "axum-serde-sqlx=http://127.0.0.1:2"]);
        assert!(parse_targets(&twice).unwrap_err().contains("named twice"));
    }

    #[test]
    fn the_compose_shorthand_matches_docker_compose_yml() {
        let compose = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docker-compose.yml"),
        )
        .unwrap();
        for (stack, addr) in compose_targets() {
            let port = stack.identity.default_port;
            assert_eq!(addr, std::net::SocketAddr::from(([127, 0, 0, 1], port)));
            assert!(compose.contains(&format!("\"127.0.0.1:{port}:{port}\"")), "{port}");
        }
        // The database as the compose file publishes it, with its user and password.
        let url = url::Url::parse(COMPOSE_DATABASE_URL).unwrap();
        assert!(compose.contains(&format!("\"127.0.0.1:{}:5432\"", url.port().unwrap())));
        assert!(compose.contains(&format!("POSTGRES_USER: {}", url.username())));
        assert!(compose.contains(&format!("POSTGRES_PASSWORD: {}", url.password().unwrap())));
        assert!(compose.contains(&format!("POSTGRES_DB: {}", url.path().trim_start_matches('/'))));
    }
}
