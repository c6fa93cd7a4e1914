//! Stacks started by someone else, and the load split over shards and client hosts.

use super::*;

#[test]
fn stacks_someone_else_started_are_measured_in_place_on_their_restored_database() {
    let _serial = serial();
    let (server, url) = seeded_server();
    let (mut stack, addr) = start_by_hand(&url);
    // Someone used it before: the seed is no longer intact (book 20000's stock is 1 lower).
    let body = r#"{"bookId":20000,"customerName":"Earlier User","customerEmail":"e@example.com","quantity":1}"#;
    let checkout = format!(
        "POST /api/checkouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(status_of(addr, &checkout), Some(201));

    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("run.json");
    let mut options = options(output.clone());
    options.scenarios = vec![Scenario::BookById, Scenario::CheckoutCreate];
    options.measurement.concurrency = vec![2];
    options.database_url = Some(url.clone());
    options.running = Some(vec![addr]);
    // No stack binary is needed (only the responder, for the HTTP ceiling).
    let results = bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false))).unwrap();

    // The suite left the stack running: it did not start it, so it does not stop it.
    assert!(stack.try_wait().unwrap().is_none(), "the stack was stopped");
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);

    let measured = &results.stacks[0];
    assert_eq!(measured.status, StackStatus::Measured, "{:?}", measured.failure);
    assert!(measured.validation.iter().all(|v| v.passed), "{:?}", measured.validation);
    assert_eq!(measured.address.as_deref(), Some(addr.to_string().as_str()));
    assert_eq!(measured.ready_ms, None, "it was not started here");
    assert_eq!(measured.cells.len(), 4, "2 scenarios × 2 rounds");
    for cell in &measured.cells {
        assert!(cell.counts.ok > 0, "{}", cell.scenario);
        // Processes the suite cannot see are not measured, rather than measured as zero.
        assert_eq!(cell.cpu_seconds.server, None);
        assert_eq!(cell.cpu_seconds.postgres, None);
        assert_eq!(cell.server_peak_rss_bytes, None);
        assert!(cell.cpu_seconds.client > 0.0);
    }
    // Checkout rows = the checkouts the client saw acknowledged: the earlier user's row was
    // restored away through --database-url before the cell, and the audit read that database.
    for cell in measured.cells.iter().filter(|c| c.scenario == "checkoutCreate") {
        let audit = cell.audit.as_ref().expect("checkoutCreate is audited");
        assert!(audit.passed, "{:?}", audit.failures);
    }
    assert!(results.ceilings.db.iter().any(|c| c.scenario == "checkoutCreate"));
    let written: RunResults =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(written.stacks[0].address, measured.address);
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn two_shards_load_a_stack_together_and_merge_into_their_sum() {
    let _serial = serial();
    let (server, url) = seeded_server();
    let (mut stack, addr) = start_by_hand(&url);

    // Two clients (two hosts in real use; two threads here), one start time.
    let dir = tempfile::tempdir().unwrap();
    let start_at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 4;
    let shard = |index: u32| {
        let mut options = options(dir.path().join(format!("shard{index}.json")));
        options.scenarios = vec![Scenario::BookById, Scenario::CheckoutCreate];
        options.measurement.concurrency = vec![5];
        options.measurement.rounds = 1;
        options.measurement.warmup = Duration::from_millis(300);
        options.measurement.duration = Duration::from_secs(1);
        options.database_url = Some(url.clone());
        options.running = Some(vec![addr]);
        options.ceilings = false;
        // A slot holds a whole request timeout of drain: short here.
        options.measurement.request_timeout = Duration::from_secs(2);
        options.shard = Some(bookstore_runner::suite::ShardPlan {
            index,
            count: 2,
            start_at_unix_seconds: start_at,
        });
        std::thread::spawn(move || {
            bookstore_runner::suite::run(&options, Arc::new(AtomicBool::new(false)))
        })
    };
    let (first, second) = (shard(1), shard(2));
    let first = first.join().unwrap().unwrap();
    let second = second.join().unwrap().unwrap();
    stack.kill().unwrap();
    stack.wait().unwrap();
    drop(server);

    // Each shard held its share of the five connections, in the same slots.
    let (a, b) = (&first.stacks[0].cells, &second.stacks[0].cells);
    assert_eq!((a.len(), b.len()), (2, 2));
    assert_eq!((a[0].shards[0].connections, b[0].shards[0].connections), (3, 2));
    for (x, y) in a.iter().zip(b) {
        let apart = (x.shards[0].window_started_unix_seconds
            - y.shards[0].window_started_unix_seconds)
            .abs();
        assert!(apart < 0.2, "{}: windows {apart:.3} s apart", x.scenario);
        assert!(x.counts.ok > 0 && y.counts.ok > 0, "{}", x.scenario);
    }
    // Only shard 1 read the database; its audit left rows = acknowledged to the merge, and
    // the rows are more than it acknowledged itself: the other shard wrote too.
    let audit = a[1].audit.as_ref().expect("shard 1 audits");
    assert!(audit.passed, "{:?}", audit.failures);
    assert!(audit.checkout_rows > audit.acknowledged_checkouts);
    assert!(b[1].audit.is_none() && b[1].sql.is_none());

    let merged =
        bookstore_record::merge::merge(vec![second.clone(), first.clone()], "merged").unwrap();
    let cells = &merged.stacks[0].cells;
    for (index, m) in cells.iter().enumerate() {
        let (x, y) = (&a[index], &b[index]);
        assert_eq!(m.counts.ok, x.counts.ok + y.counts.ok);
        assert_eq!(m.counts.total(), x.counts.total() + y.counts.total());
        assert_eq!(m.drained_counts.total(), x.drained_counts.total() + y.drained_counts.total());
        assert_eq!(m.latency_ok_us.unwrap().count, x.counts.ok + y.counts.ok);
        assert_eq!(m.throughput_rps, x.throughput_rps + y.throughput_rps);
    }
    let audit = cells[1].audit.as_ref().unwrap();
    assert!(audit.passed, "{:?}", audit.failures);
    assert_eq!(
        audit.acknowledged_checkouts, audit.checkout_rows,
        "every row acknowledged to one of the shards"
    );
    assert!(wait_for_no_children().is_empty(), "processes left behind");
}

#[test]
fn across_network_namespaces_two_client_hosts_merge_into_their_sum_with_the_audit_passing() {
    // scripts/multihost.sh: PostgreSQL, the stack and two shards each on a host of its own
    // (a network namespace with its own address on a bridge), as docs/running.md's "Across machines" runs them.
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: the multi-host run needs root (network namespaces)");
        return;
    }
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/multihost.sh");
    let output = std::process::Command::new(&script)
        .arg("--bin-dir")
        .arg(bin_dir())
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("run scripts/multihost.sh");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "multihost.sh failed:\n{said}");
    assert!(said.contains("client1=10.88.0.11"), "{said}");

    let read = |name: &str| RunResults::read(&dir.path().join(name)).unwrap();
    let (first, second, merged) = (read("shard1.json"), read("shard2.json"), read("merged.json"));
    let (a, b, m) = (&first.stacks[0].cells, &second.stacks[0].cells, &merged.stacks[0].cells);
    assert_eq!((a.len(), b.len(), m.len()), (2, 2, 2), "bookById and checkoutCreate");
    for ((x, y), merged) in a.iter().zip(b).zip(m) {
        // Each host held half of the 16 connections, in the same slot.
        assert_eq!((x.shards[0].connections, y.shards[0].connections), (8, 8));
        let apart = (x.shards[0].window_started_unix_seconds
            - y.shards[0].window_started_unix_seconds)
            .abs();
        assert!(apart < 0.2, "{}: windows {apart:.3} s apart", x.scenario);
        assert!(x.counts.ok > 0 && y.counts.ok > 0, "{}: both hosts were answered", x.scenario);
        assert_eq!(merged.counts.ok, x.counts.ok + y.counts.ok, "{}", x.scenario);
        assert_eq!(merged.counts.total(), x.counts.total() + y.counts.total());
        assert_eq!(merged.latency_ok_us.unwrap().count, x.counts.ok + y.counts.ok);
        assert_eq!(merged.throughput_rps, x.throughput_rps + y.throughput_rps);
        assert_eq!(merged.shards.len(), 2);
    }
    let audit = m[1].audit.as_ref().expect("the merged checkout cell is audited");
    assert!(audit.passed, "{:?}", audit.failures);
    assert!(audit.checkout_rows > 0);
    assert_eq!(
        audit.acknowledged_checkouts, audit.checkout_rows,
        "every row acknowledged to a host"
    );
    // Nothing left behind: the script's namespaces are gone.
    let namespaces = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
        })
        .unwrap_or_else(|_| Vec::new());
    assert!(
        !namespaces.iter().any(|n| n.ends_with("-net") && n.starts_with("bb")),
        "{namespaces:?}"
    );
}
