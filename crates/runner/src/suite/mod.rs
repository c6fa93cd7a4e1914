//! `loadgen suite`: SPEC §5 end to end.
//!
//! One seeded template database; each stack gets a fresh clone, is started once with
//! identical flags, checked against the contract in every scenario (a stack that fails is
//! reported, not measured) and then kept running for the whole run — an idle server costs
//! next to nothing, and a start per measurement costs a pool's worth of connections. Then
//! the measurement, in rounds (`rounds`): per scenario, every stack at every concurrency,
//! and the ceilings that bound the scenario (the client against the minimal responder at
//! each concurrency, or the scenario's statements straight through each driver's store,
//! once — at the pool's size, they do not depend on the stacks' concurrency), measure one
//! short window per round, one after the other, the order rotating from round to round. This machine's speed drifts by tens of percent over minutes; windows of
//! the parties compared a second apart share the drift, and the report compares them
//! round by round (the ratios of `bookstore-stats`). Restore before each write window, audit
//! after it; per window also CPU seconds of the server, of PostgreSQL and of the client, the
//! server's peak RSS, and SQL statements per request. The results file is rewritten as the
//! windows come in (at most every two seconds) and at the end.
//!
//! A window's phases settle ([`bookstore_client::engine::Settle`]): the warm-up lasts until every
//! connection has had an answer (the closed loop's first, synchronised burst is over), and
//! the window until it holds one answer per connection (a whole request cycle), each up to
//! a limit past which the window is flagged instead.

mod ceiling;
mod equal_load;
mod extend;
mod parties;
mod plan;
mod prepare;
pub mod progress;
mod rounds;
mod sampler;
pub mod shard;
mod state;
mod window;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bookstore_registry::Tuning;
use bookstore_registry::stacks::StackInfo;

use bookstore_client::engine::{Arrivals, LiveCounter, LoadPlan, Settle};
use bookstore_client::scenario::Scenario;
pub use bookstore_record::results::Rate;
use bookstore_record::results::{Measurement, RunResults};
pub use parties::{COMPOSE_DATABASE_URL, ComposeFrom, DB_LATENCY_FLAG, Variant, parse_targets};
pub use shard::ShardPlan;

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
    /// The command line, for the record.
    pub command_line: Vec<String>,
    /// What the measuring binary was built from (`bookstore_record::build_identity!()` in
    /// the binary's own package, whose build script records it).
    pub build: bookstore_record::environment::Build,
}

/// The responder binary, the HTTP ceiling.
const RESPONDER: &str = "responder";

/// The database latency relay binary (`--db-latency`).
const RELAY: &str = "db-relay";

/// Round trips measured per latency to calibrate the relay at the start of a run (about a
/// second each at 1 ms).
const RELAY_CALIBRATION_SAMPLES: usize = 500;

/// Connections the throwaway cluster allows beyond the pools: the suite's own, a restore's.
const SPARE_CONNECTIONS: u32 = 40;

/// The longest a settled warm-up lasts: several request cycles of the slowest scenario at
/// the highest default concurrency (a cycle is `concurrency / rate`, computable from any
/// kept default run, e.g. `summary/results/2026-12-01T22-35-54Z.json`).
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
    fn round_groups(&self, scenario: Scenario, stacks: usize) -> Vec<Vec<state::Window>> {
        plan::grouped(self.round_windows(scenario, stacks), self.measurement.schedule)
    }

    /// The windows of one round of `scenario`'s closed loop, over `stacks` prepared stacks:
    /// each stack at each concurrency and, when measured, its ceilings — the responder at
    /// each concurrency, or the statements through each driver at the pool's size (once:
    /// that load does not depend on the stacks' concurrency) and, with
    /// `db_ceiling_at_concurrency`, at each concurrency too.
    fn round_windows(&self, scenario: Scenario, stacks: usize) -> Vec<state::Window> {
        use state::{DbClients, Window};
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
    fn db_latencies(&self) -> Vec<Duration> {
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

    fn total_windows(&self) -> u64 {
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
    fn equal_load_rates(&self) -> &[Rate] {
        if self.shard.is_some() { &[] } else { &self.rates }
    }

    /// Open-loop windows of one stack over the whole run.
    fn equal_load_windows(&self) -> u64 {
        let blocks = self.scenarios.len() * self.equal_load_rates().len();
        blocks as u64 * u64::from(self.total_rounds())
    }

    /// Stacks and variants: every party but the ceilings.
    fn stack_parties(&self) -> usize {
        self.stacks.len() + self.variants.len()
    }

    /// Windows of one stack over the whole run.
    fn windows_per_stack(&self) -> u64 {
        let closed = (self.scenarios.len() * self.measurement.concurrency.len()) as u64;
        closed * u64::from(self.total_rounds()) + self.equal_load_windows()
    }

    /// A shard measures stacks someone else started, without ceilings, and has at least one
    /// connection in every cell.
    fn check_shard(&self) -> anyhow::Result<()> {
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
    fn check_placement(&self) -> anyhow::Result<()> {
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
    fn slot_timing(&self) -> shard::SlotTiming {
        shard::SlotTiming {
            warmup: self.measurement.warmup,
            window: self.measurement.duration,
            request_timeout: self.measurement.request_timeout,
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
    fn settles(&self) -> bool {
        self.shard.is_none()
    }

    /// The settle rule's limits, as recorded in the settings.
    fn settle_limits(&self) -> Option<(Duration, Duration)> {
        self.settles().then(|| {
            (WARMUP_MAX.max(self.measurement.warmup), self.measurement.duration * WINDOW_MAX_FACTOR)
        })
    }

    fn plan(&self, connections: u32, stop: &Arc<AtomicBool>, live: &Arc<LiveCounter>) -> LoadPlan {
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
fn parity() -> Vec<String> {
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

/// Runs the suite, writing `options.output` after every window; returns the final results.
pub fn run(options: &SuiteOptions, stop: Arc<AtomicBool>) -> anyhow::Result<RunResults> {
    options.check_shard()?;
    options.check_placement()?;
    options.check_binaries()?;
    let output_dir = options.output.parent().unwrap_or(Path::new(".")).to_owned();
    std::fs::create_dir_all(&output_dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", output_dir.display()))?;
    state::Suite::run(options, stop)
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
            "axum+sonic-rs+diesel-async=http://127.0.0.1:8100",
        ]))
        .unwrap();
        assert_eq!(targets.len(), 3);
        // A composed stack by its triple's name (the compose file's profile `composed`).
        assert_eq!(targets[2].0.tags.access, "diesel-async");
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
    fn a_database_latency_is_a_variant_behind_the_relay_not_a_flag_of_the_stack() {
        let taken = specs(&["axum-serde-sqlx"]);
        let variant =
            Variant::parse("far=axum-serde-sqlx --db-latency 250us --workers 1", &taken).unwrap();
        assert_eq!(variant.db_latency, Some(Duration::from_micros(250)));
        assert_eq!(variant.args, specs(&["--workers", "1"]), "the stack never sees it");
        let near = Variant::parse("near=axum-serde-sqlx --db-latency 0s", &taken).unwrap();
        assert_eq!(near.db_latency, None);
        assert!(Variant::parse("x=axum-serde-sqlx --db-latency soon", &taken).is_err());
        let far =
            Variant::with_db_latency(bookstore_registry::stacks::ALL[0], Duration::from_millis(1));
        assert_eq!(
            far.label,
            format!("{}.db1ms", bookstore_registry::stacks::ALL[0].identity.service)
        );
        assert!(
            Variant::parse(&format!("{}=axum-serde-sqlx --workers 1", far.label), &taken).is_ok()
        );
    }

    #[test]
    fn a_variant_is_a_stack_with_flags_of_its_own_under_a_unique_label() {
        let taken = specs(&["axum-serde-sqlx", "actix-serde-diesel"]);
        let variant = Variant::parse("actix-1w=actix-serde-diesel --workers 1", &taken).unwrap();
        assert_eq!(variant.label, "actix-1w");
        assert_eq!(variant.stack.identity.service, "actix-serde-diesel");
        let base = specs(&["--pool-max", "32", "--workers", "2", "--blocking-threads", "32"]);
        assert_eq!(
            variant.apply(&base),
            specs(&["--pool-max", "32", "--blocking-threads", "32", "--workers", "1"])
        );
        for (spec, expected) in [
            ("actix-serde-diesel --workers 1", "expected label=stack"),
            ("x=spring-mvc --workers 1", "unknown stack"),
            ("axum-serde-sqlx=axum-serde-sqlx --workers 1", "already a stack"),
            ("x=axum-serde-sqlx --workers", "expected --flag value pairs"),
            ("x=axum-serde-sqlx 1 --workers", "expected --flag value pairs"),
            ("a b=axum-serde-sqlx --workers 1", "a label is"),
        ] {
            let error = Variant::parse(spec, &taken).unwrap_err();
            assert!(error.contains(expected), "{spec}: {error}");
        }
    }

    #[test]
    fn a_variant_without_flags_is_a_twin_of_its_stack() {
        let taken = specs(&["axum-serde-sqlx"]);
        let twin = Variant::parse("again=axum-serde-sqlx", &taken).unwrap();
        assert_eq!((twin.args.len(), twin.db_latency), (0, None));
        let base = specs(&["--pool-max", "32", "--workers", "2"]);
        assert_eq!(twin.apply(&base), base, "a twin runs with the suite's flags, unchanged");
        let default = Variant::twin(twin.stack);
        assert_eq!(default.label, "axum-serde-sqlx.twin");
        assert_eq!((default.args, default.db_latency), (twin.args, None));
    }

    #[test]
    fn the_compose_shorthand_matches_docker_compose_yml() {
        let compose = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker-compose.yml"),
        )
        .unwrap();
        for (stack, addr) in ComposeFrom::Host.targets().unwrap() {
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

    #[test]
    fn from_inside_the_compose_network_the_stacks_and_database_are_its_services() {
        let compose = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker-compose.yml"),
        )
        .unwrap();
        let specs = ComposeFrom::Network.target_specs();
        assert_eq!(specs.len(), bookstore_registry::stacks::ALL.len());
        for (spec, stack) in specs.iter().zip(bookstore_registry::stacks::ALL) {
            let (name, port) = (stack.identity.service, stack.identity.default_port);
            assert_eq!(spec, &format!("{name}=http://{name}:{port}"));
            assert!(compose.contains(&format!("\n  {name}:\n")), "no service {name}");
            assert!(compose.contains(&format!("BIND: \"0.0.0.0:{port}\"")), "{name} on {port}");
        }
        // The URL every stack's service is given.
        let url = ComposeFrom::Network.database_url();
        assert!(compose.contains(&format!("DATABASE_URL: {url}\n")), "{url}");
        assert_eq!(ComposeFrom::parse("network"), Ok(ComposeFrom::Network));
        assert_eq!(ComposeFrom::parse("host"), Ok(ComposeFrom::Host));
        assert!(ComposeFrom::parse("inside").is_err());
    }
}
