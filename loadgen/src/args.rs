//! The command line's flags, one clap struct per command: what `--help` shows.
// The doc comments below are `--help`'s text, read in a terminal: a placeholder such as
// `<UTC time>` is meant literally there, not as an HTML tag.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;
use std::time::Duration;

/// The registry's stack names, for clap: the presets' shown in `--help`; every composed
/// triple's (`framework+serializer+access`) and every name in the per-core layout
/// (`…@per-core`) accepted but not listed; a wrong one is a usage error (exit 2) with the
/// closest name suggested.
pub(crate) fn stack_names() -> clap::builder::PossibleValuesParser {
    use bookstore_registry::stacks::{self, Layout};
    use clap::builder::PossibleValue;
    let presets = stacks::ALL.iter().map(|s| PossibleValue::new(s.identity.service));
    let per_core = stacks::ALL.iter().map(|s| s.in_layout(Layout::PerCore).identity.service);
    let composed = stacks::composed()
        .iter()
        .flat_map(|s| [s.identity.service, s.in_layout(Layout::PerCore).identity.service]);
    let hidden = per_core.chain(composed).map(|name| PossibleValue::new(name).hide(true));
    clap::builder::PossibleValuesParser::new(presets.chain(hidden))
}

/// The scenarios' names, likewise.
pub(crate) fn scenario_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        bookstore_client::scenario::Scenario::ALL.iter().map(|s| s.name()),
    )
}

#[derive(clap::Args)]
pub(crate) struct SuiteArgs {
    /// Stacks to measure, comma-separated: presets, or any framework+serializer+access
    /// triple such as `axum+sonic-rs+diesel-async` (`loadgen stacks --composed` lists them),
    /// each in the per-core layout with `@per-core` (`axum-serde-sqlx@per-core`)
    /// [default: the five presets].
    #[arg(long, value_delimiter = ',', value_parser = stack_names())]
    pub(crate) stacks: Vec<String>,
    /// A labelled variant, measured beside the stacks as a party of its own:
    /// `label=stack --flag value …`, e.g. `actix-1w=actix-serde-diesel --workers 1` (its
    /// flags replace the suite's of the same name; without flags it is a twin, as with
    /// --twin). Repeatable.
    #[arg(long = "variant", value_name = "LABEL=STACK FLAGS")]
    pub(crate) variants: Vec<String>,
    /// Which stack is measured a second time, as its twin `<stack>.twin` [default: the
    /// first of --stacks]: the same binary and flags in a process of its own, in the same
    /// rounds. The twin is judged against its stack alone and never ranked; the page and
    /// the terminal say in how many cells that pair, which has nothing to find, was called
    /// different (the run's own false-call rate). One more party: the stacks' windows take
    /// a sixth longer with five stacks. Not with --targets, --compose or --shard (stacks
    /// the suite does not start), nor by default with --quick (which it would take past
    /// five minutes: ask for one with --twin).
    #[arg(long, value_parser = stack_names(), conflicts_with_all = ["targets", "compose", "no_twin"])]
    pub(crate) twin: Option<String>,
    /// No twin: measure every stack once.
    #[arg(long)]
    pub(crate) no_twin: bool,
    /// Also measure each stack behind a relay (`db-relay`, from --bin-dir) that adds this
    /// round trip to every exchange with its database, comma-separated (e.g. `250us,1ms`;
    /// `0` is the stacks themselves): each is a labelled variant `<stack>.db<latency>` in
    /// the same rounds. A variant takes one too: `--variant "far=axum-serde-sqlx
    /// --db-latency 1ms"`.
    #[arg(long, value_delimiter = ',', value_parser = humantime::parse_duration,
          conflicts_with_all = ["targets", "compose"])]
    pub(crate) db_latency: Vec<Duration>,
    /// Also measure each stack with this many idle keep-alive connections held open to it
    /// through each of its windows, comma-separated (e.g. `1000,10000`; `0` is the stacks
    /// themselves): each is a labelled variant `<stack>.idle<N>` in the same rounds, its
    /// memory per connection on the page. Each connection pings `/health` once every 5 s.
    /// A variant takes one too: `--variant "many=axum-serde-sqlx --idle-connections 5000"`.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["targets", "compose"])]
    pub(crate) idle_connections: Vec<u64>,
    /// Pin each tier to CPUs of its own, e.g. `server=0,client=1,db=1` (a CPU, a range
    /// `0-3`, or several joined by `+`; `relay=` for the database latency relays, else
    /// they go with `db`). Recorded in the results as the kernel reports it back.
    #[arg(long, value_parser = bookstore_runner::harness::placement::Placement::parse)]
    pub(crate) cpus: Option<bookstore_runner::harness::placement::Placement>,
    /// Scenarios, comma-separated [default: all twelve].
    #[arg(long, value_delimiter = ',', value_parser = scenario_names())]
    pub(crate) scenarios: Vec<String>,
    #[command(flatten)]
    pub(crate) measurement: bookstore_record::results::Measurement,
    /// A short run: 3 rounds of 200 ms windows after 100 ms warm-ups (overrides --rounds,
    /// --warmup and --duration), without the fixed-load phase unless --rates asks for it,
    /// and without the default twin unless --twin asks for one.
    #[arg(long)]
    pub(crate) quick: bool,
    #[command(flatten)]
    pub(crate) servers: ServerFlags,
    /// Fully validate one accepted response in this many per connection (0: never).
    #[arg(long, default_value_t = 1000)]
    pub(crate) validate_every: u64,
    /// The results file, compressed when its name ends in `.zst` [default:
    /// summary/results/<UTC time>.json.zst]; each window goes to its journal beside it
    /// (`<UTC time>.journal`) as it ends.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) output: Option<PathBuf>,
    /// Go on with the run of this journal, killed or stopped part way: the same command
    /// (the build, the machine and the flags that change what is measured must be the
    /// journal's, or it is refused with exit status 2); only the windows it lacks are
    /// measured, a round cut short again whole.
    #[arg(long, value_name = "JOURNAL")]
    pub(crate) resume: Option<PathBuf>,
    /// The HTML summary to write at the end.
    #[arg(long, default_value = DEFAULT_PAGE)]
    pub(crate) report: PathBuf,
    /// Use this existing PostgreSQL server (its user needs CREATEDB) instead of a throwaway
    /// cluster. Not read from DATABASE_URL on purpose: the suite truncates what it creates.
    #[arg(long)]
    pub(crate) database_url: Option<String>,
    /// Where the throwaway database comes from: `binaries` (a cluster of this machine's
    /// PostgreSQL binaries, the default) or `testcontainers` (a postgres:17 container through
    /// Docker; needs loadgen built with `--features testcontainers`). Its processes are not
    /// this suite's children then: PostgreSQL CPU is recorded as not measured.
    #[arg(long, default_value = "binaries", value_parser = parse_provider)]
    pub(crate) db_provider: bookstore_fixture::Provider,
    /// Skip the HTTP and database ceilings.
    #[arg(long)]
    pub(crate) no_ceilings: bool,
    /// Measure each database ceiling (sqlx and diesel) also with as many clients as the
    /// stacks' concurrency, not only one per pooled connection (the page's ceiling is the
    /// fastest of them; docs/method.md, "The ceilings", says when they set it).
    #[arg(long, conflicts_with = "no_ceilings")]
    pub(crate) db_ceiling_at_concurrency: bool,
    /// The fixed-load phase's rates, comma-separated: a share of the slowest stack's
    /// goodput at the lowest concurrency (`0.7`, `70%`) or requests per second (`5000`).
    /// After each scenario's closed-loop rounds, every stack is offered each rate in an open
    /// loop (latency from the intended send time), in rounds like the closed loop's
    /// [default: 0.7; with --slo, a ladder from 10% to 125%; with --quick and no --slo, no
    /// fixed-load phase unless this asks for one].
    #[arg(long, value_delimiter = ',', value_parser = bookstore_record::results::Rate::parse)]
    pub(crate) rates: Option<Vec<bookstore_record::results::Rate>>,
    /// Skip the fixed-load phase.
    #[arg(long, conflicts_with = "rates")]
    pub(crate) no_equal_load: bool,
    /// A latency objective, `pNN=DURATION` (`p99=10ms`), or one scenario's own
    /// (`bookById:p99=5ms`); repeatable. The fixed-load phase then offers a rate ladder
    /// (unless --rates names the rungs) and the pages show each party's capacity at each
    /// objective, compared by the verdict method (docs/method.md, "Capacity at an objective").
    #[arg(long, value_parser = bookstore_record::objective::ScopedObjective::parse,
          conflicts_with = "no_equal_load")]
    pub(crate) slo: Vec<bookstore_record::objective::ScopedObjective>,
    /// Poisson arrivals in the fixed-load phase instead of evenly spaced ones.
    #[arg(long, conflicts_with = "no_equal_load")]
    pub(crate) poisson: bool,
    /// Measure stacks that are already running, `name=http://host:port`, comma-separated
    /// (e.g. in containers or on another host): the suite starts none of them, restores and
    /// audits the database of --database-url, which they must use, and reports their CPU
    /// and memory as not measured (it cannot see their processes).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["stacks", "compose"])]
    pub(crate) targets: Vec<String>,
    /// The five stacks of docker-compose.yml and, unless --database-url is given, its
    /// database: from the host (`--compose`, or `=host`) on 127.0.0.1:8081–8085 (SPEC §1
    /// ports) and 127.0.0.1:55432; from a container in the compose network (`=network`, as
    /// the file's loadgen service runs) by service name.
    #[arg(long, value_name = "FROM", num_args = 0..=1, require_equals = true, default_missing_value = "host",
          value_parser = clap::builder::PossibleValuesParser::new(bookstore_runner::suite::ComposeFrom::NAMES),
          conflicts_with = "stacks")]
    pub(crate) compose: Option<String>,
    /// Be client K of N, each on its own host, loading the same --targets together: this
    /// client opens its share of each cell's connections; only shard 1 restores and audits
    /// the database. Combine the N results files with `loadgen merge`. Needs --start-at and
    /// --no-ceilings.
    #[arg(long, value_name = "K/N", requires = "start_at")]
    pub(crate) shard: Option<String>,
    /// The same moment on every shard, in seconds since the Unix epoch (e.g.
    /// `$(( $(date +%s) + 60 ))`), at which the first cell begins; every later cell has a
    /// fixed slot after it, so the shards' windows coincide (keep the hosts' clocks in sync).
    #[arg(long, value_name = "UNIX_TIME", requires = "shard")]
    pub(crate) start_at: Option<u64>,
}

#[derive(clap::Args)]
pub(crate) struct MergeArgs {
    /// The shards' results files, one per shard.
    #[arg(required = true, num_args = 2..)]
    pub(crate) shards: Vec<PathBuf>,
    /// The merged results file.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Also render the HTML summary of the merged run here.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The runs before: a results file, or several separated by commas.
    #[arg(required = true, num_args = 1, value_delimiter = ',')]
    pub(crate) base: Vec<PathBuf>,
    /// The runs after, likewise.
    #[arg(required = true, num_args = 1, value_delimiter = ',')]
    pub(crate) new: Vec<PathBuf>,
    /// Also write the comparison as HTML here.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Exit with status 3 when a target got slower by more than PCT percent and the
    /// difference is distinguishable from noise (for CI pipelines).
    #[arg(long, value_name = "PCT")]
    pub(crate) fail_on_regression: Option<f64>,
}

#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// Results files; several are read as repeats of the same suite.
    #[arg(required = true)]
    pub(crate) results: Vec<PathBuf>,
    /// What to write: the HTML page; Markdown tables of the verdicts (for READMEs and pull
    /// requests), or (`md-axes`) only the effects of a grid of composed stacks' axes; one row per
    /// cell as CSV or JSON (units in the column names; see crates/record/RESULTS.md,
    /// "Exports"); or the suite's closing summary as text.
    #[arg(long, default_value = "html", value_parser = format_names())]
    pub(crate) format: bookstore_report::Format,
    /// Where to write it; `-` for standard output [default: summary/five-stack-summary.html
    /// for html, standard output for the others].
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
}

/// The report's formats by name ([`bookstore_report::Format::ALL`]), as clap lists them.
fn format_names() -> impl clap::builder::TypedValueParser<Value = bookstore_report::Format> {
    let names = bookstore_report::Format::ALL.map(|f| f.name());
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).map(|name: String| {
        bookstore_report::Format::parse(&name).expect("one of the names listed")
    })
}

#[derive(clap::Args)]
pub(crate) struct FaultsArgs {
    /// Stacks, comma-separated: presets or framework+serializer+access triples
    /// [default: the five presets].
    #[arg(long, value_delimiter = ',', value_parser = stack_names())]
    pub(crate) stacks: Vec<String>,
    /// Faults, comma-separated, in order [default: all three, or none with --soak].
    #[arg(long, value_delimiter = ',', value_parser = fault_names())]
    pub(crate) faults: Vec<String>,
    #[command(flatten)]
    pub(crate) load: bookstore_record::faults::FaultLoad,
    #[command(flatten)]
    pub(crate) servers: ServerFlags,
    /// The results file [default: summary/results/faults-<UTC time>.json.zst, or soak-… with
    /// --soak alone]; each stack's record goes to its journal beside it as the stack ends.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) output: Option<PathBuf>,
    /// Go on with the run of this journal, killed or stopped part way: only the stacks it
    /// lacks are measured (the same command; another build, machine or setting is refused,
    /// exit status 2).
    #[arg(long, value_name = "JOURNAL", conflicts_with = "from")]
    pub(crate) resume: Option<PathBuf>,
    /// Render these faults results files instead of running (a stack's faults from the last
    /// file that has them, its soak likewise).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub(crate) from: Vec<PathBuf>,
    /// With --from: the page, or the reliability table as Markdown.
    #[arg(long, value_enum, default_value_t = FaultsFormat::Html, requires = "from")]
    pub(crate) format: FaultsFormat,
    /// The page to write; `-` for standard output.
    #[arg(short = 'o', long = "report", default_value = DEFAULT_RELIABILITY_PAGE)]
    pub(crate) report: PathBuf,
}

/// How the stacks are started, and the client's threads: the same flags for the suite and
/// for `faults`.
#[derive(clap::Args)]
pub(crate) struct ServerFlags {
    /// `--pool-max` of every stack (and of the suite's database ceiling).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) pool_max: u32,
    /// `--workers` of every stack [default: number of CPUs].
    #[arg(long)]
    pub(crate) server_workers: Option<usize>,
    /// `--blocking-threads` of the diesel stacks [default: --pool-max].
    #[arg(long)]
    pub(crate) blocking_threads: Option<usize>,
    /// Client threads [default: number of CPUs, the fastest on the 2-core calibration].
    #[arg(long)]
    pub(crate) client_workers: Option<usize>,
    /// Where the release binaries are.
    #[arg(long, default_value = "target/release")]
    pub(crate) bin_dir: PathBuf,
}

impl ServerFlags {
    /// What every stack is started with; a 0 would make every stack refuse to start, so
    /// at least one worker and thread.
    pub(crate) fn tuning(&self) -> bookstore_registry::Tuning {
        bookstore_registry::Tuning {
            pool_max: self.pool_max,
            workers: self.server_workers.unwrap_or_else(cpus).max(1),
            blocking_threads: self.blocking_threads.unwrap_or(self.pool_max as usize).max(1),
        }
    }

    pub(crate) fn client_workers(&self) -> usize {
        self.client_workers.unwrap_or_else(cpus).max(1)
    }
}

/// The stacks named on the command line (already checked by clap), or all five.
pub(crate) fn chosen_stacks(
    names: &[String],
) -> anyhow::Result<Vec<bookstore_registry::stacks::StackInfo>> {
    if names.is_empty() {
        return Ok(bookstore_registry::stacks::ALL.to_vec());
    }
    names
        .iter()
        .map(|name| bookstore_registry::stacks::find(name))
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FaultsFormat {
    Html,
    Md,
}

/// The faults' names, for clap.
pub(crate) fn fault_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        bookstore_runner::faults::Fault::ALL.iter().map(|f| f.name()),
    )
}

/// Where `loadgen faults` writes its page.
pub(crate) const DEFAULT_RELIABILITY_PAGE: &str = "summary/reliability.html";

#[derive(clap::Args)]
pub(crate) struct HttpArgs {
    /// The URL, `http://host:port/path` (with --scenario, the stack's `http://host:port`).
    #[arg(value_name = "URL", required_unless_present = "url_flag")]
    pub(crate) url: Option<String>,
    /// The URL, as a flag (as earlier versions took it).
    #[arg(long = "url", id = "url_flag", value_name = "URL", conflicts_with = "url")]
    pub(crate) url_flag: Option<String>,
    /// Load this scenario's requests and judge the answers by its checks, as the suite does
    /// (no restore and no audit: run the suite for those).
    #[arg(long, value_parser = scenario_names())]
    pub(crate) scenario: Option<String>,
    /// The method [default: GET, or POST with a body].
    #[arg(short = 'm', long, conflicts_with = "scenario")]
    pub(crate) method: Option<String>,
    /// A header, `Name: value` (repeatable); a `Host` replaces the URL's.
    #[arg(short = 'H', long = "header", value_name = "HEADER", conflicts_with = "scenario")]
    pub(crate) headers: Vec<String>,
    /// The request body (sent with its Content-Length).
    #[arg(short = 'd', long = "data", value_name = "BODY", conflicts_with = "scenario")]
    pub(crate) data: Option<String>,
    /// The request body, read from this file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "data"])]
    pub(crate) body_file: Option<PathBuf>,
    /// Connections (closed-loop virtual users).
    #[arg(short = 'c', long, default_value_t = 128)]
    pub(crate) connections: usize,
    /// Send exactly this many requests, no warm-up: the window ends when all are answered
    /// (or at -z). Not with --rate.
    #[arg(short = 'n', long, value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["rate", "warmup"])]
    pub(crate) requests: Option<u64>,
    /// Measurement window (Ctrl-C ends it early and prints what was measured)
    /// [default: 3s; with -n, 60s at most].
    #[arg(short = 'z', long, value_parser = humantime::parse_duration)]
    pub(crate) duration: Option<Duration>,
    /// Warm-up before the window.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub(crate) warmup: Duration,
    /// Client threads.
    #[arg(long, default_value_t = default_client_workers())]
    pub(crate) workers: usize,
    /// Open loop: total requests per second, latency from the intended send time; then
    /// -c is the most connections the client opens.
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// With --rate: Poisson arrivals of the same mean rate instead of evenly spaced ones.
    #[arg(long, requires = "rate")]
    pub(crate) poisson: bool,
    /// Fully validate one accepted response in this many per connection (0: never).
    #[arg(long, default_value_t = 1000)]
    pub(crate) validate_every: u64,
    /// A request without a response after this is an error.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) timeout: Duration,
    /// Also write the result as JSON here; `-` for standard output (the lines for people
    /// then go to standard error).
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Find the URL's capacity under this latency objective, `pNN=DURATION` (repeatable,
    /// e.g. `--slo p99=10ms`): open-loop windows of -z (default 2s) on a rate ladder laid
    /// around --rate, or around the closed-loop rate of a first window, printing each rung
    /// (docs/method.md, "Capacity at an objective").
    #[arg(long, value_parser = bookstore_runner::http::capacity::Objective::parse, conflicts_with = "requests")]
    pub(crate) slo: Vec<bookstore_runner::http::capacity::Objective>,
    /// With --slo: climb this many ladders, for the capacity's interval (of this one
    /// process: `loadgen ab --slo` restarts a server to sample the spread between processes).
    #[arg(long, default_value_t = 1, requires = "slo",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) repeat: u32,
    /// With --slo: the highest rate a ladder offers, requests per second [default: twice the
    /// closed-loop rate of a first window].
    #[arg(long, value_name = "RPS", requires = "slo", value_parser = parse_rate)]
    pub(crate) max_rate: Option<f64>,
}

/// A positive number of requests per second.
pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("{text:?}: expected a positive number of requests per second")),
    }
}

pub(crate) fn parse_provider(name: &str) -> Result<bookstore_fixture::Provider, String> {
    name.parse().map_err(|e: bookstore_fixture::FixtureError| e.to_string())
}

pub(crate) fn default_client_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `loadgen http`'s window without -z.
pub(crate) const HTTP_WINDOW: Duration = Duration::from_secs(3);
/// The longest a `-n` run lasts without -z (the window keeps a histogram per second, so the
/// cap also bounds the client's memory; -z lifts it).
pub(crate) const HTTP_COUNTED_WINDOW_MAX: Duration = Duration::from_secs(60);

pub(crate) fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Where `loadgen suite` and `loadgen report` write the HTML summary.
pub(crate) const DEFAULT_PAGE: &str = "summary/five-stack-summary.html";

#[derive(clap::Args)]
pub(crate) struct StudyArgs {
    /// The study (`--list` names them).
    #[arg(required_unless_present = "list")]
    pub(crate) name: Option<String>,
    /// Name the studies, each with what it asks, and stop.
    #[arg(long)]
    pub(crate) list: bool,
    /// The seconds-long version of the study, with its shape (for the tests).
    #[arg(long)]
    pub(crate) tiny: bool,
    /// Runs of each design of a study of several, alternated.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub(crate) runs: u32,
    /// A design of its own, `NAME='FLAGS'` (suite flags; empty for the defaults): the
    /// `alternation` study's, or one more for any other.
    #[arg(long = "design", value_name = "NAME=FLAGS")]
    pub(crate) designs: Vec<String>,
    /// Print the `-p PACKAGE` flags of the binaries the study needs beyond the suite's (its
    /// composed stacks'), for `scripts/study.sh`, and stop.
    #[arg(long)]
    pub(crate) packages: bool,
    /// The results file of a study of one design [default: summary/results/<UTC
    /// time>-NAME-study.json.zst].
    #[arg(long, conflicts_with = "resume")]
    pub(crate) output: Option<PathBuf>,
    /// Go on with the study of this journal, killed or stopped part way: the run it is of
    /// goes on (as `loadgen suite --resume` or `loadgen ab --resume`), the runs before it
    /// stay as they were, the ones after it are run. The same command, or it is refused
    /// with exit status 2.
    #[arg(long, value_name = "JOURNAL")]
    pub(crate) resume: Option<PathBuf>,
    /// Its page [default: summary/NAME-study.html].
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
    /// Where the release binaries are.
    #[arg(long, default_value = "target/release")]
    pub(crate) bin_dir: PathBuf,
    /// `loadgen suite` flags for every run, after `--` (they follow the study's own, so they
    /// win where a flag takes one value).
    #[arg(last = true)]
    pub(crate) suite: Vec<String>,
}

#[derive(clap::Args)]
pub(crate) struct AbArgs {
    /// A: a running server's URL (http://host:port), a stack of the registry
    /// (`loadgen stacks --composed`), or a command that starts a server keeping the contract
    /// ('path/to/binary --flag value': it is given --bind and DATABASE_URL as a stack is).
    pub(crate) a: String,
    /// B, likewise.
    #[arg(required_unless_present = "twin")]
    pub(crate) b: Option<String>,
    /// Ask A against itself (a second process where the run starts A): a calibration, whose
    /// answer should be "not distinguishable".
    #[arg(long, conflicts_with = "b")]
    pub(crate) twin: bool,
    /// The scenario both are asked [default: bookById].
    #[arg(long, value_parser = scenario_names(), conflicts_with = "path")]
    pub(crate) scenario: Option<String>,
    /// Instead of a scenario, one request: its path (any 2xx with a complete body is a
    /// success), with -m, -H and -d as `loadgen http` takes them.
    #[arg(long)]
    pub(crate) path: Option<String>,
    /// The request's method [default: GET, or POST with a body].
    #[arg(short = 'm', long, requires = "path")]
    pub(crate) method: Option<String>,
    /// A header of the request, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER", requires = "path")]
    pub(crate) headers: Vec<String>,
    /// The request's body.
    #[arg(short = 'd', long = "data", value_name = "BODY", requires = "path")]
    pub(crate) data: Option<String>,
    #[command(flatten)]
    pub(crate) settings: bookstore_record::ab::AbSettings,
    /// Ask each side's capacity at this latency objective instead of its rate,
    /// `pNN=DURATION` (`p99=10ms`): every block a fresh process of each, one rate ladder each
    /// (docs/method.md, "Capacity at an objective"); both sides must be started by the run.
    #[arg(long, value_parser = bookstore_record::objective::Objective::parse,
          conflicts_with = "rate")]
    pub(crate) slo: Option<bookstore_record::objective::Objective>,
    /// With --slo: the highest rate a ladder offers, requests per second [default: twice the
    /// highest closed-loop rate of the first block].
    #[arg(long, value_name = "RPS", requires = "slo", value_parser = parse_rate)]
    pub(crate) max_rate: Option<f64>,
    /// With --slo: one more party, each compared with A (repeatable; A's own name again is
    /// its twin): the capacity study's form. The parties are then named by their stacks.
    #[arg(long, value_name = "SIDE", requires = "slo")]
    pub(crate) also: Vec<String>,
    /// Go on with the question of this journal, killed or stopped part way: only the blocks
    /// it lacks are measured (the same command; another build, machine or setting is
    /// refused, exit status 2).
    #[arg(long, value_name = "JOURNAL", conflicts_with = "output")]
    pub(crate) resume: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) servers: ServerFlags,
    /// Fully validate one accepted response in this many per connection.
    #[arg(long, default_value_t = 1000)]
    pub(crate) validate_every: u64,
    /// An existing PostgreSQL server for the sides the run starts (its user needs CREATEDB),
    /// or a URL side's database, restored before each window of a write scenario.
    #[arg(long)]
    pub(crate) database_url: Option<String>,
    /// Where a throwaway server comes from: `binaries` or `testcontainers`.
    #[arg(long, default_value = "binaries", value_parser = parse_provider)]
    pub(crate) db_provider: bookstore_fixture::Provider,
    /// The results file [default: summary/results/ab-<UTC time>.json.zst].
    #[arg(long)]
    pub(crate) output: Option<PathBuf>,
    /// Exit with status 3 when B is slower than A by more than PCT percent and the method
    /// calls it (for CI pipelines).
    #[arg(long, value_name = "PCT")]
    pub(crate) fail_on_regression: Option<f64>,
    /// Also write the answer as a page (HTML) here.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
}
