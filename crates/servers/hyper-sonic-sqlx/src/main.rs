//! `hyper-sonic-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

use bookstore_app::DbCalls;

fn main() -> ExitCode {
    bookstore_app::cli::main(hyper_sonic_sqlx::IDENTITY, DbCalls::Async, hyper_sonic_sqlx::serve)
}
