//! The recipe for adding a stack (CONTRIBUTING.md, "Adding a stack"), followed on a scratch
//! copy of the workspace: a sixth stack (axum + simd-json + sqlx) is its crate, one line of
//! the registry and one line of the conformance crate's manifest — and then it builds, the
//! conformance suite expands its tests for it, and the registry and the suite agree on six
//! stacks. Builds in the workspace's own target directory, so only the workspace's crates
//! compile again — under another version, so that they never overwrite the workspace's own
//! artifacts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The target directory this test was built in: `<target>/debug/deps/<this test>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).expect("target/debug/deps/<exe>").to_owned()
}

/// Copies the workspace's sources (not its build, history or results) to `to`.
fn copy_sources(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if [".git", "target", "summary"].contains(&name.to_str().unwrap_or("")) {
            continue;
        }
        let (source, destination) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&destination).unwrap();
            copy_sources(&source, &destination);
        } else {
            std::fs::copy(&source, &destination).unwrap();
        }
    }
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// Every file of the target directory's `debug/deps` with its modification time.
fn deps_snapshot() -> BTreeMap<PathBuf, SystemTime> {
    std::fs::read_dir(target_dir().join("debug/deps"))
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (entry.path(), entry.metadata().unwrap().modified().unwrap())
        })
        .collect()
}

fn cargo(dir: &Path, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .arg("--offline")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo {}:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Builds the sixth stack, which must fail: what the compiler said.
fn build_fails(root: &Path) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "-p", "axum-simd-sqlx", "--offline"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "a stack other than its registry line compiled");
    stderr
}

#[test]
fn a_sixth_stack_is_its_crate_and_two_lines() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    copy_sources(&workspace(), root);
    // Cargo hashes a path crate's artifacts by its path relative to the workspace and its
    // version, so the copy's crates would share file names with the workspace's and
    // overwrite them: a later rustdoc or rustc run of the workspace then finds a
    // `bookstore_domain` its other crates were not built against (E0460). A version of
    // this run's own gives the copy's crates files of their own (removed at the end); the
    // dependencies from crates.io are shared.
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    let version = format!("version = \"0.1.0-scratch.{nanos}\"");
    edit(&root.join("Cargo.toml"), "version = \"0.1.0\"", &version);
    let before = deps_snapshot();

    // The crate: a copy of axum-serde-sqlx with simd-json for serde_json.
    let servers = root.join("crates/servers");
    let crate_dir = servers.join("axum-simd-sqlx");
    std::fs::create_dir_all(crate_dir.join("src")).unwrap();
    for file in ["Cargo.toml", "src/lib.rs", "src/main.rs"] {
        std::fs::copy(servers.join("axum-serde-sqlx").join(file), crate_dir.join(file)).unwrap();
    }
    let manifest = crate_dir.join("Cargo.toml");
    edit(&manifest, "name = \"axum-serde-sqlx\"", "name = \"axum-simd-sqlx\"");
    edit(&manifest, "features = [\"serde_json\"]", "features = [\"simd-json\"]");
    edit(&crate_dir.join("src/lib.rs"), "bookstore_codec::SerdeJson", "bookstore_codec::SimdJson");
    edit(&crate_dir.join("src/lib.rs"), "stacks::AXUM_SERDE_SQLX", "stacks::AXUM_SIMD_SQLX");
    let main = crate_dir.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap().replace("axum_serde_sqlx", "axum_simd_sqlx");
    std::fs::write(&main, text).unwrap();

    // One line of the registry.
    edit(
        &root.join("crates/registry/src/stacks.rs"),
        "            (HYPER_SONIC_SQLX, hyper_sonic_sqlx, \"hyper-sonic-sqlx\", 8085, \"hyper\", \"sonic-rs\", \"sqlx\"),\n",
        "            (HYPER_SONIC_SQLX, hyper_sonic_sqlx, \"hyper-sonic-sqlx\", 8085, \"hyper\", \"sonic-rs\", \"sqlx\"),\n            (AXUM_SIMD_SQLX, axum_simd_sqlx, \"axum-simd-sqlx\", 8086, \"axum\", \"simd-json\", \"sqlx\"),\n",
    );
    // One line of the conformance crate's manifest.
    edit(
        &root.join("crates/conformance/Cargo.toml"),
        "hyper-sonic-sqlx = { path = \"../servers/hyper-sonic-sqlx\" }\n",
        "hyper-sonic-sqlx = { path = \"../servers/hyper-sonic-sqlx\" }\naxum-simd-sqlx = { path = \"../servers/axum-simd-sqlx\" }\n",
    );

    // It builds, with the conformance and fault tests expanded for it, and the suite's
    // own check that it tests every stack of the registry passes with six.
    cargo(root, &["build", "-p", "axum-simd-sqlx", "-p", "bookstore-conformance", "--tests"]);
    cargo(
        root,
        &["test", "-p", "bookstore-conformance", "--lib", "--", "every_stack_of_the_registry"],
    );

    // A crate whose serializer, or framework, is not its line's does not compile.
    // (The line of axum-serde-sqlx: its framework and store, another serializer.)
    edit(&crate_dir.join("src/lib.rs"), "stacks::AXUM_SIMD_SQLX", "stacks::AXUM_SERDE_SQLX");
    let stderr = build_fails(root);
    assert!(stderr.contains("another serializer"), "{stderr}");
    edit(&crate_dir.join("src/lib.rs"), "stacks::AXUM_SERDE_SQLX", "stacks::AXUM_SIMD_SQLX");
    edit(&crate_dir.join("src/lib.rs"), "bookstore_web_axum::FRAMEWORK", "\"actix-web\"");
    let stderr = build_fails(root);
    assert!(stderr.contains("another framework"), "{stderr}");

    // The workspace's own artifacts are untouched; the copy's are new files, removed.
    let after = deps_snapshot();
    for path in after.keys().filter(|path| !before.contains_key(*path)) {
        let _ = std::fs::remove_file(path);
    }
    let changed: Vec<_> = before
        .iter()
        .filter(|(path, time)| after.get(*path) != Some(*time))
        .map(|(path, _)| path)
        .collect();
    assert!(
        changed.is_empty(),
        "the scratch build overwrote the workspace's artifacts: {changed:?}"
    );
}
