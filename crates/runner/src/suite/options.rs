//! Everything a suite run is told ([`SuiteOptions`]), and what follows from it alone: the
//! windows of a round, the connections the database must allow, the time a window may take.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bookstore_registry::Tuning;
use bookstore_registry::stacks::StackInfo;

use crate::suite::parties::Variant;
use crate::suite::shard::{self, ShardPlan};
use crate::suite::{ceiling, plan};
use bookstore_client::engine::{Arrivals, LiveCounter, LoadPlan, Settle};
use bookstore_client::scenario::Scenario;
use bookstore_record::results::Measurement;
use bookstore_record::results::Rate;

/// Everything a suite run is told.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Stacks to measure, in order.
    pub stacks: Vec<StackInfo>,
    /// Labelled variants of stacks (a stack with flags of its own), measured after the
    /// stacks as parties of their own.
    pub variants: Vec<Variant>,
    /// Scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// How every window is measured (concurrency, phases, rounds, timeout, durability):
    /// the command line's flags as they are, and the results' `settings` as they are.
    pub measurement: Measurement,
    /// What every stack is started with (`--pool-max`, also the database ceiling's pool;
    /// `--workers`; `--blocking-threads` of the blocking stacks) before a variant's own flags.
    pub tuning: Tuning,
    /// Client threads.
    pub client_workers: usize,
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
    /// Measure the HTTP and database ceilings.
    pub ceilings: bool,
    /// Measure each database ceiling also with as many clients as the stacks' concurrency
    /// (besides one per pooled connection).
    pub db_ceiling_at_concurrency: bool,
    /// The fixed-load phase's rates, each offered to every stack after a scenario's
    /// closed-loop rounds; empty for none.
    pub rates: Vec<Rate>,
    /// How the fixed-load phase's requests arrive.
    pub arrivals: Arrivals,
    /// `--slo`: the latency objectives the fixed-load phase's rate ladder is judged by on
    /// the pages (the capacity of each party at each); recorded, not acted on here.
    pub objectives: Vec<bookstore_record::objective::ScopedObjective>,
    /// `--cpus`: the CPUs of each tier; `None`: every process anywhere.
    pub placement: Option<crate::harness::placement::Placement>,
    /// `--resume`: the journal of the run this one goes on with (`output` is that run's).
    pub resume: Option<PathBuf>,
    /// The command line, for the record.
    pub command_line: Vec<String>,
    /// What the measuring binary was built from (`bookstore_record::build_identity!()` in
    /// the binary's own package, whose build script records it).
    pub build: bookstore_record::environment::Build,
}

/// The responder binary, the HTTP ceiling.
pub(crate) const RESPONDER: &str = "responder";

/// The database latency relay binary (`--db-latency`).
pub(crate) const RELAY: &str = "db-relay";

/// Round trips measured per latency to calibrate the relay at the start of a run (about a
/// second each at 1 ms).
pub(crate) const RELAY_CALIBRATION_SAMPLES: usize = 500;

/// Connections the throwaway cluster allows beyond the pools: the suite's own, a restore's.
const SPARE_CONNECTIONS: u32 = 40;

/// The longest a settled warm-up lasts: several request cycles of the slowest scenario at
/// the highest default concurrency (a cycle is `concurrency / rate`, computable from any
/// default run, e.g. `2713e02:summary/results/2026-12-01T22-35-54Z.json`).
pub const WARMUP_MAX: Duration = Duration::from_secs(5);
/// The longest a settled window lasts, in multiples of `--duration`.
pub const WINDOW_MAX_FACTOR: u32 = 4;

impl SuiteOptions {
    /// Measurements per cell: rounds × repeat.
    pub fn total_rounds(&self) -> u32 {
        self.measurement.total_rounds()
    }

    /// The windows of one round of `scenario`'s closed loop in the groups `--schedule`
    /// orders them by: with `grouped`, one group per concurrency (the windows compared with
    /// each other), then the windows compared with every concurrency; with `rotated`, the
    /// whole round as one group.
    pub(crate) fn round_groups(&self, scenario: Scenario, stacks: usize) -> Vec<Vec<plan::Window>> {
        plan::grouped(self.round_windows(scenario, stacks), self.measurement.schedule)
    }

    /// The windows of one round of `scenario`'s closed loop, over `stacks` prepared stacks:
    /// each stack at each concurrency and, when measured, its ceilings — the responder at
    /// each concurrency, or the statements through each driver at the pool's size (once:
    /// that load does not depend on the stacks' concurrency) and, with
    /// `db_ceiling_at_concurrency`, at each concurrency too.
    pub(crate) fn round_windows(&self, scenario: Scenario, stacks: usize) -> Vec<plan::Window> {
        use plan::{DbClients, Window};
        let mut windows = Vec::new();
        for &concurrency in &self.measurement.concurrency {
            windows.extend((0..stacks).map(|stack| Window::Stack(stack, concurrency)));
        }
        if !self.ceilings {
            return windows;
        }
        if !scenario.uses_database() {
            windows.extend(self.measurement.concurrency.iter().map(|&c| Window::HttpCeiling(c)));
            return windows;
        }
        let mut clients = vec![DbClients::Pool];
        if self.db_ceiling_at_concurrency {
            clients.extend(self.measurement.concurrency.iter().map(|&c| DbClients::Stacks(c)));
        }
        // Behind the relay at each latency a party is measured at, too.
        let latencies = std::iter::once(None).chain(self.db_latencies().into_iter().map(Some));
        for db_latency in latencies {
            for &clients in &clients {
                windows.extend(ceiling::Driver::ALL.into_iter().map(|driver| Window::DbCeiling {
                    driver,
                    clients,
                    db_latency,
                }));
            }
        }
        windows
    }

    /// The round trips the parties are measured behind (`--db-latency`), each once, shortest
    /// first.
    pub(crate) fn db_latencies(&self) -> Vec<Duration> {
        let mut latencies: Vec<Duration> =
            self.variants.iter().filter_map(|v| v.db_latency).collect();
        latencies.sort();
        latencies.dedup();
        latencies
    }

    /// Connections the database must allow: every party keeps its pool open for the whole
    /// run (a variant's `--pool-max` is its own), the database ceiling while it runs, and
    /// the suite's own.
    pub fn database_connections(&self) -> u32 {
        let pool_max = self.tuning.pool_max;
        let stacks = self.stacks.len() as u32 * pool_max;
        let variants: u32 =
            self.variants.iter().map(|v| self.tuning.overridden_by(&v.args).pool_max).sum();
        let ceiling = if self.ceilings { pool_max } else { 0 };
        stacks + variants + ceiling + SPARE_CONNECTIONS
    }

    pub(crate) fn total_windows(&self) -> u64 {
        let per_round: u64 = self
            .scenarios
            .iter()
            .map(|&s| self.round_windows(s, self.stack_parties()).len() as u64)
            .sum();
        let equal_load = self.equal_load_windows() * self.stack_parties() as u64;
        per_round * u64::from(self.total_rounds()) + equal_load
    }

    /// The fixed-load phase's rates: none on a shard, whose clients keep a shared
    /// closed-loop schedule.
    pub(crate) fn equal_load_rates(&self) -> &[Rate] {
        if self.shard.is_some() { &[] } else { &self.rates }
    }

    /// Open-loop windows of one stack over the whole run.
    pub(crate) fn equal_load_windows(&self) -> u64 {
        let blocks = self.scenarios.len() * self.equal_load_rates().len();
        blocks as u64 * u64::from(self.total_rounds())
    }

    /// Stacks and variants: every party but the ceilings.
    pub(crate) fn stack_parties(&self) -> usize {
        self.stacks.len() + self.variants.len()
    }

    /// Windows of one stack over the whole run.
    pub(crate) fn windows_per_stack(&self) -> u64 {
        let closed = (self.scenarios.len() * self.measurement.concurrency.len()) as u64;
        closed * u64::from(self.total_rounds()) + self.equal_load_windows()
    }

    /// A shard measures stacks someone else started, without ceilings, and has at least one
    /// connection in every cell.
    pub(crate) fn check_shard(&self) -> anyhow::Result<()> {
        if !self.variants.is_empty() && self.running.is_some() {
            anyhow::bail!(
                "--variant needs the suite to start the stacks: a stack someone else started cannot be given flags"
            );
        }
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
        if let Some(&c) = self.measurement.concurrency.iter().find(|&&c| c < shard.count) {
            anyhow::bail!(
                "--concurrency {c} is less than {} shards: each shard needs a connection",
                shard.count
            );
        }
        Ok(())
    }

    /// A placement names CPUs this process may use, and only tiers the suite runs itself.
    pub(crate) fn check_placement(&self) -> anyhow::Result<()> {
        use crate::harness::placement::Tier;
        let Some(placement) = &self.placement else { return Ok(()) };
        placement.check_available().map_err(anyhow::Error::msg)?;
        if placement.cpus(Tier::Server).is_some() && self.running.is_some() {
            anyhow::bail!(
                "--cpus server=…: the stacks were started by someone else (--targets, --compose); place them where they run"
            );
        }
        if placement.cpus(Tier::Db).is_some() && self.database_url.is_some() {
            anyhow::bail!(
                "--cpus db=…: the database is not the suite's own (--database-url); place it where it runs"
            );
        }
        Ok(())
    }

    /// What a shard's slots are made of.
    pub(crate) fn slot_timing(&self) -> shard::SlotTiming {
        shard::SlotTiming {
            warmup: self.measurement.warmup,
            window: self.measurement.duration,
            request_timeout: self.measurement.request_timeout,
        }
    }

    /// Whether this run restores, resets and audits the database: always, except on shards
    /// other than the first.
    pub(crate) fn coordinates(&self) -> bool {
        self.shard.is_none_or(|shard| shard.coordinates())
    }

    /// Every binary the run needs exists, or an error saying how to build them.
    pub(crate) fn check_binaries(&self) -> anyhow::Result<()> {
        let mut needed: Vec<&str> = match self.running {
            Some(_) => Vec::new(),
            None => self
                .stacks
                .iter()
                .chain(self.variants.iter().map(|v| &v.stack))
                .map(|s| s.binary)
                .collect(),
        };
        if self.ceilings {
            needed.push(RESPONDER);
        }
        needed.sort_unstable();
        needed.dedup();
        let missing: Vec<&str> =
            needed.into_iter().filter(|name| !self.bin_dir.join(name).is_file()).collect();
        if !missing.is_empty() {
            // A composed stack's binary is not in the main job's default build.
            let packages: Vec<String> =
                missing.iter().map(|name| format!("--bin {name}")).collect();
            anyhow::bail!(
                "{} not found in {}: build them with `cargo build --release {}` (or point --bin-dir at them)",
                missing.join(", "),
                self.bin_dir.display(),
                packages.join(" ")
            );
        }
        Ok(())
    }

    /// Whether windows settle (everywhere but on shards, whose clients keep a fixed
    /// schedule together).
    pub(crate) fn settles(&self) -> bool {
        self.shard.is_none()
    }

    /// The settle rule's limits, as recorded in the settings.
    pub(crate) fn settle_limits(&self) -> Option<(Duration, Duration)> {
        self.settles().then(|| {
            (WARMUP_MAX.max(self.measurement.warmup), self.measurement.duration * WINDOW_MAX_FACTOR)
        })
    }

    pub(crate) fn plan(
        &self,
        connections: u32,
        stop: &Arc<AtomicBool>,
        live: &Arc<LiveCounter>,
    ) -> LoadPlan {
        LoadPlan {
            connections: connections as usize,
            workers: self.client_workers,
            warmup: self.measurement.warmup,
            duration: self.measurement.duration,
            request_timeout: self.measurement.request_timeout,
            rate_rps: None,
            arrivals: Arrivals::Constant,
            stop: Arc::clone(stop),
            live: Some(Arc::clone(live)),
            settle: self.settle_limits().map(|(warmup_max, window_max)| Settle {
                warmup_max,
                window_min_completions: u64::from(connections),
                window_max,
            }),
            requests: None,
        }
    }
}

/// The parity rules of SPEC §1 as the stacks apply them (recorded with every run).
pub(crate) fn parity() -> Vec<String> {
    [
        "pool min = max = pool_max, every connection opened before the server reports ready; a lost one replaced (r2d2 in the background; sqlx, and bb8 in a task, by the next request that needs one)",
        "no liveness ping on checkout (sqlx test_before_acquire(false); r2d2's and bb8's check on checkout no round trip), except that after a query finds its connection gone all three ping, once, the connections idle since then",
        "no idle timeout or maximum connection lifetime",
        "prepared statements cached per connection: sqlx 100, diesel and diesel-async all (the same statements, bookstore-diesel-sql; fixed texts through CachedSql, never sql_query)",
        "one pooled connection per request; checkout runs one transaction on it",
        "diesel-async: AsyncPgConnection over tokio-postgres without TLS, a bb8 pool (min_idle = max_size, test_on_check_out with the lost-connection check only, connection_timeout = the acquire timeout; a replacement retried every 50 ms within it), awaited on the worker that took the request",
        "the same release profile, system allocator and RUSTFLAGS for every binary, the composed stacks' framework binaries included",
        "identical flags for every stack: --pool-max, --workers, --blocking-threads (diesel stacks)",
    ]
    .map(str::to_owned)
    .into_iter()
    .chain([format!(
        "one listener per stack with a backlog of {} (the frameworks' own bind: tokio 1024, actix 2048)",
        bookstore_registry::LISTEN_BACKLOG
    )])
    .collect()
}
