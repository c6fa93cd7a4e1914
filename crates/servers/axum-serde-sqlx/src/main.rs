//! `axum-serde-sqlx` binary: flags, logging, listener; see the library for the stack.

use std::process::ExitCode;

use bookstore_app::DbCalls;

fn main() -> ExitCode {
    bookstore_app::cli::main(axum_serde_sqlx::IDENTITY, DbCalls::Async, axum_serde_sqlx::serve)
}
