//! `loadgen study NAME`: the studies, each a declared plan of `loadgen suite` runs — the
//! parties, scenarios, rounds and flags that make it — run by the same suite as the default
//! run. A study of one design runs once; a study of several runs them in turn, `--runs`
//! times, so that the hour's drift falls on every design alike (docs/method.md, "Where the
//! noise lives").
//!
//! Adding a study is one entry of [`STUDIES`] and its plan: a function from the scale
//! (`--tiny`, a seconds-long version the tests run) to the designs' flags.

use std::path::{Path, PathBuf};

/// A study: its name on the command line, what it asks, and its plan.
#[derive(Debug)]
pub(crate) struct Study {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) plan: fn(Scale) -> Plan,
}

/// How large a study runs: as declared, or `--tiny`, a seconds-long version with the same
/// shape for the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Full,
    Tiny,
}

/// What a study runs: its designs, each a set of suite flags, in turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub(crate) designs: Vec<Design>,
    /// The composed stacks' binaries are needed (`scripts/study.sh` builds them).
    pub(crate) composed: bool,
}

/// One design: a name (empty for a study of one design), the command that runs it
/// (`suite`, or `ab` for a capacity question) and its flags.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Design {
    pub(crate) name: String,
    pub(crate) command: &'static str,
    pub(crate) flags: Vec<String>,
}

impl Plan {
    fn one(flags: Vec<String>) -> Self {
        let design = Design { name: String::new(), command: "suite", flags };
        Self { designs: vec![design], composed: false }
    }

    fn alternated(designs: &[(&str, Vec<String>)]) -> Self {
        let designs = designs
            .iter()
            .map(|(name, flags)| Design {
                name: (*name).to_owned(),
                command: "suite",
                flags: flags.clone(),
            })
            .collect();
        Self { designs, composed: false }
    }
}

/// Every study, in the order `loadgen study --list` prints them.
pub(crate) const STUDIES: &[Study] = &[
    Study {
        name: "factorial",
        about: "every framework × serializer × access triple and the presets in the same shuffled rounds: each axis's cost on its own",
        plan: factorial,
    },
    Study {
        name: "layout",
        about: "every framework × access in its framework's runtime layout and per-core (serde_json), a twin, in the same shuffled rounds: framework against layout, and each access against the fastest database path",
        plan: layout,
    },
    Study {
        name: "capacity",
        about: "each preset's capacity at a latency objective (p99 ≤ 10 ms) and a twin's, every block a fresh process of each and one rate ladder each",
        plan: capacity,
    },
    Study {
        name: "connections",
        about: "each preset with idle keep-alive connections held open beside the load: memory per connection, and the load beside them",
        plan: connections,
    },
    Study {
        name: "deployment",
        about: "async sqlx against blocking diesel at several pool sizes, blocking threads and database round trips",
        plan: deployment,
    },
    Study {
        name: "schedule",
        about: "a round's windows rotated as one list against grouped by concurrency, alternated run by run",
        plan: schedule,
    },
    Study {
        name: "alternation",
        about: "designs given with --design NAME='FLAGS', alternated run by run (e.g. two window lengths)",
        plan: alternation,
    },
    Study {
        name: "sequential",
        about: "the default budgeted design against five fixed rounds of 0.5 s windows, alternated run by run",
        plan: sequential,
    },
];

/// The study called `name`, or what the names are.
pub(crate) fn find(name: &str) -> Result<&'static Study, String> {
    STUDIES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = STUDIES.iter().map(|s| s.name).collect();
        format!("unknown study {name:?}; the studies: {}", names.join(", "))
    })
}

fn flags(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The presets, comma-separated.
fn presets() -> String {
    bookstore_registry::stacks::names().join(",")
}

fn factorial(scale: Scale) -> Plan {
    use bookstore_registry::stacks::{ACCESSES, FRAMEWORKS, SERIALIZERS};
    let tiny = scale == Scale::Tiny;
    let frameworks: Vec<&str> =
        if tiny { vec!["axum", "hyper"] } else { FRAMEWORKS.iter().map(|f| f.tag).collect() };
    let serializers: Vec<&str> =
        if tiny { vec!["serde_json", "sonic-rs"] } else { SERIALIZERS.to_vec() };
    let accesses: Vec<&str> = if tiny {
        vec!["diesel", "diesel-async"]
    } else {
        ACCESSES.iter().map(|a| a.tag).collect()
    };
    let mut stacks = Vec::new();
    for framework in &frameworks {
        for serializer in &serializers {
            for access in &accesses {
                stacks.push(format!("{framework}+{serializer}+{access}"));
            }
        }
    }
    stacks.push(if tiny { "axum-serde-diesel".to_owned() } else { presets() });
    let (scenarios, concurrency, rounds, duration, warmup) = if tiny {
        ("bookById,checkoutCreate", "8", "2", "200ms", "50ms")
    } else {
        ("smallJson,largeJson,bookById,bookList500,checkoutCreate", "128", "8", "500ms", "200ms")
    };
    let mut flags = flags(&["--stacks", &stacks.join(","), "--schedule", "shuffled"]);
    flags.extend(fixed(scenarios, concurrency, rounds, duration, warmup));
    flags.extend(self::flags(&["--no-equal-load", "--no-ceilings", "--no-twin"]));
    Plan { composed: true, ..Plan::one(flags) }
}

/// The layout study: framework × runtime layout × access at one serializer (serde_json,
/// whose cost the factorial study measured apart), a full grid — 24 stacks at full scale,
/// few enough that no fraction is needed — and a twin of the first, so that a difference of
/// layouts is read beside the difference of two processes of one binary.
fn layout(scale: Scale) -> Plan {
    use bookstore_registry::stacks::{ACCESSES, FRAMEWORKS, Layout};
    let tiny = scale == Scale::Tiny;
    let frameworks: Vec<&str> =
        if tiny { vec!["axum", "actix-web"] } else { FRAMEWORKS.iter().map(|f| f.tag).collect() };
    let accesses: Vec<&str> =
        if tiny { vec!["sqlx"] } else { ACCESSES.iter().map(|a| a.tag).collect() };
    let mut stacks = Vec::new();
    for framework in &frameworks {
        for layout in Layout::ALL {
            for access in &accesses {
                let suffix = match layout {
                    Layout::Framework => String::new(),
                    layout => format!("@{}", layout.name()),
                };
                stacks.push(format!("{framework}+serde_json+{access}{suffix}"));
            }
        }
    }
    let (scenarios, concurrency, rounds, duration, warmup) = if tiny {
        ("smallJson,bookById", "8", "2", "200ms", "50ms")
    } else {
        ("smallJson,bookById,bookList500,checkoutCreate", "128", "8", "500ms", "200ms")
    };
    let mut flags = flags(&["--stacks", &stacks.join(","), "--schedule", "shuffled"]);
    flags.extend(fixed(scenarios, concurrency, rounds, duration, warmup));
    flags.extend(self::flags(&["--no-equal-load", "--twin", &stacks[0]]));
    if tiny {
        flags.push("--no-ceilings".to_owned());
    }
    Plan { composed: true, ..Plan::one(flags) }
}

/// The capacity study: one capacity question (`loadgen ab --slo`) of every preset and a
/// twin of the first, every block a fresh process of each, so that each capacity's interval
/// holds the spread between processes it measured.
fn capacity(scale: Scale) -> Plan {
    let presets = bookstore_registry::stacks::names();
    let (parties, scenario, concurrency, budget, duration, warmup) = match scale {
        Scale::Full => (presets.clone(), "bookById", "128", "15m", "200ms", "100ms"),
        Scale::Tiny => (vec![presets[0]], "bookById", "8", "15s", "100ms", "50ms"),
    };
    // A, then the others with A's twin last (B when A is alone), every one against A.
    let others: Vec<&str> = parties[1..].iter().copied().chain([parties[0]]).collect();
    let mut flags = flags(&[parties[0], others[0]]);
    for other in &others[1..] {
        flags.extend(self::flags(&["--also", other]));
    }
    flags.extend(self::flags(&[
        "--slo",
        "p99=10ms",
        "--scenario",
        scenario,
        "-c",
        concurrency,
        "--budget",
        budget,
        "--duration",
        duration,
        "--warmup",
        warmup,
    ]));
    let design = Design { name: String::new(), command: "ab", flags };
    Plan { designs: vec![design], composed: false }
}

fn connections(scale: Scale) -> Plan {
    let (stacks, idle, concurrency, rounds, duration, warmup) = match scale {
        Scale::Full => (presets(), "1000,10000", "128", "5", "1s", "200ms"),
        Scale::Tiny => ("axum-serde-sqlx".to_owned(), "100,300", "8", "2", "200ms", "50ms"),
    };
    let mut flags = flags(&["--stacks", &stacks, "--idle-connections", idle]);
    flags.extend(fixed("bookById,checkoutCreate", concurrency, rounds, duration, warmup));
    flags.extend(self::flags(&["--no-equal-load", "--no-ceilings", "--no-twin"]));
    Plan::one(flags)
}

/// The deployment study: the async stack and the blocking one at each pool size and round
/// trip to the database, the blocking one also with twice the pool in blocking threads —
/// the first pool and no added round trip being the stacks themselves.
fn deployment(scale: Scale) -> Plan {
    const ASYNC: &str = "axum-serde-sqlx";
    const BLOCKING: &str = "axum-serde-diesel";
    let tiny = scale == Scale::Tiny;
    let pools: &[u32] = if tiny { &[2, 4] } else { &[16, 32, 64] };
    let latencies: &[&str] = if tiny { &["0", "2ms"] } else { &["0", "250us", "1ms"] };
    let first = pools[0];
    let mut variants = Vec::new();
    for latency in latencies {
        let (relay, suffix) = match *latency {
            "0" => (String::new(), String::new()),
            latency => (format!(" --db-latency {latency}"), format!(".db{latency}")),
        };
        for &pool in pools {
            if pool != first || !suffix.is_empty() {
                variants.push(format!("{ASYNC}.p{pool}{suffix}={ASYNC} --pool-max {pool}{relay}"));
                variants.push(format!(
                    "{BLOCKING}.p{pool}.t{pool}{suffix}={BLOCKING} --pool-max {pool} --blocking-threads {pool}{relay}"
                ));
            }
            let twice = 2 * pool;
            variants.push(format!(
                "{BLOCKING}.p{pool}.t{twice}{suffix}={BLOCKING} --pool-max {pool} --blocking-threads {twice}{relay}"
            ));
        }
    }
    let first = first.to_string();
    let mut flags = flags(&[
        "--stacks",
        &format!("{ASYNC},{BLOCKING}"),
        "--pool-max",
        &first,
        "--blocking-threads",
        &first,
        "--no-equal-load",
        "--no-twin",
    ]);
    flags.extend(match scale {
        Scale::Full => {
            fixed("bookById,bookList,checkoutCreate,checkoutHotspot", "128", "5", "1s", "200ms")
                .into_iter()
                .chain(self::flags(&["--no-ceilings"]))
                .collect::<Vec<_>>()
        }
        Scale::Tiny => fixed("checkoutCreate", "8", "2", "200ms", "50ms"),
    });
    for variant in variants {
        flags.extend(["--variant".to_owned(), variant]);
    }
    Plan::one(flags)
}

fn schedule(scale: Scale) -> Plan {
    let mut common = flags(&["--no-equal-load", "--twin", "axum-serde-sqlx"]);
    common.extend(match scale {
        Scale::Full => {
            fixed("health,smallJson,bookById,checkoutCreate", "128,256", "5", "500ms", "200ms")
        }
        Scale::Tiny => fixed("health", "8", "2", "200ms", "50ms"),
    });
    let with = |schedule: &str| {
        let mut flags = common.clone();
        flags.extend(self::flags(&["--schedule", schedule]));
        flags
    };
    Plan::alternated(&[("rotated", with("rotated")), ("grouped", with("grouped"))])
}

fn sequential(scale: Scale) -> Plan {
    match scale {
        Scale::Full => Plan::alternated(&[
            ("fixed", fixed_rounds("5", "500ms", "200ms")),
            ("budgeted", Vec::new()),
        ]),
        Scale::Tiny => {
            let small = flags(&["--scenarios", "health", "--concurrency", "8", "--no-equal-load"]);
            let mut fixed = small.clone();
            fixed.extend(fixed_rounds("2", "200ms", "50ms"));
            let mut budgeted = small;
            budgeted.extend(flags(&["--rounds", "2", "--max-rounds", "3", "--budget", "20s"]));
            Plan::alternated(&[("fixed", fixed), ("budgeted", budgeted)])
        }
    }
}

/// The designs of `loadgen study alternation` come from `--design`.
fn alternation(_: Scale) -> Plan {
    Plan { designs: Vec::new(), composed: false }
}

/// A fixed design of `rounds` rounds of `duration` windows after `warmup` warm-ups, on
/// `scenarios` at `concurrency`.
fn fixed(
    scenarios: &str,
    concurrency: &str,
    rounds: &str,
    duration: &str,
    warmup: &str,
) -> Vec<String> {
    let mut flags = flags(&["--scenarios", scenarios, "--concurrency", concurrency]);
    flags.extend(fixed_rounds(rounds, duration, warmup));
    flags
}

fn fixed_rounds(rounds: &str, duration: &str, warmup: &str) -> Vec<String> {
    flags(&["--rounds", rounds, "--max-rounds", rounds, "--duration", duration, "--warmup", warmup])
}

/// Where a study's run writes its results and page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunFiles {
    pub(crate) results: PathBuf,
    pub(crate) page: PathBuf,
}

/// The files of run `run` of `design` of study `name` started at `stamp`: a study of one
/// design keeps the names its script had (`…-factorial-study.json.zst`,
/// `summary/factorial-study.html`), a design of several its name and run
/// (`…-schedule-rotated-1.json.zst`).
pub(crate) fn files(stamp: &str, name: &str, design: &str, run: u32) -> RunFiles {
    if design.is_empty() {
        RunFiles {
            results: PathBuf::from(format!("summary/results/{stamp}-{name}-study.json.zst")),
            page: PathBuf::from(format!("summary/{name}-study.html")),
        }
    } else {
        RunFiles {
            results: PathBuf::from(format!(
                "summary/results/{stamp}-{name}-{design}-{run}.json.zst"
            )),
            page: PathBuf::from(format!("summary/{name}-{design}-study.html")),
        }
    }
}

/// Where a resumed study goes on: the stamp it began with, and the run (from 1) and the
/// design (an index of `designs`) of `journal`. A study of one design goes on with any
/// journal (its run's flags then decide); one of several is told by the journal's name,
/// which [`files`] made from the stamp, the design and the run.
pub(crate) fn locate(
    journal: &Path,
    name: &str,
    designs: &[Design],
    runs: u32,
) -> Result<(String, u32, usize), String> {
    if let [one] = designs
        && one.name.is_empty()
    {
        return Ok((bookstore_record::environment::file_stamp(), 1, 0));
    }
    let file = journal.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let stamp = file.split_once('Z').map(|(stamp, _)| format!("{stamp}Z")).unwrap_or_default();
    let journal_name = |stamp: &str, run, design: &Design| {
        let results = files(stamp, name, &design.name, run).results;
        let journal = bookstore_record::journal::beside(&results);
        journal.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
    };
    for run in 1..=runs {
        for (index, design) in designs.iter().enumerate() {
            if journal_name(&stamp, run, design) == file {
                return Ok((stamp, run, index));
            }
        }
    }
    Err(format!(
        "not a journal of study {name} with --runs {runs} (theirs are named like {})",
        journal_name("<UTC time>", 1, &designs[0])
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(flags: &'a [String], flag: &str) -> &'a str {
        let at = flags.iter().position(|f| f == flag).unwrap_or_else(|| panic!("no {flag}"));
        &flags[at + 1]
    }

    #[test]
    fn the_factorial_study_measures_every_triple_and_the_presets_shuffled() {
        let plan = factorial(Scale::Full);
        assert!(plan.composed);
        let flags = &plan.designs[0].flags;
        let stacks: Vec<&str> = value(flags, "--stacks").split(',').collect();
        use bookstore_registry::stacks::{ACCESSES, FRAMEWORKS, SERIALIZERS};
        assert_eq!(stacks.len(), FRAMEWORKS.len() * SERIALIZERS.len() * ACCESSES.len() + 5);
        assert_eq!(value(flags, "--schedule"), "shuffled");
        assert_eq!((value(flags, "--rounds"), value(flags, "--max-rounds")), ("8", "8"));
        let tiny = factorial(Scale::Tiny);
        assert_eq!(value(&tiny.designs[0].flags, "--stacks").split(',').count(), 8 + 1);
    }

    #[test]
    fn the_layout_study_measures_every_framework_and_access_in_both_layouts_with_a_twin() {
        let plan = layout(Scale::Full);
        assert!(plan.composed);
        let flags = &plan.designs[0].flags;
        let stacks: Vec<&str> = value(flags, "--stacks").split(',').collect();
        assert_eq!(stacks.len(), 3 * 2 * 4);
        assert!(stacks.contains(&"actix-web+serde_json+tokio-postgres@per-core"));
        assert!(stacks.contains(&"hyper+serde_json+diesel"));
        for name in &stacks {
            bookstore_registry::stacks::find(name).unwrap();
        }
        assert_eq!(value(flags, "--twin"), "axum+serde_json+sqlx");
        assert_eq!(value(flags, "--scenarios"), "smallJson,bookById,bookList500,checkoutCreate");
        assert_eq!(value(flags, "--schedule"), "shuffled");
    }

    #[test]
    fn the_deployment_study_adds_each_pool_and_round_trip_but_the_stacks_own() {
        let flags = &deployment(Scale::Tiny).designs[0].flags;
        let labels: Vec<&str> = flags
            .iter()
            .zip(flags.iter().skip(1))
            .filter(|(flag, _)| *flag == "--variant")
            .map(|(_, v)| v.split('=').next().unwrap())
            .collect();
        assert_eq!(
            labels,
            [
                "axum-serde-diesel.p2.t4",
                "axum-serde-sqlx.p4",
                "axum-serde-diesel.p4.t4",
                "axum-serde-diesel.p4.t8",
                "axum-serde-sqlx.p2.db2ms",
                "axum-serde-diesel.p2.t2.db2ms",
                "axum-serde-diesel.p2.t4.db2ms",
                "axum-serde-sqlx.p4.db2ms",
                "axum-serde-diesel.p4.t4.db2ms",
                "axum-serde-diesel.p4.t8.db2ms",
            ]
        );
        let full = deployment(Scale::Full);
        assert!(full.designs[0].flags.contains(&"--no-ceilings".to_owned()));
    }

    #[test]
    fn alternated_studies_name_their_designs_and_their_files_name_design_and_run() {
        let names: Vec<String> =
            schedule(Scale::Full).designs.into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["rotated", "grouped"]);
        let files = files("T", "schedule", "rotated", 2);
        assert_eq!(files.results, PathBuf::from("summary/results/T-schedule-rotated-2.json.zst"));
        let single = files_of_one();
        assert_eq!(single.results, PathBuf::from("summary/results/T-capacity-study.json.zst"));
        assert_eq!(single.page, PathBuf::from("summary/capacity-study.html"));
        assert!(find("nonsense").unwrap_err().contains("factorial"));
    }

    #[test]
    fn a_resumed_study_goes_on_at_the_run_and_design_its_journal_names() {
        let designs = schedule(Scale::Full).designs;
        let journal = Path::new("summary/results/2026-12-07T20-42-22Z-schedule-grouped-2.journal");
        assert_eq!(
            locate(journal, "schedule", &designs, 3),
            Ok(("2026-12-07T20-42-22Z".to_owned(), 2, 1))
        );
        // Beyond the runs asked for, or of another study: refused, saying what it expects.
        let why = locate(journal, "schedule", &designs, 1).unwrap_err();
        assert!(
            why.contains("--runs 1") && why.contains("<UTC time>-schedule-rotated-1.journal"),
            "{why}"
        );
        let other = Path::new("summary/results/2026-12-07T20-42-22Z-factorial-study.journal");
        assert!(locate(other, "schedule", &designs, 3).is_err());
        // A study of one design goes on with its journal whatever its name (--output).
        let one = factorial(Scale::Full).designs;
        assert_eq!(
            locate(Path::new("elsewhere/mine.journal"), "factorial", &one, 1)
                .map(|(_, r, d)| (r, d)),
            Ok((1, 0))
        );
    }

    fn files_of_one() -> RunFiles {
        files("T", "capacity", "", 1)
    }
}
