//! `bookstore-runner`: what runs a measurement, for `loadgen`'s commands.
//!
//! - [`suite`]: `loadgen suite`, SPEC §5 end to end: a plan of windows, then the run.
//! - [`faults`]: `loadgen faults` (and `--soak`): each stack under load while its database
//!   or its own process fails, and what a client saw.
//! - [`harness`]: the processes and databases a measurement needs — the parties' servers,
//!   the throwaway cluster and its clones, the CPUs each tier runs on.
//! - [`console`]: the progress bar, and Ctrl-C that stops after the current window.
//!
//! What it measures is written as the documents of [`bookstore_record`]; how they read is
//! [`bookstore_report`]'s business, never this crate's.

pub mod console;
pub mod faults;
pub mod harness;
pub mod suite;
