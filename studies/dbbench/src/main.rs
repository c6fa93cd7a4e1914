//! `dbbench`: database access microbenchmarks (see the crate's documentation and
//! docs/findings.md, "Database access without HTTP").

use std::path::PathBuf;
use std::process::ExitCode;

use bookstore_dbbench::run::{self, Section};
use bookstore_dbbench::settings::Settings;
use clap::{Parser, Subcommand};

/// Database access without HTTP: sqlx on tasks against diesel on threads.
#[derive(Parser)]
#[command(name = "dbbench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the benchmarks on a throwaway PostgreSQL (and MariaDB and SQLite for the bulk
    /// and batch sections) and write the results and the page.
    // Boxed: the settings make it much larger than the other command.
    Run(Box<RunArgs>),
    /// Render the page of a results file.
    Report {
        /// A results file written by `dbbench run` (studies/dbbench/DBBENCH.md describes it).
        results: PathBuf,
        /// Where to write the page.
        #[arg(short, long, default_value = "summary/db-microbench.html")]
        output: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    settings: Settings,
    /// Sections to run, comma-separated.
    #[arg(long, value_delimiter = ',', value_enum, default_value = "crud,bulk,batch,tasks")]
    sections: Vec<Section>,
    /// The results file [default: summary/results/dbbench-TIME.json, TIME the UTC start].
    #[arg(long)]
    output: Option<PathBuf>,
    /// The page to write at the end.
    #[arg(long, default_value = "summary/db-microbench.html")]
    report: PathBuf,
    /// An existing PostgreSQL server (its user needs CREATEDB) instead of a throwaway one.
    #[arg(long)]
    database_url: Option<String>,
    /// Where the throwaway server comes from: `binaries` or `testcontainers` (needs the
    /// `testcontainers` feature of bookstore-fixture).
    #[arg(long, default_value = "binaries", value_parser = parse_provider)]
    db_provider: bookstore_fixture::Provider,
}

fn parse_provider(name: &str) -> Result<bookstore_fixture::Provider, String> {
    name.parse().map_err(|e: bookstore_fixture::FixtureError| e.to_string())
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(args) => run_command(*args),
        Command::Report { results, output } => render(&results, &output),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("dbbench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_command(args: RunArgs) -> anyhow::Result<()> {
    let id = bookstore_record::environment::file_stamp();
    let output =
        args.output.unwrap_or_else(|| PathBuf::from(format!("summary/results/dbbench-{id}.json")));
    let options = run::Options {
        settings: args.settings,
        sections: args.sections,
        database_url: args.database_url,
        provider: args.db_provider,
        output: output.clone(),
        workspace: std::env::current_dir()?,
        command_line: std::env::args().collect(),
        stop: bookstore_runner::console::signal::stop_on_signal(
            "dbbench",
            "stopping after this cell; results so far are kept",
        ),
    };
    let results = run::run(&options)?;
    render(&output, &args.report)?;
    eprintln!(
        "dbbench: {} in {:.0} s; results {}, page {}",
        results.run.status,
        results.run.wall_seconds.unwrap_or_default(),
        output.display(),
        args.report.display()
    );
    Ok(())
}

fn render(results: &std::path::Path, output: &std::path::Path) -> anyhow::Result<()> {
    let results = bookstore_dbbench::results::DbBenchResults::read(results)?;
    let page = bookstore_dbbench::report::render(&results)?;
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(output, page)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", output.display()))
}
