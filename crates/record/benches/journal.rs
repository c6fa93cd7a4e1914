//! What the journal costs a run: appending one window of a real default run (its counts,
//! histograms, timeline, CPU) and syncing it to disk, as the suite does between windows.
//! The file goes where runs write theirs, `summary/results/`, so the disk is that of a run.
//!
//! `cargo bench -p bookstore-record --bench journal`

use bookstore_record::journal::Journal;
use bookstore_record::results::RunResults;
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;

/// The kept default run the windows come from (docs/current-runs.toml, `default`).
const DEFAULT_RUN: &str = "summary/results/2026-12-06T08-36-39Z.json.zst";

fn journal(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = RunResults::read(&root.join(DEFAULT_RUN)).expect("the kept default run reads");
    let cells: Vec<_> = run.stacks.iter().flat_map(|s| &s.cells).cloned().collect();
    let dir = tempfile::tempdir_in(root.join("summary/results")).unwrap();
    let path = dir.path().join("bench.journal");
    let mut journal =
        Journal::create(&path, "suite", "bench", &dir.path().join("bench.json.zst"), &"header")
            .unwrap();
    let mut next = cells.iter().cycle();
    c.bench_function("journal: one default-run window appended and synced", |b| {
        b.iter(|| journal.window("stack/scenario/c/round", 1.0, next.next().unwrap()).unwrap())
    });
}

criterion_group!(benches, journal);
criterion_main!(benches);
