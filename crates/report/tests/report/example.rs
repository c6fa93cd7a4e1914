//! The page a reader opens without running anything (`docs/example-summary.html`): the
//! current default run's page as this code renders it, self-contained, small enough to keep,
//! and with nothing clipped at 1,280 px in a real browser.

use std::path::PathBuf;

use bookstore_record::results::RunResults;
use bookstore_report::render;

/// The committed example page.
const EXAMPLE: &str = "docs/example-summary.html";

/// Its largest size: it is kept in the repository.
const EXAMPLE_MAX_BYTES: usize = 600_000;

fn root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The current default run, as `docs/current-runs.toml` declares it (its `default` line).
fn current_default() -> String {
    let declared = std::fs::read_to_string(root().join("docs/current-runs.toml")).unwrap();
    declared
        .lines()
        .find_map(|line| {
            let value = line.strip_prefix("default")?.trim_start().strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
        .expect("docs/current-runs.toml declares the default run")
}

fn rendered() -> String {
    let run = RunResults::read(&root().join(current_default())).unwrap();
    render(std::slice::from_ref(&run)).unwrap()
}

#[test]
fn the_example_page_is_the_current_default_run_as_this_code_renders_it() {
    let page = rendered();
    let kept = std::fs::read_to_string(root().join(EXAMPLE)).unwrap_or_default();
    assert!(
        page == kept,
        "{EXAMPLE} is not what this code renders from {}: regenerate it with `loadgen report {} -o {EXAMPLE}`",
        current_default(),
        current_default()
    );
    assert!(page.len() <= EXAMPLE_MAX_BYTES, "{EXAMPLE}: {} bytes", page.len());
    // Self-contained: opens with no network (styles and charts inline, nothing fetched).
    for fetch in ["<script", "<link", "<img", "src=", "url("] {
        assert!(!page.contains(fetch), "{EXAMPLE} fetches something: {fetch}");
    }
}

#[test]
fn the_current_default_run_s_page_reads_at_1280_px_with_nothing_clipped() {
    if !bookstore_report::page::check_fits(&rendered(), 1280).unwrap_or_else(|e| panic!("{e}")) {
        eprintln!("skipped: no Chromium (scripts/test.sh said so)");
    }
}
