//! `loadgen`: load one URL, run the benchmark suite, render reports.

mod args;
mod commands;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use args::*;
use commands::*;

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
    /// List the presets of the registry, one name per line (for scripts; each is its own
    /// binary).
    Stacks {
        /// Also print each one's default port, whether its database calls block, whether it
        /// is a preset or composed, and its binary.
        #[arg(long)]
        long: bool,
        /// Then the 27 composed triples (`framework+serializer+access`), served by their
        /// framework's binary with `--serializer` and `--access`.
        #[arg(long)]
        composed: bool,
    },
}

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
        Command::Stacks { long, composed } => {
            let composed = if composed { bookstore_registry::stacks::composed() } else { &[] };
            let stacks = bookstore_registry::stacks::ALL.iter().chain(composed);
            for stack in stacks {
                if long {
                    println!(
                        "{} {} {:?} {:?} {}",
                        stack.identity.service,
                        stack.identity.default_port,
                        stack.db_calls,
                        stack.kind,
                        stack.binary
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

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
            let tuning = servers.tuning();
            assert_eq!((tuning.workers, servers.client_workers()), (1, 1));
            assert_eq!(tuning.blocking_threads, 8, "the pool's size by default");
            assert_eq!(servers.bin_dir, PathBuf::from("target/release"));
        }
    }
}
