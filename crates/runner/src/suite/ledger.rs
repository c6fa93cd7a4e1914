//! The ledger of a suite run: what was measured (the results document, rewritten as the
//! windows come in) and what that took, from which what is left is estimated.

use std::path::PathBuf;
use std::time::Instant;

use bookstore_record::results::RunResults;

/// How often, at most, the results file is rewritten during a run.
pub(crate) const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

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
    /// When the results file was last written.
    pub(crate) saved: Option<Instant>,
}

impl Ledger {
    /// The results so far, to be written to `output`; the run's clock starts now.
    pub(crate) fn new(results: RunResults, output: PathBuf) -> Self {
        Self { results, output, began: Instant::now(), spent: Spent::default(), saved: None }
    }

    /// Rewrites the results file, unless it was written less than [`SAVE_EVERY`] ago: the
    /// file grows with every window, and rewriting all of it after each one made the
    /// writing quadratic in the run's length. The run's end (or failure) writes it in any
    /// case ([`Ledger::save_now`]).
    pub(crate) fn save(&mut self) -> anyhow::Result<()> {
        if self.saved.is_some_and(|at| at.elapsed() < SAVE_EVERY) {
            return Ok(());
        }
        self.save_now()
    }

    /// Rewrites the results file now.
    pub(crate) fn save_now(&mut self) -> anyhow::Result<()> {
        self.saved = Some(Instant::now());
        self.results
            .write(&self.output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.output.display()))
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
