//! `actix-serde-diesel` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

use bookstore_app::DbCalls;

fn main() -> ExitCode {
    bookstore_app::cli::main(
        actix_serde_diesel::IDENTITY,
        DbCalls::Blocking,
        actix_serde_diesel::serve,
    )
}
