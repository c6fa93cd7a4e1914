//! `loadgen suite --resume JOURNAL`: a run killed part way goes on where its journal ends.
//! It must be the same run — the same build, the same machine, the flags that change what
//! is measured — or it is refused, saying which differs. Its servers start afresh on a
//! restored database; the windows of every whole round the journal holds are given back,
//! not measured again, and the plan's later choices (more rounds, the rates of the
//! fixed-load phase) read them as the first run did; the rest is measured.

use std::path::{Path, PathBuf};

use bookstore_record::environment::now_rfc3339;
use bookstore_record::journal::{self, Journal, Read};
use bookstore_record::results::{JOURNAL_KIND, Placed, RunResults};

use crate::suite::state::Suite;

/// A resume refused: the journal is of another run. Its message is the one line
/// `loadgen` prints (exit status 2).
#[derive(Debug)]
pub struct ResumeRefused(pub String);

impl std::fmt::Display for ResumeRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResumeRefused {}

/// Where the run of the journal at `path` writes its results.
pub fn output_of(path: &Path) -> anyhow::Result<PathBuf> {
    let read: Read<serde::de::IgnoredAny, serde::de::IgnoredAny> =
        journal::read(path, JOURNAL_KIND)?;
    Ok(read.output)
}

fn read(path: &Path) -> anyhow::Result<Read<RunResults, Vec<Placed>>> {
    journal::read(path, JOURNAL_KIND)
}

/// Why `now` (this command's run, before its first window) is not the run `journal` began,
/// if it is not: the build, the machine or the settings that differ, first of each.
fn differs(journal: &RunResults, now: &RunResults) -> Option<String> {
    environment_differs(&journal.environment, &now.environment)
        .or_else(|| settings_differ(&journal.settings, &now.settings))
}

/// Why a run on `b` is not one on `a`: the first difference of build, then of machine.
pub(crate) fn environment_differs(
    a: &bookstore_record::Environment,
    b: &bookstore_record::Environment,
) -> Option<String> {
    let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
    let build = [
        ("git commit", show(&a.git_commit), show(&b.git_commit)),
        ("uncommitted changes", show(&a.git_dirty), show(&b.git_dirty)),
        ("rustc", show(&a.rustc), show(&b.rustc)),
        ("RUSTFLAGS", show(&a.rustflags), show(&b.rustflags)),
        ("release profile", show(&a.release_profile), show(&b.release_profile)),
        ("loadgen", show(&a.loadgen_version), show(&b.loadgen_version)),
    ];
    let machine = [
        ("CPU", show(&a.cpu_model), show(&b.cpu_model)),
        ("CPUs", show(&a.cpu_count), show(&b.cpu_count)),
        ("kernel", show(&a.kernel), show(&b.kernel)),
        ("memory", show(&a.memory_bytes), show(&b.memory_bytes)),
        ("PostgreSQL", show(&a.postgres_version), show(&b.postgres_version)),
    ];
    for (what, fields, remedy) in [
        ("build", &build[..], "resume with the binaries that began it"),
        ("machine", &machine[..], "resume on the machine that began it"),
    ] {
        if let Some((name, then, now)) = fields.iter().find(|(_, then, now)| then != now) {
            return Some(format!(
                "the {what} differs ({name} {then} in the journal, {now} now): {remedy}"
            ));
        }
    }
    None
}

/// Why settings `now` are not `then`: every field that differs, with both values.
pub(crate) fn settings_differ<T: serde::Serialize>(then: &T, now: &T) -> Option<String> {
    let (then, now) = (serde_json::to_value(then).ok()?, serde_json::to_value(now).ok()?);
    let (Some(then), Some(now)) = (then.as_object(), now.as_object()) else { return None };
    let changed: Vec<String> = then
        .keys()
        .chain(now.keys())
        .filter(|key| then.get(*key) != now.get(*key))
        .map(|key| {
            let value = |v: Option<&serde_json::Value>| v.map_or("none".into(), |v| v.to_string());
            format!("{key} ({} in the journal, {} now)", value(then.get(key)), value(now.get(key)))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    (!changed.is_empty()).then(|| {
        format!(
            "the flags that change what is measured differ: {}; give the command that began it",
            changed.join(", ")
        )
    })
}

/// A journal opened by [`open`]: new, or resumed.
pub(crate) struct Opened<H, W> {
    pub(crate) journal: Journal,
    /// Resuming: what the journal held, and its run with this resume's time added.
    pub(crate) resumed: Option<(Read<H, W>, bookstore_record::RunInfo)>,
}

/// A results document a journal's header is: what the run was told, and its run.
pub(crate) trait Header: serde::Serialize + serde::de::DeserializeOwned {
    fn run(&self) -> &bookstore_record::RunInfo;
}

macro_rules! header {
    ($($document:ty),*) => {$(
        impl Header for $document {
            fn run(&self) -> &bookstore_record::RunInfo {
                &self.run
            }
        }
    )*};
}
header!(
    bookstore_record::ab::AbResults,
    bookstore_record::capacity::CapacityResults,
    bookstore_record::faults::FaultsResults
);

/// The journal of a question or a faults run writing `output`, `header` what it was told:
/// new; or, `resume`, that journal read, refused (exit status 2) where `differs` finds its
/// header of another run, said by `who` with the `units` it gives back, and reopened to
/// go on.
pub(crate) fn open<H: Header, W: serde::de::DeserializeOwned>(
    kind: &str,
    output: &Path,
    header: &H,
    resume: Option<&Path>,
    differs: impl FnOnce(&H) -> Option<String>,
    (who, units): (&str, &str),
) -> anyhow::Result<Opened<H, W>> {
    let Some(path) = resume else {
        let path = journal::beside(output);
        let journal = Journal::create(&path, kind, &header.run().id, output, header)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        return Ok(Opened { journal, resumed: None });
    };
    let read: Read<H, W> = journal::read(path, kind)?;
    if let Some(why) = differs(&read.header) {
        return Err(ResumeRefused(format!("--resume {}: {why}", path.display())).into());
    }
    let at = now_rfc3339();
    let mut resumed = read.header.run().clone();
    resumed_at(&mut resumed, &read.resumed_at, &at);
    eprintln!(
        "{who}: resuming {}: {} {units} taken from its journal{}",
        read.run,
        read.windows.len(),
        read.damage.as_ref().map_or(String::new(), |d| format!("; {d}"))
    );
    let mut journal = Journal::reopen(path, &read)
        .map_err(|e| anyhow::anyhow!("cannot reopen {}: {e}", path.display()))?;
    journal.resumed(&at).map_err(|e| anyhow::anyhow!("cannot write the journal: {e}"))?;
    Ok(Opened { journal, resumed: Some((read, resumed)) })
}

/// `run` resumed `at`, after the resumes `before` it.
pub(crate) fn resumed_at(run: &mut bookstore_record::RunInfo, before: &[String], at: &str) {
    run.resumed_at = before.to_vec();
    run.resumed_at.push(at.to_owned());
}

/// One whole unit (a block, a stack) appended to `journal` and closed, so that a resume
/// gives it back.
pub(crate) fn append_whole<W: serde::Serialize>(
    journal: &mut Journal,
    key: &str,
    seconds: f64,
    unit: &W,
) -> anyhow::Result<()> {
    journal
        .window(key, seconds, unit)
        .and_then(|()| journal.round_end())
        .map_err(|e| anyhow::anyhow!("cannot write the journal: {e}"))
}

impl Suite<'_> {
    /// Before anything starts: refuses a journal of another run.
    pub(crate) fn check_resume(&self) -> anyhow::Result<()> {
        let Some(path) = &self.options.resume else { return Ok(()) };
        let read = read(path)?;
        if let Some(why) = differs(&read.header, &self.ledger.results) {
            return Err(ResumeRefused(format!("--resume {}: {why}", path.display())).into());
        }
        Ok(())
    }

    /// Once the stacks are prepared, before the first window: a new journal, or, resuming,
    /// the old one read, its windows set to be given back, and reopened to go on.
    pub(crate) fn open_journal(&mut self) -> anyhow::Result<()> {
        let output = &self.options.output;
        let Some(path) = &self.options.resume else {
            let path = journal::beside(output);
            let run = self.ledger.results.run.id.clone();
            let journal = Journal::create(&path, JOURNAL_KIND, &run, output, &self.ledger.results)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            self.ledger.journal = Some(journal);
            return Ok(());
        };
        let read = read(path)?;
        let names = |r: &RunResults| r.stacks.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        if names(&read.header) != names(&self.ledger.results) {
            return Err(ResumeRefused(format!(
                "--resume {}: its stacks were {:?}, these are {:?}",
                path.display(),
                names(&read.header),
                names(&self.ledger.results)
            ))
            .into());
        }
        let at = now_rfc3339();
        let mut run = read.header.run.clone();
        resumed_at(&mut run, &read.resumed_at, &at);
        self.ledger.results.run = run;
        let mut said = format!(
            "resuming {}: {} windows measured before are taken from its journal",
            read.run,
            read.windows.len()
        );
        if read.cut_round > 0 {
            said +=
                &format!(", {} of a round cut short are measured again with it", read.cut_round);
        }
        if let Some(damage) = &read.damage {
            said += &format!("; {damage}");
        }
        self.progress.note(&said);
        let mut journal = Journal::reopen(path, &read)
            .map_err(|e| anyhow::anyhow!("cannot reopen {}: {e}", path.display()))?;
        journal.resumed(&at).map_err(|e| anyhow::anyhow!("cannot write the journal: {e}"))?;
        self.ledger.journal = Some(journal);
        self.ledger.replay = read
            .windows
            .into_iter()
            .map(|(key, seconds, placed)| (key, (seconds, placed)))
            .collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_build_machine_or_setting_is_named_in_one_line() {
        let mut results: RunResults =
            serde_json::from_str(include_str!("../../tests/suite/resume-header.json")).unwrap();
        let same = results.clone();
        assert_eq!(differs(&same, &results), None);
        results.environment.git_commit = Some("def456".into());
        let why = differs(&same, &results).unwrap();
        assert!(why.starts_with("the build differs (git commit"), "{why}");
        assert!(!why.contains('\n'));
        let mut results = same.clone();
        results.environment.cpu_count += 2;
        assert!(differs(&same, &results).unwrap().starts_with("the machine differs (CPUs"));
        let mut results = same.clone();
        results.settings.measurement.rounds += 1;
        let why = differs(&same, &results).unwrap();
        assert!(why.contains("rounds (") && why.contains("in the journal"), "{why}");
    }
}
