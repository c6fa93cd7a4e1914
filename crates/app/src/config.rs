//! Server configuration (SPEC §1): flags with environment fallbacks, read once, validated
//! once, then handed around as the typed [`ServerConfig`].

use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use bookstore_domain::store::PoolSettings;
use clap::Args;

use bookstore_registry::stacks::Layout;
use bookstore_registry::{Identity, flags};

/// Flags every stack accepts.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address to listen on [default: 127.0.0.1:<the stack's port>].
    #[arg(long, env = "BIND")]
    pub bind: Option<SocketAddr>,

    /// PostgreSQL URL, postgres://user:password@host:port/database (the schema must exist).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,

    /// Pool size: connections opened at start and kept (min = max).
    #[arg(long = flags::POOL_MAX, env = "DB_POOL_MAX", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub pool_max: u32,

    /// Runtime worker threads [default: number of CPUs].
    #[arg(long = flags::WORKERS, env = "WORKERS", value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub workers: Option<u16>,

    /// How long a request waits for a pooled connection before answering 503, in ms.
    #[arg(long, env = "DB_ACQUIRE_TIMEOUT_MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub acquire_timeout_ms: u64,

    /// How long a connection may take to send a request's headers, and may stay idle
    /// between requests, before it is closed, in ms.
    #[arg(long, env = "CLIENT_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub client_timeout_ms: u64,

    /// Diagnostic: time each request's phases inside the server and append a JSON line to
    /// this file at shutdown (see the bookstore-timing crate; off by default).
    #[arg(long, env = "TIMING_FILE", value_name = "PATH")]
    pub timing_file: Option<PathBuf>,

    /// The runtime layout: the framework's own, or `per-core` — one current-thread runtime
    /// per worker thread, each with its own listener and its own pool of pool_max ÷ workers
    /// connections (SPEC §1, "Realism").
    #[arg(long = flags::LAYOUT, env = "LAYOUT", default_value = "framework", value_parser = Layout::parse)]
    pub layout: Layout,

    /// Spend this many microseconds of CPU in every successful reply: a deliberate, known
    /// cost that makes a second "build" of a stack, for measuring how finely `loadgen ab`
    /// tells two builds apart (docs/method.md, "One question"). Never in a measured stack.
    #[arg(long = "extra-work-us", env = "EXTRA_WORK_US", default_value_t = 0, hide = true)]
    pub extra_work_us: u64,

    /// Instead of serving: ask the server already listening on --bind for /health/db and
    /// exit 0 if it answers 200 within 2 s, 1 otherwise (the containers' healthcheck: the
    /// images have no curl).
    #[arg(long)]
    pub probe: bool,
}

/// The extra flag of the stacks that run blocking database calls on a thread pool.
#[derive(Debug, Clone, Args)]
pub struct BlockingArgs {
    /// Threads for blocking database calls [default: pool size, one per connection].
    #[arg(long = flags::BLOCKING_THREADS, env = "BLOCKING_THREADS", value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub blocking_threads: Option<u16>,

    /// How the workers share the blocking threads [default: the framework's own — actix:
    /// per-worker, a pool of threads ÷ workers for each worker; tokio (axum): shared, one
    /// pool, the only kind it has].
    #[arg(long, env = "BLOCKING_POOL", value_enum)]
    pub blocking_pool: Option<BlockingPool>,
}

/// The flags that make a composed stack's binary one triple: its serializer and access
/// (its framework is the binary's own), each parsed into the registry's own tag.
#[derive(Debug, Clone, Args)]
pub struct ComposedArgs {
    /// The JSON serializer: serde_json, simd-json or sonic-rs.
    #[arg(long = flags::SERIALIZER, env = "SERIALIZER", value_parser = serializer_tag)]
    pub serializer: &'static str,

    /// The database access: sqlx (async), diesel (blocking, on a thread pool) or
    /// diesel-async.
    #[arg(long = flags::ACCESS, env = "ACCESS", value_parser = access_tag)]
    pub access: &'static str,
}

impl ComposedArgs {
    /// The tags of the triple these flags name on `framework`.
    pub fn tags(&self, framework: &'static str) -> bookstore_registry::stacks::Tags {
        bookstore_registry::stacks::Tags {
            framework,
            serializer: self.serializer,
            access: self.access,
        }
    }
}

/// `value` as the registry's serializer tag, or what the valid ones are.
fn serializer_tag(value: &str) -> Result<&'static str, String> {
    let tags = bookstore_registry::stacks::SERIALIZERS;
    tags.into_iter().find(|t| *t == value).ok_or_else(|| format!("not one of {}", tags.join(", ")))
}

/// `value` as the registry's access tag, or what the valid ones are.
fn access_tag(value: &str) -> Result<&'static str, String> {
    let tags = bookstore_registry::stacks::ACCESSES.map(|a| a.tag);
    tags.into_iter().find(|t| *t == value).ok_or_else(|| format!("not one of {}", tags.join(", ")))
}

/// How a blocking stack's workers share its blocking threads (`--blocking-pool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BlockingPool {
    /// One pool of `--blocking-threads` threads for every worker.
    Shared,
    /// Each worker its own pool of `ceil(blocking_threads / workers)` threads.
    PerWorker,
}

/// The validated configuration a server runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Where to listen: `--bind`, or localhost at the stack's default port.
    pub bind: SocketAddr,
    /// The store's connection pool (`--database-url`, `--pool-max`, `--acquire-timeout-ms`).
    pub pool: PoolSettings,
    /// Runtime worker threads: `--workers`, or one per CPU.
    pub workers: usize,
    /// Threads for blocking database calls, `--blocking-threads` or one per pooled
    /// connection; `None` for async stores.
    pub blocking_threads: Option<usize>,
    /// How the workers share those threads, if not the framework's default way.
    pub blocking_pool: Option<BlockingPool>,
    /// Deadline for a request's headers, and for an idle connection.
    pub client_timeout: Duration,
    /// Where to append the timing report at shutdown; `None`: no timing.
    pub timing_file: Option<PathBuf>,
    /// The framework's own runtime layout, or per-core.
    pub layout: Layout,
    /// CPU spent in every successful reply on purpose (`--extra-work-us`; zero but in the
    /// tests of `loadgen ab`).
    pub extra_work: Duration,
}

impl ServerConfig {
    /// The typed configuration of `identity` from its flags.
    pub fn new(identity: &Identity, args: ServerArgs, blocking: Option<BlockingArgs>) -> Self {
        let workers = args.workers.map(usize::from).unwrap_or_else(cpus);
        let pool_max = args.pool_max;
        Self {
            bind: args
                .bind
                .unwrap_or(SocketAddr::from((Ipv4Addr::LOCALHOST, identity.default_port))),
            pool: PoolSettings {
                database_url: args.database_url,
                max_connections: pool_max,
                acquire_timeout: Duration::from_millis(args.acquire_timeout_ms),
            },
            workers,
            client_timeout: Duration::from_millis(args.client_timeout_ms),
            blocking_threads: blocking
                .as_ref()
                .map(|b| b.blocking_threads.map(usize::from).unwrap_or(pool_max as usize)),
            blocking_pool: blocking.and_then(|b| b.blocking_pool),
            timing_file: args.timing_file,
            layout: args.layout,
            extra_work: Duration::from_micros(args.extra_work_us),
        }
    }

    /// The per-core layout's pools, one per worker: pool_max ÷ workers connections each,
    /// the remainder one more for the first ones, so the total stays `--pool-max`; blocking
    /// threads likewise (`ceil`). A one-line error when there are more workers than
    /// connections.
    pub fn per_core(&self) -> anyhow::Result<Vec<(PoolSettings, Option<usize>)>> {
        let (pool, workers) = (self.pool.max_connections as usize, self.workers.max(1));
        anyhow::ensure!(
            pool >= workers,
            "--{} {pool} is fewer than --{} {workers}: the per-core layout gives each worker a pool of its own",
            flags::POOL_MAX,
            flags::WORKERS
        );
        let blocking = self.blocking_threads.map(|threads| threads.div_ceil(workers).max(1));
        Ok((0..workers)
            .map(|worker| {
                let connections = pool / workers + usize::from(worker < pool % workers);
                let settings =
                    PoolSettings { max_connections: connections as u32, ..self.pool.clone() };
                (settings, blocking)
            })
            .collect())
    }
}

impl ServerConfig {
    /// tokio's multi-thread runtime as the axum and hyper stacks run it: `workers` worker
    /// threads named after the stack and, for a blocking store, at most `blocking_threads`
    /// threads for `spawn_blocking`.
    /// Refuses `--blocking-pool per-worker`: tokio's runtime has one blocking pool.
    pub fn tokio_runtime(&self, identity: &Identity) -> std::io::Result<tokio::runtime::Runtime> {
        if self.blocking_pool == Some(BlockingPool::PerWorker) {
            return Err(std::io::Error::other(
                "--blocking-pool per-worker: tokio's runtime has one blocking pool for all workers; only the actix stacks have one per worker",
            ));
        }
        let mut runtime = tokio::runtime::Builder::new_multi_thread();
        runtime.worker_threads(self.workers).enable_all().thread_name(identity.service);
        if let Some(threads) = self.blocking_threads {
            runtime.max_blocking_threads(threads);
        }
        runtime.build()
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        server: ServerArgs,
        #[command(flatten)]
        blocking: BlockingArgs,
    }

    use bookstore_registry::{DbCalls, Tuning};

    const IDENTITY: Identity = Identity { service: "s", framework: "f", default_port: 8081 };

    /// Parses flags only: the environment of the machine running the tests must not count.
    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let command = Cli::command().mut_args(|arg| arg.env(clap::builder::Resettable::Reset));
        let matches =
            command.try_get_matches_from(std::iter::once("s").chain(args.iter().copied()))?;
        Cli::from_arg_matches(&matches)
    }

    #[test]
    fn a_harness_tuning_is_what_the_server_parses_and_a_variant_flag_overrides_it() {
        let tuning = Tuning { pool_max: 7, workers: 3, blocking_threads: 5 };
        let mut args = vec!["--database-url".to_owned(), "postgres://x@y/z".to_owned()];
        args.extend(tuning.args(DbCalls::Blocking));
        let cli = parse(&args.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
        let config = ServerConfig::new(&IDENTITY, cli.server, Some(cli.blocking));
        assert_eq!(
            (config.pool.max_connections, config.workers, config.blocking_threads),
            (7, 3, Some(5))
        );
        assert!(!tuning.args(DbCalls::Async).iter().any(|a| a.contains("blocking")));

        let variant: Vec<String> = ["--workers", "1", "--pool-max", "9"].map(String::from).into();
        let overridden = tuning.overridden_by(&variant);
        assert_eq!(overridden, Tuning { pool_max: 9, workers: 1, blocking_threads: 5 });
        assert_eq!(tuning.overridden_by(&["--timing-file".into(), "t".into()]), tuning);
    }

    #[test]
    fn defaults_follow_the_spec() {
        let cli = parse(&["--database-url", "postgres://x@y/z"]).unwrap();
        let config = ServerConfig::new(&IDENTITY, cli.server, Some(cli.blocking));
        assert_eq!(config.bind, "127.0.0.1:8081".parse().unwrap());
        assert_eq!(config.pool.max_connections, 32);
        assert_eq!(config.pool.acquire_timeout, Duration::from_secs(2));
        assert_eq!(config.workers, cpus());
        assert_eq!(config.blocking_threads, Some(32));
        assert_eq!(config.blocking_pool, None, "each framework's own way by default");
        assert_eq!(config.layout, Layout::Framework);
        assert_eq!(config.extra_work, Duration::ZERO, "no deliberate cost unless asked for");
        assert_eq!(config.client_timeout, Duration::from_secs(10));
        assert_eq!(config.timing_file, None, "no timing unless asked for");
    }

    #[test]
    fn flags_override_defaults() {
        let cli = parse(&[
            "--database-url=postgres://x@y/z",
            "--bind=0.0.0.0:9000",
            "--pool-max=8",
            "--workers=3",
            "--acquire-timeout-ms=500",
            "--blocking-threads=16",
            "--client-timeout-ms=1500",
            "--blocking-pool=per-worker",
            "--timing-file=/tmp/t.jsonl",
        ])
        .unwrap();
        let config = ServerConfig::new(&IDENTITY, cli.server, Some(cli.blocking));
        assert_eq!(config.bind, "0.0.0.0:9000".parse().unwrap());
        assert_eq!((config.pool.max_connections, config.workers), (8, 3));
        assert_eq!(config.pool.acquire_timeout, Duration::from_millis(500));
        assert_eq!(config.blocking_threads, Some(16));
        assert_eq!(config.client_timeout, Duration::from_millis(1500));
        assert_eq!(config.blocking_pool, Some(BlockingPool::PerWorker));
        assert_eq!(config.timing_file, Some(PathBuf::from("/tmp/t.jsonl")));
    }

    #[test]
    fn tokio_has_one_blocking_pool_and_refuses_one_per_worker() {
        for (pool, refused) in [
            (None, false),
            (Some(BlockingPool::Shared), false),
            (Some(BlockingPool::PerWorker), true),
        ] {
            let cli = parse(&["--database-url", "postgres://x@y/z"]).unwrap();
            let mut config = ServerConfig::new(&IDENTITY, cli.server, Some(cli.blocking));
            config.blocking_pool = pool;
            match config.tokio_runtime(&IDENTITY) {
                Ok(_) => assert!(!refused, "{pool:?} accepted"),
                Err(error) => {
                    assert!(refused, "{pool:?}: {error}");
                    assert!(error.to_string().starts_with("--blocking-pool per-worker"), "{error}");
                }
            }
        }
    }

    #[test]
    fn bad_values_are_rejected_naming_the_flag() {
        for (args, flag) in [
            (&["--database-url=postgres://x@y/z", "--pool-max=0"][..], "--pool-max"),
            (&["--database-url=postgres://x@y/z", "--workers=0"][..], "--workers"),
            (&["--database-url=postgres://x@y/z", "--bind=localhost"][..], "--bind"),
            (&["--database-url=postgres://x@y/z", "--blocking-pool=two"][..], "--blocking-pool"),
            (
                &["--database-url=postgres://x@y/z", "--acquire-timeout-ms=x"][..],
                "--acquire-timeout-ms",
            ),
            (&[][..], "--database-url"),
        ] {
            let error =
                parse(args).err().unwrap_or_else(|| panic!("{args:?} accepted")).to_string();
            assert!(error.contains(flag), "{args:?}: {error}");
        }
    }

    #[test]
    fn per_core_splits_the_pool_and_the_blocking_threads_over_the_workers_keeping_the_total() {
        let parse_with = |extra: &[&str]| {
            let mut args = vec!["--database-url", "postgres://x@y/z", "--layout", "per-core"];
            args.extend_from_slice(extra);
            let cli = parse(&args).unwrap();
            ServerConfig::new(&IDENTITY, cli.server, Some(cli.blocking))
        };
        let config = parse_with(&["--pool-max", "32", "--workers", "3", "--blocking-threads", "8"]);
        assert_eq!(config.layout, Layout::PerCore);
        let shares = config.per_core().unwrap();
        let pools: Vec<u32> = shares.iter().map(|(p, _)| p.max_connections).collect();
        assert_eq!(pools, [11, 11, 10]);
        assert!(shares.iter().all(|(_, threads)| *threads == Some(3)));
        let error = parse_with(&["--pool-max", "2", "--workers", "4"]).per_core().unwrap_err();
        assert!(error.to_string().contains("--pool-max 2 is fewer than --workers 4"), "{error}");
    }
}
