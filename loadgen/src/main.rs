//! `loadgen`: load one URL, run the benchmark suite, render reports.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Parser, Subcommand};
use loadgen::engine::{self, LoadPlan, WindowHooks};
use loadgen::results::{Cell, HTTP_CELL_SCHEMA, LoadMode, SCHEMA_VERSION};

/// The bookstore benchmark's load generator.
#[derive(Parser)]
#[command(name = "loadgen", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load one GET URL (2xx counts as success) and print the result; for calibration.
    Http(HttpArgs),
}

#[derive(clap::Args)]
struct HttpArgs {
    /// The URL, `http://host:port/path`.
    #[arg(long)]
    url: String,
    /// Connections (closed-loop virtual users).
    #[arg(short = 'c', long, default_value_t = 128)]
    connections: usize,
    /// Measurement window.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Warm-up before the window.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Client threads.
    #[arg(long, default_value_t = default_client_workers())]
    workers: usize,
    /// Open loop: total requests per second (latency from the intended send time).
    #[arg(long)]
    rate: Option<f64>,
    /// A request without a response after this is an error.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// Also write the result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn default_client_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Http(args) => http(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("loadgen: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the client's CPU time at the window's edges.
struct ClientCpu {
    start: f64,
    end: f64,
}

impl WindowHooks for ClientCpu {
    fn measure_started(&mut self) {
        self.start = loadgen::procfs::own_cpu_seconds();
    }
    fn measure_ended(&mut self) {
        self.end = loadgen::procfs::own_cpu_seconds();
    }
}

fn http(args: HttpArgs) -> anyhow::Result<()> {
    let (addr, workload) = loadgen::http::RawGet::new(&args.url)?;
    loadgen::http::check_reachable(addr, Duration::from_secs(5))?;
    let plan = LoadPlan {
        addr,
        connections: args.connections.max(1),
        workers: args.workers.max(1),
        warmup: args.warmup,
        duration: args.duration,
        request_timeout: args.timeout,
        rate_rps: args.rate,
        validate_every: 0,
        stop: Arc::new(AtomicBool::new(false)),
    };
    let mut cpu = ClientCpu { start: 0.0, end: 0.0 };
    let report = engine::run(&plan, Arc::new(workload), &mut cpu);
    let mode = args.rate.map_or(LoadMode::Closed, |rate_rps| LoadMode::Open { rate_rps });
    let mut cell = Cell::from_report(
        "http",
        plan.connections as u32,
        0,
        mode,
        args.warmup.as_secs_f64(),
        &report,
    );
    cell.cpu_seconds.client = cpu.end - cpu.start;
    let latency = cell.latency_ok_us;
    println!(
        "{} connections, {:.1} s: {:.0} req/s ({:.0} ok/s), errors {}, p50 {} µs, p99 {} µs, max {} µs, in flight {:.1}, client CPU {:.2} s",
        plan.connections,
        cell.window_seconds,
        cell.throughput_rps,
        cell.goodput_rps,
        cell.counts.errors,
        latency.map_or(0, |l| l.p50_us),
        latency.map_or(0, |l| l.p99_us),
        latency.map_or(0, |l| l.max_us),
        cell.mean_in_flight,
        cell.cpu_seconds.client,
    );
    if let Some(path) = args.json {
        let document = serde_json::json!({
            "schema": HTTP_CELL_SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "url": args.url,
            "throughput_rps": cell.throughput_rps,
            "goodput_rps": cell.goodput_rps,
            "latency_ok_us": cell.latency_ok_us,
            "client_cpu_seconds": cell.cpu_seconds.client,
            "client_workers": plan.workers,
            "cell": cell,
        });
        std::fs::write(&path, serde_json::to_vec_pretty(&document)?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
