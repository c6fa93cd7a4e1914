//! `loadgen`: load one URL, run the benchmark suite, render reports.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, Parser, Subcommand};
use bookstore_client::engine::{self, LoadPlan};
use bookstore_record::results::{HTTP_CELL_SCHEMA, SCHEMA_VERSION};

/// The bookstore benchmark's load generator.
#[derive(Parser)]
#[command(name = "loadgen", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the benchmark suite (SPEC §5) and write the results and the HTML summary.
    Suite(Box<SuiteArgs>),
    /// Render the HTML summary of results files.
    Report(ReportArgs),
    /// Compare two sets of runs cell by cell (terminal table, and HTML with -o).
    Compare(CompareArgs),
    /// Combine the results of the N shards of a run (`suite --shard K/N`) into one.
    Merge(MergeArgs),
    /// Load one URL (any method, headers and body; a 2xx with a complete body, framed by its
    /// length or chunked, counts as success) or one scenario against one stack, closed or
    /// open loop, and print the result with the suite's warnings (exit 5 if the suite would
    /// disqualify the window).
    Http(Box<HttpArgs>),
    /// Faults under load: each stack's backends killed, PostgreSQL stopped and started, the
    /// server sent SIGTERM and started again, each under a closed loop of reads and
    /// checkouts — the error window, the 503s, any other failure, the time to serve again,
    /// and a write audit after each; `--soak` runs a long mixed load instead, watching
    /// memory, descriptors and threads. Writes the results and the reliability page.
    Faults(Box<FaultsArgs>),
    /// Print the shell completion script for SHELL, e.g.
    /// `loadgen completions bash > ~/.local/share/bash-completion/completions/loadgen`.
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// List the stacks of the registry, one name per line (for scripts).
    Stacks {
        /// Also print each one's default port and whether its database calls block.
        #[arg(long)]
        long: bool,
    },
}

/// The registry's stack names, for clap: `--help` lists them, a wrong one is a usage error
/// (exit 2) with the closest name suggested.
fn stack_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(bookstore_app::stacks::names())
}

/// The scenarios' names, likewise.
fn scenario_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        bookstore_client::scenario::Scenario::ALL.iter().map(|s| s.name()),
    )
}

#[derive(clap::Args)]
struct SuiteArgs {
    /// Stacks to measure, comma-separated [default: all five].
    #[arg(long, value_delimiter = ',', value_parser = stack_names())]
    stacks: Vec<String>,
    /// A labelled variant, measured beside the stacks as a party of its own:
    /// `label=stack --flag value …`, e.g. `actix-1w=actix-serde-diesel --workers 1` (its
    /// flags replace the suite's of the same name). Repeatable.
    #[arg(long = "variant", value_name = "LABEL=STACK FLAGS")]
    variants: Vec<String>,
    /// Also measure each stack behind a relay (`db-relay`, from --bin-dir) that adds this
    /// round trip to every exchange with its database, comma-separated (e.g. `250us,1ms`;
    /// `0` is the stacks themselves): each is a labelled variant `<stack>.db<latency>` in
    /// the same rounds. A variant takes one too: `--variant "far=axum-serde-sqlx
    /// --db-latency 1ms"`.
    #[arg(long, value_delimiter = ',', value_parser = humantime::parse_duration,
          conflicts_with_all = ["targets", "compose"])]
    db_latency: Vec<Duration>,
    /// Pin each tier to CPUs of its own, e.g. `server=0,client=1,db=1` (a CPU, a range
    /// `0-3`, or several joined by `+`; `relay=` for the database latency relays, else
    /// they go with `db`). Recorded in the results as the kernel reports it back.
    #[arg(long, value_parser = bookstore_harness::placement::Placement::parse)]
    cpus: Option<bookstore_harness::placement::Placement>,
    /// Scenarios, comma-separated [default: all twelve].
    #[arg(long, value_delimiter = ',', value_parser = scenario_names())]
    scenarios: Vec<String>,
    /// Connections per cell, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "128,256")]
    concurrency: Vec<u32>,
    /// The shortest warm-up before each window; it lasts until every connection has had an
    /// answer (at most 5 s).
    #[arg(long, default_value = "200ms", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// The shortest measurement window; it lasts until it holds one answer per connection
    /// (at most 4 × this).
    #[arg(long, default_value = "500ms", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Rounds per cell: every stack and the scenario's ceiling measure one window per round,
    /// side by side, and are compared round by round (at least 2 for a verdict).
    #[arg(long, default_value_t = DEFAULT_ROUNDS, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Run the rounds this many times over (rounds × repeat windows per cell).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// A short run: 3 rounds of 200 ms windows after 100 ms warm-ups (overrides --rounds,
    /// --warmup and --duration), without the fixed-load phase unless --rates asks for it.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    servers: ServerFlags,
    /// A request without an answer after this is an error.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    request_timeout: Duration,
    /// Fully validate one accepted response in this many per connection (0: never).
    #[arg(long, default_value_t = 1000)]
    validate_every: u64,
    /// The results file [default: summary/results/<UTC time>.json].
    #[arg(long)]
    output: Option<PathBuf>,
    /// The HTML summary to write at the end.
    #[arg(long, default_value = DEFAULT_PAGE)]
    report: PathBuf,
    /// Use this existing PostgreSQL server (its user needs CREATEDB) instead of a throwaway
    /// cluster. Not read from DATABASE_URL on purpose: the suite truncates what it creates.
    #[arg(long)]
    database_url: Option<String>,
    /// Where the throwaway database comes from: `binaries` (a cluster of this machine's
    /// PostgreSQL binaries, the default) or `testcontainers` (a postgres:17 container through
    /// Docker; needs loadgen built with `--features testcontainers`). Its processes are not
    /// this suite's children then: PostgreSQL CPU is recorded as not measured.
    #[arg(long, default_value = "binaries", value_parser = parse_provider)]
    db_provider: bookstore_fixture::Provider,
    /// Keep fsync and synchronous commit on in the throwaway cluster (writes then measure
    /// this machine's disk as much as the stacks).
    #[arg(long)]
    durable: bool,
    /// Skip the HTTP and database ceilings.
    #[arg(long)]
    no_ceilings: bool,
    /// Measure each database ceiling (sqlx and diesel) also with as many clients as the
    /// stacks' concurrency, not only one per pooled connection (the page's ceiling is the
    /// fastest of them; the default run measured that these never set it, see README).
    #[arg(long, conflicts_with = "no_ceilings")]
    db_ceiling_at_concurrency: bool,
    /// The fixed-load phase's rates, comma-separated: a share of the slowest stack's
    /// goodput at the lowest concurrency (`0.7`, `70%`) or requests per second (`5000`).
    /// After each scenario's closed-loop rounds, every stack is offered each rate in an open
    /// loop (latency from the intended send time), in rounds like the closed loop's
    /// [default: 0.7; with --quick, no fixed-load phase unless this asks for one].
    #[arg(long, value_delimiter = ',', value_parser = bookstore_record::results::Rate::parse)]
    rates: Option<Vec<bookstore_record::results::Rate>>,
    /// Skip the fixed-load phase.
    #[arg(long, conflicts_with = "rates")]
    no_equal_load: bool,
    /// Poisson arrivals in the fixed-load phase instead of evenly spaced ones.
    #[arg(long, conflicts_with = "no_equal_load")]
    poisson: bool,
    /// Measure stacks that are already running, `name=http://host:port`, comma-separated
    /// (e.g. in containers or on another host): the suite starts none of them, restores and
    /// audits the database of --database-url, which they must use, and reports their CPU
    /// and memory as not measured (it cannot see their processes).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["stacks", "compose"])]
    targets: Vec<String>,
    /// The five stacks of docker-compose.yml and, unless --database-url is given, its
    /// database: from the host (`--compose`, or `=host`) on 127.0.0.1:8081–8085 (SPEC §1
    /// ports) and 127.0.0.1:55432; from a container in the compose network (`=network`, as
    /// the file's loadgen service runs) by service name.
    #[arg(long, value_name = "FROM", num_args = 0..=1, require_equals = true, default_missing_value = "host",
          value_parser = clap::builder::PossibleValuesParser::new(bookstore_suite::ComposeFrom::NAMES),
          conflicts_with = "stacks")]
    compose: Option<String>,
    /// Be client K of N, each on its own host, loading the same --targets together: this
    /// client opens its share of each cell's connections; only shard 1 restores and audits
    /// the database. Combine the N results files with `loadgen merge`. Needs --start-at and
    /// --no-ceilings.
    #[arg(long, value_name = "K/N", requires = "start_at")]
    shard: Option<String>,
    /// The same moment on every shard, in seconds since the Unix epoch (e.g.
    /// `$(( $(date +%s) + 60 ))`), at which the first cell begins; every later cell has a
    /// fixed slot after it, so the shards' windows coincide (keep the hosts' clocks in sync).
    #[arg(long, value_name = "UNIX_TIME", requires = "shard")]
    start_at: Option<u64>,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The shards' results files, one per shard.
    #[arg(required = true, num_args = 2..)]
    shards: Vec<PathBuf>,
    /// The merged results file.
    #[arg(short, long)]
    output: PathBuf,
    /// Also render the HTML summary of the merged run here.
    #[arg(long)]
    report: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CompareArgs {
    /// The runs before: a results file, or several separated by commas.
    #[arg(required = true, num_args = 1, value_delimiter = ',')]
    base: Vec<PathBuf>,
    /// The runs after, likewise.
    #[arg(required = true, num_args = 1, value_delimiter = ',')]
    new: Vec<PathBuf>,
    /// Also write the comparison as HTML here.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Exit with status 3 when a target got slower by more than PCT percent and the
    /// difference is distinguishable from noise (for CI pipelines).
    #[arg(long, value_name = "PCT")]
    fail_on_regression: Option<f64>,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Results files; several are read as repeats of the same suite.
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// What to write: the HTML page; Markdown tables of the verdicts (for READMEs and pull
    /// requests); one row per cell as CSV or JSON (units in the column names; see
    /// crates/record/RESULTS.md, "Exports"); or the suite's closing summary as text.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    format: ReportFormat,
    /// Where to write it; `-` for standard output [default: summary/five-stack-summary.html
    /// for html, standard output for the others].
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReportFormat {
    Html,
    Md,
    Csv,
    Json,
    Text,
}

#[derive(clap::Args)]
struct FaultsArgs {
    /// Stacks, comma-separated [default: all five].
    #[arg(long, value_delimiter = ',', value_parser = stack_names())]
    stacks: Vec<String>,
    /// Faults, comma-separated, in order [default: all three, or none with --soak].
    #[arg(long, value_delimiter = ',', value_parser = fault_names())]
    faults: Vec<String>,
    /// Closed-loop connections.
    #[arg(short = 'c', long, default_value_t = 256)]
    connections: u32,
    /// Load before each fault.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    before: Duration,
    /// How long PostgreSQL stays down in `postgres-restart`.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    outage: Duration,
    /// Load after each fault is over.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    after: Duration,
    /// A request without an answer after this is a failure.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// A soak of this length per stack (e.g. 10m): reads, a search and checkouts; the
    /// server's RSS, descriptors and threads every second, p99 every 10 s, the audit at
    /// the end. Only the soak runs unless --faults is given too.
    #[arg(long, value_parser = humantime::parse_duration)]
    soak: Option<Duration>,
    #[command(flatten)]
    servers: ServerFlags,
    /// The results file [default: summary/results/faults-<UTC time>.json, or soak-… with
    /// --soak alone].
    #[arg(long)]
    output: Option<PathBuf>,
    /// Render these faults results files instead of running (a stack's faults from the last
    /// file that has them, its soak likewise).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    from: Vec<PathBuf>,
    /// With --from: the page, or the reliability table as Markdown.
    #[arg(long, value_enum, default_value_t = FaultsFormat::Html, requires = "from")]
    format: FaultsFormat,
    /// The page to write; `-` for standard output.
    #[arg(short = 'o', long = "report", default_value = DEFAULT_RELIABILITY_PAGE)]
    report: PathBuf,
}

/// How the stacks are started, and the client's threads: the same flags for the suite and
/// for `faults`.
#[derive(clap::Args)]
struct ServerFlags {
    /// `--pool-max` of every stack (and of the suite's database ceiling).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pool_max: u32,
    /// `--workers` of every stack [default: number of CPUs].
    #[arg(long)]
    server_workers: Option<usize>,
    /// `--blocking-threads` of the diesel stacks [default: --pool-max].
    #[arg(long)]
    blocking_threads: Option<usize>,
    /// Client threads [default: number of CPUs, the fastest on the 2-core calibration].
    #[arg(long)]
    client_workers: Option<usize>,
    /// Where the release binaries are.
    #[arg(long, default_value = "target/release")]
    bin_dir: PathBuf,
}

impl ServerFlags {
    fn server_workers(&self) -> usize {
        self.server_workers.unwrap_or_else(cpus).max(1)
    }

    fn blocking_threads(&self) -> usize {
        self.blocking_threads.unwrap_or(self.pool_max as usize).max(1)
    }

    fn client_workers(&self) -> usize {
        self.client_workers.unwrap_or_else(cpus).max(1)
    }
}

/// The stacks named on the command line (already checked by clap), or all five.
fn chosen_stacks(names: &[String]) -> anyhow::Result<Vec<bookstore_app::stacks::StackInfo>> {
    if names.is_empty() {
        return Ok(bookstore_app::stacks::ALL.to_vec());
    }
    names
        .iter()
        .map(|name| bookstore_app::stacks::find(name))
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FaultsFormat {
    Html,
    Md,
}

/// The faults' names, for clap.
fn fault_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(bookstore_faults::Fault::ALL.iter().map(|f| f.name()))
}

/// Where `loadgen faults` writes its page.
const DEFAULT_RELIABILITY_PAGE: &str = "summary/reliability.html";

#[derive(clap::Args)]
struct HttpArgs {
    /// The URL, `http://host:port/path` (with --scenario, the stack's `http://host:port`).
    #[arg(value_name = "URL", required_unless_present = "url_flag")]
    url: Option<String>,
    /// The URL, as a flag (as earlier versions took it).
    #[arg(long = "url", id = "url_flag", value_name = "URL", conflicts_with = "url")]
    url_flag: Option<String>,
    /// Load this scenario's requests and judge the answers by its checks, as the suite does
    /// (no restore and no audit: run the suite for those).
    #[arg(long, value_parser = scenario_names())]
    scenario: Option<String>,
    /// The method [default: GET, or POST with a body].
    #[arg(short = 'm', long, conflicts_with = "scenario")]
    method: Option<String>,
    /// A header, `Name: value` (repeatable); a `Host` replaces the URL's.
    #[arg(short = 'H', long = "header", value_name = "HEADER", conflicts_with = "scenario")]
    headers: Vec<String>,
    /// The request body (sent with its Content-Length).
    #[arg(short = 'd', long = "data", value_name = "BODY", conflicts_with = "scenario")]
    data: Option<String>,
    /// The request body, read from this file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "data"])]
    body_file: Option<PathBuf>,
    /// Connections (closed-loop virtual users).
    #[arg(short = 'c', long, default_value_t = 128)]
    connections: usize,
    /// Send exactly this many requests, no warm-up: the window ends when all are answered
    /// (or at -z). Not with --rate.
    #[arg(short = 'n', long, value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["rate", "warmup"])]
    requests: Option<u64>,
    /// Measurement window (Ctrl-C ends it early and prints what was measured)
    /// [default: 3s; with -n, 60s at most].
    #[arg(short = 'z', long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Warm-up before the window.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Client threads.
    #[arg(long, default_value_t = default_client_workers())]
    workers: usize,
    /// Open loop: total requests per second, latency from the intended send time; then
    /// -c is the most connections the client opens.
    #[arg(long)]
    rate: Option<f64>,
    /// With --rate: Poisson arrivals of the same mean rate instead of evenly spaced ones.
    #[arg(long, requires = "rate")]
    poisson: bool,
    /// Fully validate one accepted response in this many per connection (0: never).
    #[arg(long, default_value_t = 1000)]
    validate_every: u64,
    /// A request without a response after this is an error.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// Also write the result as JSON here; `-` for standard output (the lines for people
    /// then go to standard error).
    #[arg(long)]
    json: Option<PathBuf>,
}

fn parse_provider(name: &str) -> Result<bookstore_fixture::Provider, String> {
    name.parse().map_err(|e: bookstore_fixture::FixtureError| e.to_string())
}

fn default_client_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `loadgen http`'s window without -z.
const HTTP_WINDOW: Duration = Duration::from_secs(3);
/// The longest a `-n` run lasts without -z (the window keeps a histogram per second, so the
/// cap also bounds the client's memory; -z lifts it).
const HTTP_COUNTED_WINDOW_MAX: Duration = Duration::from_secs(60);

/// Rounds per cell by default: the fewest at which this machine's noise (a per-round
/// log-ratio spread of about 0.07 in 0.5 s windows) still lets a family of ten pairs see a
/// 25% difference four times in five (README, "How verdicts are made").
const DEFAULT_ROUNDS: u32 = 5;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Suite(args) => suite(*args),
        Command::Report(args) => export(&args).map(|()| 0),
        Command::Compare(args) => compare(&args),
        Command::Merge(args) => merge(&args).map(|()| 0),
        Command::Http(args) => http(*args),
        Command::Faults(args) => faults(*args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "loadgen", &mut std::io::stdout());
            Ok(0)
        }
        Command::Stacks { long } => {
            for stack in bookstore_app::stacks::ALL {
                if long {
                    println!(
                        "{} {} {:?}",
                        stack.identity.service, stack.identity.default_port, stack.db_calls
                    );
                } else {
                    println!("{}", stack.identity.service);
                }
            }
            Ok(0)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("loadgen: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn suite(args: SuiteArgs) -> anyhow::Result<u8> {
    let mut database_url = args.database_url;
    let targets = if let Some(from) = &args.compose {
        let from = bookstore_suite::ComposeFrom::parse(from).map_err(anyhow::Error::msg)?;
        database_url.get_or_insert_with(|| from.database_url().to_owned());
        Some(from.targets().map_err(anyhow::Error::msg)?)
    } else if args.targets.is_empty() {
        None
    } else {
        Some(bookstore_suite::parse_targets(&args.targets).map_err(anyhow::Error::msg)?)
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
        bookstore_app::stacks::names().into_iter().map(str::to_owned).collect();
    let mut variants = Vec::new();
    for spec in &args.variants {
        let variant = bookstore_suite::Variant::parse(spec, &taken).map_err(anyhow::Error::msg)?;
        taken.push(variant.label.clone());
        variants.push(variant);
    }
    let mut latencies: Vec<Duration> =
        args.db_latency.iter().copied().filter(|l| !l.is_zero()).collect();
    latencies.sort();
    latencies.dedup();
    for latency in latencies {
        for stack in &stacks {
            let variant = bookstore_suite::Variant::with_db_latency(*stack, latency);
            if taken.contains(&variant.label) {
                anyhow::bail!("--db-latency: {} is already a stack or variant", variant.label);
            }
            taken.push(variant.label.clone());
            variants.push(variant);
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
    if args.concurrency.is_empty() || args.concurrency.contains(&0) {
        anyhow::bail!("--concurrency needs one or more positive numbers");
    }
    let (warmup, duration, rounds) = if args.quick {
        (Duration::from_millis(100), Duration::from_millis(200), 3)
    } else {
        (args.warmup, args.duration, args.rounds)
    };
    if duration.is_zero() {
        anyhow::bail!("--duration must be longer than zero");
    }
    let id = bookstore_report::environment::file_stamp();
    let shard = match (&args.shard, args.start_at) {
        (Some(spec), Some(start_at)) => {
            Some(bookstore_suite::ShardPlan::parse(spec, start_at).map_err(anyhow::Error::msg)?)
        }
        _ => None,
    };
    let id = match shard {
        Some(shard) => format!("{id}-shard{}of{}", shard.index, shard.count),
        None => id,
    };
    let output = args.output.unwrap_or_else(|| PathBuf::from(format!("summary/results/{id}.json")));
    let options = bookstore_suite::SuiteOptions {
        stacks,
        variants,
        scenarios,
        concurrency: args.concurrency,
        warmup,
        duration,
        rounds,
        repeat: args.repeat,
        pool_max: args.servers.pool_max,
        server_workers: args.servers.server_workers(),
        blocking_threads: args.servers.blocking_threads(),
        client_workers: args.servers.client_workers(),
        request_timeout: args.request_timeout,
        validate_every: args.validate_every,
        bin_dir: args.servers.bin_dir,
        workspace: std::env::current_dir()?,
        output: output.clone(),
        database_url,
        db_provider: args.db_provider,
        running: targets.map(|t| t.into_iter().map(|(_, addr)| addr).collect()),
        shard,
        durable: args.durable,
        ceilings: !args.no_ceilings,
        db_ceiling_at_concurrency: args.db_ceiling_at_concurrency,
        rates: bookstore_record::results::Rate::for_suite(args.rates, args.no_equal_load, args.quick),
        arrivals: if args.poisson { engine::Arrivals::Poisson } else { engine::Arrivals::Constant },
        placement: args.cpus,
        command_line: std::env::args().collect(),
    };
    let started = std::time::Instant::now();
    let stop = bookstore_report::signal::stop_on_signal(
        "loadgen",
        "stopping after this cell's drain; results so far are kept",
    );
    let results = bookstore_suite::run(&options, stop)?;
    report(std::slice::from_ref(&output), &args.report)?;
    eprint!("{}", bookstore_pages::terminal::summary(std::slice::from_ref(&results)));
    let measured = results.stacks.iter().filter(|s| s.status == "measured").count();
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

fn faults(args: FaultsArgs) -> anyhow::Result<u8> {
    use bookstore_faults::{Fault, FaultsOptions};
    use bookstore_pages::reliability as report;
    if !args.from.is_empty() {
        let documents = args
            .from
            .iter()
            .map(|path| bookstore_record::faults::FaultsResults::read(path))
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
        write_output(&output, &text)?;
        return Ok(0);
    }
    let stacks = chosen_stacks(&args.stacks)?;
    let fault_list = match (args.faults.is_empty(), args.soak.is_some()) {
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
    let output = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "summary/results/{kind}-{}.json",
            bookstore_report::environment::file_stamp()
        ))
    });
    let options = FaultsOptions {
        stacks,
        faults: fault_list,
        connections: args.connections,
        client_workers: args.servers.client_workers(),
        steady_before: args.before,
        outage: args.outage,
        steady_after: args.after,
        request_timeout: args.timeout,
        pool_max: args.servers.pool_max,
        server_workers: args.servers.server_workers(),
        blocking_threads: args.servers.blocking_threads(),
        soak: args.soak,
        bin_dir: args.servers.bin_dir.clone(),
        workspace: std::env::current_dir()?,
        output: output.clone(),
        command_line: std::env::args().collect(),
        front: None,
    };
    for stack in &options.stacks {
        let binary = options.bin_dir.join(stack.identity.service);
        if !binary.is_file() {
            anyhow::bail!(
                "{} is not built: run `cargo build --release --workspace --bins` (or give --bin-dir)",
                binary.display()
            );
        }
    }
    let stop = bookstore_report::signal::stop_on_signal(
        "loadgen",
        "stopping after this stack; results so far are kept",
    );
    let results = bookstore_faults::run(&options, stop)?;
    let page = report::render(std::slice::from_ref(&results))?;
    write_output(&args.report, &page)?;
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
    Ok(if results.run.status == "interrupted" {
        bookstore_record::outcome::EXIT_INTERRUPTED
    } else if troubled {
        EXIT_FAULT_NOT_SURVIVED
    } else {
        0
    })
}

/// Exit status of `loadgen faults` when a fault was not survived, a stack failed, or a
/// soak was flagged.
const EXIT_FAULT_NOT_SURVIVED: u8 = 6;

fn merge(args: &MergeArgs) -> anyhow::Result<()> {
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

fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<bookstore_record::results::RunResults>> {
    paths.iter().map(|path| bookstore_record::results::RunResults::read(path)).collect()
}

fn compare(args: &CompareArgs) -> anyhow::Result<u8> {
    let (base, new) = (read_all(&args.base)?, read_all(&args.new)?);
    let changes = bookstore_pages::compare::compare(&base, &new);
    anyhow::ensure!(!changes.is_empty(), "the two sides have no cell in common");
    let pairs = bookstore_pages::compare::pair_verdicts(&base, &new);
    print!("{}", bookstore_pages::compare::table(&changes));
    println!();
    print!("{}", bookstore_pages::compare::pairs_table(&pairs));
    if let Some(output) = &args.output {
        let page = bookstore_pages::compare::render(&base, &new, &changes, &pairs)?;
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
    Ok(if regressions.is_empty() { 0 } else { bookstore_pages::compare::EXIT_REGRESSION })
}

fn report(results: &[PathBuf], output: &std::path::Path) -> anyhow::Result<()> {
    let page = bookstore_pages::render(&read_all(results)?)?;
    write_output(output, &page)
}

/// `loadgen report`: the page or an export of `args.results`.
fn export(args: &ReportArgs) -> anyhow::Result<()> {
    use bookstore_pages::export;
    let runs = read_all(&args.results)?;
    let text = match args.format {
        ReportFormat::Html => bookstore_pages::render(&runs)?,
        ReportFormat::Md => export::markdown(&runs),
        ReportFormat::Csv => export::csv(&export::rows(&runs))?,
        ReportFormat::Json => export::json(&export::rows(&runs))?,
        ReportFormat::Text => bookstore_pages::terminal::summary(&runs),
    };
    let output = match (&args.output, args.format) {
        (Some(path), _) => path.clone(),
        (None, ReportFormat::Html) => PathBuf::from(DEFAULT_PAGE),
        (None, _) => PathBuf::from("-"),
    };
    write_output(&output, &text)
}

/// Writes `text` to `output` (its directory made), or to standard output for `-`.
fn write_output(output: &std::path::Path, text: &str) -> anyhow::Result<()> {
    if output == std::path::Path::new("-") {
        use std::io::Write as _;
        return Ok(std::io::stdout().lock().write_all(text.as_bytes())?);
    }
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(output, text)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))
}

/// Where the HTML summary goes unless told otherwise.
const DEFAULT_PAGE: &str = "summary/five-stack-summary.html";

fn http(args: HttpArgs) -> anyhow::Result<u8> {
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
            loadgen::http::Target::Request(loadgen::http::RequestSpec {
                method: args.method.clone(),
                headers: args.headers.clone(),
                body,
            })
        }
        Some(name) => loadgen::http::Target::Scenario(
            bookstore_client::scenario::Scenario::parse(name).map_err(anyhow::Error::msg)?,
        ),
    };
    // `-n`: every request counted, none before the window, as oha and wrk do.
    let (warmup, duration) = match args.requests {
        Some(_) => (Duration::ZERO, args.duration.unwrap_or(HTTP_COUNTED_WINDOW_MAX)),
        None => (args.warmup, args.duration.unwrap_or(HTTP_WINDOW)),
    };
    let url = args.url.or(args.url_flag).expect("clap requires one");
    let stop = bookstore_report::signal::stop_on_signal(
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
        stop: Arc::clone(&stop),
        live: None,
        settle: None,
        requests: args.requests,
    };
    let cell = loadgen::http::measure(&url, &target, &plan, args.validate_every)?;
    // With the JSON on standard output, the lines for people go to standard error.
    let json_to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    let say = |line: String| {
        if json_to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(format!(
        "{} connections, {:.2} s{}: {:.0} req/s ({:.0} ok/s), errors {}, in flight {:.1}, client CPU {:.2} s",
        plan.connections,
        cell.window_seconds,
        if cell.stopped_early { " (stopped early)" } else { "" },
        cell.throughput_rps,
        cell.goodput_rps,
        cell.counts.errors,
        cell.mean_in_flight,
        cell.cpu_seconds.client,
    ));
    if let Some(latency) = loadgen::http::ranked_histogram(&cell)? {
        let from =
            if cell.open_loop.is_some() { "when each was due" } else { "when each was sent" };
        say(format!("latency of {} answers, timed from {from}:", latency.len()));
        for line in loadgen::http::latency_table(&latency) {
            say(line);
        }
    }
    if let Some(open) = &cell.open_loop {
        let (lag_p50_us, lag_p99_us) = open.send_lag_us.map_or((0, 0), |l| (l.p50_us, l.p99_us));
        say(format!(
            "open loop, {} arrivals: {:.0} req/s offered, {} due in the window, answers {:.1}% of them; client send lag p50 {} µs, p99 {} µs; connections {} of at most {}{}",
            open.arrivals,
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
    if let Some(requests) = args.requests
        && cell.counts.total() < requests
        && !cell.stopped_early
    {
        say(format!(
            "only {} of the {requests} requests were answered within {}: give -z more time",
            cell.counts.total(),
            humantime::format_duration(duration)
        ));
    }
    for warning in &cell.warnings {
        say(format!("warning: {}", warning.message));
    }
    if let Some(path) = args.json {
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
            std::fs::write(&path, bytes)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(bookstore_record::outcome::EXIT_INTERRUPTED);
    }
    let disqualified = bookstore_record::warnings::disqualification(&cell).is_some();
    Ok(if disqualified { bookstore_record::outcome::EXIT_DISQUALIFIED } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn compare_takes_one_or_several_files_per_side() {
        let cli = Cli::try_parse_from(["loadgen", "compare", "a.json,b.json", "c.json"]).unwrap();
        let Command::Compare(args) = cli.command else { panic!("not compare") };
        assert_eq!(args.base, [PathBuf::from("a.json"), PathBuf::from("b.json")]);
        assert_eq!(args.new, [PathBuf::from("c.json")]);
    }

    #[test]
    fn suite_and_faults_start_the_stacks_with_the_same_flags() {
        let flags = ["--pool-max", "8", "--server-workers", "0", "--client-workers", "0"];
        let cli = Cli::try_parse_from(["loadgen", "suite"].iter().chain(&flags)).unwrap();
        let Command::Suite(suite) = cli.command else { panic!("not suite") };
        let cli = Cli::try_parse_from(["loadgen", "faults"].iter().chain(&flags)).unwrap();
        let Command::Faults(faults) = cli.command else { panic!("not faults") };
        for servers in [&suite.servers, &faults.servers] {
            // A 0 would make every stack refuse to start: at least one.
            assert_eq!((servers.server_workers(), servers.client_workers()), (1, 1));
            assert_eq!(servers.blocking_threads(), 8, "the pool's size by default");
            assert_eq!(servers.bin_dir, PathBuf::from("target/release"));
        }
    }
}
