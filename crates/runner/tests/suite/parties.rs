//! Parties beside the stacks: labelled variants, a database farther away, the deployment study, CPU placement, and the database's connections for all of them.

use super::*;

#[test]
fn a_labelled_variant_is_measured_beside_its_stack_with_its_own_flags() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::Health, Scenario::BookById];
    options.measurement.concurrency = vec![2];
    options.ceilings = false;
    let taken = vec!["axum-serde-sqlx".to_owned()];
    options.variants = vec![
        bookstore_runner::suite::Variant::parse("axum-1w=axum-serde-sqlx --workers 1", &taken)
            .unwrap(),
    ];
    // Every process the suite starts, with its arguments, as seen in `ps`.
    let (results, command_lines) = run_watching_processes(&options);

    assert_eq!(results.settings.stacks, ["axum-serde-sqlx", "axum-1w"]);
    let variant = &results.stacks[1];
    assert_eq!(variant.name, "axum-1w");
    assert_eq!(variant.variant_of.as_deref(), Some("axum-serde-sqlx"));
    assert_eq!(variant.args, ["--workers", "1"]);
    assert_eq!(variant.status, StackStatus::Measured, "{:?}", variant.failure);
    assert_eq!(variant.cells.len(), 4, "2 scenarios × 2 rounds, like the stack");
    // Its process ran with its flag in place of the suite's, the stack's with the suite's.
    let with = |flag: &str| command_lines.iter().filter(|c| c.contains(flag)).count();
    assert!(with("--workers 1") >= 1 && with("--workers 2") >= 1, "{command_lines:?}");
    // The pages compare it like a stack, with its own colour.
    let page = bookstore_report::render(std::slice::from_ref(&results)).unwrap();
    assert!(page.contains("data-cell=\"axum-1w:bookById:2\""));
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn with_db_latency_a_stack_and_the_database_ceiling_are_measured_again_behind_the_relay_and_each_request_pays_it()
 {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.scenarios = vec![Scenario::BookById];
    options.measurement.concurrency = vec![2];
    let round_trip = Duration::from_millis(3);
    options.variants = vec![bookstore_runner::suite::Variant::with_db_latency(
        stacks::AXUM_SERDE_SQLX,
        round_trip,
    )];
    let (results, command_lines) = run_watching_processes(&options);

    let (near, far) = (&results.stacks[0], &results.stacks[1]);
    assert_eq!(far.name, "axum-serde-sqlx.db3ms");
    assert_eq!(far.variant_of.as_deref(), Some("axum-serde-sqlx"));
    assert_eq!(far.db_latency_us, Some(3000));
    assert_eq!(near.db_latency_us, None);
    assert_eq!(far.status, StackStatus::Measured, "{:?}", far.failure);
    // Calibrated at the start of the run: what it adds here, at least what was asked.
    assert_eq!(results.db_relay_calibration.len(), 1);
    let calibration = &results.db_relay_calibration[0];
    assert_eq!(calibration.round_trip_us, 3000);
    assert!(calibration.samples > 0);
    assert!(calibration.added_p50_us >= 2900.0, "{calibration:?}");
    assert!(calibration.added_p99_us >= calibration.added_p50_us);
    // The relay ran, as a process of its own, asked for the round trip; the stack never
    // saw a flag for it.
    assert!(
        command_lines
            .iter()
            .any(|c| c.contains("db-relay run") && c.contains("--round-trip 3000us")),
        "{command_lines:?}"
    );
    assert!(
        !command_lines.iter().any(|c| c.contains("axum-serde-sqlx") && c.contains("--db-latency"))
    );
    // Every request crossed it: a book by id is at least one round trip to the database.
    let (near_p50, far_p50) = (
        merged_latency(&near.cells).value_at_quantile(0.5),
        merged_latency(&far.cells).value_at_quantile(0.5),
    );
    assert!(far_p50 >= near_p50 + 3000, "p50 {near_p50} µs direct, {far_p50} µs behind the relay");
    // The relay's own CPU, per cell, apart from the server's and the client's (in clock
    // ticks of 10 ms: a short window's may read 0).
    for cell in &far.cells {
        let relay = cell.cpu_seconds.relay.expect("the relay's CPU is measured");
        assert!((0.0..=cell.window_seconds * 2.0).contains(&relay), "{relay}");
    }
    assert!(near.cells.iter().all(|c| c.cpu_seconds.relay.is_none()));
    // Each window carries its latency, and the server's threads.
    assert!(far.cells.iter().all(|c| c.db_latency_us == Some(3000)));
    assert!(near.cells.iter().all(|c| c.db_latency_us.is_none()));
    assert!(far.cells.iter().all(|c| c.server_threads.is_some_and(|t| t >= 2)));
    // The database ceiling, through each driver, directly and behind a relay of its own
    // at the same round trip: each of its statements pays it too.
    for driver in ["sqlx", "diesel"] {
        let ceiling = |latency: Option<u64>| -> Vec<Cell> {
            let cells = results.ceilings.db.iter();
            let mine = cells.filter(|c| c.driver.as_deref() == Some(driver));
            mine.filter(|c| c.db_latency_us == latency).cloned().collect()
        };
        let (direct, relayed) = (ceiling(None), ceiling(Some(3000)));
        assert_eq!((direct.len(), relayed.len()), (2, 2), "{driver}: one window per round each");
        assert!(relayed.iter().all(|c| c.cpu_seconds.relay.is_some()));
        let (direct_p50, relayed_p50) = (
            merged_latency(&direct).value_at_quantile(0.5),
            merged_latency(&relayed).value_at_quantile(0.5),
        );
        assert!(
            relayed_p50 >= direct_p50 + 3000,
            "{driver}: p50 {direct_p50} µs direct, {relayed_p50} µs behind the relay"
        );
    }
    // `compare` shows the latency as a column of its own.
    let changes = bookstore_report::compare::compare(
        std::slice::from_ref(&results),
        std::slice::from_ref(&results),
    );
    let table = bookstore_report::compare::table(&changes);
    assert!(
        table.lines().any(|l| l.starts_with("axum-serde-sqlx.db3ms") && l.contains(" +3ms ")),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("DB ceiling (sqlx, c = 4, +3ms)")), "{table}");
    // The page says what the variant changed.
    let page = bookstore_report::render(std::slice::from_ref(&results)).unwrap();
    assert!(
        page.contains("axum-serde-sqlx with a relay adding 3000 µs to each database round trip"),
        "the page does not say what the variant is"
    );
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn with_cpus_each_tier_runs_where_it_was_put_a_tier_not_named_anywhere_and_the_results_record_it() {
    let _serial = serial();
    let allowed = cpus_allowed(std::process::id()).unwrap();
    let (first, last) = (allowed[0], *allowed.last().unwrap());
    let list = |cpus: &[usize]| cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    // What each process the suite started ran on, seen while it ran (a process's CPUs
    // can change once: when the suite places it).
    let placed = |pid: u32, cmdline: String| {
        let tier = match cmdline.split_whitespace().next().unwrap_or("") {
            c if c.ends_with("/axum-serde-sqlx") => "server",
            c if c.starts_with("postgres") || c.ends_with("/postgres") => "db",
            _ => "other",
        };
        let cpus = cpus_allowed(pid).unwrap_or_default();
        format!("{tier} {}", cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |spec: &str| {
        let mut options = options(dir.path().join("run.json"));
        options.scenarios = vec![Scenario::BookById];
        options.measurement.concurrency = vec![2];
        options.measurement.rounds = 1;
        options.ceilings = false;
        options.placement =
            Some(bookstore_runner::harness::placement::Placement::parse(spec).unwrap());
        run_watching(&options, placed)
    };

    // Each tier on a CPU of its own (the same one, on a single-CPU machine).
    let (results, seen) = run(&format!("server={last},client={first},db={first}"));
    let recorded: Vec<(&str, &[usize])> = results
        .settings
        .cpu_placement
        .iter()
        .map(|t| (t.tier.as_str(), t.cpus.as_slice()))
        .collect();
    assert_eq!(recorded, [("client", &[first][..]), ("db", &[first][..]), ("server", &[last][..])]);
    assert_eq!(results.stacks[0].status, StackStatus::Measured);
    assert!(seen.contains(&format!("server {last}")), "{seen:?}");
    assert!(seen.contains(&format!("db {first}")), "{seen:?}");
    // The client got its CPUs back.
    assert_eq!(cpus_allowed(std::process::id()).unwrap(), allowed);

    // Only the client placed: the server and the database run anywhere, not on the CPUs
    // they would inherit from it.
    let (results, seen) = run(&format!("client={first}"));
    let recorded: Vec<&str> =
        results.settings.cpu_placement.iter().map(|t| t.tier.as_str()).collect();
    assert_eq!(recorded, ["client"]);
    assert!(seen.contains(&format!("server {}", list(&allowed))), "{seen:?}");
    assert!(seen.contains(&format!("db {}", list(&allowed))), "{seen:?}");
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

/// The CPUs `pid` may run on, from /proc.
fn cpus_allowed(pid: u32) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?.trim();
    Some(
        list.split(',')
            .flat_map(|part| match part.split_once('-') {
                Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
                None => vec![part.parse().unwrap()],
            })
            .collect(),
    )
}

#[test]
fn the_database_allows_every_party_its_own_pool_and_the_ceiling_one() {
    let mut options = options(PathBuf::from("unused.json"));
    options.tuning.pool_max = 16;
    let taken = vec![];
    options.variants = vec![
        bookstore_runner::suite::Variant::parse(
            "big=axum-serde-diesel --pool-max 64 --blocking-threads 64",
            &taken,
        )
        .unwrap(),
        bookstore_runner::suite::Variant::parse(
            "far=axum-serde-sqlx --db-latency 1ms --workers 1",
            &taken,
        )
        .unwrap(),
    ];
    // One stack at 16, the variants at 64 and 16, the ceiling at 16, and 40 spare.
    assert_eq!(options.database_connections(), 16 + 64 + 16 + 16 + 40);
    options.ceilings = false;
    assert_eq!(options.database_connections(), 16 + 64 + 16 + 40);
}

#[test]
fn a_composed_stack_whose_binary_is_missing_is_refused_naming_the_command_that_builds_it() {
    // The composed stacks' binaries are not in the main job's build: the suite says which
    // to build, each by its binary's name (the responder's package is bookstore-responder).
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(dir.path().join("run.json"));
    options.stacks = vec![stacks::find("axum+sonic-rs+sqlx").unwrap()];
    options.bin_dir = dir.path().to_owned();
    let error =
        bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("axum-any, responder not found"), "{message}");
    assert!(message.contains("cargo build --release --bin axum-any --bin responder"), "{message}");
}
