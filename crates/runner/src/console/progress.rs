//! Where a long run stands: a bar with the cells done, an ETA and a message on a terminal;
//! on anything else (a log, CI) the same lines plainly, one per finished cell.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A run's progress over a known number of cells. Cloning shares the bar.
#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress over `cells` cells; a bar only when standard error is a terminal.
    pub fn new(cells: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(cells), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} cells  ETA {eta}  {msg}")
                    .expect("a valid template"),
            );
            bar
        });
        Self { bar }
    }

    /// Whether a bar is drawn (standard error is a terminal).
    pub fn is_drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// A line above the bar (or on standard error).
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// A finished cell: its line, and the bar one step on.
    pub fn finished(&self, line: &str) {
        self.note(line);
        self.skipped(1);
    }

    /// Cells planned beyond those counted at the start: the bar grows by them.
    pub fn added(&self, cells: u64) {
        if let Some(bar) = &self.bar {
            bar.inc_length(cells);
        }
    }

    /// Cells that will not run.
    pub fn skipped(&self, cells: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(cells);
        }
    }

    /// The bar's message (the cell running now); nothing without a bar.
    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
