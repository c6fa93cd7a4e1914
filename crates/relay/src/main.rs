//! `db-relay`: a TCP relay that adds a round trip's latency between its clients and a
//! server, e.g. the stacks and PostgreSQL (see the bookstore-relay crate).
//!
//! ```text
//! db-relay run --bind 127.0.0.1:6432 --upstream 127.0.0.1:5432 --round-trip 1ms
//! db-relay calibrate --round-trips 0,250us,1ms     # what it adds on this machine
//! ```

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// A TCP relay that adds a round trip's latency, each direction delayed by half of it.
#[derive(Parser)]
#[command(name = "db-relay", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Relay connections until Ctrl-C.
    Run {
        /// Where to listen (the flag's name is the stacks' own).
        #[arg(long)]
        bind: SocketAddr,
        /// Where to relay to.
        #[arg(long)]
        upstream: SocketAddr,
        /// The round trip to add, e.g. `250us`, `1ms`.
        #[arg(long, value_parser = humantime::parse_duration)]
        round_trip: Duration,
    },
    /// Measure what the relay adds on this machine, at each round trip asked for, against
    /// an echo server on loopback reached directly and through the relay alternately.
    Calibrate {
        /// The round trips to measure, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "0s,250us,1ms", value_parser = humantime::parse_duration)]
        round_trips: Vec<Duration>,
        /// Round trips per target.
        #[arg(long, default_value_t = 2000)]
        samples: usize,
    },
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("db-relay: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Run { bind, upstream, round_trip } => {
            let relay = bookstore_relay::Relay::start(bind, upstream, round_trip)?;
            eprintln!(
                "db-relay: {} -> {upstream}, adding {round_trip:?} per round trip; Ctrl-C stops",
                relay.addr()
            );
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(tokio::signal::ctrl_c())?;
        }
        Command::Calibrate { round_trips, samples } => {
            println!(
                "| round trip asked | samples | added p50 | added p99 | error p50 | error p99 |"
            );
            println!("|---|---|---|---|---|---|");
            for target in round_trips {
                let c = bookstore_relay::calibrate(target, samples)?;
                println!(
                    "| {} µs | {} | {:.0} µs | {:.0} µs | {:+.0} µs | {:+.0} µs |",
                    target.as_micros(),
                    c.samples,
                    c.added_p50.as_secs_f64() * 1e6,
                    c.added_p99.as_secs_f64() * 1e6,
                    c.error_p50_us(),
                    c.error_p99_us()
                );
            }
        }
    }
    Ok(())
}
