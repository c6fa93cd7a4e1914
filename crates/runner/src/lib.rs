//! `bookstore-runner`: what runs a measurement, for `loadgen`'s commands.
//!
//! - [`suite`]: `loadgen suite`, SPEC §5 end to end: a plan of windows, then the run.
//! - [`ab`]: `loadgen ab`, one question about two parties, as precisely as asked.
//! - [`faults`]: `loadgen faults` (and `--soak`): each stack under load while its database
//!   or its own process fails, and what a client saw.
//! - [`harness`]: the processes and databases a measurement needs — the parties' servers,
//!   the throwaway cluster and its clones, the CPUs each tier runs on.
//! - [`http`]: `loadgen http`, one URL or one scenario, and its capacity search.
//! - [`console`]: the progress bar, Ctrl-C that stops after the current window, and where a
//!   command's text goes.
//!
//! What it measures is written as the documents of [`bookstore_record`]; how they read is
//! `bookstore_report`'s business, never this crate's.

pub mod ab;
pub mod console;
pub mod faults;
pub mod harness;
pub mod http;
pub mod suite;
