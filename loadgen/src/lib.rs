//! `loadgen`: the bookstore benchmark's measuring instrument, as one command line.
//!
//! The binary (`src/main.rs`) parses the command line and calls the crates that do the
//! work: [`bookstore_client`] (the load engine and scenarios), [`bookstore_record`] (the
//! results documents), [`bookstore_harness`] (servers and databases), [`bookstore_suite`]
//! (`loadgen suite`), [`bookstore_faults`] (`loadgen faults`) and [`bookstore_pages`]
//! (every page and export). This library holds the one command small enough to live here:
//! [`http`], `loadgen http URL`, and its [`capacity`] search (`--slo`). `loadgen --help`
//! lists the commands; the README shows the main one.

pub mod capacity;
pub mod http;
