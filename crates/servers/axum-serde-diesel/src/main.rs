//! `axum-serde-diesel` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

use bookstore_app::DbCalls;

fn main() -> ExitCode {
    bookstore_app::cli::main(
        axum_serde_diesel::IDENTITY,
        DbCalls::Blocking,
        axum_serde_diesel::serve,
    )
}
