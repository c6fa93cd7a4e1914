//! The ledger of a suite run: what was measured (the results document, each window
//! journaled as it ends and the document written at the run's end) and what that took,
//! from which what is left is estimated; on `--resume`, the journal's windows, given back
//! in place of measuring them again.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use bookstore_record::journal::Journal;
use bookstore_record::results::{Placed, RunResults};

/// How long the suite's windows took, setup between them included: what the rounds left
/// are estimated by.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spent {
    pub(crate) windows: u64,
    pub(crate) seconds: f64,
}

impl Spent {
    /// Seconds per window so far; `None` before the first.
    pub(crate) fn per_window(&self) -> Option<f64> {
        (self.windows > 0).then(|| self.seconds / self.windows as f64)
    }
}

/// What was measured, and the time it took.
pub(crate) struct Ledger {
    pub(crate) results: RunResults,
    /// Where the results are written.
    pub(crate) output: PathBuf,
    pub(crate) began: Instant,
    /// The windows run so far and their time, setup between them included.
    pub(crate) spent: Spent,
    /// Where each window goes as it ends (from the first window on).
    pub(crate) journal: Option<Journal>,
    /// A resumed run's windows from its journal, by their place in the plan: what they
    /// took, and what they added.
    pub(crate) replay: BTreeMap<String, (f64, Vec<Placed>)>,
    /// A window of the round in progress was measured (not given back by the journal).
    pub(crate) measured_in_round: bool,
}

impl Ledger {
    /// The results so far, to be written to `output`; the run's clock starts now.
    pub(crate) fn new(results: RunResults, output: PathBuf) -> Self {
        Self {
            results,
            output,
            began: Instant::now(),
            spent: Spent::default(),
            journal: None,
            replay: BTreeMap::new(),
            measured_in_round: false,
        }
    }

    /// Writes the results file now: once before the first window, at the run's end, and
    /// when it fails; the journal keeps each window between.
    pub(crate) fn save_now(&mut self) -> anyhow::Result<()> {
        self.results
            .write(&self.output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.output.display()))
    }

    /// A window measured at `key` that took `seconds` and added `placed`: on disk before the
    /// next starts.
    pub(crate) fn journal_window(
        &mut self,
        key: &str,
        seconds: f64,
        placed: &[Placed],
    ) -> anyhow::Result<()> {
        self.measured_in_round = true;
        match &mut self.journal {
            Some(journal) => journal
                .window(key, seconds, &placed)
                .map_err(|e| anyhow::anyhow!("cannot write the journal: {e}")),
            None => Ok(()),
        }
    }

    /// The end of a round: journaled when one of its windows was measured.
    pub(crate) fn round_end(&mut self) -> anyhow::Result<()> {
        if !std::mem::take(&mut self.measured_in_round) {
            return Ok(());
        }
        match &mut self.journal {
            Some(journal) => {
                journal.round_end().map_err(|e| anyhow::anyhow!("cannot write the journal: {e}"))
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_per_window_is_measured_not_assumed() {
        assert_eq!(Spent::default().per_window(), None);
        assert_eq!(Spent { windows: 4, seconds: 3.0 }.per_window(), Some(0.75));
    }
}
