//! The console: what a long run of `loadgen suite` or `dbbench` shows and hears at
//! the terminal.
//!
//! - [`progress`]: the bar (or plain lines, when the output is not a terminal).
//! - [`signal`]: Ctrl-C that stops a long run after its current window, keeping what was
//!   measured.

pub mod progress;
pub mod signal;
