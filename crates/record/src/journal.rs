//! A run's journal: what it measured, window by window, on disk before the next window
//! starts, so that a run killed at minute 13 keeps its 13 minutes (`loadgen suite --resume
//! JOURNAL` measures only what the journal lacks).
//!
//! It is a text file beside the results file (`<time>.journal`), one entry a line:
//! `<crc32 of the JSON, 8 hex digits> <JSON>`. The first line is the header: the run's
//! document before its first window (its settings, machine and build, which a resume must
//! match) and where its results go. Then one line per window (each tagged with the run's
//! id, so a line of another run is never taken for this one's) and a line at the end of
//! every round: a round cut short is measured again whole, never half kept. Each line is
//! flushed to disk (`fdatasync`) before the run goes on.
//!
//! A journal cut mid-line (the kill came during a write), with a line whose checksum does
//! not match, or with a line from another run is read up to the last whole round before
//! it; [`Read::damage`] names what was left and why.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The header's schema name.
pub const SCHEMA: &str = "bookstore-bench/journal";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// One line of a journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "entry", rename_all = "snake_case", deny_unknown_fields)]
pub enum Entry<H, W> {
    /// The first line.
    Header {
        /// [`SCHEMA`].
        schema: String,
        /// [`VERSION`].
        version: u32,
        /// What kind of run: `suite` or `capacity`.
        kind: String,
        /// The run's id (its results file's name).
        run: String,
        /// Where the results file goes.
        output: PathBuf,
        /// The run's document before its first window.
        header: H,
    },
    /// One window (or one block) measured.
    Window {
        /// The run it belongs to.
        run: String,
        /// The window's place in the plan.
        key: String,
        /// What it took, set-up included, seconds.
        seconds: f64,
        /// What it added to the run's document.
        window: W,
    },
    /// A round ended: every window since the last such line is whole.
    RoundEnd {
        /// The run it belongs to.
        run: String,
    },
    /// The run was resumed (RFC 3339 UTC).
    Resumed {
        /// The run it belongs to.
        run: String,
        /// When.
        at: String,
    },
}

/// An open journal, appended to.
pub struct Journal {
    file: File,
    run: String,
}

/// A journal's path beside the results file `results` (`<time>.json.zst` →
/// `<time>.journal`).
pub fn beside(results: &Path) -> PathBuf {
    crate::document::beside(results, "journal")
}

fn line<T: Serialize>(entry: &T) -> std::io::Result<Vec<u8>> {
    let json = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    let mut line = format!("{:08x} ", crc32fast::hash(&json)).into_bytes();
    line.extend_from_slice(&json);
    line.push(b'\n');
    Ok(line)
}

impl Journal {
    /// A new journal at `path` (replacing any), its header written and on disk.
    pub fn create<H: Serialize>(
        path: &Path,
        kind: &str,
        run: &str,
        output: &Path,
        header: &H,
    ) -> std::io::Result<Self> {
        let entry: Entry<&H, ()> = Entry::Header {
            schema: SCHEMA.into(),
            version: VERSION,
            kind: kind.into(),
            run: run.into(),
            output: output.to_owned(),
            header,
        };
        let mut file = File::create(path)?;
        file.write_all(&line(&entry)?)?;
        file.sync_all()?;
        // The new file's name on disk too.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir).and_then(|d| d.sync_all()).ok();
        }
        Ok(Self { file, run: run.into() })
    }

    /// The journal `read` came from, cut back to its last whole round and opened to go on:
    /// a resumed run appends to it, so that a second kill loses no more than the first.
    pub fn reopen<H, W>(path: &Path, read: &Read<H, W>) -> std::io::Result<Self> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(read.whole_bytes)?;
        file.sync_all()?;
        let mut file = OpenOptions::new().append(true).open(path)?;
        file.flush()?;
        Ok(Self { file, run: read.run.clone() })
    }

    /// One window, on disk when this returns.
    pub fn window<W: Serialize>(
        &mut self,
        key: &str,
        seconds: f64,
        window: &W,
    ) -> std::io::Result<()> {
        let entry: Entry<(), &W> =
            Entry::Window { run: self.run.clone(), key: key.into(), seconds, window };
        self.append(&entry)
    }

    /// The end of a round.
    pub fn round_end(&mut self) -> std::io::Result<()> {
        self.append(&Entry::<(), ()>::RoundEnd { run: self.run.clone() })
    }

    /// That the run was resumed, now.
    pub fn resumed(&mut self, at: &str) -> std::io::Result<()> {
        self.append(&Entry::<(), ()>::Resumed { run: self.run.clone(), at: at.into() })
    }

    fn append<T: Serialize>(&mut self, entry: &T) -> std::io::Result<()> {
        self.file.write_all(&line(entry)?)?;
        self.file.sync_data()
    }
}

/// What a journal holds, as far as it could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<H, W> {
    /// What kind of run.
    pub kind: String,
    /// The run's id.
    pub run: String,
    /// Where its results go.
    pub output: PathBuf,
    /// Its document before the first window.
    pub header: H,
    /// Every window of a whole round, in order: its key, its seconds and what it added.
    pub windows: Vec<(String, f64, W)>,
    /// When it was resumed before (RFC 3339 UTC).
    pub resumed_at: Vec<String>,
    /// Windows read after the last whole round: the round they were of is measured again.
    pub cut_round: usize,
    /// What could not be read at the end, and why (`None`: every line was whole).
    pub damage: Option<String>,
    /// The length of the journal up to its last whole round, bytes.
    pub whole_bytes: u64,
}

/// Reads the journal at `path`, of a run of `kind`, up to its last whole round.
pub fn read<H: DeserializeOwned, W: DeserializeOwned>(
    path: &Path,
    kind: &str,
) -> anyhow::Result<Read<H, W>> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    read_bytes(&bytes, kind).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// [`read`] of a journal's bytes.
pub fn read_bytes<H: DeserializeOwned, W: DeserializeOwned>(
    bytes: &[u8],
    kind: &str,
) -> anyhow::Result<Read<H, W>> {
    let mut lines = Lines { bytes, at: 0, number: 0 };
    let first = lines.next_entry::<H, W>(None);
    let Ok(Some(Entry::Header { schema, version, kind: found, run, output, header })) = first
    else {
        anyhow::bail!("not a journal: its first line is not a whole journal header");
    };
    anyhow::ensure!(schema == SCHEMA, "not a journal (schema {schema})");
    anyhow::ensure!(
        version == VERSION,
        "a journal of version {version}; this build reads {VERSION}"
    );
    anyhow::ensure!(found == kind, "a journal of a {found} run, not of a {kind} run");
    let mut read = Read {
        kind: found,
        run,
        output,
        header,
        windows: Vec::new(),
        resumed_at: Vec::new(),
        cut_round: 0,
        damage: None,
        whole_bytes: lines.at as u64,
    };
    let mut pending = Vec::new();
    loop {
        let line = lines.number;
        match lines.next_entry::<H, W>(Some(&read.run)) {
            Ok(None) => break,
            Ok(Some(Entry::Window { key, seconds, window, .. })) => {
                pending.push((key, seconds, window))
            }
            Ok(Some(Entry::RoundEnd { .. })) => {
                read.windows.append(&mut pending);
                read.whole_bytes = lines.at as u64;
            }
            Ok(Some(Entry::Resumed { at, .. })) => read.resumed_at.push(at),
            Ok(Some(Entry::Header { .. })) => {
                read.damage = Some(format!("line {} is a second header", line + 1));
                break;
            }
            Err(why) => {
                let left = bytes.len() - lines.at;
                read.damage =
                    Some(format!("line {} and after ({left} bytes) not read: {why}", line + 1));
                break;
            }
        }
    }
    read.cut_round = pending.len();
    Ok(read)
}

/// A journal's lines, checked one by one.
struct Lines<'a> {
    bytes: &'a [u8],
    /// Where the next line starts.
    at: usize,
    /// Lines read.
    number: usize,
}

impl Lines<'_> {
    /// The next entry, `None` at the end; an error names why the line cannot be taken.
    fn next_entry<H: DeserializeOwned, W: DeserializeOwned>(
        &mut self,
        run: Option<&str>,
    ) -> Result<Option<Entry<H, W>>, String> {
        let rest = &self.bytes[self.at..];
        if rest.is_empty() {
            return Ok(None);
        }
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err(format!("cut short ({} bytes, no end of line)", rest.len()));
        };
        let text = &rest[..end];
        let (crc, json) = match text.get(..9) {
            Some([head @ .., b' ']) => (std::str::from_utf8(head).ok(), &text[9..]),
            _ => (None, text),
        };
        let crc = crc.and_then(|c| u32::from_str_radix(c, 16).ok()).ok_or("no checksum")?;
        if crc32fast::hash(json) != crc {
            return Err("its checksum does not match".into());
        }
        let entry: Entry<H, W> =
            serde_json::from_slice(json).map_err(|e| format!("not an entry: {e}"))?;
        let of = match &entry {
            Entry::Header { .. } => None,
            Entry::Window { run, .. } | Entry::RoundEnd { run } | Entry::Resumed { run, .. } => {
                Some(run.as_str())
            }
        };
        if let (Some(expected), Some(of)) = (run, of)
            && expected != of
        {
            return Err(format!("a line of another run ({of})"));
        }
        self.at += end + 1;
        self.number += 1;
        Ok(Some(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal of three rounds of two windows, the last round cut after its first
    /// window; its bytes and the offset where its last line starts.
    fn journal(dir: &Path) -> (PathBuf, Vec<u8>) {
        let path = dir.join("run.journal");
        let mut journal =
            Journal::create(&path, "suite", "run-1", Path::new("run.json.zst"), &"head").unwrap();
        for round in 0..3 {
            for window in 0..2 {
                if round == 2 && window == 1 {
                    break;
                }
                journal.window(&format!("{round}/{window}"), 0.5, &(round * 10 + window)).unwrap();
            }
            if round < 2 {
                journal.round_end().unwrap();
            }
        }
        let bytes = std::fs::read(&path).unwrap();
        (path, bytes)
    }

    #[test]
    fn a_journal_reads_back_its_whole_rounds_and_names_the_round_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = journal(dir.path());
        let read: Read<String, u32> = super::read(&path, "suite").unwrap();
        assert_eq!((read.header.as_str(), read.run.as_str()), ("head", "run-1"));
        let kept: Vec<u32> = read.windows.iter().map(|(_, _, w)| *w).collect();
        assert_eq!(kept, [0, 1, 10, 11], "the two whole rounds");
        assert_eq!((read.cut_round, read.damage), (1, None));
        let other = super::read::<String, u32>(&path, "capacity").unwrap_err();
        assert!(other.to_string().contains("suite run"), "{other}");
    }

    #[test]
    fn a_journal_cut_at_every_byte_of_its_last_line_reads_to_its_last_whole_round() {
        let dir = tempfile::tempdir().unwrap();
        let (_, bytes) = journal(dir.path());
        let whole: Read<String, u32> = read_bytes(&bytes, "suite").unwrap();
        let last_line = bytes[..bytes.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        for cut in last_line..bytes.len() {
            let read: Read<String, u32> = read_bytes(&bytes[..cut], "suite").unwrap();
            assert_eq!(read.windows, whole.windows, "cut at {cut}");
            // Cut inside the line: named; cut at its start: nothing lost but the round.
            assert_eq!(read.damage.is_some(), cut > last_line, "cut at {cut}: {:?}", read.damage);
            assert!(read.whole_bytes <= cut as u64);
        }
        // And every cut of the whole file either reads or says it is no journal, never panics.
        for cut in 0..bytes.len() {
            let _ = read_bytes::<String, u32>(&bytes[..cut], "suite");
        }
    }

    #[test]
    fn a_damaged_line_or_another_runs_line_ends_what_is_read_and_says_which() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes) = journal(dir.path());
        // Flip a digit inside the fourth line's JSON (round 1's first window).
        let starts: Vec<usize> = std::iter::once(0)
            .chain(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1))
            .collect();
        let fourth = starts[4];
        let at = fourth + bytes[fourth..].iter().position(|&b| b == b'1').unwrap();
        bytes[at] = b'7';
        let read: Read<String, u32> = read_bytes(&bytes, "suite").unwrap();
        assert_eq!(read.windows.len(), 2, "round 0 only");
        let damage = read.damage.unwrap();
        assert!(damage.starts_with("line 5 and after") && damage.contains("checksum"), "{damage}");
        // A line of another run appended to this one.
        let mut other =
            Journal::create(&dir.path().join("other"), "suite", "run-2", &path, &"h").unwrap();
        other.window("x", 1.0, &99u32).unwrap();
        let theirs = std::fs::read(dir.path().join("other")).unwrap();
        let second_line = theirs.iter().position(|&b| b == b'\n').unwrap() + 1;
        // This run's first two rounds (through line 7, round 1's end), then their window.
        let mut mixed = std::fs::read(&path).unwrap();
        mixed.truncate(starts[7]);
        mixed.extend_from_slice(&theirs[second_line..]);
        let read: Read<String, u32> = read_bytes(&mixed, "suite").unwrap();
        assert!(read.damage.unwrap().contains("another run (run-2)"));
        assert_eq!(read.windows.len(), 4);
    }

    #[test]
    fn a_reopened_journal_is_cut_back_to_its_whole_rounds_and_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = journal(dir.path());
        let first: Read<String, u32> = read(&path, "suite").unwrap();
        let mut journal = Journal::reopen(&path, &first).unwrap();
        journal.resumed("2026-12-07T00:00:00Z").unwrap();
        journal.window("2/0", 0.5, &20u32).unwrap();
        journal.window("2/1", 0.5, &21u32).unwrap();
        journal.round_end().unwrap();
        let again: Read<String, u32> = read(&path, "suite").unwrap();
        let kept: Vec<u32> = again.windows.iter().map(|(_, _, w)| *w).collect();
        assert_eq!(kept, [0, 1, 10, 11, 20, 21]);
        assert_eq!(again.resumed_at, ["2026-12-07T00:00:00Z"]);
        assert_eq!((again.cut_round, again.damage), (0, None));
    }

    #[test]
    fn the_journal_sits_beside_its_results_file() {
        assert_eq!(beside(Path::new("a/2026.json.zst")), Path::new("a/2026.journal"));
        assert_eq!(beside(Path::new("b.json")), Path::new("b.journal"));
    }
}
