//! A suite run in progress: what it was told, what it keeps running ([`Running`]), what it
//! measured so far ([`Ledger`]), and what it shows. The schedule (`rounds`), the preparation
//! (`prepare`) and the windows (`window`) all work on it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bookstore_record::results::StackStatus;

use crate::suite::SuiteOptions;
use crate::suite::ledger::Ledger;
use crate::suite::progress::Progress;
use crate::suite::running::Running;

/// A suite run in progress.
pub(crate) struct Suite<'a> {
    pub(crate) options: &'a SuiteOptions,
    pub(crate) progress: Progress,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) logs: PathBuf,
    pub(crate) running: Running,
    pub(crate) ledger: Ledger,
}

impl Suite<'_> {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Marks a stack `failed` (before measuring) or `crashed`, skipping its remaining windows.
    pub(crate) fn stack_failed(
        &mut self,
        index: usize,
        status: StackStatus,
        why: String,
    ) -> anyhow::Result<()> {
        let stack = &mut self.ledger.results.stacks[index];
        self.progress.note(&format!("{}: {status}: {why}", stack.name));
        let measured = (stack.cells.len() + stack.equal_load.len()) as u64;
        self.progress.skipped(self.options.windows_per_stack().saturating_sub(measured));
        stack.status = status;
        stack.failure = Some(why);
        Ok(())
    }
}

/// The error kind of a 409 `out_of_stock` for a book that had the stock.
pub(crate) const UNJUSTIFIED_REFUSAL: &str = "unjustified_refusal";
