//! Included by a binary package's `build.rs` (`#[path = "…/crates/record/build_info.rs"] mod
//! build_info;`): records what the binary is built from, so a results file names the code
//! that measured, not the tree a later `git` or `rustc` sees. A file, not a crate: it needs
//! only std, and a build script's dependencies are compiled again for the host.
//!
//! The values reach the binary as `BOOKSTORE_BUILD_*` compile-time variables, read with
//! `bookstore_record::build_identity!()`. A variable is left unset where its source is
//! missing (no `.git` in a Docker build context, no `git` installed): the results then say
//! "unknown" rather than guess.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variables this sets.
pub(crate) const GIT_COMMIT: &str = "BOOKSTORE_BUILD_GIT_COMMIT";
/// `true` or `false`.
pub(crate) const GIT_DIRTY: &str = "BOOKSTORE_BUILD_GIT_DIRTY";
/// `rustc --version` of the compiler cargo uses.
pub(crate) const RUSTC: &str = "BOOKSTORE_BUILD_RUSTC";

/// Prints the `cargo:` lines of the calling build script: the variables, and when to run it
/// again (a commit, a staged or unstaged change to the workspace's sources).
pub(crate) fn emit() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = workspace_root(&manifest_dir).unwrap_or(manifest_dir);
    let output = |program: &str, args: &[&str]| {
        let out = Command::new(program).args(args).current_dir(&root).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = output("git", &["rev-parse", "HEAD"]);
    if let Some(commit) = &commit {
        println!("cargo:rustc-env={GIT_COMMIT}={commit}");
        let status = output("git", &["status", "--porcelain", "--untracked-files=no"]);
        if let Some(status) = status {
            println!("cargo:rustc-env={GIT_DIRTY}={}", !status.is_empty());
        }
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    if let Some(version) = output(&rustc, &["--version"]) {
        println!("cargo:rustc-env={RUSTC}={version}");
    }
    // A directory is watched whole (every file's modification time): the sources and the
    // manifests; and git's record of the commit: HEAD, the branch it names (a commit moves
    // the branch, not HEAD), the packed refs and the index.
    let mut watched: Vec<PathBuf> =
        ["crates", "loadgen", "Cargo.toml", "Cargo.lock"].iter().map(|p| root.join(p)).collect();
    if let Some(git_dir) = output("git", &["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        watched.extend(["HEAD", "index", "packed-refs"].map(|f| git_dir.join(f)));
        if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
            watched.push(git_dir.join(branch));
        }
    }
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
}

/// The nearest directory at or above `dir` with a `Cargo.lock`.
fn workspace_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join("Cargo.lock").is_file()).map(Path::to_path_buf)
}
