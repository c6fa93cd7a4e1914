//! `loadgen`: load one URL, run the benchmark suite, render reports.

mod args;
mod commands;
mod study;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use args::*;
use commands::*;

/// The bookstore benchmark's load generator.
#[derive(Parser)]
// A flag given twice takes its last value: a study's flags, then the caller's after `--`.
#[command(name = "loadgen", version, args_override_self = true)]
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
    /// One question, answered as precisely as asked: is B faster than A at this request, and
    /// by how much? Windows alternate A B B A; a side the run starts is restarted every few
    /// rounds; it stops when the interval of B ÷ A is within --precision (or --budget is
    /// spent), and prints the answer in words with its interval.
    Ab(Box<AbArgs>),
    /// Run a study: a declared plan of suite runs (`loadgen study --list` names them), one
    /// design, or several alternated run by run; arguments after `--` go to every run.
    Study(StudyArgs),
    /// Write results files again compressed, as `FILE.zst` (any of loadgen's documents, any
    /// version): the same document field for field, its histograms holding the same
    /// counts; every report renders it as the original.
    Compact {
        /// The files.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Remove each original once its compressed file reads back.
        #[arg(long)]
        replace: bool,
    },
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
        Command::Study(args) => run_study(&args),
        Command::Ab(args) => ab(*args),
        Command::Compact { files, replace } => compact(&files, replace).map(|()| 0),
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

/// `loadgen study`: each design's flags parsed as `loadgen suite`'s, then run as it runs.
fn run_study(args: &StudyArgs) -> anyhow::Result<u8> {
    if args.list {
        for study in study::STUDIES {
            println!("{:<12} {}", study.name, study.about);
        }
        return Ok(0);
    }
    let name = args.name.as_deref().expect("clap requires a name without --list");
    let found = study::find(name).map_err(anyhow::Error::msg)?;
    let scale = if args.tiny { study::Scale::Tiny } else { study::Scale::Full };
    let mut plan = (found.plan)(scale);
    for design in &args.designs {
        let (name, flags) = design.split_once('=').ok_or_else(|| {
            anyhow::anyhow!("--design {design:?}: expected NAME='FLAGS' (FLAGS may be empty)")
        })?;
        plan.designs.push(study::Design {
            name: name.to_owned(),
            command: "suite",
            flags: flags.split_whitespace().map(str::to_owned).collect(),
        });
    }
    if args.packages {
        if plan.composed {
            let binaries =
                bookstore_registry::stacks::FRAMEWORKS.map(|f| format!("-p {}", f.binary));
            println!("{}", binaries.join(" "));
        }
        return Ok(0);
    }
    anyhow::ensure!(
        !plan.designs.is_empty(),
        "study {name}: no design; give --design NAME='FLAGS'"
    );
    let single = plan.designs.len() == 1 && plan.designs[0].name.is_empty();
    anyhow::ensure!(
        single || (args.output.is_none() && args.report.is_none()),
        "--output and --report name the one run of a study of one design; {name} runs several"
    );
    let runs = if single { 1 } else { args.runs };
    // Resumed, the study goes on where its journal's run is: the runs before it kept.
    let (stamp, from) = match &args.resume {
        None => (bookstore_record::environment::file_stamp(), (1, 0)),
        Some(journal) => match study::locate(journal, name, &plan.designs, runs) {
            Ok((stamp, run, design)) => (stamp, (run, design)),
            Err(why) => {
                eprintln!("loadgen: --resume {}: {why}", journal.display());
                return Ok(2);
            }
        },
    };
    let mut kept = Vec::new();
    for run in 1..=runs {
        for (index, design) in plan.designs.iter().enumerate() {
            let mut files = study::files(&stamp, name, &design.name, run);
            files.results = args.output.clone().unwrap_or(files.results);
            files.page = args.report.clone().unwrap_or(files.page);
            let what = if design.name.is_empty() {
                name.to_owned()
            } else {
                format!("{name}, {} run {run}", design.name)
            };
            if (run, index) < from {
                let there = if files.results.exists() { "kept" } else { "missing (moved?)" };
                eprintln!(
                    "loadgen study: {what}: before the resume, {there}: {}",
                    files.results.display()
                );
                kept.push(files.results);
                continue;
            }
            let mut argv: Vec<std::ffi::OsString> =
                ["loadgen", design.command, "--bin-dir"].map(Into::into).into();
            argv.push(args.bin_dir.clone().into());
            argv.extend(design.flags.iter().chain(&args.suite).map(Into::into));
            match &args.resume {
                Some(journal) if (run, index) == from => {
                    files.results = match design.command {
                        "ab" => bookstore_runner::ab::resumed_output(journal)?,
                        _ => bookstore_runner::suite::resumed_output(journal)?,
                    };
                    argv.extend(["--resume".into(), journal.clone().into()]);
                }
                _ => argv.extend(["--output".into(), files.results.clone().into()]),
            }
            argv.extend(["--report".into(), files.page.clone().into()]);
            eprintln!("loadgen study: {what}: {}", files.results.display());
            let started = std::time::Instant::now();
            let code = match Cli::try_parse_from(argv)?.command {
                Command::Suite(suite_args) => suite(*suite_args)?,
                Command::Ab(ab_args) => ab(*ab_args)?,
                _ => unreachable!("a study runs suites and capacity questions"),
            };
            eprintln!(
                "loadgen study: {what}: {:.0} s, exit status {code}",
                started.elapsed().as_secs_f64()
            );
            // A disqualified cell is one of the study's findings; anything else ends it.
            if code != 0 && code != bookstore_record::outcome::EXIT_DISQUALIFIED {
                return Ok(code);
            }
            kept.push(files.results);
        }
    }
    let kept: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
    eprintln!("loadgen study: kept {}", kept.join(" "));
    if !single {
        eprintln!(
            "loadgen study: their noise, design by design: scripts/noise-study.py {}",
            kept.join(" ")
        );
    }
    Ok(0)
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

    #[test]
    fn a_flag_given_twice_takes_its_last_value_as_a_study_s_caller_expects() {
        let argv =
            ["loadgen", "suite", "--rounds", "3", "--stacks", "axum-serde-sqlx", "--rounds", "4"];
        let Command::Suite(suite) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not suite")
        };
        assert_eq!(suite.measurement.rounds, 4);
    }

    #[test]
    fn every_study_parses_as_its_command_at_both_scales() {
        for found in study::STUDIES {
            for scale in [study::Scale::Full, study::Scale::Tiny] {
                for design in (found.plan)(scale).designs {
                    let argv = ["loadgen", design.command]
                        .map(String::from)
                        .into_iter()
                        .chain(design.flags);
                    let parsed = Cli::try_parse_from(argv);
                    assert!(
                        parsed.is_ok(),
                        "{} {scale:?} {}: {}",
                        found.name,
                        design.name,
                        parsed.err().map(|e| e.to_string()).unwrap_or_default()
                    );
                }
            }
        }
    }
}
