//! What a finished suite run tells a script: the problems that make its numbers incomplete
//! or untrustworthy, and the exit status they give `loadgen suite`.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | every stack measured, no cell disqualified |
//! | 1 | the suite itself failed (an error message says why) |
//! | 2 | the command line was wrong |
//! | 3 | a stack did not start or failed its contract check (not measured) |
//! | 4 | a stack crashed during the measurement (its later cells are missing) |
//! | 5 | a cell was disqualified (audit, invalid responses, errors, in-flight or a crash) |
//! | 130 | the run was interrupted (Ctrl-C or SIGTERM): the results hold what was measured |
//!
//! When several apply, the first in the order 130, 3, 4, 5 decides; the terminal lists all.

use crate::results::{Cell, RunResults, StackStatus};
use crate::warnings::disqualification;

/// Exit status: a stack did not start or failed its contract check.
pub const EXIT_CONTRACT_FAILED: u8 = 3;
/// Exit status: a stack crashed during the measurement.
pub const EXIT_CRASHED: u8 = 4;
/// Exit status: a cell was disqualified.
pub const EXIT_DISQUALIFIED: u8 = 5;
/// Exit status: the run was interrupted.
pub const EXIT_INTERRUPTED: u8 = 130;

/// One reason a run's numbers are incomplete or not to be trusted.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// Ctrl-C or SIGTERM stopped the run.
    Interrupted,
    /// A stack did not start or failed its contract check.
    #[allow(missing_docs)] // named for what they hold
    ContractFailed { stack: String, why: String },
    /// A stack exited during the measurement.
    #[allow(missing_docs)] // named for what they hold
    Crashed {
        stack: String,
        /// Its exit and the end of its log.
        why: String,
    },
    /// A cell (a target's scenario at one concurrency or equal-load rate, over its rounds)
    /// was disqualified.
    #[allow(missing_docs)] // named for what they hold
    Disqualified {
        /// The stack or ceiling.
        target: String,
        scenario: String,
        /// `c = 128`, or the equal-load rate (`70% of the slowest`).
        load: String,
        /// The gate it failed (the first, in its first failing round).
        reason: String,
    },
}

impl Problem {
    /// The exit status this problem gives.
    pub fn exit_code(&self) -> u8 {
        match self {
            Problem::Interrupted => EXIT_INTERRUPTED,
            Problem::ContractFailed { .. } => EXIT_CONTRACT_FAILED,
            Problem::Crashed { .. } => EXIT_CRASHED,
            Problem::Disqualified { .. } => EXIT_DISQUALIFIED,
        }
    }

    /// One line for the terminal.
    pub fn line(&self) -> String {
        match self {
            Problem::Interrupted => "interrupted: the results hold what was measured".into(),
            Problem::ContractFailed { stack, why } => format!("{stack} not measured: {why}"),
            Problem::Crashed { stack, why } => format!("{stack} crashed: {why}"),
            Problem::Disqualified { target, scenario, load, reason } => {
                format!("{target} · {scenario} · {load} disqualified: {reason}")
            }
        }
    }
}

/// Every problem of `results`, in the order of their exit statuses' precedence.
pub fn problems(results: &RunResults) -> Vec<Problem> {
    let mut found = Vec::new();
    if results.run.status == crate::RunStatus::Interrupted {
        found.push(Problem::Interrupted);
    }
    for stack in &results.stacks {
        let why = stack.failure.clone().unwrap_or_default();
        match stack.status {
            StackStatus::Failed => {
                found.push(Problem::ContractFailed { stack: stack.name.clone(), why })
            }
            StackStatus::Crashed => found.push(Problem::Crashed { stack: stack.name.clone(), why }),
            StackStatus::Measured => {}
        }
    }
    let targets = results
        .stacks
        .iter()
        .map(|s| (s.name.as_str(), s.cells.iter().chain(&s.equal_load)))
        .chain([
            ("HTTP ceiling", results.ceilings.http.iter().chain(&[])),
            ("DB ceiling", results.ceilings.db.iter().chain(&[])),
        ]);
    for (target, cells) in targets {
        let mut seen: Vec<(&str, String)> = Vec::new();
        for cell in cells {
            let key = (cell.scenario.as_str(), cell.load_label());
            if seen.contains(&key) {
                continue;
            }
            if let Some(warning) = disqualification(cell) {
                found.push(Problem::Disqualified {
                    target: target.to_owned(),
                    scenario: key.0.to_owned(),
                    load: key.1.clone(),
                    reason: warning.message.clone(),
                });
                seen.push(key);
            }
        }
    }
    found.sort_by_key(|p| match p {
        Problem::Interrupted => 0,
        Problem::ContractFailed { .. } => 1,
        Problem::Crashed { .. } => 2,
        Problem::Disqualified { .. } => 3,
    });
    found
}

/// The concurrency of the stacks' cells a window belongs with.
pub fn block_concurrency(cell: &Cell) -> u32 {
    cell.beside_concurrency.unwrap_or(cell.concurrency)
}

/// The exit status of a run with these problems: 0 without any.
pub fn exit_code(problems: &[Problem]) -> u8 {
    problems.first().map_or(0, Problem::exit_code)
}
