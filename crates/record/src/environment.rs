//! What the numbers were measured on: the machine, the build, the PostgreSQL server.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The machine and software the numbers come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// The commit the measuring binary was built from (`git rev-parse HEAD` at build time),
    /// if known.
    pub git_commit: Option<String>,
    /// Whether that build had uncommitted changes to tracked files.
    pub git_dirty: Option<bool>,
    /// `rustc --version` of the compiler that built it.
    pub rustc: Option<String>,
    /// The CPU model from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Logical CPUs available.
    pub cpu_count: usize,
    /// `uname -sr`.
    pub kernel: Option<String>,
    /// Physical memory (`MemTotal` of /proc/meminfo).
    pub memory_bytes: Option<u64>,
    /// The PostgreSQL server version string.
    pub postgres_version: Option<String>,
    /// Server settings that matter for the numbers (fsync, shared_buffers, …).
    pub postgres_settings: BTreeMap<String, String>,
    /// Code-generation flags the binaries were built with (`.cargo/config.toml`).
    pub rustflags: Option<String>,
    /// Release profile of the workspace.
    pub release_profile: String,
    /// Version of this load generator.
    pub loadgen_version: String,
}

/// What a binary was built from, as its build script recorded it (`crates/record/build_info.rs`):
/// read with [`build_identity!`](crate::build_identity) in the binary's own package.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Build {
    /// `git rev-parse HEAD` when the binary was built; `None` when git could not tell.
    pub git_commit: Option<&'static str>,
    /// Uncommitted changes to tracked files.
    pub git_dirty: Option<bool>,
    /// `rustc --version`.
    pub rustc: Option<&'static str>,
}

/// The [`Build`] of the package this expands in (its build script must include
/// `crates/record/build_info.rs` and call its `emit()`).
#[macro_export]
macro_rules! build_identity {
    () => {
        $crate::environment::Build {
            git_commit: option_env!("BOOKSTORE_BUILD_GIT_COMMIT"),
            git_dirty: match option_env!("BOOKSTORE_BUILD_GIT_DIRTY") {
                Some(dirty) => Some(dirty == "true"),
                None => None,
            },
            rustc: option_env!("BOOKSTORE_BUILD_RUSTC"),
        }
    };
}

fn proc_value(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find(|l| l.starts_with(key))?.split_once(':').map(|(_, v)| v.trim().to_owned())
}

/// The environment of a run of the binary `build` describes, from `workspace` (its release
/// profile and code-generation flags), against the PostgreSQL server `postgres` describes
/// (its version, and the settings that shape the numbers).
pub fn capture(
    build: Build,
    workspace: &Path,
    postgres: (Option<String>, BTreeMap<String, String>),
) -> Environment {
    let (postgres_version, postgres_settings) = postgres;
    let kernel = ["ostype", "osrelease"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(format!("/proc/sys/kernel/{f}")).ok())
        .map(|s| s.trim().to_owned())
        .collect::<Vec<_>>()
        .join(" ");
    Environment {
        git_commit: build.git_commit.map(str::to_owned),
        git_dirty: build.git_dirty,
        rustc: build.rustc.map(str::to_owned),
        cpu_model: proc_value("/proc/cpuinfo", "model name"),
        cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: (!kernel.is_empty()).then_some(kernel),
        memory_bytes: proc_value("/proc/meminfo", "MemTotal")
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kib| kib * 1024),
        postgres_version,
        postgres_settings,
        rustflags: std::env::var("RUSTFLAGS").ok().or_else(|| configured_rustflags(workspace)),
        release_profile: release_profile(workspace),
        loadgen_version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// Now, RFC 3339 UTC (results files' timestamps).
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Now as a file name: `2026-11-30T10-30-00Z` (results files' default names).
pub fn file_stamp() -> String {
    time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!("[year]-[month]-[day]T[hour]-[minute]-[second]Z"))
        .expect("a valid format")
}

/// The `rustflags` line of the workspace's `.cargo/config.toml`.
fn configured_rustflags(workspace: &Path) -> Option<String> {
    let text = std::fs::read_to_string(workspace.join(".cargo/config.toml")).ok()?;
    text.lines().find(|l| l.trim_start().starts_with("rustflags")).map(|l| l.trim().to_owned())
}

/// The `[profile.release]` section of the workspace manifest, on one line.
fn release_profile(workspace: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(workspace.join("Cargo.toml")) else {
        return String::new();
    };
    text.split("[profile.release]")
        .nth(1)
        .map(|rest| {
            rest.lines()
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}
