//! A results document on disk: written atomically, read back only under its own schema and
//! a version the reader knows, every field documented; and the run header every document
//! of this workspace starts with.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How a run went (ordered worst first, as a merge of shards keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The run itself failed (`failure` says why).
    Failed,
    /// Stopped early (Ctrl-C or SIGTERM): what was measured before is kept.
    Interrupted,
    /// Still running, or it died without saying so.
    Running,
    /// Ran to its end.
    Complete,
}

impl RunStatus {
    /// As the results files write it.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
        }
    }

    /// `Interrupted` if the run was stopped, else `Complete`: how a run that ends says it.
    pub fn ended(stopped: bool) -> Self {
        if stopped { RunStatus::Interrupted } else { RunStatus::Complete }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// When and how a run went: the head of every results document of the workspace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    /// Unique name of the run (also the file name).
    pub id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC; `None` while running or after a crash.
    pub finished_at: Option<String>,
    /// How it went.
    pub status: RunStatus,
    /// What stopped a `failed` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The command line, as given (secrets in URLs replaced by `***`).
    pub command_line: Vec<String>,
    /// Wall time of the whole run, once it ended (of its last part, when resumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// When the run was resumed from its journal (`--resume`), RFC 3339 UTC; absent when
    /// it never was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_at: Vec<String>,
}

impl RunInfo {
    /// A run starting now, `running` until it ends; `command_line` as it is to be recorded
    /// (its secrets already redacted).
    pub fn running(id: String, command_line: Vec<String>) -> Self {
        Self {
            id,
            started_at: crate::environment::now_rfc3339(),
            finished_at: None,
            status: RunStatus::Running,
            failure: None,
            command_line,
            wall_seconds: None,
            resumed_at: Vec::new(),
        }
    }
}

/// The four bytes every zstd frame starts with: how a reader tells a compressed document.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// zstd's level for a document: 19 of 22 wrote the default run of 2026-12-06 (7.5 MB
/// pretty-printed) in 1.4 MB, in about 5 s, once at a run's end; level 9 took 0.2 s for
/// 1.6 MB.
const ZSTD_LEVEL: i32 = 19;

/// The name of the document `path` without its `.json` or `.json.zst`: its run's id, and
/// the stem of what goes beside it (`<time>.journal`, the logs in `<time>.logs/`).
pub fn stem(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    name.trim_end_matches(".zst").trim_end_matches(".json").to_owned()
}

/// `<stem>.<extension>` beside the document `path`.
pub fn beside(path: &Path, extension: &str) -> PathBuf {
    path.with_file_name(format!("{}.{extension}", stem(path)))
}

/// Whether `path` names a compressed document (`….json.zst`).
pub fn compressed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Writes a results document to `path` atomically (temporary file, then rename), so a
/// reader or a crash never sees half a file: pretty-printed JSON, or with a `.zst` name
/// the compact JSON compressed by zstd.
pub fn write_document<T: Serialize>(document: &T, path: &Path) -> std::io::Result<()> {
    let bytes = if compressed(path) {
        let text = serde_json::to_vec(document).map_err(std::io::Error::other)?;
        zstd::bulk::compress(&text, ZSTD_LEVEL)?
    } else {
        serde_json::to_vec_pretty(document).map_err(std::io::Error::other)?
    };
    write_atomically(path, &bytes)
}

/// `bytes` to `path` by a temporary file beside it, synced, then renamed over it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let temporary = path.with_file_name(name);
    let mut file = std::fs::File::create(&temporary)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// The bytes of the document at `path`, decompressed when zstd compressed them.
pub fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    if bytes.starts_with(&ZSTD_MAGIC) {
        return zstd::stream::decode_all(bytes.as_slice())
            .map_err(|e| anyhow::anyhow!("{} is not a whole zstd file: {e}", path.display()));
    }
    Ok(bytes)
}

/// Reads the document at `path`, refusing it unless its `schema` is `schema` (`what` names
/// it in the error) and its `schema_version` one of `versions`.
pub fn read_document<T: serde::de::DeserializeOwned>(
    path: &Path,
    schema: &str,
    versions: std::ops::RangeInclusive<u32>,
    what: &str,
) -> anyhow::Result<T> {
    let text = read_bytes(path)?;
    let probe: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| anyhow::anyhow!("{} is not JSON: {e}", path.display()))?;
    if probe["schema"] != schema {
        anyhow::bail!("{} is not {what} (schema {})", path.display(), probe["schema"]);
    }
    let readable = probe["schema_version"]
        .as_u64()
        .is_some_and(|v| u32::try_from(v).is_ok_and(|v| versions.contains(&v)));
    if !readable {
        let reads = match (versions.start(), versions.end()) {
            (oldest, newest) if oldest == newest => format!("{newest}"),
            (oldest, newest) => format!("{oldest} to {newest}"),
        };
        anyhow::bail!(
            "{} has schema version {}, this version reads {reads}",
            path.display(),
            probe["schema_version"]
        );
    }
    serde_json::from_slice(&text)
        .map_err(|e| anyhow::anyhow!("{} does not match the schema: {e}", path.display()))
}

/// The field names of `document` (every key, nested ones and array elements' too) that
/// `documentation` does not name in backticks: for the tests that keep a results format's
/// documentation complete (RESULTS.md here, DBBENCH.md for dbbench).
pub fn undocumented_fields(document: &impl Serialize, documentation: &str) -> Vec<String> {
    fn keys(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    out.insert(key.clone());
                    keys(value, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|item| keys(item, out)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    keys(&serde_json::to_value(document).expect("a results document serializes"), &mut found);
    found.into_iter().filter(|key| !documentation.contains(&format!("`{key}`"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's id and the names beside it leave out `.json` and `.json.zst` alike: the
    /// capacity study of 2026-12-07, the first `.json.zst`, was given the id
    /// `…-capacity-study.json` and its logs `…-capacity-study.json.logs/`.
    #[test]
    fn a_documents_stem_is_its_name_without_json_or_json_zst() {
        assert_eq!(
            stem(Path::new("summary/results/2026-12-07T08-09-25Z-capacity-study.json.zst")),
            "2026-12-07T08-09-25Z-capacity-study"
        );
        assert_eq!(stem(Path::new("ab-1.json")), "ab-1");
        assert_eq!(beside(Path::new("a/2026.json.zst"), "logs"), Path::new("a/2026.logs"));
        assert_eq!(beside(Path::new("a/2026.json"), "logs"), Path::new("a/2026.logs"));
    }
}
